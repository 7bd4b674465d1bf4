"""Many blobs of one commit read by git in the background (``GitReader.start_reading_blobs``).

A verification reads every file its evidence points at before it checks anything: thousands of
blobs. Asked through the reader's one cat-file process, git decompresses them one after another on
one core while Python waits for each. Here they are split between a few one-shot
``git cat-file --batch`` processes whose requests and answers are temporary files: git needs
nothing more from us once started, decompresses on several cores, and the caller goes on with its
own work (loading the findings from the database) meanwhile. ``collect`` waits for git and reads
the answers, with the same parser as the reader's process.

A temporary file rather than a pipe, on both sides: a pipe holds 64 KiB, so git would stop as soon
as it was full, until the caller came back to read it."""

from __future__ import annotations

import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import IO

from core.errors import RepositoryError
from engine.git.catfile import BrokenAnswer, CatFileObject, read_answer
from engine.git.objects import Blob, TreeEntry
from engine.git.process import git_argv, git_env, stderr_text

# git processes for one read: decompression is git's work, and this many cores share it.
_PROCESSES = 2
# Fewer blobs than this per process cost more in starting git than they save; fewer in all are
# read at once through the reader's own process (``BlobReads.read``).
MIN_BLOBS_PER_PROCESS = 64


class BlobReads:
    """Blobs being read in the background; ``collect()`` once for them by path (paths whose entry
    is no blob are not asked for). Ended by ``close()`` (which ``collect`` calls), or when it goes
    away, so no git process outlives it."""

    def __init__(self, git_dir: Path, entries: dict[str, TreeEntry], max_blob_bytes: int) -> None:
        self._git_dir = git_dir
        self._entries = {path: entry for path, entry in entries.items() if entry.type == "blob"}
        self._limit = max_blob_bytes
        self._ready: dict[str, Blob] | None = None
        shas = list(dict.fromkeys(entry.sha for entry in self._entries.values()))
        count = max(1, min(_PROCESSES, len(shas) // MIN_BLOBS_PER_PROCESS))
        share = -(-len(shas) // count) if shas else 0
        # Consecutive runs, not every other SHA: paths near each other are often deltas of one
        # another in the pack, and one process's delta cache then serves them.
        self._parts: list[_Part] = []
        self._finalizer = weakref.finalize(self, _close_all, self._parts)
        for start in range(0, len(shas), share or 1):
            self._parts.append(_Part.start(git_dir, shas[start : start + share]))

    @classmethod
    def read(cls, blobs: dict[str, Blob]) -> BlobReads:
        """Blobs read already (too few to be worth a process of their own), as ``collect`` gives them."""
        reads = cls(Path(), {}, 0)
        reads._ready = blobs
        return reads

    def collect(self) -> dict[str, Blob]:
        """Wait for git and return the blobs by path. Raises RepositoryError when git failed or an
        object is missing."""
        if self._ready is not None:
            return self._ready
        objects: dict[str, CatFileObject] = {}
        try:
            for part in self._parts:
                objects.update(part.collect(self._git_dir, self._limit))
        finally:
            self.close()
        return blobs_by_path(self._entries, objects)

    def close(self) -> None:
        """Stop git if it is still running and let go of the temporary files."""
        self._finalizer()


class _Part:
    """One cat-file process, its requests, answers and error output in temporary files."""

    def __init__(self, shas: list[str], proc: subprocess.Popen[bytes] | None, answers: IO[bytes], errors: IO[bytes]):
        self.shas = shas
        self.proc = proc
        self.answers = answers
        self.errors = errors

    @classmethod
    def start(cls, git_dir: Path, shas: list[str]) -> _Part:
        answers, errors = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        try:
            with tempfile.TemporaryFile() as requests:
                requests.write("".join(f"{sha}\n" for sha in shas).encode("ascii"))
                requests.seek(0)
                proc = subprocess.Popen(
                    git_argv(["cat-file", "--batch"], git_dir=git_dir),
                    stdin=requests,
                    stdout=answers,
                    stderr=errors,
                    env=git_env(),
                    cwd=str(git_dir),
                )
        except FileNotFoundError as exc:
            answers.close()
            errors.close()
            raise RepositoryError("the git executable was not found; install git on this machine") from exc
        except BaseException:
            answers.close()
            errors.close()
            raise
        return cls(shas, proc, answers, errors)

    def collect(self, git_dir: Path, limit: int) -> dict[str, CatFileObject]:
        assert self.proc is not None
        returncode = self.proc.wait()
        if returncode != 0:
            self.errors.seek(0)
            raise RepositoryError(
                f"reading {git_dir} failed, git cat-file exited with {returncode}: "
                f"{stderr_text(self.errors.read()[-2000:])}; check that the mirror is intact (re-fetch it if needed)"
            )
        self.answers.seek(0)
        objects: dict[str, CatFileObject] = {}
        for sha in self.shas:
            try:
                status, obj = read_answer(self.answers, limit)
            except BrokenAnswer as exc:
                raise RepositoryError(
                    f"reading {git_dir} failed, git cat-file {exc}; check that the mirror is intact (re-fetch it if needed)"
                ) from None
            if obj is None:
                raise RepositoryError(f"blob {sha} is {status} in {git_dir}; re-fetch the mirror")
            objects[sha] = obj
        return objects

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.answers.close()
        self.errors.close()


def blobs_by_path(entries: dict[str, TreeEntry], objects: dict[str, CatFileObject]) -> dict[str, Blob]:
    """The files of ``entries`` (path -> tree entry) made of cat-file's ``objects`` (by SHA)."""
    return {
        path: Blob(
            path=path,
            size=objects[entry.sha].size,
            data=objects[entry.sha].data,
            is_binary=b"\0" in objects[entry.sha].head,
            too_large=objects[entry.sha].data is None,
            sha=entry.sha,
        )
        for path, entry in entries.items()
    }


def _close_all(parts: list[_Part]) -> None:
    for part in parts:
        part.close()
