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


ISSUE_STEPS = {"open": "Issue #{number} opened on GitHub", "close": "Issue #{number} closed on GitHub",
               "reopen": "Issue #{number} reopened on GitHub"}


def follow_up_issue_history(follow_up) -> list[dict]:
    """What was said to the follow-up's GitHub issue, as entries of its history (sent calls only)."""
    from forge.outbox.models import FollowUpIssue

    issue = FollowUpIssue.objects.filter(follow_up=follow_up).first()
    if issue is None or issue.number is None:
        return []
    calls = GitHubCall.objects.filter(repository_id=follow_up.repository_id, kind=GitHubCall.Kind.ISSUE,
                                      body__follow_up=follow_up.pk, status=GitHubCall.Status.SENT).order_by("sent_at")
    entries = [{"at": call.sent_at, "what": ISSUE_STEPS.get(call.state, "Issue #{number}").format(number=issue.number),
                "commit": None, "who": "", "note": ""} for call in calls]
    if issue.problem and entries:
        entries[-1]["note"] = issue.problem
    return entries
