"""The search for code that left its file: the text files changed between two commits
(``Corpus``), read from git in bounded batches of raw bytes (``_Batch``), each searched for the
needles' most telling lines before anything is decoded, and the line filters that let a batch that
was let go be skipped when it cannot hold any of the needles still looked for.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Collection, Iterable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING

from engine.git import GitReader
from engine.verification.filetexts import FileText, Needle

if TYPE_CHECKING:
    from engine.verification.textcaches import TextCache

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

    def files_among(self, probes: Collection[bytes | None]) -> dict[bytes, list[str]] | None:
        """Which of ``probes`` are lines of the batch (stripped, as decoding will split them), each
        with the paths of the files that hold it, in order: one pass over the batch's lines instead
        of a search of all of it per probe. None when the raw lines cannot stand for the decoded
        ones, and every probe must be searched for.

        A needle can only match where its most telling line (the probe) is a whole line, stripped,
        so these files are all the files that can hold it."""
        files = _stripped_lines_by_file(self)
        if files is None:
            return None
        wanted = {probe for probe in probes if probe is not None}
        found: dict[bytes, list[str]] = {}
        for path, lines in files:
            for line in wanted.intersection(lines):
                found.setdefault(line, []).append(path)
        return found


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
        return self.search(reader, wanted)[0]

    def search(
        self, reader: GitReader, wanted: Sequence[tuple[Needle, str | None]],
        anchors: Sequence[Collection[str]] = (), *, limit: int = 0,
    ) -> tuple[list[tuple[str, int, bool] | None], list[list[str]]]:
        """What ``matches_all`` answers, and, for each needle not found, the paths of the files
        (at most ``limit``, in path order) that hold one of its ``anchors`` (stripped lines) as a
        whole line: where a near copy of gone lines may be (``successors.near_copy``). Both from
        the same pass over the batches: a needle that is not found makes it go through them all."""
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
        anchored = _anchor_probes(anchors)
        held: list[dict[str, None]] = [{} for _ in wanted]
        for batch in self._batches(reader, _Probes(searching, anchored)):
            if anchored:
                # One pass over the batch's lines serves the needles and the anchors alike.
                present = batch.files_among([*searching, *anchored])
            else:
                present = batch.files_among(searching) if len(searching) > _CORPUS_FIND_PROBES else None
            for raw, numbers in anchored.items():
                paths = batch.containing(raw) if present is None else present.get(raw, [])
                for number in numbers:
                    if answers[number] is None:
                        for path in paths[: max(limit - len(held[number]), 0)]:
                            held[number][path] = None
            for raw, numbers in list(searching.items()):
                if raw is None:
                    paths = batch.paths
                elif present is None:
                    paths = batch.containing(raw)
                elif raw in present:
                    paths = present[raw]
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
        order = {path: position for position, path in enumerate(self.paths)}
        return answers, [
            sorted(paths, key=order.__getitem__) if answer is None else []
            for paths, answer in zip(held, answers, strict=True)
        ]

    def texts(self, reader: GitReader, paths: Iterable[str]) -> list[tuple[str, FileText]]:
        """The decoded text files among ``paths``, with their paths."""
        return list(self._texts(reader, paths, None))

    def holding(
        self, reader: GitReader, wanted: Sequence[Collection[str]], *, limit: int
    ) -> list[list[tuple[str, FileText]]]:
        """For each set of stripped lines, the decoded text files (at most ``limit``, in path
        order) that hold one of them as a whole line: where a near copy of gone lines may be
        (``successors.near_copy``), from one pass over the batches for every set."""
        anchored = _anchor_probes(wanted)
        found: list[dict[str, None]] = [{} for _ in wanted]
        if anchored:
            for batch in self._batches(reader, set(anchored)):
                present = batch.files_among(anchored)
                for raw, numbers in anchored.items():
                    paths = batch.containing(raw) if present is None else present.get(raw, [])
                    for number in numbers:
                        for path in paths[: max(limit - len(found[number]), 0)]:
                            found[number][path] = None
                del batch, present
        order = {path: position for position, path in enumerate(self.paths)}
        return [self.texts(reader, sorted(paths, key=order.__getitem__)) for paths in found]

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
                    data = text.text.encode("utf-8")  # its joined text, kept by the file (count_line made it)
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


def _anchor_probes(anchors: Sequence[Collection[str]]) -> dict[bytes, list[int]]:
    """Each anchor line as raw bytes, with the numbers of the sets that hold it (a line with a
    replacement character cannot be found in the raw bytes, and is left out)."""
    probes: dict[bytes, list[int]] = {}
    for number, lines in enumerate(anchors):
        for line in lines:
            if line and "\ufffd" not in line:
                probes.setdefault(line.encode("utf-8"), []).append(number)
    return probes


class _Probes(Collection):
    """What a search still looks for, as ``Corpus._batches`` reads it: the needles' probes and,
    while a needle is still looked for (a near copy is only wanted of lines not found), the
    anchors' too. Empty once every needle is found."""

    def __init__(self, searching: dict, anchored: dict) -> None:
        self._searching = searching
        self._anchored = anchored

    def __len__(self) -> int:
        return len(self._searching) + len(self._anchored) if self._searching else 0

    def __iter__(self):
        if self._searching:
            yield from self._searching
            yield from self._anchored

    def __contains__(self, probe: object) -> bool:
        return bool(self._searching) and (probe in self._searching or probe in self._anchored)


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
    files = _stripped_lines_by_file(batch)
    return None if files is None else chain.from_iterable(lines for _, lines in files)


def _stripped_lines_by_file(batch: _Batch) -> Iterator[tuple[str, Iterator[bytes]]] | None:
    """Each file's path with its lines, stripped, as decoding will split and strip them; None when
    the raw bytes cannot stand for the decoded lines."""
    joined = batch.joined
    if joined.count(b"\x00") != len(batch.paths) - 1 or any(space in joined for space in _ASCII_SPACES):
        return None
    if not joined.isascii() and _UNICODE_SPACES.search(joined):
        return None
    return _lines_of_each_file(batch)


def _lines_of_each_file(batch: _Batch) -> Iterator[tuple[str, Iterator[bytes]]]:
    # File by file: the lines of a whole batch at once would take twice its size again.
    joined, ends = batch.joined, [*batch.starts[1:], len(batch.joined) + 1]
    for path, start, end in zip(batch.paths, batch.starts, ends, strict=True):
        yield path, map(bytes.strip, joined[start : end - 1].split(b"\n"))


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
