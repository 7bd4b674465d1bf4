"""Decoded file contents, line indexes and line mappings, cached per reader, and decoded blobs
shared between readers (a blob's SHA names its content, so what was read for one verification
holds for the next).

Verifying thousands of evidence items touches the same files again and
again, so everything derived from a blob is computed once: its lines, an
index from (stripped) line to positions used to find a snippet without
scanning, and the line mapping between two versions of a file.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Iterable

from reviews.git.errors import RecheckError
from reviews.git import Blob, GitReader, split_lines

# Characters of file text kept decoded; lines, stripped lines and indexes
# derived from them take a few times as much memory again.
_TEXT_BUDGET_CHARS = 96 * 1024 * 1024
# Characters of decoded blobs kept between readers, for the next verification of the same code.
_SHARED_BUDGET_CHARS = 48 * 1024 * 1024
_LINE_MAP_LIMIT = 4096
_CORPUS_LIMIT = 8
# Building a line index of every changed file costs as much as a few hundred substring searches of
# their text, so a corpus is searched until it has been asked this many times, then indexed.
_CORPUS_SCANS_BEFORE_INDEX = 256


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
        self, path: str, sha: str, lines: list[str], problem: str | None = None, *, too_large: bool = False
    ) -> None:
        self.path = path
        self.sha = sha
        self.size = sum(map(len, lines))
        self.lines = lines
        self.problem = problem
        self.too_large = too_large
        self._keys: list[str] | None = None
        self._stripped: list[str] | None = None
        self._text: str | None = None

    def require_text(self) -> FileText:
        if self.problem:
            raise RecheckError(self.problem)
        return self

    @property
    def keys(self) -> list[str]:
        """Lines with trailing whitespace removed: what exact matching compares."""
        if self._keys is None:
            self._keys = [line.rstrip() for line in self.lines]
        return self._keys

    @property
    def stripped(self) -> list[str]:
        """Lines with surrounding whitespace removed: what re-indent matching compares."""
        if self._stripped is None:
            self._stripped = [line.strip() for line in self.lines]
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


def rarest_line(needle: Needle, index: dict[str, list]) -> tuple[int, list | None]:
    """(offset in the needle, index entries) of its least frequent non-blank line.

    None when some line of the needle does not occur at all, which rules out
    a match without looking further.
    """
    best_offset, best = 0, None
    for offset, line in enumerate(needle.stripped):
        if not line:
            continue
        found = index.get(line)
        if not found:
            return 0, None
        if best is None or len(found) < len(best):
            best_offset, best = offset, found
    return best_offset, best


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


class Corpus:
    """Which of a set of files contain a given line, for cross-file search.

    Usually only a few snippets leave their file, so a needle's longest line is first looked for
    in one joined text of all the files (a C-speed substring search); a corpus asked often
    enough gets a line index instead."""

    def __init__(self, files: list[tuple[str, FileText]]) -> None:
        self.files = files
        self.index: dict[str, list[int]] | None = None
        self._lookups = 0
        self._joined: str | None = None
        self._starts: list[int] = []

    def candidates(self, needle: Needle) -> list[tuple[str, FileText]]:
        """(path, file) pairs that may contain the needle, in path order."""
        self._lookups += 1
        if self.index is None and self._lookups <= _CORPUS_SCANS_BEFORE_INDEX:
            return [self.files[number] for number in self._files_containing(max(needle.stripped, key=len))]
        if self.index is None:
            self.index = {}
            for number, (_, file) in enumerate(self.files):
                for line in set(file.stripped):
                    self.index.setdefault(line, []).append(number)
        _, numbers = rarest_line(needle, self.index)
        return [self.files[number] for number in numbers or ()]

    def _files_containing(self, probe: str) -> list[int]:
        if self._joined is None:
            parts, offset = [], 0
            for _, file in self.files:
                self._starts.append(offset)
                part = file.text
                parts.append(part)
                offset += len(part) + 1
            self._joined = "\x00".join(parts)
        numbers = []
        at = self._joined.find(probe)
        while at != -1:
            number = bisect_right(self._starts, at) - 1
            numbers.append(number)
            after = self._starts[number + 1] if number + 1 < len(self._starts) else len(self._joined)
            at = self._joined.find(probe, after)
        return numbers


class SharedTexts:
    """Decoded blobs by SHA (and the reader's size limit, which decides whether a blob is read at
    all), least recently used dropped over a budget. A re-verification of the same pull request,
    or of another at nearby commits, reads from git only the blobs it has not seen."""

    def __init__(self, budget_chars: int) -> None:
        self._texts: OrderedDict[tuple[str, int], FileText] = OrderedDict()
        self._chars = 0
        self._budget = budget_chars
        self._lock = threading.Lock()

    def get(self, sha: str, limit: int) -> FileText | None:
        with self._lock:
            text = self._texts.get((sha, limit))
            if text is not None:
                self._texts.move_to_end((sha, limit))
            return text

    def put(self, text: FileText, limit: int) -> None:
        if text.problem or text.size > self._budget:
            return
        with self._lock:
            key = (text.sha, limit)
            if key in self._texts:
                return
            self._texts[key] = text
            self._chars += text.size
            while self._chars > self._budget:
                _, dropped = self._texts.popitem(last=False)
                self._chars -= dropped.size

    def clear(self) -> None:
        with self._lock:
            self._texts.clear()
            self._chars = 0


shared_texts = SharedTexts(_SHARED_BUDGET_CHARS)


class TextCache:
    """Per-reader caches. Holds no reference to the reader (it is the weak key)."""

    def __init__(self) -> None:
        self._files: OrderedDict[tuple[str, str], tuple[FileText | None, int]] = OrderedDict()
        self._by_sha: weakref.WeakValueDictionary[str, FileText] = weakref.WeakValueDictionary()
        self._chars = 0
        self._line_maps: dict[tuple[str, str], LineMap] = {}
        self._corpora: OrderedDict[tuple[str, str], Corpus] = OrderedDict()
        self._renames: dict[tuple[str, str], dict[str, str]] = {}
        self._changed: dict[tuple[str, str], list[str]] = {}

    def file(self, reader: GitReader, commit: str, path: str) -> FileText | None:
        """The file at (full SHA) ``commit``, or None when there is none."""
        key = (commit, path)
        if key in self._files:
            self._files.move_to_end(key)
            return self._files[key][0]
        entry = reader.tree_entry(commit, path)
        if entry is None or entry.type != "blob":
            text = None
        else:
            # Unchanged files share a blob across commits: read and split it once.
            text = self._by_sha.get(entry.sha) or shared_texts.get(entry.sha, reader.max_blob_bytes)
            if text is None:
                blob = reader.read_blob(commit, path)
                text = self._decode(blob, commit, reader.max_blob_bytes)
                shared_texts.put(text, reader.max_blob_bytes)
            if not text.problem:
                self._by_sha[entry.sha] = text
        self._remember(key, text, 0 if text is None else text.size)
        return text

    def prefetch(self, reader: GitReader, commit: str, paths: Iterable[str]) -> None:
        """Read the files at (full SHA) ``commit`` that are not cached yet, in one pipelined
        exchange with git rather than one round trip each."""
        wanted = []
        for path in dict.fromkeys(paths):
            if (commit, path) in self._files:
                continue
            entry = reader.tree_entry(commit, path)  # trees are cached: no read of the blob
            known = entry is not None and entry.type == "blob" and (
                self._by_sha.get(entry.sha) or shared_texts.get(entry.sha, reader.max_blob_bytes)
            )
            if known:
                self._by_sha[entry.sha] = known
                self._remember((commit, path), known, known.size)
            else:
                wanted.append(path)
        for path, blob in reader.read_blobs(commit, wanted).items():
            text = self._by_sha.get(blob.sha)
            if text is None:
                text = self._decode(blob, commit, reader.max_blob_bytes)
                shared_texts.put(text, reader.max_blob_bytes)
                if not text.problem:
                    self._by_sha[blob.sha] = text
            self._remember((commit, path), text, text.size)

    def _decode(self, blob: Blob, commit: str, limit: int) -> FileText:
        if blob.too_large:
            problem = (
                f"{blob.path} is {blob.size} bytes at {commit[:12]}, over the {limit}-byte limit; "
                "raise the reader's max_blob_bytes or point the evidence at a smaller file"
            )
            return FileText(blob.path, blob.sha, [], problem, too_large=True)
        if blob.is_binary:
            problem = f"{blob.path} is a binary file at {commit[:12]}; evidence text can only be checked in text files"
            return FileText(blob.path, blob.sha, [], problem)
        return FileText(blob.path, blob.sha, blob.lines())

    def _remember(self, key: tuple[str, str], text: FileText | None, cost: int) -> None:
        """Keep ``text`` under ``key``, dropping the least recently used files over budget."""
        self._files[key] = (text, cost)
        self._chars += cost
        while self._chars > _TEXT_BUDGET_CHARS and len(self._files) > 1:
            _, (_, dropped_cost) = self._files.popitem(last=False)
            self._chars -= dropped_cost

    def line_map(self, reader: GitReader, old: FileText, new: FileText) -> LineMap:
        """Where the lines of ``old`` are in ``new``, from git's diff of the two blobs."""
        key = (old.sha, new.sha)
        mapping = self._line_maps.get(key)
        if mapping is None:
            if len(self._line_maps) >= _LINE_MAP_LIMIT:
                self._line_maps.clear()
            mapping = self._line_maps[key] = LineMap(reader.blob_line_changes(old.sha, new.sha), len(old.lines))
        return mapping

    def renames(self, reader: GitReader, old: str, new: str) -> dict[str, str]:
        """Old path -> new path for files git sees as renamed between two commits."""
        key = (old, new)
        if key not in self._renames:
            self._renames[key] = {
                change.old_path: change.new_path
                for change in reader.changes(old, new)
                if change.status == "R" and change.old_path and change.new_path
            }
        return self._renames[key]

    def changed_paths(self, reader: GitReader, old: str, new: str) -> list[str]:
        """Paths that were added, modified, renamed or copied between two commits."""
        key = (old, new)
        if key not in self._changed:
            self._changed[key] = sorted(
                {change.new_path for change in reader.changes(old, new) if change.new_path}
            )
        return self._changed[key]

    def corpus(self, reader: GitReader, old: str, new: str) -> Corpus:
        """The text files changed between two commits, indexed by line."""
        key = (old, new)
        corpus = self._corpora.get(key)
        if corpus is None:
            files = []
            self.prefetch(reader, new, self.changed_paths(reader, old, new))
            for path in self.changed_paths(reader, old, new):
                text = self.file(reader, new, path)
                if text is not None and not text.problem:
                    files.append((path, text))
            corpus = self._corpora[key] = Corpus(files)
            while len(self._corpora) > _CORPUS_LIMIT:
                self._corpora.popitem(last=False)
        return corpus


_caches: weakref.WeakKeyDictionary[GitReader, TextCache] = weakref.WeakKeyDictionary()


def cache_for(reader: GitReader) -> TextCache:
    """The caches belonging to ``reader``; they go away with it."""
    cache = _caches.get(reader)
    if cache is None:
        cache = _caches[reader] = TextCache()
    return cache
