"""What became of evidence that is gone: the code that replaced it, its *successor*.

Lines that are no longer at the target were recorded at a commit; git's diff of their file, from
that commit to the target (following a rename), says what happened to them:

- ``rewritten``: hunks of the diff replaced them with other lines. The successor is the span, at
  the target, of the new lines of every hunk that touches them and of their lines left unchanged
  between those hunks. A span much larger than the lines it replaced (``larger_than_rewrite``) is
  still reported whole, with ``larger`` set, never cut down to the snippet's size.
- ``removed``: the hunks that touch them only delete lines; the successor is the line now where
  they were (``end_line`` None).
- ``moved_and_changed``: they were removed (or their file was deleted) and a near copy is in a file
  changed since the recorded commit: a window of about as many lines, anchored on one of their
  lines found unchanged, whose text is at least ``SIMILARITY_FLOOR`` alike.
- ``file_deleted``: their file is gone and no near copy exists (the recorded path, no lines).

The search is bounded whatever the files: at most ``NEAR_FILES`` files and ``_WINDOWS``
windows an item, each line compared on its first ``_LINE_CHARS`` characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rapidfuzz import fuzz

from engine.verification.filetexts import FileText, Needle
from engine.verification.linemaps import LineMap

REWRITTEN = "rewritten"
REMOVED = "removed"
MOVED_AND_CHANGED = "moved_and_changed"
FILE_DELETED = "file_deleted"
SUCCESSOR_KINDS = (REWRITTEN, REMOVED, MOVED_AND_CHANGED, FILE_DELETED)

# How alike a near copy must be to the lines it stands for: rapidfuzz's ratio (the share of the two
# texts' characters that an insertion/deletion alignment keeps), of the lines stripped of their
# indentation. Below it, a block that shares a line or two with the snippet is something else.
SIMILARITY_FLOOR = 0.6
# A near copy is anchored on one of the lines that stayed the same, and only lines this long can be
# anchors: "}" or "return x" are everywhere.
_MIN_ANCHOR_CHARS = 8
# The longest of the lines are the anchors, at most this many.
_ANCHORS = 8
# At most this many files an item, in path order, are looked through for a near copy ...
NEAR_FILES = 32
# ... and at most this many windows of lines compared in them.
_WINDOWS = 400
# Characters of a line compared: a minified line of a megabyte must not cost a second.
_LINE_CHARS = 1000
# What a successor keeps of its lines and of the lines it replaced, to be shown beside each other:
# at most this many lines of at most this many characters (its bounds are never cut).
SHOWN_LINES = 40
SHOWN_CHARS = 500


def shown_text(lines) -> tuple[str, bool]:
    """The lines as a successor keeps them to be shown, and whether any was cut."""
    kept = [line[:SHOWN_CHARS] for line in lines[:SHOWN_LINES]]
    cut = len(lines) > SHOWN_LINES or any(len(line) > SHOWN_CHARS for line in lines[:SHOWN_LINES])
    return "\n".join(kept), cut


def anchor_lines(lines) -> list[str]:
    """The lines a near copy of ``lines`` is anchored on: stripped, the longest, long enough to
    tell. A snippet's own lines and the lines it was found at, stripped, give the same."""
    stripped = {line.strip()[:_LINE_CHARS] for line in lines}
    telling = sorted((line for line in stripped if len(line) >= _MIN_ANCHOR_CHARS), key=lambda line: (-len(line), line))
    return telling[:_ANCHORS]


def larger_than_rewrite(new_lines: int, old_lines: int) -> bool:
    """Whether a span of ``new_lines`` is more than a rewrite of ``old_lines``: over twice as
    many, and over ten more (a three-line snippet replaced by thirty lines is; by six is not)."""
    return new_lines > max(2 * old_lines, old_lines + 10)


