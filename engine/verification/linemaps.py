"""Line mappings between two versions of a file: where a line of the old blob is in the new one,
from the hunks of git's diff between them (``GitReader.blob_line_changes``)."""

from __future__ import annotations

from bisect import bisect_right


class LineMap:
    """Maps 0-based line numbers of an old version of a file onto the new version, by the hunks
    of git's diff between the two (``GitReader.blob_line_changes``): the lines between hunks are
    the unchanged blocks."""

    __slots__ = ("_starts", "_blocks")

    def __init__(self, hunks: list[tuple[int, int, int, int]], old_length: int) -> None:
        blocks = []
        old_at = new_at = 0
        for old_start, old_count, new_start, new_count in hunks:
            # With -U0, a count of 0 names the line after which lines were added (or removed).
            old_change = old_start - 1 if old_count else old_start
            new_change = new_start - 1 if new_count else new_start
            blocks.append((old_at, new_at, max(old_change - old_at, 0)))
            old_at, new_at = old_change + old_count, new_change + new_count
        blocks.append((old_at, new_at, max(old_length - old_at, 0)))
        self._blocks = blocks
        self._starts = [a for a, _, _ in blocks]

    def map(self, old_line: int) -> int:
        """Where ``old_line`` is now; for changed lines, the nearest sensible position."""
        # The first block starts at line 0, so there always is a preceding block.
        at = max(bisect_right(self._starts, old_line) - 1, 0)
        a, b, size = self._blocks[at]
        if old_line < a + size:
            return b + (old_line - a)
        # Inside a changed region: keep the offset from the preceding unchanged block.
        mapped = b + size + (old_line - a - size)
        if at + 1 < len(self._blocks):
            mapped = min(mapped, self._blocks[at + 1][1])
        return mapped
