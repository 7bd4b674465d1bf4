"""Checking evidence items at a target commit (plain Python, no Django).

    from findings.verification import EvidenceSpec, check_evidence, verdict_for

    with GitReader(mirror_dir) as reader:
        results = [check_evidence(reader, spec, target_sha) for spec in specs]
    verdict = verdict_for(results)

Caches (file lines, indexes, diffs) live as long as the reader, so check
all items of a run with the same reader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from reviews.git.errors import RecheckError
from reviews.git import GitReader, is_glob, validate_repo_path

from findings.verification.gitlinks import check_gitlink
from findings.verification.paths import check_path
from findings.verification.patterns import check_pattern, compile_pattern
from findings.verification.results import (
    ERROR,
    GONE,
    HOLDS,
    UNCHECKED,
    CheckResult,
    error,
    unchecked,
)
from findings.verification.snippets import check_snippet, snippet_text_at
from findings.verification.specs import (
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
from findings.verification.texts import cache_for
from findings.verification.verdicts import (
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


def prefetch_files(reader: GitReader, commit: str, paths: Iterable[str]) -> None:
    """Read these files at ``commit`` into the reader's caches in one pipelined exchange with git.

    Only an optimisation before checking many items: paths that are unsafe, globs or not files
    are skipped here and reported by their own checks."""
    safe = []
    for path in paths:
        try:
            if path and not is_glob(path):
                safe.append(validate_repo_path(path))
        except RecheckError:
            continue
    try:
        cache_for(reader).prefetch(reader, reader.resolve(commit), safe)
    except RecheckError:
        return  # each check reads its own file again and reports the problem


def check_evidence(reader: GitReader, spec: EvidenceSpec, target: str) -> CheckResult:
    """Check one evidence item at ``target`` (a SHA or ref).

    Never raises for bad input or repository content: those become a result
    in state "error" whose detail says what is wrong and what to do.
    """
    if spec.kind == NOTE:
        return unchecked("not checkable by machine")
    check = _CHECKS.get(spec.kind)
    if check is None:
        return error(f"unknown evidence kind {spec.kind!r}; use one of {', '.join(KINDS)}")
    try:
        return check(reader, spec, target)
    except RecheckError as exc:
        return error(str(exc))
    except OSError as exc:
        return error(f"reading the repository failed ({exc}); check the mirror and retry")


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
    "EvidenceSpec",
    "GITLINK_EXPECTATIONS",
    "SubmoduleSource",
    "check_evidence",
    "compile_pattern",
    "prefetch_files",
    "snippet_text_at",
    "verdict_for",
]
