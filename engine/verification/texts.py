"""Decoded file contents, line indexes and line mappings, cached per reader, and decoded blobs
shared between readers (a blob's SHA names its content, so what was read for one verification
holds for the next).

Verifying thousands of evidence items touches the same files again and
again, so everything derived from a blob is computed once: its lines, an
index from (stripped) line to positions used to find a snippet without
scanning, and the line mapping between two versions of a file.
"""

from __future__ import annotations

import re
import threading
import weakref
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Sequence

from core.errors import RecheckError
from engine.git import Blob, GitReader, split_lines

# Characters of file text kept decoded; lines, stripped lines and indexes
# derived from them take a few times as much memory again.
_TEXT_BUDGET_CHARS = 96 * 1024 * 1024
# Characters of decoded blobs kept between readers, for the next verification of the same code.
_SHARED_BUDGET_CHARS = 48 * 1024 * 1024
_LINE_MAP_LIMIT = 4096
_CORPUS_LIMIT = 4
# The cross-file search reads the changed files' raw bytes in batches of at most this many bytes
# (a single larger file is a batch of its own; the reader's max_blob_bytes bounds it) ...
_CORPUS_BATCH_CHARS = 4 * 1024 * 1024
# ... keeps the first batches, up to this many bytes per corpus, for the next needle ...
_CORPUS_KEPT_CHARS = 16 * 1024 * 1024
# ... and asks git for this many files at a time while filling a batch.
_CORPUS_READ_PATHS = 32
# Over this many needles searched at once, a batch's lines are checked against all their probes
# in one pass (some 10 ms for 4 MiB) rather than the batch searched for each (under 1 ms each).
_CORPUS_FIND_PROBES = 16


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


class _Batch:
    """Raw bytes of some of a corpus's files, joined with NUL between them, for one C-speed
    substring search across all of them."""

    __slots__ = ("paths", "starts", "joined")

    def __init__(self, paths: list[str], parts: list[bytes]) -> None:
        self.paths = paths
        self.starts = []
        offset = 0
        for part in parts:
            self.starts.append(offset)
            offset += len(part) + 1
        self.joined = b"\x00".join(parts)

    def containing(self, probe: bytes) -> list[str]:
        """Paths whose bytes contain ``probe``, in order."""
        found = []
        at = self.joined.find(probe)
        while at != -1:
            number = bisect_right(self.starts, at) - 1
            found.append(self.paths[number])
            if number + 1 == len(self.starts):
                break
            at = self.joined.find(probe, self.starts[number + 1])
        return found

    def lines_among(self, probes: Collection[bytes | None]) -> set[bytes] | None:
        """Which of ``probes`` are lines of the batch (stripped, as decoding will split them), in one
        pass over its lines instead of one search per probe; None when the raw lines cannot
        stand for the decoded ones, and every probe must be searched for."""
        lines = _stripped_lines(self)
        return None if lines is None else set(probes).intersection(lines)


