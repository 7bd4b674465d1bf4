"""A merged pull request's unfinished findings become the repository's follow-ups."""
from django.db import transaction
from django.utils import timezone
from django.db.models import Q

from access.audit import audit_record, writes
from findings.models import Finding, FollowUp, FollowUpEvent
from findings.selectors.policy import follow_up_due_at, repository_policy
from findings.services.follow_ups.sweeps import follow_up_sweep_request
from findings.signals import follow_up_changed
from findings.state.stored import finding_states
from reviews.models import PullRequest
from reviews.services import commit_get_or_create, pull_request_state_record

# Why opening follow-ups checks no person: the forge reports the merge (a signed webhook, or
# beat's head tracking seeing the head on the default branch).
FORGE = "the forge reports the merge (a signed webhook, or beat's head tracking)"


def _origin(finding: Finding, resolution: str) -> str | None:
    """Why `finding` is still to do after its pull request merged, or None when it is not."""
    if finding.status == Finding.Status.OPEN:
        return FollowUp.Origin.OPEN_CLEANUP if finding.kind == Finding.Kind.CLEANUP else FollowUp.Origin.OPEN_BLOCKER
    if finding.kind == Finding.Kind.BLOCKER and finding.status == Finding.Status.DISMISSED:
        return FollowUp.Origin.DISMISSED_BLOCKER
    if finding.kind == Finding.Kind.BLOCKER and resolution == FollowUp.Origin.FIXED_ANYWAY:
        return FollowUp.Origin.FIXED_ANYWAY
    return None


@writes("follow_up.open", system=FORGE)
def pull_request_closed_record(*, pull_request: PullRequest, merged: bool, merge_sha: str = "") -> list[FollowUp]:
    """Record that `pull_request` was closed on its forge: merged (its unfinished findings become
    follow-ups, see `follow_ups_open_on_merge`) or closed without merging (no follow-up: what it
    left undone was never merged)."""
    if not merged:
        pull_request_state_record(pull_request=pull_request, state=PullRequest.State.CLOSED)
        return []
    return follow_ups_open_on_merge(pull_request=pull_request, merge_sha=merge_sha)


@writes("follow_up.open", system=FORGE)
@transaction.atomic
def follow_ups_open_on_merge(*, pull_request: PullRequest, merge_sha: str = "") -> list[FollowUp]:
    """Record `pull_request` as merged at `merge_sha` (the merge commit; '' when the forge did not
    say) and make each of its open findings, and each blocker dismissed or fixed anyway, a
    follow-up of the repository, then ask for their check at the merge commit. A finding is
    followed up once: the same merge reported again (a redelivery, beat after the webhook)
    opens nothing twice. Returns the follow-ups opened by this call."""
    PullRequest.objects.select_for_update().filter(pk=pull_request.pk).first()
    pull_request_state_record(pull_request=pull_request, state=PullRequest.State.MERGED)
    repository = pull_request.repository
    merge_commit = commit_get_or_create(repository=repository, sha=merge_sha) if merge_sha else None
    candidates = list(
        Finding.objects.for_pull_request(pull_request)
        .filter(Q(status=Finding.Status.OPEN) | Q(kind=Finding.Kind.BLOCKER))
        .exclude(follow_up__isnull=False)
        .order_by("number")
    )
    states = finding_states(candidates) if candidates else {}
    # Each follow-up is due by the repository's policy for its kind, counted from the merge.
    policy, merged_at = repository_policy(repository), timezone.now()
    opened = []
    for finding in candidates:
        origin = _origin(finding, states.get(finding.pk, {}).get("resolution", ""))
        if origin is None:
            continue
        follow_up = FollowUp.objects.create(
            repository=repository, finding=finding, pull_request=pull_request, origin=origin, merge_commit=merge_commit,
            due_at=follow_up_due_at(policy, origin, merged_at),
        )
        FollowUpEvent.objects.create(
            follow_up=follow_up, kind=FollowUpEvent.Kind.MERGED, to_state=follow_up.state, commit=merge_commit,
            note=f"{pull_request.reference} merged" + (f" as {merge_commit.short_sha}" if merge_commit else ""),
        )
        opened.append(follow_up)
    if opened:
        audit_record(
            action="follow_up.open", target=pull_request.reference, repository=repository,
            changes={"follow_ups": [None, [follow_up.finding.number for follow_up in opened]]},
            message=f"Merged{f' as {merge_commit.sha}' if merge_commit else ''}: {len(opened)} follow-up(s) opened.",
        )
        for follow_up in opened:
            follow_up_changed.send(sender=FollowUp, follow_up=follow_up, change="opened")
    if opened:
        follow_up_sweep_request(repository=repository, sha=merge_commit.sha if merge_commit else "", reason="merge")
    return opened
