"""Reads of a pull request's review threads, for its inbox page, the API and a finding's page."""
from forge.threads.models import ReviewThread, ThreadSync


def pull_request_threads(pull_request):
    """The inbox: every thread of the pull request with its comments and finding (three queries)."""
    return ReviewThread.objects.of(pull_request).with_comments().order_by("root_comment_id")


def pull_request_thread_sync(pull_request) -> ThreadSync:
    """How the last reading went (an unsaved 'not read yet' when it never ran)."""
    return ThreadSync.objects.filter(pull_request=pull_request).first() or ThreadSync(pull_request=pull_request)


def finding_threads(finding) -> list[ReviewThread]:
    """The review threads a finding came from or is attached to, with their comments."""
    return list(ReviewThread.objects.filter(finding=finding).with_comments().order_by("root_comment_id"))