class Corpus:
    """The text files changed between two commits, searched for code that left its file.

    A corpus can hold thousands of files, so it never keeps them all: their raw bytes are read
    from git in batches of at most ``batch_chars`` bytes (a file decoded already is taken from the
    cache as UTF-8 instead), each batch is searched for the needles' most telling lines (a cheap
    prefilter that needs no decoding), and only the files that pass are decoded, through the
    reader's bounded file cache. The first batches, up to ``kept_chars``, are kept for the next
    needles; the rest are read again when asked, so memory stays bounded whatever the number of
    changed files. Many needles are best searched for together (``matches_all``): one pass over
    the batches serves them all."""

    def __init__(
        self,
        cache: TextCache,
        commit: str,
        paths: list[str],
        *,
        batch_chars: int | None = None,
        kept_chars: int | None = None,
    ) -> None:
        # No reference to the reader: the cache that holds this corpus is weakly keyed by it.
        self._cache = cache
        self.commit = commit
        self.paths = paths
        self.batch_chars = _CORPUS_BATCH_CHARS if batch_chars is None else batch_chars
        self.kept_chars = _CORPUS_KEPT_CHARS if kept_chars is None else kept_chars
        self._kept: list[_Batch] = []
        self._kept_size = 0
        # Batches read after the kept ones are let go: (first path, end, line filter) of each; the
        # filter is built when a batch is read a second time, and is None if it cannot filter.
        self._let_go: list[tuple[int, int, bytearray | None]] = []
        self._read_to = 0  # paths[:_read_to] are in the kept or let-go batches
        # What the search has cost so far: batches read from git, and the bytes of the largest.
        self.batches_built = 0
        self.largest_batch = 0

    def matches(self, reader: GitReader, needle: Needle, *, exclude: str | None) -> tuple[str, int, bool] | None:
        """(path, 0-based position, re-indented) of the needle in the first file in path order
        that holds it exactly, else in the first that holds it re-indented; None if none does."""
        return self.matches_all(reader, [(needle, exclude)])[0]

    def matches_all(
        self, reader: GitReader, wanted: Sequence[tuple[Needle, str | None]]
    ) -> list[tuple[str, int, bool] | None]:
        """What ``matches`` answers for each (needle, excluded path), from one pass over the
        batches for all of them: past the kept batches, each batch is read from git once for every
        needle rather than once per needle."""
        answers: list[tuple[str, int, bool] | None] = [None] * len(wanted)
        loose_candidates: list[list[str]] = [[] for _ in wanted]
        # The needles still looked for, by their most telling line as raw bytes (needles sharing it
        # share its search). Decoding replaces invalid bytes, so a line holding a replacement
        # character may not be in the raw bytes: such a probe (None) cannot filter, and every file
        # is a candidate.
        searching: dict[bytes | None, list[int]] = {}
        for number, (needle, _) in enumerate(wanted):
            probe = needle.stripped[needle.longest]
            searching.setdefault(None if "\ufffd" in probe else probe.encode("utf-8"), []).append(number)
        for batch in self._batches(reader, searching):
            present = batch.lines_among(searching) if len(searching) > _CORPUS_FIND_PROBES else None
            for raw, numbers in list(searching.items()):
                if raw is None:
                    paths = batch.paths
                elif present is None or raw in present:
                    paths = batch.containing(raw)
                else:
                    continue
                for number in list(numbers):
                    needle, exclude = wanted[number]
                    for path, file in self._texts(reader, paths, exclude):
                        positions = file.occurrences(needle, loose=False)
                        if positions:
                            answers[number] = (path, positions[0], False)
                            numbers.remove(number)
                            break
                        loose_candidates[number].append(path)
                if not numbers:
                    del searching[raw]
            del batch, present  # not held while the next batch is read
            if not searching:
                break
        for numbers in searching.values():
            for number in numbers:
                needle = wanted[number][0]
                for path, file in self._texts(reader, loose_candidates[number], None):
                    positions = file.occurrences(needle, loose=True)
                    if positions:
                        answers[number] = (path, positions[0], True)
                        break
        return answers

    def _texts(self, reader: GitReader, paths: Iterable[str], exclude: str | None) -> Iterator[tuple[str, FileText]]:
        """The decoded text files among ``paths`` (through the reader's file cache), but ``exclude``."""
        for path in paths:
            if path == exclude:
                continue
            file = self._cache.file(reader, self.commit, path)
            if file is not None and not file.problem:
                yield path, file

    def _batches(self, reader: GitReader, probes: Collection[bytes | None]) -> Iterator[_Batch]:
        """The batches in path order: the kept ones; those read before and let go, read again
        unless their line filter rules out every probe still in ``probes`` (which the caller
        empties as it goes); then the files not read yet."""
        yield from self._kept
        mask = _FILTER_BITS - 1
        for number, (start, end, bitmap) in enumerate(list(self._let_go)):
            if not probes:
                return
            if bitmap is not None and bitmap is not _UNBUILT and None not in probes:
                wanted = [hash(probe) & mask for probe in probes]
                if not any(bitmap[bit >> 3] & (1 << (bit & 7)) for bit in wanted):
                    continue
            filters = []
            for batch in self._read(reader, start, end, record=False):
                if bitmap is _UNBUILT:
                    filters.append(_line_filter(batch))
                yield batch
            if bitmap is _UNBUILT:  # read a second time, all of it: worth a filter from now on
                self._let_go[number] = (start, end, _merged(filters))
        if probes:
            yield from self._read(reader, self._read_to, len(self.paths), record=True)

    def _read(self, reader: GitReader, start: int, end: int, *, record: bool) -> Iterator[_Batch]:
        """Batches of the files ``paths[start:end]``; with ``record``, each is kept or let go."""
        paths, parts, size, begins = [], [], 0, start
        for chunk_start in range(start, end, _CORPUS_READ_PATHS):
            chunk = self.paths[chunk_start : min(chunk_start + _CORPUS_READ_PATHS, end)]
            # Files decoded already (the evidence's own, mostly) are taken as they are, not read again.
            decoded = {path: text for path in chunk if (text := self._cache.decoded(reader, self.commit, path))}
            blobs = reader.read_blobs(self.commit, [path for path in chunk if path not in decoded])
            for offset, path in enumerate(chunk):
                text = decoded.get(path)
                if text is not None:
                    data = "\n".join(text.lines).encode("utf-8")
                else:
                    blob = blobs.get(path)
                    if blob is None or blob.is_binary or blob.too_large or blob.data is None:
                        continue
                    data = blob.data
                if parts and size + len(data) + 1 > self.batch_chars:
                    batch = self._batch(paths, parts)
                    if record:
                        self._record(batch, size, begins, chunk_start + offset)
                    # The parts are in the batch now, and a batch let go is not held while the
                    # next is filled: at most one batch and the parts of the next are in memory.
                    paths, parts, size, begins = [], [], 0, chunk_start + offset
                    yield batch
                    del batch
                paths.append(path)
                parts.append(data)
                size += len(data) + 1
            del blobs, decoded
        if parts:
            batch = self._batch(paths, parts)
            del parts
            if record:
                self._record(batch, size, begins, end)
            yield batch
        elif record:
            self._read_to = end

    def _batch(self, paths: list[str], parts: list[bytes]) -> _Batch:
        batch = _Batch(paths, parts)
        self.batches_built += 1
        self.largest_batch = max(self.largest_batch, len(batch.joined))
        return batch

    def _record(self, batch: _Batch, size: int, begins: int, ends: int) -> None:
        """Keep the batch of ``paths[begins:ends]`` while the kept ones fit, else let it go,
        remembering a filter of its lines so that later needles read it again only if it may
        hold them."""
        if not self._let_go and self._kept_size + size <= self.kept_chars:
            self._kept.append(batch)
            self._kept_size += size
        else:
            self._let_go.append((begins, ends, _UNBUILT))
        self._read_to = ends


