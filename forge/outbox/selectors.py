"""Reads about what was sent to the forges: the failed calls that still stand."""
from django.db.models import Exists, OuterRef, Q

from forge.outbox.models import ForgeCall
from reviews.models import PullRequest, Repository

SHOWN_FAILURES = 5


def unresolved_failures():
    """Failed calls that nothing sent later to the same check run, status or comment replaced."""
    thread_kinds = list(ForgeCall.THREAD_KINDS)
    replaced = ForgeCall.objects.filter(
        Q(kind=ForgeCall.Kind.COMMENT, pull_request=OuterRef("pull_request"))
        | Q(kind__in=thread_kinds, review_thread=OuterRef("review_thread"))
        | (~Q(kind=ForgeCall.Kind.COMMENT) & ~Q(kind__in=thread_kinds) & Q(sha=OuterRef("sha"))),
        repository=OuterRef("repository"),
        kind=OuterRef("kind"),
        pk__gt=OuterRef("pk"),
        status=ForgeCall.Status.SENT,
    )
    return ForgeCall.objects.failed().exclude(Exists(replaced))


def pull_request_failed_calls(pull_request: PullRequest) -> list[ForgeCall]:
    """The PR's latest failed calls to its forge that still stand, for its pages."""
    return list(unresolved_failures().filter(pull_request=pull_request).order_by("-id")[:SHOWN_FAILURES])


def repository_failed_calls(repository: Repository) -> list[ForgeCall]:
    """The repository's latest failed calls to its forge that still stand, for its page (with a
    button to send each again)."""
    return list(unresolved_failures().filter(repository=repository).select_related("pull_request", "repository")
                .order_by("-id")[:SHOWN_FAILURES * 4])


def oldest_due_call_at(now):
    """When the call that has been due longest fell due (None: nothing due waits)."""
    return (
        ForgeCall.objects.filter(status=ForgeCall.Status.PENDING, due_at__lte=now)
        .order_by("due_at").values_list("due_at", flat=True).first()
    )
