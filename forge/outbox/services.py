"""Reporting verification to the repository's forge: rows for what to post (the outbox), written
in the caller's transaction (each forge's verdict rows by its `Forge.verdict_calls`, through
`record_calls`); `forge.outbox.sending` sends them when they are due. And sending a failed call
again, by a person.

Nothing here may fail a verification: building a report runs in its own savepoint, and when it
fails (a database error) the failure is recorded as a call that prepares the report again later,
with backoff, like any call the forge did not take. A call the forge refuses is kept with its
message and what to fix, for the repository's and the pull request's pages and the admin."""
import hashlib
import json
import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from access.audit import audit_record, audit_refusal
from access.permissions import Action, refusal, user_may
from core.errors import RecheckError
from findings.models import VerificationRun
from forge.outbox.failures import Failure, retry_delay
from forge.interface import forge_of
from forge.outbox.models import ForgeCall
from forge.outbox.wake import outbox_wake
from reviews.models import Commit, PullRequest, is_full_sha
from reviews.selectors import pull_request_latest_head

logger = logging.getLogger(__name__)


# --- What to post ------------------------------------------------------------------------------


def verification_run_report(*, run: VerificationRun) -> list[ForgeCall]:
    """Record what to tell the repository's forge about `run`: `in_progress` while it is queued or running,
    `completed` with the gate's conclusion once it ended (`cancelled`, "superseded by", when a newer
    head took its place before it ran). Never raises: a report that could not be
    prepared is recorded as a call of kind `report`, which the outbox prepares again with backoff."""
    try:
        with transaction.atomic():
            return run_report_calls(run)
    except Exception as error:
        logger.exception("Could not prepare the report of verification run %s", run.pk)
        return _prepare_later(run, error)


def _prepare_later(run: VerificationRun, error: Exception) -> list[ForgeCall]:
    failure = Failure(None, f"Preparing the report failed: {error}", retryable=True)
    try:
        with transaction.atomic():
            pull_request = PullRequest.objects.select_related("repository").get(pk=run.pull_request_id)
            commit = Commit.objects.filter(pk=run.commit_id).first() if run.commit_id else None
            call = ForgeCall.objects.create(
                repository_id=pull_request.repository_id, pull_request=pull_request,
                forge=pull_request.repository.forge,
                sha=commit.sha if commit else "", kind=ForgeCall.Kind.REPORT, state="preparing",
                digest=_digest(ForgeCall.Kind.REPORT, str(run.pk), []), body={"run": run.pk},
                attempts=1, response_message=failure.message[:2000],
                hint="Recheck prepares the report again with backoff; the database's own message is above.",
                due_at=timezone.now() + timedelta(seconds=retry_delay(failure, 1)),
            )
            outbox_wake([call])
            return [call]
    except Exception:
        # The database refuses even this row: nothing can be recorded, only logged.
        logger.exception("Could not record that the report of verification run %s is to be prepared", run.pk)
        return []


def run_report_calls(run: VerificationRun) -> list[ForgeCall]:
    """The calls reporting `run` as it is now (none when the same report was posted last)."""
    run.refresh_from_db(fields=["status", "message", "superseded_by"])
    pull_request = PullRequest.objects.select_related("repository").get(pk=run.pull_request_id)
    repository = pull_request.repository
    if not (repository.publish_checks or repository.publish_comment):
        return []
    commit = _reported_commit(run)
    if commit is None or (run.is_active and not is_full_sha(commit.sha)):
        # An abbreviated SHA is resolved by the verification itself: its end is reported.
        return []
    # The report's text reads the merge gate and the finding views the pages show: loaded when there
    # is a report to write, not by every verification of a repository that publishes nothing.
    from forge import content

    calls: list[ForgeCall] = []
    finished = not run.is_active
    if run.status == VerificationRun.Status.SUPERSEDED:
        newer = VerificationRun.objects.filter(pk=run.superseded_by_id).select_related("commit").first()
        report = content.superseded_report(pull_request=pull_request, commit=commit,
                                           by=newer.commit if newer else None)
    elif finished:
        report = content.commit_report(
            pull_request=pull_request, commit=commit,
            run_failed=run.status == VerificationRun.Status.FAILED, run_message=run.message,
        )
    else:
        report = None
    if repository.publish_checks:
        calls += forge_of(repository).verdict_calls(pull_request=pull_request, commit=commit, report=report)
    if repository.publish_comment and report is not None and _is_latest(pull_request, commit):
        calls += _record(pull_request, commit, ForgeCall.Kind.COMMENT, report.conclusion, [{"body": report.comment}])
    outbox_wake([call for call in calls if call.status == ForgeCall.Status.PENDING])
    return calls