# Bits of a let-go batch's line filter (128 KiB): with a batch's some 100,000 distinct lines, about
# one needle in ten reads a batch that does not hold it.
_FILTER_BITS = 1 << 20
# What str.strip() removes beyond bytes.strip(), as UTF-8: a batch holding any is not filtered.
_ASCII_SPACES = (b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_UNICODE_SPACES = re.compile(
    "|".join(
        re.escape(character.encode("utf-8")).decode("latin-1")
        for character in "\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
    ).encode("latin-1")
)
_UNBUILT = bytearray()  # the filter of a let-go batch read only once: none yet, every probe passes


def _stripped_lines(batch: _Batch) -> Iterator[bytes] | None:
    """The batch's lines, stripped, as decoding will split and strip them; None when the raw bytes
    cannot stand for the decoded lines."""
    joined = batch.joined
    if joined.count(b"\x00") != len(batch.paths) - 1 or any(space in joined for space in _ASCII_SPACES):
        return None
    if not joined.isascii() and _UNICODE_SPACES.search(joined):
        return None
    return _lines_of_each_file(batch)


def _lines_of_each_file(batch: _Batch) -> Iterator[bytes]:
    # File by file: the lines of a whole batch at once would take twice its size again.
    joined, ends = batch.joined, [*batch.starts[1:], len(batch.joined) + 1]
    for start, end in zip(batch.starts, ends, strict=True):
        yield from map(bytes.strip, joined[start : end - 1].split(b"\n"))


def _line_filter(batch: _Batch) -> bytearray | None:
    """A bitmap of the hashes of the batch's stripped lines; None when the raw bytes cannot stand
    for the decoded lines."""
    lines = _stripped_lines(batch)
    if lines is None:
        return None
    bitmap = bytearray(_FILTER_BITS >> 3)
    mask = _FILTER_BITS - 1
    for value in set(map(mask.__and__, map(hash, lines))):
        bitmap[value >> 3] |= 1 << (value & 7)
    return bitmap


def _merged(filters: list[bytearray | None]) -> bytearray | None:
    """One filter for the batches read again in place of one: a file decoded the first time and
    read raw the next (CRs kept) may no longer fit, so the files once in one batch can fill two."""
    if not filters or any(bitmap is None for bitmap in filters):
        return None
    if len(filters) == 1:
        return filters[0]
    union = 0
    for bitmap in filters:
        union |= int.from_bytes(bitmap, "little")
    return bytearray(union.to_bytes(_FILTER_BITS >> 3, "little"))


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

    def decoded(self, reader: GitReader, commit: str, path: str) -> FileText | None:
        """The text file at (full SHA) ``commit`` if it is decoded already, here or between
        readers; None otherwise (and for what is no text file)."""
        entry = reader.tree_entry(commit, path)  # trees are cached: no read of the blob
        if entry is None or entry.type != "blob":
            return None
        return self._by_sha.get(entry.sha) or shared_texts.get(entry.sha, reader.max_blob_bytes)

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
        """The files changed between two commits, for the search of code that left its file."""
        key = (old, new)
        corpus = self._corpora.get(key)
        if corpus is None:
            corpus = self._corpora[key] = Corpus(self, new, self.changed_paths(reader, old, new))
            while len(self._corpora) > _CORPUS_LIMIT:
                self._corpora.popitem(last=False)
        else:
            self._corpora.move_to_end(key)
        return corpus


_caches: weakref.WeakKeyDictionary[GitReader, TextCache] = weakref.WeakKeyDictionary()


def cache_for(reader: GitReader) -> TextCache:
    """The caches belonging to ``reader``; they go away with it."""
    cache = _caches.get(reader)
    if cache is None:
        cache = _caches[reader] = TextCache()
    return cache
