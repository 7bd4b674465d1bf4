"""Many blobs of one commit read by git in the background (``GitReader.start_reading_blobs``).

A verification reads every file its evidence points at before it checks anything: thousands of
blobs. Asked through the reader's cat-file process, git decompresses them while Python waits for
each. Here a one-shot ``git cat-file --batch`` gets its requests and writes its answers in
temporary files: git needs nothing more from us once started and decompresses on another core,
while the caller goes on with its own work (loading the findings from the database). ``each``
then reads the answers as git writes them, with the same parser as the reader's process, so the
caller decodes one file while git decompresses the next.

A temporary file rather than a pipe, on both sides: a pipe holds 64 KiB, so git would stop as soon
as it was full, until the caller came back to read it."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from core.errors import RepositoryError
from engine.git.catfile import BrokenAnswer, CatFileObject, cat_file_failed, read_answer
from engine.git.objects import Blob, TreeEntry
from engine.git.process import GitStarted

# Fewer blobs than this are read at once through the reader's own process (``BlobReads.read``):
# starting git costs more than it saves.
MIN_BLOBS = 64


class BlobReads:
    """Blobs being read in the background; ``collect()`` once for them by path (paths whose entry
    is no blob are not asked for). Ended by ``close()`` (which ``collect`` calls), or when it goes
    away, so no git process outlives it.

    One process, not several sharing the blobs: git stores a blob as a delta of another, often of
    another file, and each process would decompress the same bases again (two processes took half
    as much time again as one, on the benchmark's repository)."""

    def __init__(self, git_dir: Path, entries: dict[str, TreeEntry], max_blob_bytes: int) -> None:
        self._git_dir = git_dir
        self._entries = {path: entry for path, entry in entries.items() if entry.type == "blob"}
        self._limit = max_blob_bytes
        self._ready: dict[str, Blob] | None = None
        self._shas = list(dict.fromkeys(entry.sha for entry in self._entries.values()))
        self._git = GitStarted(
            ["cat-file", "--batch"], git_dir=git_dir, input="".join(f"{sha}\n" for sha in self._shas).encode("ascii")
        ) if self._shas else None

    @classmethod
    def read(cls, blobs: dict[str, Blob]) -> BlobReads:
        """Blobs read already (too few to be worth a process of their own), as ``collect`` gives them."""
        reads = cls(Path(), {}, 0)
        reads._ready = blobs
        return reads

    def collect(self) -> dict[str, Blob]:
        """Wait for git and return the blobs by path. Raises RepositoryError when git failed or an
        object is missing."""
        return dict(self.each())

    def each(self) -> Iterator[tuple[str, Blob]]:
        """The blobs by path, each as soon as git has written it: the caller takes in one while git
        decompresses the next. Raises RepositoryError when git failed or an object is missing."""
        if self._ready is not None:
            yield from self._ready.items()
            return
        paths: dict[str, list[str]] = {}
        for path, entry in self._entries.items():
            paths.setdefault(entry.sha, []).append(path)
        try:
            if self._git is None:
                return
            answers = _Written(self._git.stdout.fileno(), self._git.proc)
            for sha in self._shas:
                try:
                    status, obj = read_answer(answers, self._limit)
                except BrokenAnswer as exc:
                    self._raise_if_failed()
                    raise cat_file_failed(self._git_dir, str(exc)) from None
                if obj is None:
                    raise RepositoryError(f"blob {sha} is {status} in {self._git_dir}; re-fetch the mirror")
                for path in paths[sha]:
                    yield path, blob_of(path, obj)
            self._raise_if_failed()
        finally:
            self.close()

    def _raise_if_failed(self) -> None:
        assert self._git is not None
        returncode = self._git.wait()
        if returncode != 0:
            raise cat_file_failed(self._git_dir, f"exited with {returncode}", self._git.error_output())

    def close(self) -> None:
        """Stop git if it is still running and let go of the temporary files."""
        if self._git is not None:
            self._git.close()


class _Written:
    """The answers' file as git writes it, read as the parser reads a stream: a read waits until
    git has written what it asks for, or has ended. Read at its own offset (``pread``): the file's
    offset is git's, which it writes at."""

    _READ = 1 << 20
    # A git that writes nothing for this long while it runs is taken for stuck.
    _STALLED_SECONDS = 120

    def __init__(self, fd: int, proc: subprocess.Popen[bytes]) -> None:
        self._fd, self._proc = fd, proc
        self._data = bytearray()
        self._at = 0  # what of _data was read
        self._offset = 0  # where in the file _data ends
        self._written_at = time.monotonic()

    def readline(self) -> bytes:
        while (end := self._data.find(b"\n", self._at)) == -1:
            if not self._more():
                return self._take(len(self._data) - self._at)
        return self._take(end + 1 - self._at)

    def read(self, size: int) -> bytes:
        while len(self._data) - self._at < size and self._more():
            pass
        return self._take(min(size, len(self._data) - self._at))

    def _take(self, size: int) -> bytes:
        taken = bytes(self._data[self._at : self._at + size])
        self._at += size
        return taken

    def _more(self) -> bool:
        """Add what git wrote since; False once it has ended and written nothing more."""
        while True:
            ended = self._proc.poll() is not None  # asked first: what it wrote before it ended is read next
            chunk = os.pread(self._fd, self._READ, self._offset)
            if chunk:
                if self._at >= self._READ:  # let go of what was read
                    del self._data[: self._at]
                    self._at = 0
                self._data += chunk
                self._offset += len(chunk)
                self._written_at = time.monotonic()
                return True
            if ended:
                return False
            if time.monotonic() - self._written_at > self._STALLED_SECONDS:
                raise BrokenAnswer(f"wrote nothing for {self._STALLED_SECONDS} seconds")
            time.sleep(0.0005)  # git is decompressing the next object


def blob_of(path: str, obj: CatFileObject) -> Blob:
    """The file at ``path`` made of cat-file's answer ``obj``."""
    return Blob(path=path, size=obj.size, data=obj.data, is_binary=b"\0" in obj.head, too_large=obj.data is None,
                sha=obj.sha)


def blobs_by_path(entries: dict[str, TreeEntry], objects: dict[str, CatFileObject]) -> dict[str, Blob]:
    """The files of ``entries`` (path -> tree entry) made of cat-file's ``objects`` (by SHA)."""
    return {path: blob_of(path, objects[entry.sha]) for path, entry in entries.items()}
