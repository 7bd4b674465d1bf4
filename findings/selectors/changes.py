"""What a pull request changes, as git knows it: the files between its base and its head, with the
lines added and removed (git's own numstat), summed by directory, its new and deleted files, its
renames, and which of them the PR's findings touch. The site's "What does #N change?" page and the
API read this one answer.

The base is the PR's base pin, or else where its head forks from the repository's default branch
(the merge-base); the head is its latest head pin, or else its latest pin. What two SHAs change
never changes, so the listing is cached by them."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.core.cache import cache

from core.errors import AmbiguousCommit, CommitNotFound, RecheckError
from engine.git.diffstat import DirectoryStat, FileStat, by_directory, diff_numstat
from engine.git.globs import glob_matcher, is_glob
from engine.git.history import merge_base
from findings.models import Finding
from reviews.mirrors import FETCH_FAILED_PUBLIC, repository_reader_holding
from reviews.models import PinnedCommit, PullRequest

logger = logging.getLogger(__name__)

CACHE_SECONDS = 24 * 3600
BASE_PIN = "base pin"
MERGE_BASE = "merge-base"


class ChangesUnavailable(RecheckError):
    """What the PR changes cannot be read now (no pins, no mirror, a commit it lacks): says why."""


@dataclass(frozen=True)
class TouchedFile:
    """A changed file and the numbers of the PR's findings whose evidence names it (or, for a
    rename, its old path)."""

    stat: FileStat
    findings: tuple[int, ...] = ()


@dataclass
class PullRequestChanges:
    pull_request: PullRequest
    base_sha: str
    head_sha: str
    # How the base was chosen: BASE_PIN, or MERGE_BASE with the default branch.
    base_source: str
    files: list[TouchedFile] = field(default_factory=list)

    @property
    def directories(self) -> list[DirectoryStat]:
        return by_directory([item.stat for item in self.files])

    @property
    def added(self) -> int:
        return sum(item.stat.added or 0 for item in self.files)

    @property
    def removed(self) -> int:
        return sum(item.stat.removed or 0 for item in self.files)

    @property
    def new_files(self) -> list[TouchedFile]:
        return [item for item in self.files if item.stat.status == "A"]

    @property
    def deleted_files(self) -> list[TouchedFile]:
        return [item for item in self.files if item.stat.status == "D"]

    @property
    def renames(self) -> list[TouchedFile]:
        return [item for item in self.files if item.stat.old_path is not None]

    @property
    def touched(self) -> list[TouchedFile]:
        return [item for item in self.files if item.findings]

    def directory_findings(self, directory: str) -> int:
        """How many findings touch a file of `directory` (its own files)."""
        return len({number for item in self.files if item.stat.directory == directory for number in item.findings})


def _pins(pull_request: PullRequest, pins) -> tuple[PinnedCommit | None, PinnedCommit | None]:
    if pins is None:
        pins = list(PinnedCommit.objects.filter(pull_request=pull_request).select_related("commit").in_order())
    base = next((pin for pin in pins if pin.role == PinnedCommit.Role.BASE), None)
    heads = [pin for pin in pins if pin.role == PinnedCommit.Role.HEAD]
    later = [pin for pin in pins if pin.role != PinnedCommit.Role.BASE]
    head = (heads or later or [None])[-1]
    return base, head


def pull_request_changes(pull_request: PullRequest, *, pins=None) -> PullRequestChanges:
    """The files `pull_request` changes between its base and its head; ChangesUnavailable says why
    they cannot be read (nothing pinned, no mirror, a commit or branch the mirror lacks). `pins`,
    when the caller has them loaded, are the PR's pins in order, with their commits."""
    base_pin, head_pin = _pins(pull_request, pins)
    repository = pull_request.repository
    if head_pin is None:
        raise ChangesUnavailable(
            f"No commit is pinned to {pull_request.reference} beyond its base, so what it changes is not known yet."
        )
    try:
        pinned = [pin.commit.sha for pin in (base_pin, head_pin) if pin is not None]
        with repository_reader_holding(repository, pinned) as reader:
            head = reader.resolve(head_pin.commit.sha)
            if base_pin is not None:
                base, source = reader.resolve(base_pin.commit.sha), BASE_PIN
            else:
                fork = merge_base(reader, reader.resolve(repository.default_branch), head)
                if fork is None:
                    raise ChangesUnavailable(
                        f"The head of {pull_request.reference} shares no history with {repository.default_branch}, "
                        "and no base commit is pinned: pin its base to see what it changes."
                    )
                base, source = fork, MERGE_BASE
            key = f"pull-request-changes:{repository.pk}:{base}:{head}"
            stats = cache.get(key)
            if stats is None:
                stats = diff_numstat(reader, base, head)
                cache.set(key, stats, CACHE_SECONDS)
    except ChangesUnavailable:
        raise
    except RecheckError as error:
        raise ChangesUnavailable(
            f"The repository {repository.slug} could not be read, so what {pull_request.reference} changes is not "
            f"shown: {_why(repository, error)}"
        ) from error
    return PullRequestChanges(
        pull_request=pull_request, base_sha=base, head_sha=head, base_source=source,
        files=_touched(pull_request, stats),
    )


def _why(repository, error: RecheckError) -> str:
    """Why the mirror could not answer, in words fit for any reader: a failed fetch is the cause
    when there was one (not the commit it left missing), and git's own messages, which name this
    server's paths, go to the log."""
    if repository.fetch_error:
        return f"{FETCH_FAILED_PUBLIC}."
    if isinstance(error, (CommitNotFound, AmbiguousCommit)):
        return f"{error}."
    if "has not been fetched yet" in str(error):
        return str(error)
    logger.warning("Reading what a pull request changes from the mirror of %s failed: %s", repository.slug, error)
    return "its mirror could not be read just now; retry in a moment."


def _touched(pull_request: PullRequest, stats: list[FileStat]) -> list[TouchedFile]:
    """Each changed file with the findings whose evidence (or own location) names it: one query."""
    exact: dict[str, set[int]] = {}
    globs: list[tuple[object, int]] = []
    # Each finding's own location (where the review points a reader first) and its evidence's
    # paths, in one query: a row per evidence item, the finding's path on each.
    rows = Finding.objects.filter(pull_request=pull_request).values_list("number", "path", "evidence__path")
    paths = {(number, path) for number, own, evidence in rows for path in (own, evidence) if path}
    for number, path in paths:
        if is_glob(path):
            globs.append((glob_matcher(path), number))
        else:
            exact.setdefault(path.strip("/"), set()).add(number)
    files = []
    for stat in stats:
        names = [stat.path] + ([stat.old_path] if stat.old_path else [])
        numbers = {number for name in names for number in exact.get(name, ())}
        numbers |= {number for matches, number in globs if any(matches(name) for name in names)}
        files.append(TouchedFile(stat=stat, findings=tuple(sorted(numbers))))
    return files
