"""Writes about findings. Marking a finding fixed, dismissed or open happens here and nowhere
else: the admin, the API and the commands all call `finding_resolve`."""
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from findings.models import Finding, FindingEvent, Verification
from recheck.errors import RecheckError, ResolutionError
from reviews.models import Commit
from reviews.services import commit_get_or_create


@transaction.atomic
def finding_resolve(
    *,
    finding: Finding,
    status: str,
    actor: AbstractBaseUser | None,
    source: str,
    commit: Commit | None = None,
    commit_sha: str = "",
    note: str = "",
) -> FindingEvent:
    """Move `finding` to `status` and record who, when, at which commit and why.

    The commit is a recorded `commit` or a `commit_sha` as a person typed it; a SHA is looked up
    (or recorded) inside this transaction, so a refused change leaves no commit row behind.
    Fixing names the commit it was fixed in; dismissing needs a reason. Reopening clears the
    resolution (the history keeps it)."""
    if status not in Finding.Status.values:
        raise ResolutionError(f"Unknown status {status!r}: use one of {', '.join(Finding.Status.values)}.")
    if commit is not None and commit_sha:
        raise ResolutionError("Name the commit once: give a recorded commit or a SHA, not both.")
    finding = Finding.objects.select_for_update().select_related("pull_request__repository").get(pk=finding.pk)
    if commit_sha.strip():
        try:
            commit = commit_get_or_create(repository=finding.pull_request.repository, sha=commit_sha)
        except ResolutionError:
            raise
        except RecheckError as error:
            raise ResolutionError(str(error), field="commit") from None
    if finding.status == status:
        raise ResolutionError(f"Finding {finding.number} is already {finding.get_status_display().lower()}.")
    if commit is not None and commit.repository_id != finding.pull_request.repository_id:
        raise ResolutionError(f"Commit {commit.sha} belongs to another repository.")
    if status == Finding.Status.FIXED and commit is None:
        raise ResolutionError("Say which commit fixed it: marking a finding fixed needs a commit.")
    if status == Finding.Status.DISMISSED and not note.strip():
        raise ResolutionError("Say why: dismissing a finding needs a reason.")

    event = FindingEvent.objects.create(
        finding=finding,
        from_status=finding.status,
        to_status=status,
        actor=actor,
        commit=commit,
        note=note,
        source=source,
    )
    finding.status = status
    finding.possibly_regressed = False
    if status == Finding.Status.OPEN:
        finding.resolved_by = None
        finding.resolved_at = None
        finding.resolved_commit = None
        finding.resolution_note = ""
    else:
        finding.resolved_by = actor
        finding.resolved_at = event.at or timezone.now()
        finding.resolved_commit = commit
        finding.resolution_note = note
    finding.save()
    return event


@transaction.atomic
def finding_evidence_lock(*, finding: Finding) -> None:
    """Lock the finding's row before its evidence is changed: a run storing results for it waits,
    or has stored them already (and they are dropped by `finding_evidence_changed`)."""
    Finding.objects.select_for_update().filter(pk=finding.pk).first()


@transaction.atomic
def finding_evidence_changed(*, finding: Finding) -> None:
    """Record that the finding's evidence changed (an import or an edit): its version moves on and
    its verifications, which checked the old evidence, are dropped, so no stale verdict counts
    for the gate, the pages or the exports until it is verified again."""
    now = timezone.now()
    Finding.objects.filter(pk=finding.pk).update(evidence_version=F("evidence_version") + 1, evidence_changed_at=now)
    Verification.objects.filter(finding=finding).delete()
    finding.refresh_from_db(fields=["evidence_version", "evidence_changed_at"])
