"""Requesting a verification of a pull request, claiming it for a worker and reporting its
progress. The run row is what the site and the API show while a worker is busy."""
import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from findings.enqueue import enqueue
from findings.models import VerificationRun
from reporting.services import verification_run_report
from reviews.models import PullRequest
from reviews.services import commit_get_or_create, pull_request_changed

logger = logging.getLogger(__name__)


@transaction.atomic
def verification_run_request(
    *, pull_request: PullRequest, commit_sha: str | None = None, requested_by=None
) -> VerificationRun:
    """Queue a verification of `pull_request` at `commit_sha` (or at every pinned commit), or
    return the active run that already covers it: one active run per PR and commit, however many
    people, hooks and beats ask. A new run has `created` set; the task is enqueued once the
    transaction commits, so a worker never sees a run that is not there yet."""
    # Concurrent requests for one PR queue behind this lock, so two of them cannot both see no
    # active run and both create one.
    PullRequest.objects.select_for_update().filter(pk=pull_request.pk).first()
    commit = commit_get_or_create(repository=pull_request.repository, sha=commit_sha) if commit_sha else None
    active = VerificationRun.objects.active().filter(pull_request=pull_request, commit=commit).latest_first().first()
    if active is not None:
        active.created = False
        return active
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit, requested_by=requested_by)
    run.created = True
    # Before the verification is enqueued, so GitHub hears "in progress" before "completed".
    verification_run_report(run=run)

    def send():
        try:
            result = enqueue("findings.tasks.run_verification", run.pk)
        except Exception as error:  # a broker that is down, or (run in-process) a failed run
            logger.exception("Verification run %s could not be queued or failed", run.pk)
            failed = VerificationRun.objects.active().filter(pk=run.pk).update(
                status=VerificationRun.Status.FAILED,
                finished_at=timezone.now(),
                message=f"The verification could not be queued: {error}. "
                "Check that the broker (CELERY_BROKER_URL) is reachable, then request it again.",
            )
            pull_request_changed(pull_request_id=run.pull_request_id)
            if failed:
                verification_run_report(run=run)
            return
        VerificationRun.objects.filter(pk=run.pk, task_id="").update(task_id=result.id or "")

    transaction.on_commit(send)
    return run


def verification_run_claim(run_id: int) -> VerificationRun | None:
    """Move a queued run to running and return it, or None when it is not queued any more: a
    redelivered or duplicated message finds the run claimed and does nothing twice."""
    claimed = VerificationRun.objects.filter(pk=run_id, status=VerificationRun.Status.QUEUED).update(
        status=VerificationRun.Status.RUNNING, started_at=timezone.now()
    )
    if claimed != 1:
        return None
    return VerificationRun.objects.select_related("pull_request__repository", "commit").get(pk=run_id)


def verification_run_begin(*, pull_request: PullRequest, commit=None, requested_by=None) -> VerificationRun:
    """A run that its caller carries out itself (the `verify` command), claimed as it is created."""
    return VerificationRun.objects.create(
        pull_request=pull_request, commit=commit, requested_by=requested_by,
        status=VerificationRun.Status.RUNNING, started_at=timezone.now(),
    )


def verification_run_start(run: VerificationRun, *, total: int) -> None:
    """Record how much work the claimed run has ahead of it."""
    VerificationRun.objects.filter(pk=run.pk).update(total=total, done=0)


def verification_run_advance(run: VerificationRun, *, by: int = 1) -> None:
    VerificationRun.objects.filter(pk=run.pk).update(done=F("done") + by)


def verification_run_finish(run: VerificationRun, *, message: str = "", failed: bool = False) -> None:
    """End the run, and tell GitHub what the gate now says (when the repository publishes)."""
    VerificationRun.objects.filter(pk=run.pk).update(
        status=VerificationRun.Status.FAILED if failed else VerificationRun.Status.DONE,
        finished_at=timezone.now(),
        message=message,
    )
    # The gate stops reporting the run as under way.
    pull_request_changed(pull_request_id=run.pull_request_id)
    verification_run_report(run=run)
