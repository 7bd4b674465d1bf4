"""The stack a pull request is part of, as its pages and the API show it: the open PRs below it
(nearest first) and above it (nearest first, level by level), each with its gate at its head from
its stored state, and why the reading stopped short (a cycle, the depth bound). The walk is
`reviews.stack`'s; what the stack does to the gate is in the stored state (`findings.state`)."""
from core import vocabulary as v
from findings.state.stored import pull_request_states
from reviews.models import PullRequest
from reviews.stack import stack_above, stack_below


def pull_request_stack(pull_request: PullRequest) -> dict:
    """{"below": [...], "above": [...], "cut": "" | "cycle" | "depth"}; each entry {number,
    title, reference, url (the site's page), mergeable, gate (its word), blocked_below}. Empty
    lists for a PR in no stack."""
    below = stack_below(pull_request.pk, repository_id=pull_request.repository_id,
                        base_branch=pull_request.base_branch)
    above = stack_above([pull_request.pk]) if pull_request.head_branch else []
    ids = [pk for pk, _ in below.pull_requests] + above
    if not ids:
        return {"below": [], "above": [], "cut": below.cut}
    rows = PullRequest.objects.select_related("repository").in_bulk(ids)
    states = pull_request_states(ids)

    def entry(pk: int) -> dict:
        state = states.get(pk, {})
        head = state.get("head_sha")
        gate = state.get("gates", {}).get(head) if head else None
        row = rows[pk]
        return {"number": row.number, "title": row.title, "reference": row.reference, "url": row.get_absolute_url(),
                "mergeable": bool(gate and gate["mergeable"]), "gate": v.gate_word(gate),
                "blocked_below": gate.get("blocked_below") if gate else None}

    return {"below": [entry(pk) for pk, _ in below.pull_requests], "above": [entry(pk) for pk in above],
            "cut": below.cut}
