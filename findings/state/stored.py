"""Loading a pull request's facts, storing the state derived from them with the PR's generation,
and reading it back: the one way every interface learns a count, a verdict, a flag or the gate.

A reader asks for the state of the PR's current generation. The row is found with one indexed
read; when it is missing (the generation moved since it was derived), it is derived again and
stored, whole, in one INSERT. A state is stored only if the generation did not move while its
facts were read, so a row never mixes the facts of two generations."""
import json
import logging
import threading
from contextlib import contextmanager
from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from findings.models import (
    Evidence,
    EvidenceResult,
    Finding,
    FollowUp,
    GateOverride,
    PullRequestGate,
    PullRequestState,
    Verification,
    VerificationRun,
)
from findings.state.derivation import (
    SHAPE,
    BelowFacts,
    DueFacts,
    Facts,
    FindingFacts,
    OverrideFacts,
    PinFacts,
    PolicyFacts,
    RunFacts,
    VerificationFacts,
    current_verdicts,
    derive,
    latest_verified_pin,
)
from findings.state.listed import listed_delete_older, listed_store
from findings.state.timeline import timeline_record
from reviews.models import Commit, PinnedCommit, PullRequest
from reviews.stack import stack_below

logger = logging.getLogger(__name__)


def pull_request_facts(pull_request_id: int, *, through_commit_id: int | None = None, stack: bool = True) -> Facts:
    """Everything the state is derived from, in a fixed number of queries however many findings
    (and two a PR below it in a stack). With `through_commit_id`, the pins stop at that commit's
    pin: the facts as they stood when it was the PR's last pin (its statuses are today's). With
    `stack=False`, the PRs below are not read: the PR's own gate, which those above it read."""
    findings = [
        FindingFacts(*row)
        for row in Finding.objects.filter(pull_request_id=pull_request_id)
        .order_by("number")
        .values_list("pk", "number", "kind", "status", "title", "evidence_version", "resolved_at",
                     "resolved_commit_id")
    ]
    pin_rows = list(
        PinnedCommit.objects.filter(pull_request_id=pull_request_id)
        .in_order()
        .values_list("commit_id", "commit__sha", "role", "pinned_at", "commit__resolved", "commit__repository_id")
    )
    pins = [
        PinFacts(commit_id, sha, role, pinned_at, resolved, unique_from=_unique_from(sha, repository_id))
        for commit_id, sha, role, pinned_at, resolved, repository_id in pin_rows
    ]
    if through_commit_id is not None:
        through = [index for index, pin in enumerate(pins) if pin.commit_id == through_commit_id]
        pins = pins[: through[0] + 1] if through else []
    verifications = [
        VerificationFacts(*row)
        for row in Verification.objects.filter(finding__pull_request_id=pull_request_id)
        .order_by()
        .values_list("finding_id", "commit_id", "verdict", "evidence_version", "verdict_reason")
    ]
    runs = [
        RunFacts(commit_id, status, (created_at, pk))
        for pk, commit_id, status, created_at in VerificationRun.objects.filter(pull_request_id=pull_request_id)
        .order_by()
        .values_list("pk", "commit_id", "status", "created_at")
    ]
    facts = Facts(findings=findings, pins=pins, verifications=verifications, runs=runs, now=timezone.now())
    repository_id, base_branch = policy_facts_load(facts, pull_request_id)
    if stack and base_branch:
        stack_facts_load(facts, pull_request_id, repository_id=repository_id, base_branch=base_branch)
    evidence_of: dict[int, list[int]] = {}
    for evidence_id, finding_id in (
        Evidence.objects.filter(finding__pull_request_id=pull_request_id)
        .order_by("finding_id", "position")
        .values_list("pk", "finding_id")
    ):
        evidence_of.setdefault(finding_id, []).append(evidence_id)
    facts.evidence_of = evidence_of
    latest = latest_verified_pin(facts, current_verdicts(facts))
    if latest is not None:
        facts.evidence_states = {
            evidence_id: (finding_id, state)
            for evidence_id, finding_id, state in EvidenceResult.objects.filter(
                verification__commit_id=latest.commit_id, verification__finding__pull_request_id=pull_request_id
            )
            .order_by()
            .values_list("evidence_id", "verification__finding_id", "state")
        }
    return facts


def stack_facts_load(facts: Facts, pull_request_id: int, *, repository_id: int, base_branch: str) -> None:
    """The PRs below this one (`reviews.stack`), each with its own gate at its head: from its
    stored state when that is current, else derived without its own stack (not stored). Never its
    stacked gate: so a cycle reads each PR once, and what lies further down is read here, in order.
    A change of a PR below moves this PR's generation (`reviews.services.pull_requests_changed`),
    so what is read here is never stale in a stored state."""
    below = stack_below(pull_request_id, repository_id=repository_id, base_branch=base_branch)
    facts.stack_cut = below.cut
    facts.below = [BelowFacts(number, *_own_head_gate(pk)) for pk, number in below.pull_requests]


