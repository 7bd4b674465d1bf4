"""Celery tasks of the forges (the outbox's sender and the review threads' reading): they load by id and call the service, which owns the retries (each
attempt is recorded on the call's row, with the time it is due again)."""
from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def send_github_call(call_id: int) -> dict:
    """Send one call to its forge if it is due; safe to run twice, the service claims the row first."""
    from forge.outbox.sending import forge_call_send

    call = forge_call_send(call_id=call_id)
    return {"call": call_id, "status": call.status if call else "skipped"}


@shared_task(acks_late=True)
def send_due_github_calls() -> dict:
    """Beat's round: every call whose time has come, however it came to wait."""
    from forge.outbox.sending import forge_calls_send_due

    return {"attempted": forge_calls_send_due()}


@shared_task(bind=True, acks_late=True, max_retries=5)
def sync_review_threads(self, pull_request_id: int, actor_id: int | None = None) -> dict:
    """Read a pull request's review threads again (a webhook said they changed, or a person asked:
    `actor_id`, checked again by the service); GitHub's rate limit or a 5xx is tried again later,
    with the wait GitHub asked for."""
    from django.contrib.auth import get_user_model

    from access.permissions import ActionRefused
    from forge.threads.sync import review_threads_sync
    from reviews.models import PullRequest

    pull_request = PullRequest.objects.select_related("repository").filter(pk=pull_request_id).first()
    if pull_request is None:
        return {"pull_request": pull_request_id, "status": "gone"}
    actor = get_user_model().objects.filter(pk=actor_id).first() if actor_id is not None else None
    if actor_id is not None and actor is None:
        return {"pull_request": pull_request_id, "status": "refused"}  # the person is gone
    try:
        outcome = review_threads_sync(pull_request=pull_request, actor=actor)
    except ActionRefused as refused:  # the role was taken away since the button was pressed
        return {"pull_request": pull_request_id, "status": "refused", "message": str(refused)}
    if not outcome.ok and outcome.retry_in is not None and not self.request.is_eager:
        raise self.retry(countdown=outcome.retry_in)
    return {"pull_request": pull_request_id, "status": "ok" if outcome.ok else "failed", "message": outcome.message}


@shared_task(bind=True, acks_late=True, max_retries=5)
def read_pipeline_test_report(self, repository_id: int, pipeline_id: int, sha: str) -> dict:
    """Read a completed GitLab pipeline's test report into reports of its jobs' test cases; GitLab's
    rate limit or a 5xx is tried again later."""
    from forge.gitlab.reports import pipeline_test_report_record
    from forge.outbox.failures import Failure
    from reviews.models import Repository

    repository = Repository.objects.filter(pk=repository_id).first()
    if repository is None:
        return {"pipeline": pipeline_id, "status": "gone"}
    try:
        suites = pipeline_test_report_record(repository=repository, pipeline_id=pipeline_id, sha=sha)
    except Failure as failure:
        if failure.retryable and not self.request.is_eager:
            raise self.retry(countdown=failure.retry_after or 30 * 2**self.request.retries) from None
        return {"pipeline": pipeline_id, "status": "failed", "message": failure.message}
    return {"pipeline": pipeline_id, "status": "ok", "suites": suites}


@shared_task(bind=True, acks_late=True, max_retries=5)
def read_commit_checks(self, repository_id: int, sha: str) -> dict:
    """Read a commit's CI checks back from its forge into reports; the forge's rate limit, a 5xx or
    a spent forge budget is tried again later."""
    from forge.interface import forge_of
    from forge.outbox.failures import Failure
    from reviews.models import Repository

    repository = Repository.objects.filter(pk=repository_id).first()
    if repository is None:
        return {"commit": sha, "status": "gone"}
    try:
        checks = forge_of(repository).commit_checks_read(repository=repository, sha=sha)
    except Failure as failure:
        if failure.retryable and not self.request.is_eager:
            raise self.retry(countdown=failure.retry_after or 30 * 2**self.request.retries) from None
        return {"commit": sha, "status": "failed", "message": failure.message}
    return {"commit": sha, "status": "ok", "checks": checks}