@dataclass(frozen=True)
class Successor:
    """Where the code that replaced gone lines is at the target (see the module's kinds), and
    where those lines were at the commit they were recorded at."""

    kind: str
    path: str
    start_line: int | None
    end_line: int | None
    recorded_path: str
    recorded_start: int
    recorded_end: int
    larger: bool = False
    # moved_and_changed: how alike the near copy is (SIMILARITY_FLOOR to 1).
    similarity: float | None = None
    # The lines, and the lines they replaced, as ``shown_text`` keeps them; ``cut`` when either was.
    text: str = ""
    recorded_text: str = ""
    cut: bool = False

    def __post_init__(self) -> None:
        if self.kind not in SUCCESSOR_KINDS:
            raise ValueError(f"unknown successor kind {self.kind!r}; expected one of {SUCCESSOR_KINDS}")

    def as_data(self) -> dict:
        """As plain JSON data, stored with the result and read back by ``from_data``."""
        data = {
            "kind": self.kind, "path": self.path, "start_line": self.start_line, "end_line": self.end_line,
            "larger": self.larger,
            "recorded": {"path": self.recorded_path, "start_line": self.recorded_start, "end_line": self.recorded_end},
            "text": self.text, "recorded_text": self.recorded_text, "cut": self.cut,
        }
        if self.similarity is not None:
            data["similarity"] = self.similarity
        return data

    @classmethod
    def from_data(cls, data: dict) -> Successor:
        recorded = data.get("recorded") or {}
        return cls(
            kind=data["kind"], path=data["path"], start_line=data.get("start_line"), end_line=data.get("end_line"),
            recorded_path=recorded.get("path", ""), recorded_start=recorded.get("start_line") or 0,
            recorded_end=recorded.get("end_line") or 0, larger=bool(data.get("larger")),
            similarity=data.get("similarity"), text=data.get("text", ""), recorded_text=data.get("recorded_text", ""),
            cut=bool(data.get("cut")),
        )


def replaced_span(
    hunks: list[tuple[int, int, int, int]], start: int, end: int, old_length: int, new_length: int
) -> tuple[str, int, int | None] | None:
    """What the diff's ``hunks`` (git's -U0 numbering, ``GitReader.blob_line_changes``) did to
    the old lines ``start``..``end`` (1-based): (``rewritten``, first, last) of their span in the
    new version, (``removed``, the line now where they were, None), or None when no hunk touches
    them. A hunk touches them when it changes one of them or inserts lines between two of them."""
    touching = []
    changed: set[int] = set()
    for old_start, old_count, new_start, new_count in hunks:
        if old_count:
            first, last = old_start, old_start + old_count - 1
            if first > end or last < start:
                continue
            changed.update(range(max(first, start), min(last, end) + 1))
        elif not start <= old_start < end:
            continue
        touching.append((new_start, new_count))
    if not touching:
        return None
    span = [line for new_start, new_count in touching if new_count for line in (new_start, new_start + new_count - 1)]
    unchanged = [line for line in range(start, end + 1) if line not in changed]
    if unchanged:
        line_map = LineMap(hunks, old_length)
        span.extend(line_map.map(line - 1) + 1 for line in unchanged)
    if span:
        return REWRITTEN, min(span), max(span)
    # With -U0 a deletion names the line after which the lines were: the next one is where they were.
    after = touching[0][0]
    return REMOVED, max(1, min(after + 1, new_length)), None


def recorded_position(before: FileText, needle: Needle, start: int | None) -> int | None:
    """0-based start of the snippet in the file it was recorded in: at its recorded line, else its
    occurrence nearest to it (exact, then re-indented); None when that file does not hold it."""
    old = start - 1 if start is not None else None
    if old is not None and before.matches_at(needle, old, loose=False):
        return old
    positions = before.occurrences(needle, loose=False) or before.occurrences(needle, loose=True)
    if not positions:
        return None
    return min(positions, key=lambda position: (abs(position - (old or 0)), position))