def _own_head_gate(pull_request_id: int) -> tuple[bool, bool]:
    """(mergeable by its own gate, overridden) at the PR's head; a PR with no head is not mergeable."""
    summary = (PullRequestState.objects.filter(pull_request_id=pull_request_id, generation=F("pull_request__generation"))
               .values_list("summary", flat=True).first())
    if summary is None or summary.get("shape") != SHAPE or _expired(summary):
        summary = derive(pull_request_facts(pull_request_id, stack=False))
    head = summary["gates"].get(summary["head_sha"]) if summary.get("head_sha") else None
    if head is None:
        return False, False
    return bool(head.get("own_mergeable")), head.get("overridden") is not None


def policy_facts_load(facts: Facts, pull_request_id: int) -> tuple[int | None, str]:
    """The repository's policy, the PR's overrides not revoked and, when the policy counts them,
    the repository's cleanup follow-ups still to do with a due date: read once each, so a policy
    changed meanwhile gives this derivation one policy or the other, never a part of each."""
    # The repository and its policy in one query (a left join: no policy row, the defaults).
    row = PullRequest.objects.filter(pk=pull_request_id).values_list(
        "repository_id", "base_branch", "repository__policy__possibly_regressed_block",
        "repository__policy__overdue_cleanups_block", "repository__policy__override_role").first()
    repository_id = row[0] if row else None
    facts.policy = PolicyFacts(*row[2:]) if row and row[2] is not None else PolicyFacts()
    facts.overrides = [
        OverrideFacts(pk, commit_id, sha, reason, note, by, at)
        for pk, commit_id, sha, reason, note, by, at in GateOverride.objects.active()
        .filter(pull_request_id=pull_request_id).order_by("at", "id")
        .values_list("pk", "commit_id", "commit__sha", "reason", "note", "by_label", "at")
    ]
    if facts.policy.overdue_cleanups_block:
        facts.due_cleanups = [
            DueFacts(f"{slug}#{number}/{finding_number}", title, due_at)
            for slug, number, finding_number, title, due_at in FollowUp.objects.still_due()
            .filter(repository_id=repository_id, finding__kind="cleanup", due_at__isnull=False)
            .order_by("due_at", "id")
            .values_list("repository__slug", "pull_request__number", "finding__number", "finding__title", "due_at")
        ]
    return repository_id, row[1] if row else ""


def _unique_from(sha: str, repository_id: int) -> int:
    """The shortest abbreviation (7 or more digits) of `sha` that no other commit recorded in the
    repository shares; 41 (never) when a recorded abbreviation of it is itself ambiguous."""
    others = [
        other
        for other in Commit.objects.filter(repository_id=repository_id, sha__startswith=sha[:7])
        .exclude(sha=sha)
        .values_list("sha", flat=True)
    ]
    length = 7
    for other in others:
        if sha.startswith(other):  # a recorded abbreviation of this very commit: lookups are ambiguous
            return 41
        common = next((i for i, (a, b) in enumerate(zip(sha, other, strict=False)) if a != b), min(len(sha), len(other)))
        length = max(length, common + 1)
    return length


# The gate lists at most this many open blockers (and as many possibly regressed), the lowest
# numbers first, beside their counts: an answer that stops growing at a hundred entries, however
# many findings the pull request has (its size is that of what it lists: about 13 kB for fifty of
# each, under 1 kB for four open blockers). Every one of them is in the findings list
# (`open_blockers_url`, cursor pages). Decision record 0020.
GATE_LISTED = 50


def gate_body(answer: dict, *, findings_url: str) -> str:
    """The gate answer as the JSON the API sends for it (its findings' URLs as paths on the site,
    `findings_url` + number), compact as DRF's renderer writes it: its lists bounded by
    GATE_LISTED, with their counts."""
    def entries(rows):
        return [{"id": pk, "number": number, "title": title, "verdict": verdict, "verdict_reason": reason,
                 "url": f"{findings_url}{number}/"}
                for pk, number, title, verdict, reason in (_with_reason(row) for row in rows[:GATE_LISTED])]

    return json.dumps(
        {"mergeable": answer["mergeable"], "verified": answer["verified"], "reason": answer["reason"],
         "overridden": answer.get("overridden"), "blocked_below": answer.get("blocked_below"),
         "open_blockers": entries(answer["open_blockers"]), "open_blockers_count": len(answer["open_blockers"]),
         "possibly_regressed": entries(answer["possibly_regressed"]),
         "possibly_regressed_count": len(answer["possibly_regressed"]),
         "overdue_cleanups": [{"finding": reference, "title": title, "due_at": due_at}
                              for reference, title, due_at in answer.get("overdue_cleanups", [])[:GATE_LISTED]],
         "overdue_cleanups_count": len(answer.get("overdue_cleanups", [])),
         "policy": answer.get("policy")},
        ensure_ascii=False, separators=(",", ":"),
    )


