"""Keeping a bare mirror of each reviewed repository, and resolving the abbreviated SHAs that
reviewers wrote once the mirror can tell which commit they mean.

A mirror is a cache of this host's own (under its `RECHECK_MIRROR_ROOT`), never state hosts share:
each web or worker host fetches what its work needs when its mirror lacks it, at most one fetch of
a repository at a time on the host (`engine.git.mirror`'s lock, then a second look), and makes a
missing or broken mirror again (decision 0029)."""
import logging
import socket
import time
from collections.abc import Sequence
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import RecheckError, RepositoryError
from engine.git import FetchResult, GitReader, fetch_mirror, mirror_dir_for, mirror_holds
from reviews.models import Commit, Repository

logger = logging.getLogger(__name__)

# What readers are told when a fetch fails: git's own message can name internal hosts, addresses
# and ports, so it is kept for staff (Repository.fetch_error, the admin, the logs).
FETCH_FAILED_PUBLIC = (
    "the repository could not be fetched; staff can read why on the repository's page in the admin"
)


def repository_mirror_dir(repository: Repository) -> Path:
    return mirror_dir_for(Path(settings.RECHECK_MIRROR_ROOT), repository.slug)


def repository_reader(repository: Repository) -> GitReader:
    """A reader over the repository's mirror; RepositoryError when there is no mirror yet."""
    mirror_dir = repository_mirror_dir(repository)
    if not (mirror_dir / "HEAD").exists():
        raise RepositoryError(
            f"{repository.slug} has not been fetched yet"
            + (" (the last attempt failed; staff can read why in the admin)" if repository.fetch_error else "")
            + ". Check its clone URL and fetch it again."
        )
    return GitReader(mirror_dir, max_blob_bytes=settings.RECHECK_MAX_BLOB_BYTES)


def _fetch_into_this_host(
    repository: Repository, *, pr_number: int | None = None, unless_holding: Sequence[str] = ()
) -> FetchResult:
    result = fetch_mirror(
        url=repository.clone_url,
        mirror_dir=repository_mirror_dir(repository),
        allow_local=settings.RECHECK_ALLOW_LOCAL_REPOSITORIES,
        pr_number=pr_number,
        pr_ref_template=repository.forge_words.head_ref,
        timeout=settings.RECHECK_FETCH_TIMEOUT,
        allowed_hosts=settings.RECHECK_ALLOWED_GIT_HOSTS,
        internal_hosts=settings.RECHECK_INTERNAL_GIT_HOSTS,
        unless_holding=unless_holding,
    )
    # One line per fetch and per fill the cache spared, by host: what an operator (and the run
    # across hosts, and the workers bench) counts to see the cache reused.
    logger.info("Mirror %s of %s on %s for %s", "fetched" if result.fetched else "already held", repository.slug,
                socket.gethostname(), ",".join(sha[:12] for sha in unless_holding) or "every ref")
    return result


def repository_fetch(
    *, repository: Repository, pr_number: int | None = None, unless_holding: Sequence[str] = ()
) -> FetchResult:
    """Create or update this host's mirror, and record when it worked or why it did not. With
    `unless_holding`, nothing is fetched (nor recorded) when the mirror already holds those commits."""
    try:
        result = _fetch_into_this_host(repository, pr_number=pr_number, unless_holding=unless_holding)
    except RepositoryError as error:
        Repository.objects.filter(pk=repository.pk).update(fetch_error=str(error))
        repository.fetch_error = str(error)
        raise
    if not result.fetched:
        return result
    now = timezone.now()
    Repository.objects.filter(pk=repository.pk).update(fetched_at=now, fetch_error="")
    repository.fetched_at, repository.fetch_error = now, ""
    return result


# A page whose commits a fetch could not bring (a pin no longer at the forge, a forge down) is not
# fetched for again, in this process, for so long: anyone may open a page, and each view must not
# cost a fetch. Kept with whether the fetch itself failed, so the page says which it was.
PAGE_FETCH_RETRY_SECONDS = 60
PAGE_FETCH_REMEMBERED = 1000
_page_fetch_lacking: dict[tuple, tuple[float, bool]] = {}


