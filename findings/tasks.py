"""Celery tasks: thin wrappers that load by id, call a service, and own retries and time limits."""
import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

logger = logging.getLogger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True)
def run_verification(self, run_id: int) -> dict:
    """Verify the pull request of a VerificationRun, reporting progress as the task's state."""
    from findings.models import VerificationRun
    from findings.verifying import verification_run_execute

    run = VerificationRun.objects.select_related("pull_request__repository", "commit").get(pk=run_id)

    def report(done: int, total: int) -> None:
        if not self.request.called_directly and self.request.id:
            self.update_state(state="PROGRESS", meta={"done": done, "total": total, "run": run_id})

    try:
        summary = verification_run_execute(run=run, progress=report)
    except SoftTimeLimitExceeded:
        from findings.runs import verification_run_finish

        verification_run_finish(run, message="Verification took too long and was stopped.", failed=True)
        raise
    return summary


@shared_task(acks_late=True)
def render_companion_pages(pull_request_id: int) -> None:
    """Re-render the stored companion pages of a PR after a verification. Safe to run twice: the
    render replaces the stored pages."""
    from findings.companion import companion_render
    from reviews.models import PullRequest

    pull_request = PullRequest.objects.select_related("repository").filter(pk=pull_request_id).first()
    if pull_request is None:
        logger.info("Pull request %s is gone; no companion pages to render.", pull_request_id)
        return
    companion_render(pull_request=pull_request)
