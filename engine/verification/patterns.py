"""Pattern evidence: does a regular expression (still) match in a file or a glob of files?"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from core.errors import InvalidPattern
from core.errors import RecheckError
from engine.git import GitReader, is_glob, match_paths, validate_glob

from engine.verification.paths import current_path
from engine.verification.results import CheckResult, gone, holds
from engine.verification.specs import ABSENT, PRESENT, EvidenceSpec
from engine.verification.successors import NEAR_FILES, Replaced, Successor
from engine.verification.textcaches import cache_for

if TYPE_CHECKING:
    import regex as re


# A reviewer's regex runs over whole files: one that backtracks catastrophically must fail the
# check, not hold a worker for the task's whole time limit. The `regex` package can time out.
SEARCH_TIMEOUT_SECONDS = 2.0


def compile_pattern(regex: str) -> re.Pattern:
    """Compile ``regex`` (Python ``re`` syntax) with MULTILINE, or raise InvalidPattern."""
    if not isinstance(regex, str) or not regex:
        raise InvalidPattern("the pattern is empty; give a regular expression to look for")
    # Imported by the first pattern, not with the engine: the `regex` package takes longer to
    # import than the rest of the verification engine together, and most evidence is snippets.
    import regex as re

    try:
        return re.compile(regex, re.MULTILINE | re.VERSION0)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise InvalidPattern(
            f"{regex!r} is not a valid regular expression ({exc.msg}{where}); "
            "fix it using Python re syntax"
        ) from exc
    except (OverflowError, RecursionError) as exc:
        raise InvalidPattern(f"{regex!r} is too large or too deeply nested; simplify it") from exc


def check_pattern(reader: GitReader, spec: EvidenceSpec, target: str, *, successors: bool = True) -> CheckResult:
    regex = compile_pattern(spec.regex)
    expect = spec.expect or PRESENT
    if expect not in (PRESENT, ABSENT):
        raise RecheckError(f"pattern expectation {expect!r} is unknown; use 'present' or 'absent'")
    if not spec.path:
        raise RecheckError("pattern evidence needs a path or a glob (e.g. src/**/*.py)")
    scope = _scope(reader, spec, reader.resolve(target))
    match = _search(reader, scope, regex)
    if match is not None:
        path, first, last = match
        if expect == PRESENT:
            return holds(path, scope.with_note(f"matches at {path}:{first}"), first, last)
        return gone(path, scope.with_note(f"now matches at {path}:{first}"), first, last)
    if scope.too_large:
        # Whatever the expectation, an unread file could change the answer.
        raise RecheckError(
            f"could not search {len(scope.too_large)} file(s) over the size limit "
            f"(e.g. {scope.too_large[0]}); raise the reader's max_blob_bytes or narrow the path"
        )
    if expect == PRESENT and successors and spec.commit:
        successor = _successor(reader, spec, regex, scope.target)
    else:
        successor = None
    if not scope.paths:
        return gone(scope.label, scope.empty_reason, successor=successor)
    if expect == PRESENT:
        return gone(scope.label, scope.with_note(f"no longer matches in {scope.description}"), successor=successor)
    return holds(scope.label, scope.with_note(f"no match in {scope.description}"))


def _successor(reader: GitReader, spec: EvidenceSpec, regex: re.Pattern, target: str) -> Successor | None:
    """What replaced the lines the pattern matched at the commit it was recorded at (its first
    match there, in path order), found as a snippet's successor is; None when it matched nothing
    there, or what replaced them cannot be told."""
    try:
        commit = reader.resolve(spec.commit)
        at_commit = _scope(reader, replace(spec, commit=None), commit)
        match = _search(reader, at_commit, regex)
        if match is None:
            return None
        path, first, last = match
        cache = cache_for(reader)
        before = cache.file(reader, commit, path)
        if before is None or before.problem:
            return None
        replaced = Replaced(path, first, list(before.lines[first - 1 : last]))
        where, _ = current_path(reader, commit, target, path)
        current = cache.file(reader, target, where) if where else None
        if current is not None and current.problem:
            return None
        hunks = cache.line_changes(reader, before, current) if current is not None else None
        successor = replaced.in_file(hunks, len(before.lines), current, where)
        if replaced.wants_near:
            corpus = cache.corpus(reader, commit, target)
            successor = replaced.near(corpus.holding(reader, [replaced.anchors], limit=NEAR_FILES)[0])
        return successor
    except RecheckError:
        return None  # the pattern is gone all the same; only what replaced its lines cannot be told


@dataclass
class _Scope:
    """The files a pattern is searched in at the target."""

    target: str
    label: str  # the path or glob reported in results
    paths: list[str]
    strict: bool  # a single named file must be text; in a glob, binary files are just not code
    description: str
    empty_reason: str
    note: str = ""
    too_large: list[str] = field(default_factory=list)

    def with_note(self, detail: str) -> str:
        return f"{self.note}; {detail}" if self.note else detail


def _scope(reader: GitReader, spec: EvidenceSpec, target: str) -> _Scope:
    pattern = validate_glob(spec.path)
    if is_glob(pattern):
        paths = match_paths(pattern, reader.list_paths(target))
        return _Scope(
            target, pattern, paths, strict=False,
            description=f"{len(paths)} file(s) matching {pattern}",
            empty_reason=f"no file matches {pattern}",
        )
    where, renamed_from = current_path(reader, spec.commit, target, pattern)
    return _Scope(
        target, where or pattern, [where] if where else [], strict=True,
        description=where or pattern,
        empty_reason=f"{pattern} no longer exists",
        note=f"file renamed from {renamed_from} to {where}" if renamed_from else "",
    )


def _search(reader: GitReader, scope: _Scope, regex: re.Pattern) -> tuple[str, int, int] | None:
    """(path, first line, last line) of the first match, in path order."""
    cache = cache_for(reader)
    for path in scope.paths:
        file = cache.file(reader, scope.target, path)
        if file is None:
            continue
        if file.problem:
            if scope.strict:
                file.require_text()
            if file.too_large:
                scope.too_large.append(path)
            continue
        try:
            match = regex.search(file.text, timeout=SEARCH_TIMEOUT_SECONDS)
        except TimeoutError:
            raise RecheckError(
                f"the pattern took more than {SEARCH_TIMEOUT_SECONDS:g}s on {path} and was stopped; "
                "simplify it (nested repetition such as (a+)+ backtracks without end)"
            ) from None
        if match is not None:
            return (path, *_line_span(file.text, match))
    return None


def _line_span(text: str, match: re.Match) -> tuple[int, int]:
    first = text.count("\n", 0, match.start()) + 1
    # A match that ends with a newline ends on the line before it.
    last_char = max(match.start(), match.end() - 1)
    return first, first + text.count("\n", match.start(), last_char)


@dataclass(frozen=True)
class PatternMatch:
    path: str
    line: int
    text: str  # the first matching line, as it reads in the file


# What a person trying a pattern is shown at most: enough to see whether it is too broad.
TRY_MATCHES = 50


def pattern_matches(
    reader: GitReader, spec: EvidenceSpec, target: str, *, limit: int = TRY_MATCHES
) -> tuple[list[PatternMatch], bool]:
    """Every match of a pattern at ``target`` (up to ``limit``), in the files ``check_pattern``
    searches, with the same compilation, scope and timeout: what a reviewer is shown when
    trying a pattern before recording it. Returns (matches, more) where ``more`` says the limit
    cut the list. Raises InvalidPattern / RecheckError with the engine's own messages."""
    regex = compile_pattern(spec.regex)
    if not spec.path:
        raise RecheckError("pattern evidence needs a path or a glob (e.g. src/**/*.py)")
    scope = _scope(reader, spec, reader.resolve(target))
    cache = cache_for(reader)
    matches: list[PatternMatch] = []
    for path in scope.paths:
        file = cache.file(reader, scope.target, path)
        if file is None or file.problem:
            if file is not None and scope.strict:
                file.require_text()
            continue
        try:
            for match in regex.finditer(file.text, timeout=SEARCH_TIMEOUT_SECONDS):
                first, _ = _line_span(file.text, match)
                if len(matches) == limit:
                    return matches, True
                matches.append(PatternMatch(path, first, file.lines[first - 1] if first <= len(file.lines) else ""))
        except TimeoutError:
            raise RecheckError(
                f"the pattern took more than {SEARCH_TIMEOUT_SECONDS:g}s on {path} and was stopped; "
                "simplify it (nested repetition such as (a+)+ backtracks without end)"
            ) from None
    return matches, False
