"""Writes about findings. Marking a finding fixed, dismissed or open happens here and nowhere
else: the site, the admin, the API, the import and the commands all call `finding_resolve`."""
import logging

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from access.audit import audit_record, audit_refusal, writes
from access.permissions import Action, actor_check
from core import vocabulary
from findings.models import Finding, FindingEvent, Verification
from findings.models.querysets import in_slices
from core.errors import (
    AmbiguousCommit,
    CommitNotFound,
    EvidenceStillHolds,
    RecheckError,
    RepositoryError,
    ResolutionCommitError,
    ResolutionError,
)
from reviews.mirrors import repository_reader
from reviews.models import Commit, Repository
from reviews.services import commit_get_or_create, commit_sha_checked

logger = logging.getLogger(__name__)


@writes("finding.resolve")
def finding_resolve(
    *,
    finding: Finding,
    status: str,
    actor: AbstractBaseUser | None,
    source: str,
    commit: Commit | None = None,
    commit_sha: str = "",
    note: str = "",
    still_holds_confirmed: bool = False,
    sha_in_mirror: bool = True,
) -> FindingEvent:
    """Move `finding` to `status` and record who, when, at which commit and why.

    The commit is a recorded `commit` or a `commit_sha` as a person typed it. A typed SHA must
    name exactly one commit in the repository's mirror (full or abbreviated): unknown, ambiguous
    (ResolutionCommitError naming the candidates) and a repository not fetched yet are refused,
    since a check that could not run proves nothing. Only the bundle import passes
    `sha_in_mirror=False`: a bundle records decisions made elsewhere and may arrive before its
    repository is fetched, so its SHA is recorded as given and resolved by the next fetch.
    The SHA is looked up (or recorded) inside this transaction, so a refused change leaves no
    commit row behind.

    Fixing names the commit it was fixed in; when the finding's verification at that commit says
    its evidence still holds (present, partly fixed), it is refused with EvidenceStillHolds unless
    the caller confirms with `still_holds_confirmed` and says why in `note`. Dismissing needs a
    reason. Reopening clears the resolution (the history keeps it). The audit log records the
    change, or the refusal."""
    # A bundle records decisions its importer may record (the import checked that role); anywhere
    # else marking fixed, dismissing and reopening is the Maintainer's.
    action = Action.IMPORT if source == FindingEvent.Source.IMPORT else Action.RESOLVE
    actor_check(actor, action, finding.pull_request.repository, audit_action="finding.resolve",
                target=_finding_target(finding))
    try:
        return _finding_resolve(
            finding=finding, status=status, actor=actor, source=source, commit=commit, commit_sha=commit_sha,
            note=note, still_holds_confirmed=still_holds_confirmed, sha_in_mirror=sha_in_mirror,
        )
    except RecheckError as error:
        audit_refusal(
            action="finding.resolve", actor=actor, source=source, target=_finding_target(finding),
            repository=finding.pull_request.repository, changes={"status": [finding.status, status]},
            message=str(error),
        )
        raise


def _finding_target(finding: Finding) -> str:
    return f"{finding.pull_request.reference} finding {finding.number}"


def commit_sha_in_mirror(*, repository: Repository, sha: str) -> str:
    """The full SHA that `sha` (full or abbreviated) names in the repository's mirror, read
    without fetching. ResolutionCommitError when the mirror does not know it, cannot tell which
    commit it means (naming the candidates) or is missing."""
    sha = commit_sha_checked(sha)
    try:
        reader = repository_reader(repository)
    except RepositoryError:
        raise ResolutionCommitError(
            f"{repository.slug} has not been fetched yet, so commit {sha} cannot be checked and the finding "
            "is not marked fixed: fetch the repository first (verify the pull request), then try again."
        ) from None
    try:
        with reader:
            return reader.resolve(sha)
    except AmbiguousCommit as error:
        raise ResolutionCommitError(
            f"Commit {sha} is ambiguous in {repository.slug}: it could be {', '.join(error.candidates)}. "
            "Give more digits of the one that fixed it.",
            candidates=error.candidates,
        ) from None
    except CommitNotFound:
        raise ResolutionCommitError(
            f"No commit {sha} in {repository.slug}: check the SHA, or fetch the repository again "
            "(verify the pull request) if the commit is newer than the last fetch."
        ) from None
    except RepositoryError as error:
        # git's own message names the mirror's place on disk: logged for staff, not shown.
        logger.warning("Checking commit %s in the mirror of %s failed: %s", sha, repository.slug, error)
        raise ResolutionCommitError(
            f"The mirror of {repository.slug} could not be read, so commit {sha} cannot be checked and the "
            "finding is not marked fixed: fetch the repository again (verify the pull request), then try again."
        ) from None


