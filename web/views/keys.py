"""The keys of the kept pages of one repository and of one pull request (`web.pagecache`): the
facts read in one query (`web.page_keys`), and the reader's visibility there (`user_may`'s answers),
which decides readability too (a page the reader may not read does not exist for them)."""
from django.http import Http404

from access.permissions import Action
from forge.outbox.selectors import pull_request_failed_calls
from reviews.models import PullRequest
from reviews.selectors import pull_request_generation_is
from web.page_keys import PullRequestKeyRead, RepositoryKeyRead, pull_request_key_read, repository_key_read
from web.pagecache import PageKey, Visibility, visibility_on


def request_visibility(request, read: PullRequestKeyRead | RepositoryKeyRead) -> Visibility:
    """The reader's visibility on the repository `read` names, worked out once a request:
    readability is decided on it and the key made of it."""
    seen = request.__dict__.setdefault("_recheck_visibility", {})
    facts = (read.repository_id, read.visibility)
    if facts not in seen:
        seen[facts] = visibility_on(request.user, *facts, lambda: read.repository)
    return seen[facts]


def failures_shown(failures) -> tuple:
    """What a page shows of the failed calls to the forge, which no generation follows: part of
    its key."""
    return tuple((call.pk, call.kind, call.state, call.sha, call.attempts, call.response_status,
                  call.response_message, call.hint, call.forge) for call in failures)


def repository_read(request, owner: str, name: str) -> RepositoryKeyRead:
    """The key's facts of the repository, or a 404 when there is none the reader may read (one
    they may not read does not exist for them)."""
    read = repository_key_read(slug=f"{owner}/{name}")
    if read is None or not request_visibility(request, read).may(Action.READ):
        raise Http404("No such repository.")
    return read


def repository_page_key(request, read: RepositoryKeyRead, page: str, *, query: tuple | None, extra: tuple = (),
                        failures=()) -> PageKey:
    """The key of one of the repository's pages: its version, the reader's visibility there, the
    failed calls to the forge it shows (which no generation follows) and `extra`."""
    slug, version = read.repository.slug, read.version

    def still_current() -> bool:
        again = repository_key_read(slug=slug)
        return again is not None and again.version == version

    return PageKey(
        page=page, path=request.path, reads=("repository", read.repository.pk, version),
        reader=request_visibility(request, read), query=query,
        extra=(failures_shown(failures), *extra), still_current=still_current,
    )


def pull_request_read(request, owner: str, name: str, number: int) -> PullRequestKeyRead:
    """The key's facts of the pull request, or a 404 when there is none the reader may read."""
    read = pull_request_key_read(slug=f"{owner}/{name}", number=number)
    if read is None or not request_visibility(request, read).may(Action.READ):
        raise Http404("No such pull request.")  # one the reader may not read does not exist for them
    return read


def pull_request_page_key(request, read: PullRequestKeyRead, page: str, *, query: tuple | None,
                          extra: tuple = ()) -> tuple[PageKey, list]:
    """The key of one of the pull request's pages, and the failed calls to the forge it shows: its
    generation, the reader's visibility, those failures and `extra`. A page with a verification run
    under way shows its progress, which moves without a write the generation follows: not kept."""
    generation = read.generation
    failures = pull_request_failed_calls(PullRequest(pk=read.pull_request_id)) if read.calls_failed else []
    key = PageKey(
        page=page, path=request.path, reads=("pull_request", read.pull_request_id, generation),
        reader=request_visibility(request, read), query=query,
        extra=(failures_shown(failures), *extra), keep=not read.run_live,
        still_current=lambda: pull_request_generation_is(read.pull_request_id, generation),
    )
    return key, failures