class Replaced:
    """Lines of a file at the commit they were recorded at that are gone at the target, and the
    search for their successor: ``in_file`` from the diff of their file, and, when they were
    removed or their file deleted (``wants_near``), ``near`` from the files that may hold a near
    copy (``anchors`` names the lines those files must hold)."""

    def __init__(self, path: str, start: int, lines: list[str]) -> None:
        self.path = path
        self.start = start
        self.end = start + len(lines) - 1
        self.lines = [line.strip()[:_LINE_CHARS] for line in lines]
        self.recorded_text, self.recorded_cut = shown_text(lines)
        self.wants_near = False
        self._fallback: Successor | None = None

    def _successor(
        self, kind: str, path: str, start: int | None, end: int | None, file: FileText | None = None, **extra
    ) -> Successor:
        text, cut = shown_text(file.lines[start - 1 : end]) if file is not None and start and end else ("", False)
        return Successor(
            kind, path, start, end, self.path, self.start, self.end, text=text, recorded_text=self.recorded_text,
            cut=cut or self.recorded_cut, **extra,
        )

    def in_file(
        self, hunks: list[tuple[int, int, int, int]] | None, old_length: int, current: FileText | None, where: str | None
    ) -> Successor | None:
        """The successor told by the diff (``hunks``, from the recorded file to ``current``, the
        file at the target, at ``where``); None when it is not told yet (``wants_near``: the lines
        were removed, or the file is gone) or cannot be (nothing in the diff touches them)."""
        if current is None or hunks is None:
            self._fallback = self._successor(FILE_DELETED, self.path, None, None)
            self.wants_near = True
            return None
        span = replaced_span(hunks, self.start, self.end, old_length, len(current.lines))
        if span is None:
            return None
        kind, first, last = span
        if kind == REWRITTEN:
            assert last is not None
            return self._successor(
                REWRITTEN, where or self.path, first, last, current,
                larger=larger_than_rewrite(last - first + 1, self.end - self.start + 1),
            )
        self._fallback = self._successor(REMOVED, where or self.path, first, None)
        self.wants_near = True
        return None

    @property
    def anchors(self) -> list[str]:
        """The lines a near copy is anchored on (``anchor_lines``)."""
        return anchor_lines(self.lines)

    def near(self, candidates: Iterable[tuple[str, FileText]]) -> Successor | None:
        """The near copy among ``candidates`` (path, file at the target, in path order) as a
        ``moved_and_changed`` successor, else what ``in_file`` found (removed, file deleted)."""
        files = dict(candidates)
        found = near_copy(self.lines, self.anchors, files.items())
        if found is None:
            return self._fallback
        path, position, length, similarity = found
        return self._successor(
            MOVED_AND_CHANGED, path, position + 1, position + length, files[path], similarity=similarity
        )


def near_copy(
    lines: list[str], anchors: list[str], candidates: Iterable[tuple[str, FileText]]
) -> tuple[str, int, int, float] | None:
    """(path, 0-based start, length, similarity) of the window of about ``len(lines)`` lines most
    alike ``lines`` (stripped) among the files, anchored on one of ``anchors`` found there; the
    first in path order among equals; None when none reaches ``SIMILARITY_FLOOR``."""
    if not anchors:
        return None
    offsets: dict[str, list[int]] = {}
    for offset, line in enumerate(lines):
        if line in anchors:
            offsets.setdefault(line, []).append(offset)
    wanted = "\n".join(lines)
    size = len(lines)
    lengths = [length for length in (size, size - 1, size + 1) if length >= 1]
    best: tuple[float, str, int, int] | None = None
    windows = 0
    for number, (path, file) in enumerate(candidates):
        if number == NEAR_FILES or windows >= _WINDOWS:
            break
        stripped = file.stripped
        tried: set[tuple[int, int]] = set()
        for at, line in enumerate(stripped):
            if line[:_LINE_CHARS] not in offsets:
                continue
            for offset in offsets[line[:_LINE_CHARS]]:
                for start in (at - offset, at - offset - 1, at - offset + 1):
                    for length in lengths:
                        if start < 0 or start + length > len(stripped) or (start, length) in tried:
                            continue
                        tried.add((start, length))
                        windows += 1
                        text = "\n".join(each[:_LINE_CHARS] for each in stripped[start : start + length])
                        cutoff = SIMILARITY_FLOOR * 100 if best is None else best[0] * 100
                        score = fuzz.ratio(wanted, text, score_cutoff=cutoff) / 100
                        if score >= SIMILARITY_FLOOR and (best is None or score > best[0]):
                            best = (score, path, start, length)
            if windows >= _WINDOWS:
                break
    if best is None:
        return None
    score, path, start, length = best
    return path, start, length, round(score, 2)
