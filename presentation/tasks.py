"""Celery tasks of presentation: they load by id and call the render."""
import logging

from celery import shared_task

logger = logging.getLogger(__name__)


@shared_task(acks_late=True)
def render_companion_pages(pull_request_id: int) -> None:
    """Re-render the stored companion pages of a PR after a verification. Safe to run twice: the
    render replaces the stored pages."""
    from presentation.companion import companion_render
    from reviews.models import PullRequest

    pull_request = PullRequest.objects.select_related("repository").filter(pk=pull_request_id).first()
    if pull_request is None:
        logger.info("Pull request %s is gone; no companion pages to render.", pull_request_id)
        return
    companion_render(pull_request=pull_request)
