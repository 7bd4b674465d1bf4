"""Celery tasks: thin wrappers that load by id, call a service, and own retries and time limits."""
import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from core.errors import RepositoryError

logger = logging.getLogger(__name__)

# Fetches fail for passing reasons (a forge's hiccup, a network blip): retry a few times, spaced out
# and jittered so that many workers do not hammer a forge in step.
RETRY_FETCH = {
    "autoretry_for": (RepositoryError,),
    "retry_backoff": 30,
    "retry_backoff_max": 600,
    "retry_jitter": True,
}


# A database that restarts under a run: hand the run back and try again, spaced out.
RETRY_DATABASE = {"max_retries": 5, "retry_backoff": 10, "retry_backoff_max": 300}


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=RETRY_DATABASE["max_retries"])
def run_verification(self, run_id: int) -> dict:
    """Verify the pull request of a VerificationRun, reporting progress as the task's state."""
    from django.db import InterfaceError, OperationalError

    from findings.models import VerificationRun
    from findings.services.runs import verification_run_claim, verification_run_finish, verification_run_release
    from findings.services.verification.run import verification_run_execute

    # The worker's node name, as its heartbeat names it, so that its heartbeats vouch for the run;
    # none in-process (an eager request's hostname is the machine's, with no heartbeat behind it).
    worker = "" if self.request.is_eager else self.request.hostname or ""
    try:
        run = verification_run_claim(run_id, worker=worker, task_id=self.request.id if worker else "")
    except (OperationalError, InterfaceError) as error:
        raise self.retry(exc=error, countdown=_backoff(self.request.retries)) from None
    if run is None:
        # A redelivered or duplicated message for a run another worker claimed: nothing to do twice.
        return {"run": run_id, "status": VerificationRun.objects.values_list("status", flat=True).get(pk=run_id)}

    def report(done: int, total: int) -> None:
        if not self.request.id or self.request.is_eager:
            return
        try:
            self.update_state(state="PROGRESS", meta={"done": done, "total": total, "run": run_id})
        except Exception as error:  # the result backend (Redis) restarting: the run row is the record
            logger.warning("Progress of run %s not reported to the result backend: %s", run_id, error)

    try:
        return verification_run_execute(run=run, progress=report)
    except SoftTimeLimitExceeded:
        verification_run_finish(run, message="Verification took too long and was stopped.", failed=True)
        raise
    except (OperationalError, InterfaceError) as error:
        if self.request.retries < RETRY_DATABASE["max_retries"]:
            logger.warning("Run %s lost the database (%s); retrying", run_id, error)
            verification_run_release(run_id, message="The database did not answer; the verification will be retried.")
            raise self.retry(exc=error, countdown=_backoff(self.request.retries)) from None
        verification_run_finish(
            run, message="Verification failed: the database did not answer after several retries.", failed=True
        )
        raise
    except Exception:
        # The exception's text can name internals (paths, hosts): it goes to the log, not to readers.
        logger.exception("Verification run %s failed", run_id)
        verification_run_finish(run, message="Verification failed unexpectedly; staff can read why in the worker's log.",
                                failed=True)
        raise


def _backoff(retries: int) -> int:
    return min(RETRY_DATABASE["retry_backoff_max"], RETRY_DATABASE["retry_backoff"] * 2**retries)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_import(job_id: int) -> dict:
    """Import a large review bundle kept as an ImportJob."""
    from findings.services.import_jobs import import_job_run

    job = import_job_run(job_id)
    return {"job": job_id, "status": job.status if job else "claimed elsewhere"}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def rederive_report(report_id: int) -> dict:
    """Verify again the pull requests already verified at a report's commit, off the request
    that brought the report."""
    from findings.services.reports import check_report_rederive

    return {"report": report_id, "verified": check_report_rederive(report_id=report_id)}


@shared_task
def reap_dead_runs() -> list:
    """Beat's job: fail the runs whose worker died, and queue each again once; and queue again the
    reports' re-derivations whose worker died after claiming them. Returns the runs reaped (the
    reports are logged)."""
    from findings.services.reports import check_reports_reap
    from findings.services.runs import verification_runs_reap

    reaped = verification_runs_reap()
    check_reports_reap()
    return reaped


@shared_task
def move_expired_states() -> int:
    """Beat's job: the pull requests whose gate changed with time alone (an overdue follow-up the
    policy counts) are derived again, and their kept pages dropped."""
    from findings.state.stored import states_expired_move

    return states_expired_move()


@shared_task
def record_follow_ups_due() -> int:
    """Beat's job: the follow-ups that fell due soon or overdue since the last round, each an event
    of its timeline once per crossing."""
    from findings.services.follow_ups.due import follow_ups_due_record

    return follow_ups_due_record()


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=4, **RETRY_FETCH)
def fetch_repository(self, repository_id: int, pr_number: int | None = None) -> dict:
    """Create or update a repository's mirror; retried with backoff and jitter when it fails."""
    from reviews.mirrors import commits_resolve, repository_fetch, repository_reader
    from reviews.models import Repository

    repository = Repository.objects.get(pk=repository_id)
    result = repository_fetch(repository=repository, pr_number=pr_number)
    with repository_reader(repository) as reader:
        problems = commits_resolve(repository=repository, reader=reader)
    return {"repository": repository.slug, "pr_head": result.pr_head, "unresolved": problems}


@shared_task(acks_late=True, reject_on_worker_lost=True, max_retries=3, **RETRY_FETCH)
def track_pull_request_head(pull_request_id: int) -> dict:
    """Fetch a PR's head; when it moved, pin the new head and verify it."""
    from findings.services.tracking import pull_request_track_head
    from reviews.models import PullRequest

    pull_request = PullRequest.objects.select_related("repository").get(pk=pull_request_id)
    return pull_request_track_head(pull_request=pull_request)


@shared_task
def track_open_pull_requests() -> int:
    """Beat's job: queue a head check for every open pull request."""
    from reviews.models import PullRequest

    ids = list(PullRequest.objects.open().values_list("pk", flat=True))
    for pk in ids:
        track_pull_request_head.delay(pk)
    return len(ids)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def check_follow_ups(sweep_id: int) -> dict:
    """Check a repository's follow-ups at its default branch's head, for a claimed sweep."""
    from findings.services.follow_ups.checking import follow_ups_verify
    from findings.services.follow_ups.sweeps import follow_up_sweep_claim, follow_up_sweep_finish

    sweep = follow_up_sweep_claim(sweep_id)
    if sweep is None:
        # A duplicated message for a sweep another worker claimed: nothing is checked twice.
        return {"sweep": sweep_id, "status": "claimed elsewhere"}
    try:
        result = follow_ups_verify(repository=sweep.repository, sha=sweep.sha)
    except Exception:
        logger.exception("Checking the follow-ups of sweep %s failed", sweep_id)
        follow_up_sweep_finish(sweep, message="The check failed unexpectedly; staff can read why in the worker's log.",
                               failed=True)
        raise
    follow_up_sweep_finish(sweep, message=result.describe(), failed=bool(result.problem))
    return {"sweep": sweep_id, "changed": len(result.changed), "detail": result.describe()}


@shared_task
def check_follow_ups_everywhere() -> int:
    """Beat's job: check the follow-ups of every repository that has some at its default branch's head."""
    from findings.services.follow_ups.sweeps import follow_up_sweeps_request_all

    return follow_up_sweeps_request_all()