def gate_override_report(*, pull_request_id: int, commit_id: int) -> list[ForgeCall]:
    """Record the check (or status) and comment of a commit again after its gate was overridden or
    the override revoked: the conclusion and the summary follow the gate. Never raises, like a
    run's report: what could not be prepared is logged."""
    try:
        with transaction.atomic():
            pull_request = PullRequest.objects.select_related("repository").get(pk=pull_request_id)
            repository = pull_request.repository
            if not (repository.publish_checks or repository.publish_comment):
                return []
            commit = Commit.objects.get(pk=commit_id)
            from forge import content

            report = content.commit_report(pull_request=pull_request, commit=commit)
            calls: list[ForgeCall] = []
            if repository.publish_checks:
                calls += forge_of(repository).verdict_calls(pull_request=pull_request, commit=commit, report=report)
            if repository.publish_comment and _is_latest(pull_request, commit):
                calls += _record(pull_request, commit, ForgeCall.Kind.COMMENT, report.conclusion,
                                 [{"body": report.comment}])
            outbox_wake([call for call in calls if call.status == ForgeCall.Status.PENDING])
            return calls
    except Exception:
        logger.exception("Could not prepare the report of %s's overridden gate", pull_request_id)
        return []


def _reported_commit(run: VerificationRun) -> Commit | None:
    """The commit a run's report is about: its own, or for a run over every pin, the PR's head."""
    if run.commit_id:
        return Commit.objects.get(pk=run.commit_id)
    return pull_request_latest_head(run.pull_request)


def _is_latest(pull_request: PullRequest, commit: Commit) -> bool:
    """The comment speaks of the PR's latest head; a re-run of an older commit or a merge group's
    commit gets its check, not the comment."""
    head = pull_request_latest_head(pull_request)
    return head is None or head.pk == commit.pk


def _digest(kind: str, sha: str, bodies: list[dict]) -> str:
    return hashlib.sha256(json.dumps([kind, sha, bodies], sort_keys=True).encode()).hexdigest()


def _record(pull_request, commit, kind, state, bodies, *, failure: tuple[str, str] | None = None) -> list[ForgeCall]:
    """Rows for one report, unless the same report is the last one posted (or being posted) to
    the same check run, status or comment: the same state for the same SHA is not sent twice.
    Each row names the repository's forge, which sends it."""
    digest = _digest(kind, commit.sha, bodies)
    probe = ForgeCall(repository_id=pull_request.repository_id, pull_request=pull_request, sha=commit.sha, kind=kind)
    last = ForgeCall.objects.for_target(probe).order_by("-id").first()
    if last is not None and last.digest == digest and last.status != ForgeCall.Status.FAILED:
        return []
    if failure is None and not is_full_sha(commit.sha):
        failure = (f"{commit.sha} is an abbreviated SHA; {pull_request.repository.forge_words.label} needs the full one.",
                   "Fetch the repository (the verification resolves its commits), then verify again.")
    rows = [
        ForgeCall(
            repository_id=pull_request.repository_id, pull_request=pull_request, sha=commit.sha, kind=kind,
            state=state, digest=digest, body=body, forge=pull_request.repository.forge,
            **({"status": ForgeCall.Status.FAILED, "response_message": failure[0], "hint": failure[1]}
               if failure else {}),
        )
        for body in bodies
    ]
    for row in rows:
        row.save()
    return rows


# Each forge's verdict rows are written as the comment's are: one report once per target.
record_calls = _record


# --- Sending again -----------------------------------------------------------------------------


class ResendRefused(RecheckError):
    """The actor may not send this repository's calls to its forge again."""


def forge_call_resend(*, call: ForgeCall, actor) -> bool:
    """Send a failed call again, now (after its cause was fixed: a permission granted, the App
    installed, GitHub back). Needs the role that may verify the call's repository (a resend is a
    report of a verification); audited, refusals included. Returns whether the call had failed
    and is queued now."""
    repository = call.repository
    target = f"{call} of {repository.slug}"
    if not user_may(actor, Action.VERIFY, repository):
        message = refusal(actor, Action.VERIFY, repository)
        audit_refusal(action="github_call.resend", actor=actor, target=target, repository=repository,
                      message=message)
        raise ResendRefused(message)
    with transaction.atomic():
        return _resend(call, actor, target)


def _resend(call: ForgeCall, actor, target: str) -> bool:
    repository = call.repository
    queued = ForgeCall.objects.filter(pk=call.pk, status=ForgeCall.Status.FAILED).update(
        status=ForgeCall.Status.PENDING, attempts=0, due_at=timezone.now()
    )
    if queued:
        call.refresh_from_db()
        audit_record(action="github_call.resend", actor=actor, target=target, repository=repository,
                     message=f"Call {call.pk} queued again after {call.response_status or 'no answer'}: "
                     f"{call.response_message[:200]}")
        outbox_wake([call])
    return bool(queued)
