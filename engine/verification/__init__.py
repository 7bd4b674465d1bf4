"""Checking evidence items at a target commit (plain Python, no Django).

    from engine.verification import EvidenceSpec, check_evidence, verdict_for

    with GitReader(mirror_dir) as reader:
        results = [check_evidence(reader, spec, target_sha) for spec in specs]
    verdict = verdict_for(results)

or, for many items, ``EvidenceChecks`` (the same results, with the search for code that left
its file done once for all the items that need it).

Caches (file lines, indexes, diffs) live as long as the reader, so check
all items of a run with the same reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

from core.errors import RecheckError
from engine.git import GitReader, is_glob, validate_repo_path

from engine.verification.corpus import Corpus
from engine.verification.gitlinks import check_gitlink
from engine.verification.paths import check_path
from engine.verification.patterns import check_pattern, compile_pattern
from engine.verification.results import (
    ERROR,
    GONE,
    HOLDS,
    UNCHECKED,
    CheckResult,
    error,
    unchecked,
)
from engine.verification.snippets import SnippetSearch, check_snippet, snippet_search, snippet_text_at
from engine.verification.specs import (
    GITLINK,
    GITLINK_EXPECTATIONS,
    KINDS,
    NOTE,
    PATH,
    PATTERN,
    SNIPPET,
    EvidenceSpec,
    SubmoduleSource,
)
from engine.verification.successors import NEAR_FILES, SUCCESSOR_KINDS, Successor
from engine.verification.textcaches import TextCache, cache_for
from engine.verification.verdicts import (
    ERRORED,
    LIKELY_FIXED,
    PARTLY_FIXED,
    PRESENT,
    UNVERIFIABLE,
    verdict_for,
)

_CHECKS: dict[str, Callable[[GitReader, EvidenceSpec, str], CheckResult]] = {
    SNIPPET: check_snippet,
    PATTERN: check_pattern,
    PATH: check_path,
    GITLINK: check_gitlink,
}


@contextmanager
def files_prefetched(reader: GitReader, commit: str, paths: Iterable[str], since: Iterable[str] = ()) -> Iterator[None]:
    """Read these files at ``commit`` into the reader's caches while the block runs: git reads
    them in a process of its own, and they are taken in as the block ends. The block does the
    work that needs none of them (loading what the files will be checked against, preparing the
    checks: ``EvidenceChecks.prepare``); it may use ``reader``, whose own git process is not the
    one reading. With ``since`` (the commits the evidence was recorded at), git also works out
    what changed from each to ``commit`` meanwhile, which checks ask when a snippet left its place.

    Only an optimisation before checking many items: paths that are unsafe, globs or not files
    are skipped here and reported by their own checks, and so is a read that fails."""
    safe = []
    for path in paths:
        try:
            if path and not is_glob(path):
                safe.append(validate_repo_path(path))
        except RecheckError:
            continue
    cache = cache_for(reader)
    try:
        full = reader.resolve(commit)
        reads = cache.prefetch_start(reader, full, safe)
    except RecheckError:
        reads = None  # each check reads its own file again and reports the problem
    started = []
    for recorded_at in since:
        try:
            reader.start_changes(recorded_at, commit)
            started.append(reader.resolve(recorded_at))
        except RecheckError:
            continue  # the checks report an unknown commit
    try:
        yield
        if reads is not None:
            try:
                cache.prefetch_finish(reader, full, reads)
                _renamed_prefetch(reader, cache, full, safe, started)
            except RecheckError:
                pass  # as above
    finally:
        if reads is not None:
            reads.close()


def _renamed_prefetch(reader: GitReader, cache: TextCache, commit: str, paths: list[str], since: list[str]) -> None:
    """Read the files among ``paths`` that git sees renamed since ``since`` at their new paths,
    together: each check would otherwise ask for its own, one round trip with git apiece."""
    missing = cache.uncached(commit, paths)
    if not missing:
        return
    renamed: dict[str, None] = {}
    for recorded_at in since:
        renames = cache.renames(reader, recorded_at, commit)
        renamed.update((renames[path], None) for path in missing if path in renames)
    if renamed:
        cache.prefetch(reader, commit, renamed)


def check_evidence(reader: GitReader, spec: EvidenceSpec, target: str, *, successors: bool = True) -> CheckResult:
    """Check one evidence item at ``target`` (a SHA or ref). A snippet or pattern that is gone
    carries its successor (``successors``) unless ``successors`` is False.

    Never raises for bad input or repository content: those become a result
    in state "error" whose detail says what is wrong and what to do.
    """
    if spec.kind == NOTE:
        return unchecked("not checkable by machine")
    check = _CHECKS.get(spec.kind)
    if check is None:
        return error(f"unknown evidence kind {spec.kind!r}; use one of {', '.join(KINDS)}")
    try:
        if spec.kind in (SNIPPET, PATTERN):
            return check(reader, spec, target, successors=successors)  # type: ignore[call-arg]
        return check(reader, spec, target)
    except (RecheckError, OSError) as exc:
        return _failed(exc)


def _failed(exc: RecheckError | OSError) -> CheckResult:
    if isinstance(exc, RecheckError):
        return error(str(exc))
    return error(f"reading the repository failed ({exc}); check the mirror and retry")


class Prepared(NamedTuple):
    """An evidence item made ready to check (``EvidenceChecks.prepare``): a snippet's search, set
    up, or why it cannot be checked."""

    spec: EvidenceSpec
    search: SnippetSearch | None = None
    failed: CheckResult | None = None


class EvidenceChecks:
    """Many evidence items checked at one target, each as ``check_evidence`` would, except that
    the search of the changed files for snippets that left their file waits for ``results`` and
    is then done in one pass over those files for all of them: past what a corpus keeps in
    memory, each of its files is read from git once rather than once per such snippet."""

    def __init__(self, reader: GitReader, target: str, *, successors: bool = True) -> None:
        self._reader = reader
        self._target = target
        # Whether gone snippets and patterns are given their successor (off only to measure its cost).
        self._successors = successors
        self._results: list[CheckResult | None] = []
        self._waiting: dict[Corpus, list[tuple[int, SnippetSearch]]] = {}

    def prepare(self, spec: EvidenceSpec) -> Prepared:
        """What checking ``spec`` needs and reads from no file at the target: a snippet's path
        checked and its lines made ready to match. Done while git reads the files in the
        background (``files_prefetched``); ``add`` takes the answer."""
        if spec.kind != SNIPPET:
            return Prepared(spec)
        try:
            return Prepared(spec, search=snippet_search(self._reader, spec, self._target, successors=self._successors))
        except (RecheckError, OSError) as exc:
            return Prepared(spec, failed=_failed(exc))

    def add(self, item: EvidenceSpec | Prepared) -> int:
        """Check ``item`` (a spec, or what ``prepare`` made of one), or start to; its result will
        be ``results()[number]``."""
        prepared = item if isinstance(item, Prepared) else self.prepare(item)
        number = len(self._results)
        search = prepared.search
        if prepared.failed is not None:
            result = prepared.failed
        elif search is None:
            result = check_evidence(self._reader, prepared.spec, self._target, successors=self._successors)
        else:
            try:
                result = search.in_place()
            except (RecheckError, OSError) as exc:
                result = _failed(exc)
            if result is None and search.corpus is not None:
                self._waiting.setdefault(search.corpus, []).append((number, search))
        self._results.append(result)
        return number

    def results(self) -> list[CheckResult]:
        """Every item's result, in the order added."""
        for corpus, waiting in self._waiting.items():
            try:
                found, held = corpus.search(
                    self._reader, [(search.needle, search.exclude) for _, search in waiting],
                    [search.anchors for _, search in waiting], limit=NEAR_FILES,
                )
            except (RecheckError, OSError) as exc:
                failed = _failed(exc)
                for number, _ in waiting:
                    self._results[number] = failed
                continue
            self._diffs_prefetched(waiting, found)
            for (number, search), answer, paths in zip(waiting, found, held, strict=True):
                result = search.elsewhere(answer)
                if search.near_wanted is not None:
                    # Removed lines, or a deleted file: is a near copy among the files found holding them?
                    try:
                        result = search.near(corpus.texts(self._reader, paths))
                    except (RecheckError, OSError):
                        result = search.near([])  # the removal or deletion stands, without a near copy
                self._results[number] = result
        self._waiting.clear()
        return list(self._results)  # every item has its result by now

    def _diffs_prefetched(self, waiting: list[tuple[int, SnippetSearch]], found: list) -> None:
        """The diffs of the gone snippets' files since their commits, which their successors are
        read from, worked out by one git process per commit rather than one per file."""
        paths: dict[tuple[str, str], list[str]] = {}
        for (_, search), answer in zip(waiting, found, strict=True):
            path = search.diff_wanted(answer)
            if path is not None:
                assert search.commit is not None
                paths.setdefault((search.commit, search.target), []).append(path)
        cache = cache_for(self._reader)
        for (commit, target), wanted in paths.items():
            try:
                cache.prefetch_line_changes(self._reader, commit, target, wanted)
            except (RecheckError, OSError):
                pass  # each successor asks git for its own diff, and is left out if that fails too



__all__ = [
    "ERROR",
    "ERRORED",
    "GONE",
    "HOLDS",
    "LIKELY_FIXED",
    "PARTLY_FIXED",
    "PRESENT",
    "UNCHECKED",
    "UNVERIFIABLE",
    "CheckResult",
    "EvidenceChecks",
    "EvidenceSpec",
    "Prepared",
    "GITLINK_EXPECTATIONS",
    "SUCCESSOR_KINDS",
    "SubmoduleSource",
    "Successor",
    "check_evidence",
    "compile_pattern",
    "files_prefetched",
    "snippet_text_at",
    "verdict_for",
]
