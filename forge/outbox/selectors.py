"""Reads about what was sent to GitHub."""
from django.db.models import Exists, OuterRef, Q

from forge.outbox.models import GitHubCall
from reviews.models import PullRequest, Repository

SHOWN_FAILURES = 5


def unresolved_failures():
    """Failed calls that nothing sent later to the same check run, status or comment replaced."""
    thread_kinds = list(GitHubCall.THREAD_KINDS)
    replaced = GitHubCall.objects.filter(
        Q(kind=GitHubCall.Kind.COMMENT, pull_request=OuterRef("pull_request"))
        | Q(kind__in=thread_kinds, review_thread=OuterRef("review_thread"))
        | (~Q(kind=GitHubCall.Kind.COMMENT) & ~Q(kind__in=thread_kinds) & Q(sha=OuterRef("sha"))),
        repository=OuterRef("repository"),
        kind=OuterRef("kind"),
        pk__gt=OuterRef("pk"),
        status=GitHubCall.Status.SENT,
    )
    return GitHubCall.objects.failed().exclude(Exists(replaced))


def pull_request_failed_calls(pull_request: PullRequest) -> list[GitHubCall]:
    """The PR's latest failed calls to GitHub that still stand, for its pages."""
    return list(unresolved_failures().filter(pull_request=pull_request).order_by("-id")[:SHOWN_FAILURES])


def repository_failed_calls(repository: Repository) -> list[GitHubCall]:
    """The repository's latest failed calls to GitHub that still stand, for its page (with a
    button to send each again)."""
    return list(unresolved_failures().filter(repository=repository).select_related("pull_request", "repository")
                .order_by("-id")[:SHOWN_FAILURES * 4])