def _with_reason(row: list) -> list:
    # A possibly regressed blocker's verdict holds: it has no reason, and its row none.
    return row if len(row) == 5 else [*row, ""]


def _store(pull_request_id: int, generation: int, state: dict) -> None:
    summary = {key: value for key, value in state.items() if key != "findings"}
    reference = PullRequest.objects.filter(pk=pull_request_id).values_list(
        "repository__slug", "number", "repository_id").first()
    findings_url = f"/{reference[0]}/pull/{reference[1]}/findings/"
    until = _valid_until(state)
    gates = [
        PullRequestGate(pull_request_id=pull_request_id, generation=generation, sha=key, commit_id=answer["commit_id"],
                        unique_from=min(state["unique_from"].get(answer["sha"], 41), 41), verified=answer["verified"],
                        body=gate_body(answer, findings_url=findings_url), valid_until=until)
        for sha, answer in state["gates"].items()
        for key in ([sha, ""] if sha == state["head_sha"] else [sha])
    ]
    try:
        # Whole or not at all: the state and its gate answers in one transaction.
        with transaction.atomic():
            # A row of this generation in another shape (stored before an upgrade) is replaced,
            # with its gate answers: it is never read.
            if PullRequestState.objects.filter(pull_request_id=pull_request_id, generation=generation).exclude(
                summary__shape=SHAPE
            ).delete()[0]:
                PullRequestGate.objects.filter(pull_request_id=pull_request_id, generation=generation).delete()
            stored = PullRequestState.objects.create(
                pull_request_id=pull_request_id, generation=generation, summary=summary, findings=state["findings"],
                valid_until=until,
            )
            PullRequestGate.objects.bulk_create(gates)
            listed_store(stored.pk, state["findings"])  # what a list page reads of it, from the row
            # What changed since the state the timeline went up to: its events, with the state.
            timeline_record(pull_request_id=pull_request_id, repository_id=reference[2], generation=generation,
                            state=state)
    except IntegrityError:
        return  # another reader stored the same generation's state first: it is the same state
    listed_delete_older(pull_request_id, generation)  # the older states with their list rows
    PullRequestGate.objects.filter(pull_request_id=pull_request_id, generation__lt=generation).delete()


def _valid_until(state: dict) -> datetime | None:
    return datetime.fromisoformat(state["valid_until"]) if state.get("valid_until") else None


def _expired(summary: dict) -> bool:
    """Whether a stored state's answer has changed with time alone since it was derived (a
    follow-up the policy counts fell due)."""
    until = _valid_until(summary)
    return until is not None and timezone.now() >= until


def _generation(pull_request_id: int) -> int | None:
    return PullRequest.objects.filter(pk=pull_request_id).values_list("generation", flat=True).first()


# The states derived while `states_stored_after` is open in this thread, to store when it says.
_AFTER = threading.local()


@contextmanager
def states_stored_after():
    """Within it, a state derived is stored not at once but when `states_store` is given what it
    yields: a page's first read after a write stores the state once its answer is sent, so the
    reader does not wait for the INSERTs (the page is built from the same state). Until then the
    state is read from here, never derived twice; if it is never stored, the next reader derives it."""
    pending, before = [], getattr(_AFTER, "pending", None)
    _AFTER.pending = pending
    try:
        yield pending
    finally:
        _AFTER.pending = before


def states_store(pending: list) -> None:
    """Store the states `states_stored_after` held back (each as `pull_request_state_derive` would
    have). A failure is logged: the state is derived again by the next reader."""
    while pending:
        pull_request_id, generation, state = pending.pop(0)
        try:
            _store(pull_request_id, generation, state)
        except Exception:  # after the answer was sent there is no one to tell but the log
            logger.exception("Storing the state of pull request %s (generation %s) failed", pull_request_id, generation)


def pull_request_state_derive(*, pull_request_id: int) -> dict:
    """Derive the PR's state from its facts now and store it for the current generation (unless
    the generation moved while the facts were read: a later reader derives that one)."""
    generation = _generation(pull_request_id)
    pending = getattr(_AFTER, "pending", None)
    for held in pending or ():
        if held[:2] == (pull_request_id, generation):
            return held[2]
    state = derive(pull_request_facts(pull_request_id))
    state["generation"] = generation
    if generation is not None and _generation(pull_request_id) == generation:
        if pending is not None:
            pending.append((pull_request_id, generation, state))
        else:
            _store(pull_request_id, generation, state)
    return state


