"""Reads about reviewed code that the commands and the API share."""
from recheck.errors import RecheckError
from reviews.models import Commit, PinnedCommit, PullRequest


class PullRequestNotFound(RecheckError):
    pass


def pull_request_get(*, slug: str, number: int) -> PullRequest:
    """The pull request `slug#number`; PullRequestNotFound says which ones are known instead."""
    pull_request = PullRequest.objects.by_reference(slug, number).select_related("repository").first()
    if pull_request is not None:
        return pull_request
    known = ", ".join(
        f"#{pr_number}"
        for pr_number in PullRequest.objects.filter(repository__slug=slug).values_list("number", flat=True)[:10]
    )
    hint = f"Known pull requests of {slug}: {known}." if known else f"No repository {slug} is recorded."
    raise PullRequestNotFound(
        f"No pull request {slug}#{number} is tracked here: import its review first (import_review), "
        f"or check the owner/name and the number. {hint}"
    )


def pull_request_latest_head(pull_request: PullRequest) -> Commit | None:
    """The most recently pinned head of the pull request."""
    pin = PinnedCommit.objects.filter(pull_request=pull_request).heads().select_related("commit").in_order().last()
    return pin.commit if pin else None