def repository_reader_holding(repository: Repository, commits: Sequence[str]) -> GitReader:
    """A reader over this host's mirror once it holds `commits` (what a page is about to read):
    fetched first when the mirror is missing, broken or lacks one of them. A page is a read: a fetch
    that fails here is logged and not recorded on the repository (its workers record theirs). When
    the fetch failed and the mirror still lacks them, a RepositoryError says the repository could
    not be fetched (not that a commit is missing, which only a fetch that worked can say);
    otherwise the reader says what the mirror lacks."""
    wanted = [sha for sha in commits if sha]
    mirror_dir = repository_mirror_dir(repository)

    def held() -> bool:
        return mirror_holds(mirror_dir, wanted) if wanted else (mirror_dir / "HEAD").is_file()

    asked = (repository.pk, repository.clone_url, tuple(sorted(wanted)))
    if held():
        return repository_reader(repository)
    tried_at, failed = _page_fetch_lacking.get(asked, (float("-inf"), False))
    if time.monotonic() - tried_at >= PAGE_FETCH_RETRY_SECONDS:
        failed = False
        try:
            _fetch_into_this_host(repository, unless_holding=wanted)
        except RepositoryError as error:
            logger.warning("Fetching %s for a page on this host failed: %s", repository.slug, error)
            failed = True
        if held():
            return repository_reader(repository)
        if len(_page_fetch_lacking) >= PAGE_FETCH_REMEMBERED:
            _page_fetch_lacking.clear()
        _page_fetch_lacking[asked] = (time.monotonic(), failed)
    if failed:
        raise RepositoryError(f"{repository.slug} has not been fetched yet: {FETCH_FAILED_PUBLIC}.")
    return repository_reader(repository)


def commits_resolve(*, repository: Repository, reader: GitReader) -> list[str]:
    """Resolve the repository's unresolved commits against the mirror and fill in what is known
    about every commit. Returns one message per SHA that could not be resolved."""
    problems = []
    for commit in Commit.objects.filter(Q(resolved=False) | Q(committed_at__isnull=True), repository=repository):
        try:
            full = reader.resolve(commit.sha)
            info = reader.commit_info(full)
        except RecheckError as error:
            problems.append(str(error))
            continue
        _commit_complete(commit, full, info)
    return problems


def _commit_complete(commit: Commit, full: str, info) -> None:
    values = {
        "sha": full,
        "resolved": True,
        "message": info.message.strip(),
        "author": info.author,
        "committed_at": info.committed_at,
    }
    try:
        with transaction.atomic():
            Commit.objects.filter(pk=commit.pk).update(**values)
    except IntegrityError:
        # The full SHA was recorded separately: keep that row and point everything at it.
        full_commit = Commit.objects.get(repository=commit.repository, sha=full)
        _commit_merge(commit, into=full_commit)
        Commit.objects.filter(pk=full_commit.pk).update(**values)


@transaction.atomic
def _commit_merge(duplicate: Commit, *, into: Commit) -> None:
    """Repoint everything that refers to `duplicate` at `into`, then delete it."""
    for relation in Commit._meta.related_objects:
        model, field = relation.related_model, relation.field.name
        if model._meta.label == "reviews.PinnedCommit":
            # A pull request pins a commit once: drop the duplicate pin where both exist.
            taken = model.objects.filter(**{field: into}).values_list("pull_request_id", flat=True)
            model.objects.filter(**{field: duplicate}, pull_request_id__in=list(taken)).delete()
        if model._meta.label == "findings.Verification":
            taken = model.objects.filter(**{field: into}).values_list("finding_id", flat=True)
            model.objects.filter(**{field: duplicate}, finding_id__in=list(taken)).delete()
        model.objects.filter(**{field: duplicate}).update(**{field: into})
    duplicate.delete()
    logger.info("Merged commit %s into %s", duplicate.sha, into.sha)


def commit_resolve(*, repository: Repository, sha: str, fetch: bool = True) -> str:
    """The full SHA `sha` names in the repository, fetching first. Raises a RecheckError that says
    whether the repository is unreachable, or the commit unknown or ambiguous."""
    fetch_problem = None
    if fetch:
        try:
            repository_fetch(repository=repository)
        except RepositoryError as error:
            fetch_problem = error
    try:
        with repository_reader(repository) as reader:
            return reader.resolve(sha)
    except RecheckError as error:
        if fetch_problem is not None:
            raise fetch_problem from error
        raise