def pull_request_state_at(*, pull_request_id: int, commit_id: int) -> dict:
    """The PR's review state as its pages show it at an earlier pin: derived by the same rules from
    the facts up to that pin (`pull_request_facts(through_commit_id=...)`), not stored: what is
    stored, and what the gate and every other reader read, is the state at the latest pin."""
    return derive(pull_request_facts(pull_request_id, through_commit_id=commit_id))


def pull_request_state(*, pull_request_id: int, generation: int | None = None) -> dict:
    """The PR's review state at its current generation (or `generation`, when the caller has just
    read it): the stored row, else derived and stored."""
    rows = PullRequestState.objects.filter(pull_request_id=pull_request_id)
    if generation is None:
        rows = rows.filter(generation=PullRequest.objects.filter(pk=pull_request_id).values("generation")[:1])
    else:
        rows = rows.filter(generation=generation)
    row = rows.values_list("generation", "summary", "findings").first()
    if row is not None and row[1].get("shape") == SHAPE:
        if not _expired(row[1]):
            return {**row[1], "findings": row[2], "generation": row[0]}
        pull_request_time_passed(pull_request_id=pull_request_id)
    return pull_request_state_derive(pull_request_id=pull_request_id)


def pull_request_time_passed(*, pull_request_id: int) -> None:
    """Time alone changed the answer of the PR's stored state: its generation moves, so every
    interface (kept pages included) reads the state derived again."""
    from reviews.services import pull_request_changed

    pull_request_changed(pull_request_id=pull_request_id)


def pull_request_states(pull_request_ids) -> dict[int, dict]:
    """PR id -> its current state, for many PRs: one read of the stored rows, and a derivation
    for each PR whose current generation has none."""
    ids = set(pull_request_ids)
    if not ids:
        return {}
    # The rows of the PRs' current generations, in one query joined to the PRs.
    rows = PullRequestState.objects.filter(pull_request_id__in=ids, generation=F("pull_request__generation"))
    states = {
        pk: {**summary, "findings": findings, "generation": generation}
        for pk, generation, summary, findings in rows.values_list(
            "pull_request_id", "generation", "summary", "findings"
        )
        if summary.get("shape") == SHAPE and not _expired(summary)
    }
    for pk in ids - states.keys():
        if PullRequestState.objects.filter(pull_request_id=pk, generation=F("pull_request__generation")).exists():
            pull_request_time_passed(pull_request_id=pk)  # stored, but expired
        state = pull_request_state_derive(pull_request_id=pk)
        if state["generation"] is not None:  # a PR that exists
            states[pk] = state
    return states


def finding_states(findings) -> dict[int, dict]:
    """Finding id -> its state (verdict, status, resolution, flags, evidence states), for findings
    already loaded (any PRs)."""
    states = pull_request_states({finding.pull_request_id for finding in findings})
    found = {}
    for finding in findings:
        state = states.get(finding.pull_request_id, {})
        # With the commit its verdict is at: the PR's latest verified pin.
        found[finding.pk] = {**state.get("findings", {}).get(str(finding.pk), {}), "latest_sha": state.get("latest_sha")}
    return found


def states_attach(findings):
    """Give each of `findings` (model instances) its state as `finding.state`; returns them."""
    findings = list(findings)
    for finding, state in zip(findings, finding_states(findings).values(), strict=True):
        finding.state = state
    return findings


def finding_state(finding) -> dict:
    """The state of one finding: the one attached by `states_attach`, else read now."""
    state = getattr(finding, "state", None)
    if state is None:
        state = finding.state = finding_states([finding])[finding.pk]
    return state


def findings_where(queryset, key: str, value=True) -> list[int]:
    """The ids of the findings of `queryset`'s PRs whose state has `key` equal to `value`
    (possibly_regressed, needs_decision, verdict, resolution): what a list filtered by one of them
    shows, read from the state, not worked out again in SQL."""
    pull_request_ids = set(queryset.order_by().values_list("pull_request_id", flat=True).distinct())
    return [
        int(pk)
        for state in pull_request_states(pull_request_ids).values()
        for pk, finding in state["findings"].items()
        if finding.get(key) == value
    ]


def states_expired_move(*, now: datetime | None = None) -> int:
    """Move the generation of each pull request whose current stored state has changed with time
    alone (a follow-up the policy counts fell due), so kept pages and cached answers are not
    served past it: beat's job, every minute. Returns how many moved."""
    expired = PullRequestState.objects.filter(valid_until__lte=now or timezone.now(),
                                              generation=F("pull_request__generation"))
    ids = list(expired.values_list("pull_request_id", flat=True))
    if ids:
        from reviews.services import pull_requests_changed

        pull_requests_changed(pull_request_ids=ids)
    return len(ids)
