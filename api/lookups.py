"""Finding what a URL or a query names: a pull request by owner/name/number, a commit by a full or
abbreviated SHA. Each failure says what to do next."""
from rest_framework.exceptions import NotFound

from core.errors import RecheckError
from reviews.models import Commit, PullRequest, Repository
from reviews.selectors import PullRequestNotFound, pull_request_get
from reviews.services import commit_lookup, commit_sha_checked


def pull_request_by_number(
    *, owner: str, name: str, number: int, repository_ids: set[int] | None = None
) -> PullRequest:
    try:
        return pull_request_get(slug=f"{owner}/{name}", number=number, repository_ids=repository_ids)
    except PullRequestNotFound as error:
        raise NotFound(str(error).replace("(import_review)", "(POST /api/reviews/import)")) from None


def recorded_commit(*, repository: Repository, sha: str, hint: str = "") -> Commit:
    """The recorded commit of `repository` that `sha` names; unknown or ambiguous is an error."""
    sha = commit_sha_checked(sha)
    commit = commit_lookup(repository=repository, sha=sha)
    if commit is None:
        raise RecheckError(f"Commit {sha} is not recorded for {repository.slug}. {hint}".strip())
    return commit


def commits_named(*, sha: str, repository: Repository | None = None, repositories=None) -> list[Commit]:
    """The commits `sha` names: in `repository`, or in every repository that records it (a SHA can
    be shared by forks), among `repositories` (a queryset: those the caller may read) when given.
    Within one repository the same rules as everywhere else apply."""
    if repository is not None:
        return [recorded_commit(repository=repository, sha=sha)]
    sha = commit_sha_checked(sha)
    candidates = Repository.objects.all() if repositories is None else repositories
    repositories = candidates.filter(commits__sha__startswith=sha[:7]).distinct()
    commits = [commit for repository in repositories if (commit := commit_lookup(repository=repository, sha=sha))]
    if not commits:
        raise RecheckError(f"Commit {sha} is not recorded for any repository: check the SHA.")
    return commits
