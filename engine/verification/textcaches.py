"""Decoded file contents and line mappings, cached per reader (``cache_for``, a ``TextCache``),
and decoded blobs shared between readers (``shared_texts``: a blob's SHA names its content, so what
was read for one verification holds for the next).

Verifying thousands of evidence items touches the same files again and
again, so everything derived from a blob is computed once: its lines, an
index from (stripped) line to positions used to find a snippet without
scanning, and the line mapping between two versions of a file.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable

from engine.git import Blob, GitReader
from engine.git.blobreads import BlobReads
from engine.verification.corpus import Corpus
from engine.verification.filetexts import FileText
from engine.verification.linemaps import LineMap

# Characters of file text kept decoded; lines, stripped lines and indexes
# derived from them take a few times as much memory again.
_TEXT_BUDGET_CHARS = 96 * 1024 * 1024
# Characters of decoded blobs kept between readers, for the next verification of the same code.
_SHARED_BUDGET_CHARS = 48 * 1024 * 1024
_LINE_MAP_LIMIT = 4096
# Pairs of blobs whose diff is kept between readers (a few hundred bytes each).
_SHARED_LINE_CHANGES = 16384
_CORPUS_LIMIT = 4


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


class SharedLineChanges:
    """The hunks of git's diff between two blobs, by the pair of their SHAs (which name their
    contents, so the answer holds in any repository), least recently used dropped past a count:
    a re-verification asks again about the files it found changed the last time."""

    def __init__(self, limit: int) -> None:
        self._hunks: OrderedDict[tuple[str, str], list[tuple[int, int, int, int]]] = OrderedDict()
        self._limit = limit
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> list[tuple[int, int, int, int]] | None:
        with self._lock:
            hunks = self._hunks.get(key)
            if hunks is not None:
                self._hunks.move_to_end(key)
            return hunks

    def put(self, key: tuple[str, str], hunks: list[tuple[int, int, int, int]]) -> None:
        with self._lock:
            self._hunks[key] = hunks
            self._hunks.move_to_end(key)
            while len(self._hunks) > self._limit:
                self._hunks.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._hunks.clear()


shared_line_changes = SharedLineChanges(_SHARED_LINE_CHANGES)


class TextCache:
    """Per-reader caches. Holds no reference to the reader (it is the weak key)."""

    def __init__(self) -> None:
        self._files: OrderedDict[tuple[str, str], tuple[FileText | None, int]] = OrderedDict()
        self._by_sha: weakref.WeakValueDictionary[str, FileText] = weakref.WeakValueDictionary()
        self._chars = 0
        self._line_maps: dict[tuple[str, str], LineMap] = {}
        self._hunks: dict[tuple[str, str], list[tuple[int, int, int, int]]] = {}
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
        """Read the files at (full SHA) ``commit`` that are not cached yet, all at once."""
        self.prefetch_finish(reader, commit, self.prefetch_start(reader, commit, paths))

    def uncached(self, commit: str, paths: Iterable[str]) -> list[str]:
        """Those of ``paths`` with no file kept at (full SHA) ``commit``: after a prefetch, the
        paths that are no file there."""
        return [path for path in paths if (commit, path) not in self._files]

    def prefetch_start(self, reader: GitReader, commit: str, paths: Iterable[str]) -> BlobReads:
        """Start reading the files at (full SHA) ``commit`` that are not cached yet, in the
        background (``GitReader.start_reading_blobs``) rather than one round trip each;
        ``prefetch_finish`` takes them in."""
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
        return reader.start_reading_blobs(commit, wanted)

    def prefetch_finish(self, reader: GitReader, commit: str, reads: BlobReads) -> None:
        """Decode and keep what ``prefetch_start`` asked git for."""
        for path, blob in reads.each():
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
            mapping = self._line_maps[key] = LineMap(self.line_changes(reader, old, new), len(old.lines))
        return mapping

    def line_changes(self, reader: GitReader, old: FileText, new: FileText) -> list[tuple[int, int, int, int]]:
        """The hunks of git's diff between the two blobs (``GitReader.blob_line_changes``): one git
        process for every pair of versions, however many items ask about it."""
        key = (old.sha, new.sha)
        hunks = self._hunks.get(key)
        if hunks is None:
            hunks = shared_line_changes.get(key)
            if hunks is None:
                hunks = reader.blob_line_changes(old.sha, new.sha)
                shared_line_changes.put(key, hunks)
            if len(self._hunks) >= _LINE_MAP_LIMIT:
                self._hunks.clear()
            self._hunks[key] = hunks
        return hunks

    def prefetch_line_changes(self, reader: GitReader, old: str, new: str, paths: Iterable[str]) -> None:
        """Work out ``line_changes`` of each of ``paths`` (files of the same name at both full-SHA
        commits) from one git process, for those not known yet."""
        wanted = []
        for path in dict.fromkeys(paths):
            before, after = reader.tree_entry(old, path), reader.tree_entry(new, path)
            if before is None or after is None or (before.sha, after.sha) in self._hunks:
                continue
            known = shared_line_changes.get((before.sha, after.sha))
            if known is not None:
                self._hunks[(before.sha, after.sha)] = known
            else:
                wanted.append(path)
        if wanted:
            if len(self._hunks) >= _LINE_MAP_LIMIT:
                self._hunks.clear()
            for key, hunks in reader.files_line_changes(old, new, wanted).items():
                self._hunks[key] = hunks
                shared_line_changes.put(key, hunks)

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
