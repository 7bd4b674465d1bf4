"""Pattern evidence: does a regular expression (still) match in a file or a glob of files?"""

from __future__ import annotations

import re

from recheck.errors import InvalidPattern, RecheckError
from reviews.git import GitReader, is_glob, match_paths, validate_glob, validate_repo_path

from findings.verification.paths import current_path
from findings.verification.results import CheckResult, gone, holds
from findings.verification.specs import ABSENT, PRESENT, EvidenceSpec
from findings.verification.texts import FileText, cache_for


def compile_pattern(regex: str) -> re.Pattern[str]:
    """Compile ``regex`` as Python ``re`` with MULTILINE, or raise InvalidPattern."""
    if not isinstance(regex, str) or not regex:
        raise InvalidPattern("the pattern is empty; give a regular expression to look for")
    try:
        return re.compile(regex, re.MULTILINE)
    except re.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise InvalidPattern(
            f"{regex!r} is not a valid regular expression ({exc.msg}{where}); "
            "fix it using Python re syntax"
        ) from exc
    except (OverflowError, RecursionError) as exc:
        raise InvalidPattern(f"{regex!r} is too large or too deeply nested; simplify it") from exc


def check_pattern(reader: GitReader, spec: EvidenceSpec, target: str) -> CheckResult:
    regex = compile_pattern(spec.regex)
    expect = spec.expect or PRESENT
    if expect not in (PRESENT, ABSENT):
        raise RecheckError(f"pattern expectation {expect!r} is unknown; use 'present' or 'absent'")
    if not spec.path:
        raise RecheckError("pattern evidence needs a path or a glob (e.g. src/**/*.py)")
    target_sha = reader.resolve(target)
    scope = _Scope.build(reader, spec, target_sha)
    match = scope.search(regex)
    if match is not None:
        path, first, last = match
        if expect == PRESENT:
            return holds(path, f"matches at {path}:{first}", first, last)
        return gone(path, f"now matches at {path}:{first}", first, last)
    if scope.too_large:
        raise RecheckError(
            f"could not search {len(scope.too_large)} file(s) over the size limit "
            f"(e.g. {scope.too_large[0]}); raise the reader's max_blob_bytes or narrow the path"
        )
    if not scope.paths:
        return gone(scope.label, scope.empty_reason)
    if expect == PRESENT:
        return gone(scope.label, f"no longer matches in {scope.description}")
    return holds(scope.label, f"no match in {scope.description}")


class _Scope:
    """The files a pattern is searched in at the target."""

    def __init__(self, reader: GitReader, target: str, label: str, paths: list[str], *, strict: bool) -> None:
        self.reader = reader
        self.target = target
        self.label = label
        self.paths = paths
        # A single named file must be text; in a glob, binary files are simply not code.
        self.strict = strict
        self.too_large: list[str] = []
        self.description = ""
        self.empty_reason = ""

    @classmethod
    def build(cls, reader: GitReader, spec: EvidenceSpec, target: str) -> _Scope:
        if is_glob(spec.path):
            glob = validate_glob(spec.path)
            paths = match_paths(glob, reader.list_paths(target))
            scope = cls(reader, target, glob, paths, strict=False)
            scope.description = f"{len(paths)} file(s) matching {glob}"
            scope.empty_reason = f"no file matches {glob}"
            return scope
        path = validate_repo_path(spec.path)
        where, renamed_from = current_path(reader, spec.commit, target, path)
        scope = cls(reader, target, where or path, [where] if where else [], strict=True)
        scope.description = where + (f" (renamed from {renamed_from})" if renamed_from else "") if where else ""
        scope.empty_reason = f"{path} no longer exists"
        return scope

    def search(self, regex: re.Pattern[str]) -> tuple[str, int, int] | None:
        """(path, first line, last line) of the first match, in path order."""
        cache = cache_for(self.reader)
        for path in self.paths:
            file = cache.file(self.reader, self.target, path)
            if file is None or not self._readable(path, file):
                continue
            match = regex.search(file.text)
            if match is not None:
                return (path, *_line_span(file.text, match))
        return None

    def _readable(self, path: str, file: FileText) -> bool:
        if not file.problem:
            return True
        if self.strict:
            file.require_text()
        if file.too_large:
            self.too_large.append(path)
        return False


def _line_span(text: str, match: re.Match[str]) -> tuple[int, int]:
    first = text.count("\n", 0, match.start()) + 1
    # A match that ends with a newline ends on the line before it.
    last_char = max(match.start(), match.end() - 1)
    return first, first + text.count("\n", match.start(), last_char)
