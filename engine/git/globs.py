"""Glob patterns over repository paths.

Semantics (as in .gitignore/pathspec globs): ``*`` and ``?`` never cross
``/``, ``[...]`` is a character class (``[!...]`` negates), and a whole
``**`` component matches any number of directories, including none, so
``src/**/*.py`` matches both ``src/a.py`` and ``src/x/y/a.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from engine.git.safety import validate_glob

_GLOB_CHARS = re.compile(r"[*?\[]")


def is_glob(pattern: str) -> bool:
    """True when ``pattern`` contains glob syntax rather than naming one path."""
    return bool(_GLOB_CHARS.search(pattern))


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """Return a predicate telling whether a repository path matches ``pattern``."""
    regex = re.compile(_translate(validate_glob(pattern)))
    return lambda path: regex.fullmatch(path) is not None


def match_paths(pattern: str, paths: Iterable[str]) -> list[str]:
    """The paths matching ``pattern``, in the order given."""
    matches = glob_matcher(pattern)
    return [path for path in paths if matches(path)]


def _translate(pattern: str) -> str:
    parts = pattern.split("/")
    out: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append(".+" if last else "(?:[^/]+/)*")
        else:
            out.append(_translate_component(part) + ("" if last else "/"))
    return "".join(out)


def _translate_component(part: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            while i + 1 < len(part) and part[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end, charclass = _charclass(part, i)
            if charclass is None:
                out.append(re.escape(ch))
            else:
                out.append(charclass)
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _charclass(part: str, start: int) -> tuple[int, str | None]:
    """Translate ``[...]`` starting at ``start``; (index of ``]``, regex) or (start, None)."""
    i = start + 1
    negate = i < len(part) and part[i] in "!^"
    if negate:
        i += 1
    # A ']' right after the opening bracket is a literal member.
    end = part.find("]", i + 1 if i < len(part) and part[i] == "]" else i)
    if end == -1:
        return start, None
    body = part[i:end].replace("\\", "\\\\").replace("^", "\\^").replace("[", "\\[")
    body = body.replace("]", "\\]")
    # Components never contain '/', so a negated class must exclude it explicitly.
    return end, f"[^/{body}]" if negate else f"[{body}]"
