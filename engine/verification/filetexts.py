"""Decoded file contents: the lines of one blob (``FileText``, shared by every path and commit
that hold it), and snippet lines prepared for matching (``Needle``), found in a file's text by one
C-speed substring search and compared line by line.

Decoding a blob into a FileText, and keeping it, is the caches' work (``textcaches``).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.errors import RecheckError
from engine.git import split_lines


class Needle:
    """Snippet lines prepared for matching: trailing (and, loosely, leading) whitespace ignored."""

    __slots__ = ("keys", "stripped", "longest")

    def __init__(self, text: str) -> None:
        lines = split_lines(text)
        self.keys = [line.rstrip() for line in lines]
        self.stripped = [line.strip() for line in lines]
        if not any(self.stripped):
            raise RecheckError("the snippet text is blank; record the lines of code the finding is about")
        # The most telling line to search for: the longest is the least likely to recur.
        self.longest = max(range(len(lines)), key=lambda offset: len(self.stripped[offset]))

    def __len__(self) -> int:
        return len(self.keys)


class FileText:
    """The lines of one blob. ``problem`` is set (and lines empty) for binary or oversized blobs.

    Identical blobs share one FileText, so ``path`` is only where it was
    first read; callers report the path they asked for.
    """

    __slots__ = (
        "path", "sha", "size", "lines", "problem", "too_large",
        "_keys", "_stripped", "_text", "__weakref__",
    )

    def __init__(
        self, path: str, sha: str, lines: Sequence[str], problem: str | None = None, *, too_large: bool = False
    ) -> None:
        self.path = path
        self.sha = sha
        self.size = sum(map(len, lines))
        # Tuples, not lists, here and below: the caches keep thousands of files' lines for as long
        # as a run (or a worker) lasts. The cyclic collector stops tracking a tuple of strings after
        # its first pass, but walks every item of every list on each full pass: after verifying
        # 10,000 items, a full pass took 37 ms with lists and 13 ms with tuples, and storing the
        # results and writing the report make several.
        self.lines = tuple(lines)
        self.problem = problem
        self.too_large = too_large
        self._keys: tuple[str, ...] | None = None
        self._stripped: tuple[str, ...] | None = None
        self._text: str | None = None

    def require_text(self) -> FileText:
        if self.problem:
            raise RecheckError(self.problem)
        return self

    @property
    def keys(self) -> tuple[str, ...]:
        """Lines with trailing whitespace removed: what exact matching compares."""
        if self._keys is None:
            self._keys = tuple([line.rstrip() for line in self.lines])
        return self._keys

    @property
    def stripped(self) -> tuple[str, ...]:
        """Lines with surrounding whitespace removed: what re-indent matching compares."""
        if self._stripped is None:
            self._stripped = tuple([line.strip() for line in self.lines])
        return self._stripped

    @property
    def text(self) -> str:
        """The content with LF line ends (CRLF normalised), for regex search."""
        if self._text is None:
            self._text = "\n".join(self.lines)
        return self._text

    def matches_at(self, needle: Needle, position: int, *, loose: bool) -> bool:
        """True when the needle sits at 0-based ``position``."""
        if position < 0 or position + len(needle) > len(self.lines):
            return False
        window = self.lines[position : position + len(needle)]
        if loose:
            return [line.strip() for line in window] == needle.stripped
        return [line.rstrip() for line in window] == needle.keys

    def occurrences(self, needle: Needle, *, loose: bool) -> list[int]:
        """All 0-based start positions of the needle.

        Its longest line is searched for in the file's text (a C-speed substring search, with
        line numbers counted from the offsets) and every hit is then compared line by line, so
        no per-line index of the file is ever built."""
        anchor = needle.longest
        probe = needle.stripped[anchor]
        text = self.text
        positions = []
        line, counted_to = 0, 0
        at = text.find(probe)
        while at != -1:
            line += text.count("\n", counted_to, at)
            counted_to = at
            start = line - anchor
            if self.matches_at(needle, start, loose=loose) and (not positions or positions[-1] != start):
                positions.append(start)
            end_of_line = text.find("\n", at)
            if end_of_line == -1:
                break
            at = text.find(probe, end_of_line + 1)
        return positions

    def count_line(self, line: str, *, loose: bool) -> int:
        """How many lines equal ``line`` (stripped, or with trailing whitespace removed)."""
        substrings = self.text.count(line)
        if substrings <= 1:
            return substrings  # a line that occurs is a substring that occurs
        return (self.stripped if loose else self.keys).count(line)
