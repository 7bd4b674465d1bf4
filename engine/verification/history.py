"""Evidence from pin to pin: the lines of an item that holds, with the lines around it, at each
commit it was verified at, and what changed in them between consecutive pins, each change
labelled as it came: *from the rebase* when the same change is in the diff between the two pins'
bases (the branch was rebased onto a base that made it), else *by the author*. Gerrit tells the
two apart the same way, by diffing the patch sets' parents.

A change is the same as one of the bases' when it removes and adds the same lines (trailing
whitespace aside), or when each line it removes the bases' diff removes and each it adds the
bases' diff adds (git may cut one change into hunks differently in two diffs).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import RecheckError
from engine.git import GitReader

from engine.verification.filetexts import FileText
from engine.verification.textcaches import TextCache, cache_for

FROM_REBASE = "rebase"
BY_AUTHOR = "author"
# Lines shown around an item's own, above and below it.
CONTEXT_LINES = 3
# At most this many lines of a change are kept to be shown, each cut at this many characters.
SHOWN_LINES = 40
SHOWN_CHARS = 500


@dataclass(frozen=True)
class Place:
    """Where an item holds at one pinned commit (``sha``), and that pin's base (None if unknown)."""

    sha: str
    path: str
    start_line: int
    end_line: int
    base: str | None = None


@dataclass(frozen=True)
class Change:
    """One hunk of the diff between two pins' versions of the file that touches an item's lines
    or the lines around them: what it removed (numbered in the earlier pin's file) and added (in
    the later one's), and where it came from (``FROM_REBASE`` or ``BY_AUTHOR``)."""

    origin: str
    old_start: int
    removed: tuple[str, ...]
    new_start: int
    added: tuple[str, ...]


@dataclass(frozen=True)
class Step:
    """An item at one pin: its place, the lines shown (from ``first_line``), and the changes since
    the pin before (none at the first)."""

    place: Place
    first_line: int
    lines: tuple[str, ...]
    changes: tuple[Change, ...] = ()


def evidence_history(reader: GitReader, places: list[Place]) -> list[Step]:
    """Each place as a step, in the order given (the pins' order), with the changes between it
    and the one before. Raises RecheckError when a commit or file cannot be read."""
    cache = cache_for(reader)
    steps: list[Step] = []
    previous: tuple[Place, FileText] | None = None
    for place in places:
        file = _text(reader, cache, place.sha, place.path)
        first = max(place.start_line - CONTEXT_LINES, 1)
        last = min(place.end_line + CONTEXT_LINES, len(file.lines))
        changes: tuple[Change, ...] = ()
        if previous is not None:
            changes = _changes(reader, cache, previous, (place, file))
        steps.append(Step(place, first, tuple(line[:SHOWN_CHARS] for line in file.lines[first - 1 : last]), changes))
        previous = (place, file)
    return steps


def _text(reader: GitReader, cache: TextCache, sha: str, path: str) -> FileText:
    full = reader.resolve(sha)
    file = cache.file(reader, full, path)
    if file is None:
        raise RecheckError(f"{path} does not exist at {full[:12]}")
    return file.require_text()


def _changes(reader: GitReader, cache: TextCache, before: tuple[Place, FileText],
             after: tuple[Place, FileText]) -> tuple[Change, ...]:
    (old_place, old_file), (new_place, new_file) = before, after
    low = old_place.start_line - CONTEXT_LINES
    high = old_place.end_line + CONTEXT_LINES
    hunks = []
    for old_start, old_count, new_start, new_count in cache.line_changes(reader, old_file, new_file):
        # A pure insertion (old_count 0) sits after line old_start.
        first, last = (old_start, old_start + old_count - 1) if old_count else (old_start + 1, old_start)
        if (old_count and (last < low or first > high)) or (not old_count and not low <= old_start <= high):
            continue
        removed = old_file.lines[old_start - 1 : old_start - 1 + old_count] if old_count else ()
        added = new_file.lines[new_start - 1 : new_start - 1 + new_count] if new_count else ()
        hunks.append((old_start if old_count else old_start + 1, tuple(removed), new_start, tuple(added)))
    if not hunks:
        return ()
    base_removed, base_added, base_pairs = _bases_changes(reader, cache, old_place, new_place)
    changes = []
    for old_start, removed, new_start, added in hunks:
        pair = (_keys(removed), _keys(added))
        from_base = pair in base_pairs or (set(pair[0]) <= base_removed and set(pair[1]) <= base_added)
        changes.append(Change(
            FROM_REBASE if from_base else BY_AUTHOR, old_start, _shown(removed), new_start, _shown(added),
        ))
    return tuple(changes)


def _bases_changes(reader: GitReader, cache: TextCache, old: Place, new: Place):
    """What the diff between the two pins' bases removed and added in the item's file: the lines
    removed, the lines added, and each hunk as (removed, added). Nothing when the bases are the
    same or unknown, or the file is in neither."""
    if not old.base or not new.base or reader.resolve(old.base) == reader.resolve(new.base):
        return set(), set(), set()
    old_base, new_base = reader.resolve(old.base), reader.resolve(new.base)
    before = cache.file(reader, old_base, old.path) or cache.file(reader, old_base, new.path)
    after = cache.file(reader, new_base, new.path) or cache.file(reader, new_base, old.path)
    if before is None or after is None or before.problem or after.problem:
        return set(), set(), set()
    removed: set[str] = set()
    added: set[str] = set()
    pairs: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    for old_start, old_count, new_start, new_count in cache.line_changes(reader, before, after):
        gone = _keys(before.lines[old_start - 1 : old_start - 1 + old_count] if old_count else ())
        came = _keys(after.lines[new_start - 1 : new_start - 1 + new_count] if new_count else ())
        removed.update(gone)
        added.update(came)
        pairs.add((gone, came))
    return removed, added, pairs


def _keys(lines) -> tuple[str, ...]:
    return tuple(line.rstrip() for line in lines)


def _shown(lines: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(line[:SHOWN_CHARS] for line in lines[:SHOWN_LINES])
