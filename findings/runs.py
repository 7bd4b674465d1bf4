"""Requesting a verification of a pull request and reporting its progress. The run row is what the
site and the API show while a worker is busy."""
import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from findings.models import VerificationRun
from reviews.models import PullRequest
from reviews.services import commit_get_or_create, pull_request_changed

logger = logging.getLogger(__name__)


def verification_run_request(
    *, pull_request: PullRequest, commit_sha: str | None = None, requested_by=None
) -> VerificationRun:
    """Queue a verification of `pull_request` at `commit_sha` (or at every pinned commit). The task
    is enqueued once the transaction commits, so a worker never sees a run that is not there yet."""
    commit = commit_get_or_create(repository=pull_request.repository, sha=commit_sha) if commit_sha else None
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit, requested_by=requested_by)

    def enqueue():
        from findings.tasks import run_verification

        try:
            result = run_verification.delay(run.pk)
        except Exception as error:  # a broker that is down, or (run in-process) a failed run
            logger.exception("Verification run %s could not be queued or failed", run.pk)
            VerificationRun.objects.filter(pk=run.pk, status__in=["queued", "running"]).update(
                status=VerificationRun.Status.FAILED,
                finished_at=timezone.now(),
                message=f"The verification could not be queued: {error}. "
                "Check that the broker (CELERY_BROKER_URL) is reachable, then request it again.",
            )
            pull_request_changed(pull_request_id=run.pull_request_id)
            return
        VerificationRun.objects.filter(pk=run.pk, task_id="").update(task_id=result.id or "")

    transaction.on_commit(enqueue)
    return run


def verification_run_start(run: VerificationRun, *, total: int) -> None:
    VerificationRun.objects.filter(pk=run.pk).update(
        status=VerificationRun.Status.RUNNING, started_at=timezone.now(), total=total, done=0
    )


def verification_run_advance(run: VerificationRun, *, by: int = 1) -> None:
    VerificationRun.objects.filter(pk=run.pk).update(done=F("done") + by)


def verification_run_finish(run: VerificationRun, *, message: str = "", failed: bool = False) -> None:
    VerificationRun.objects.filter(pk=run.pk).update(
        status=VerificationRun.Status.FAILED if failed else VerificationRun.Status.DONE,
        finished_at=timezone.now(),
        message=message,
    )
    # The gate stops reporting the run as under way.
    pull_request_changed(pull_request_id=run.pull_request_id)