@transaction.atomic
def _finding_resolve(
    *, finding, status, actor, source, commit, commit_sha, note, still_holds_confirmed, sha_in_mirror
) -> FindingEvent:
    if status not in Finding.Status.values:
        raise ResolutionError(f"Unknown status {status!r}: use one of {', '.join(Finding.Status.values)}.")
    if commit is not None and commit_sha:
        raise ResolutionError("Name the commit once: give a recorded commit or a SHA, not both.")
    finding = Finding.objects.select_for_update().select_related("pull_request__repository").get(pk=finding.pk)
    repository = finding.pull_request.repository
    if finding.status == status:
        raise ResolutionError(f"Finding {finding.number} is already {finding.get_status_display().lower()}.")
    if commit_sha.strip():
        try:
            sha = commit_sha_in_mirror(repository=repository, sha=commit_sha) if sha_in_mirror else commit_sha
            commit = commit_get_or_create(repository=repository, sha=sha)
        except ResolutionError:
            raise
        except RecheckError as error:
            raise ResolutionError(str(error), field="commit") from None
    if commit is not None and commit.repository_id != finding.pull_request.repository_id:
        raise ResolutionError(f"Commit {commit.sha} belongs to another repository.")
    if status == Finding.Status.FIXED and commit is None:
        raise ResolutionError("Say which commit fixed it: marking a finding fixed needs a commit.")
    if status == Finding.Status.DISMISSED and not note.strip():
        raise ResolutionError("Say why: dismissing a finding needs a reason.", field="note")
    if status == Finding.Status.FIXED:
        _still_holds_check(finding, commit, confirmed=still_holds_confirmed, note=note)

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
    audit_record(
        action="finding.resolve",
        actor=actor,
        source=source,
        target=_finding_target(finding),
        repository=finding.pull_request.repository,
        changes={
            "status": [event.from_status, status],
            "commit": [None, commit.sha if commit else None],
            "note": [None, note or None],
        },
    )
    return event


def _still_holds_check(finding: Finding, commit: Commit, *, confirmed: bool, note: str) -> None:
    """Refuse to mark `finding` fixed at `commit` while its verification there says the evidence
    still holds, unless the caller confirmed it and said why. A finding is verified once per
    commit (a re-run replaces the row), so its row at `commit` is the latest verification there."""
    verdict = Verification.objects.filter(finding=finding, commit=commit).values_list("verdict", flat=True).first()
    if verdict not in vocabulary.STILL_HOLDS_VERDICTS:
        return
    if not confirmed:
        raise EvidenceStillHolds(sha=commit.sha, verdict=verdict, verdict_phrase=vocabulary.verdict_phrase(verdict))
    if not note.strip():
        raise ResolutionError(
            f"Say why you mark it fixed although its evidence is {vocabulary.verdict_phrase(verdict)} at "
            f"{commit.sha[:12]}: marking it fixed anyway needs a note.",
            field="note",
        )


@transaction.atomic
def finding_evidence_lock(*, finding: Finding) -> None:
    """Lock the finding's row before its evidence is changed: a run storing results for it waits,
    or has stored them already (and they are dropped by `finding_evidence_changed`)."""
    findings_evidence_lock(findings=[finding])


def findings_evidence_lock(*, findings: list[Finding]) -> None:
    """`finding_evidence_lock` for many findings at once (an import's), a query per 500, in the
    order of their ids so that two writers locking some of the same findings cannot deadlock."""
    for ids in in_slices(sorted(finding.pk for finding in findings)):
        list(Finding.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk"))


@writes("finding.edit", within=(
    "findings.services.authoring.finding_write", "findings.services.review_import.review_import",
))
@transaction.atomic
def finding_evidence_changed(*, finding: Finding) -> None:
    """Record that the finding's evidence changed (an import or an edit): its version moves on and
    its verifications, which checked the old evidence, are dropped, so no stale verdict counts
    for the gate, the pages or the exports until it is verified again."""
    now = timezone.now()
    Finding.objects.filter(pk=finding.pk).update(evidence_version=F("evidence_version") + 1, evidence_changed_at=now)
    Verification.objects.filter(finding=finding).delete()
    finding.refresh_from_db(fields=["evidence_version", "evidence_changed_at"])
