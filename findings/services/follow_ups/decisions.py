"""A person decides what a follow-up comes to: marked fixed at a commit, or closed with a reason
(decision record 0010: a check suggests, a person decides). The follow-up's finding moves with
it through `finding_resolve`, so the finding's page and the follow-up say the same."""
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from access.audit import audit_record, audit_refusal, writes
from access.permissions import Action, actor_check
from core import vocabulary as v
from core.errors import EvidenceStillHolds, RecheckError, ResolutionError
from findings.models import Finding, FollowUp, FollowUpEvent
from findings.services.resolution import commit_sha_in_mirror, finding_resolve
from findings.signals import follow_up_changed
from reviews.models import Commit
from reviews.services import commit_get_or_create

MAX_REASON = 2000


def _target(follow_up: FollowUp) -> str:
    return f"follow-up of {follow_up.finding.reference}"


@writes("follow_up.mark_fixed")
def follow_up_mark_fixed(
    *, actor: AbstractBaseUser | None, follow_up: FollowUp, commit_sha: str = "", note: str = "",
    still_holds_confirmed: bool = False, source: str = "site",
) -> FollowUp:
    """Mark `follow_up` fixed at the commit `commit_sha` names (else the commit the default branch
    was verified fixed at), and its finding with it. Where the latest check at that commit says
    the evidence still holds, only with `still_holds_confirmed` and a note saying why. The
    Maintainer's decision; recorded in its history and the audit log."""
    actor_check(actor, Action.RESOLVE, follow_up.repository, audit_action="follow_up.mark_fixed",
                target=_target(follow_up))
    try:
        return _mark_fixed(follow_up, actor, commit_sha, note, still_holds_confirmed, source)
    except RecheckError as error:
        audit_refusal(action="follow_up.mark_fixed", actor=actor, target=_target(follow_up),
                      repository=follow_up.repository, message=str(error))
        raise


@transaction.atomic
def _mark_fixed(follow_up, actor, commit_sha, note, still_holds_confirmed, source) -> FollowUp:
    current = _locked(follow_up)
    repository = current.repository
    if commit_sha.strip():
        commit = commit_get_or_create(repository=repository,
                                      sha=commit_sha_in_mirror(repository=repository, sha=commit_sha))
    elif current.fixed_commit is not None:
        commit = current.fixed_commit
    else:
        raise ResolutionError("Say which commit fixed it: it has not been verified fixed on the default branch.",
                              field="commit")
    if current.checked_commit_id == commit.pk and current.verdict in v.STILL_HOLDS_VERDICTS:
        if not still_holds_confirmed:
            raise EvidenceStillHolds(sha=commit.sha, verdict=current.verdict,
                                     verdict_phrase=v.verdict_phrase(current.verdict))
        if not note.strip():
            raise ResolutionError("Say why you mark it fixed although its evidence still holds there.", field="note")
    finding = current.finding
    if finding.status != Finding.Status.FIXED:
        finding_resolve(finding=finding, status=Finding.Status.FIXED, actor=actor, source=source, commit=commit,
                        note=note or f"Fixed on the default branch at {commit.short_sha}.", still_holds_confirmed=True)
    return _decide(current, actor=actor, state=FollowUp.State.FIXED, commit=commit, reason=note,
                   kind=FollowUpEvent.Kind.MARKED_FIXED, action="follow_up.mark_fixed")


@writes("follow_up.close")
def follow_up_close(*, actor: AbstractBaseUser | None, follow_up: FollowUp, reason: str, source: str = "site") -> FollowUp:
    """Close `follow_up` without a fix, saying why (it will not be done, it is done elsewhere): it
    is no longer checked. An open finding is dismissed with the same reason. The Maintainer's
    decision; recorded in its history and the audit log."""
    actor_check(actor, Action.RESOLVE, follow_up.repository, audit_action="follow_up.close", target=_target(follow_up))
    try:
        return _close(follow_up, actor, reason, source)
    except RecheckError as error:
        audit_refusal(action="follow_up.close", actor=actor, target=_target(follow_up),
                      repository=follow_up.repository, message=str(error))
        raise


@transaction.atomic
def _close(follow_up, actor, reason, source) -> FollowUp:
    reason = (reason or "").strip()
    if not reason:
        raise ResolutionError("Say why: closing a follow-up needs a reason.", field="reason")
    if len(reason) > MAX_REASON:
        raise ResolutionError(f"Keep the reason under {MAX_REASON} characters.", field="reason")
    current = _locked(follow_up)
    if current.finding.status == Finding.Status.OPEN:
        finding_resolve(finding=current.finding, status=Finding.Status.DISMISSED, actor=actor, source=source,
                        note=reason)
    return _decide(current, actor=actor, state=FollowUp.State.CLOSED, commit=None, reason=reason,
                   kind=FollowUpEvent.Kind.CLOSED, action="follow_up.close")


def _locked(follow_up: FollowUp) -> FollowUp:
    # Only the follow-up's row is locked: its fixing commit may be none (an outer join, which
    # PostgreSQL cannot lock).
    current = (FollowUp.objects.select_for_update(of=("self",))
               .select_related("repository", "finding__pull_request__repository", "fixed_commit")
               .get(pk=follow_up.pk))
    if current.state in (FollowUp.State.FIXED, FollowUp.State.CLOSED):
        raise ResolutionError(f"This follow-up is already {v.follow_up_label(current.state).lower()}.")
    return current


def _decide(current: FollowUp, *, actor, state: str, commit: Commit | None, reason: str, kind: str,
            action: str) -> FollowUp:
    before = current.state
    current.state, current.reason = state, reason
    current.decided_by = actor if actor is not None and actor.is_authenticated else None
    current.decided_at = timezone.now()
    if commit is not None:
        current.fixed_commit = commit
    current.regressed = False
    current.save()
    FollowUpEvent.objects.create(follow_up=current, kind=kind, from_state=before, to_state=state, actor=current.decided_by,
                                 commit=commit, note=reason)
    audit_record(action=action, actor=actor, target=_target(current), repository=current.repository,
                 changes={"state": [before, state], "commit": [None, commit.sha if commit else None],
                          "reason": [None, reason or None]})
    follow_up_changed.send(sender=FollowUp, follow_up=current, change=state)
    return current
