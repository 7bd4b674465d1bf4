"""The ``git cat-file --batch`` process behind a GitReader: started on the first read, asked for
one object at a time, its answers read in step with the requests (an object over the size limit is
drained, never held), and stopped when the reader closes or goes away, or when the process breaks
(the next read then starts a fresh one).

``GitReader.read_blobs`` pipelines many requests through the same process.
"""

from __future__ import annotations

import subprocess
import tempfile
import weakref
from pathlib import Path
from typing import IO, NamedTuple

from core.errors import RepositoryError
from engine.git.objects import BINARY_SNIFF_BYTES
from engine.git.process import error_tail, git_argv, git_env, git_missing, stderr_text

_CHUNK = 1 << 16


class CatFileObject(NamedTuple):
    sha: str
    type: str
    size: int
    data: bytes | None  # None when larger than the requested limit
    head: bytes  # the first BINARY_SNIFF_BYTES bytes, always read


MISSING = "missing"
AMBIGUOUS = "ambiguous"


class CatFileBatch:
    """The cat-file process of a reader, and the protocol spoken with it. The reader sets the
    attributes below in its ``__init__``."""

    git_dir: Path
    _proc: subprocess.Popen[bytes] | None
    _stderr: IO[bytes] | None
    _finalizer: weakref.finalize | None

    def close(self) -> None:
        """End the cat-file process; the reader starts a new one if used again."""
        if self._finalizer is not None:
            self._finalizer()
        self._proc = self._stderr = self._finalizer = None

    @property
    def cat_file_pid(self) -> int | None:
        """PID of the running cat-file process (None before the first read)."""
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def _lookup(self, spec: str, *, limit: int | None) -> tuple[str, CatFileObject | None]:
        """Ask cat-file for ``spec``: ("found", obj), ("missing", None) or ("ambiguous", None)."""
        if "\n" in spec:
            raise RepositoryError(f"refusing object name {spec!r}: it contains a newline")
        proc = self._cat_file()
        try:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(spec.encode("utf-8", "surrogateescape") + b"\n")
            proc.stdin.flush()
            return self._answer(proc.stdout, limit)
        except OSError as exc:
            raise self._broken(str(exc)) from exc

    def _answer(self, out: IO[bytes], limit: int | None) -> tuple[str, CatFileObject | None]:
        """Read one answer of cat-file --batch."""
        try:
            return read_answer(out, limit)
        except BrokenAnswer as exc:
            raise self._broken(str(exc)) from None

    def _cat_file(self) -> subprocess.Popen[bytes]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self.close()
        stderr = tempfile.TemporaryFile()
        try:
            proc = subprocess.Popen(
                git_argv(["cat-file", "--batch"], git_dir=self.git_dir),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=git_env(),
                cwd=str(self.git_dir),
            )
        except FileNotFoundError as exc:
            stderr.close()
            raise git_missing() from exc
        self._proc, self._stderr = proc, stderr
        self._finalizer = weakref.finalize(self, _stop, proc, stderr)
        return proc

    def _broken(self, reason: str) -> RepositoryError:
        """Stop the cat-file process (the next read starts a fresh one) and describe why."""
        stderr = error_tail(self._stderr) if self._stderr is not None else b""
        self.close()
        return cat_file_failed(self.git_dir, reason, stderr)


def cat_file_failed(git_dir: Path, reason: str, stderr: bytes = b"") -> RepositoryError:
    """What to say when ``git cat-file`` went wrong (`reason`), with the end of its error output."""
    detail = f": {stderr_text(stderr)}" if stderr.strip() else ""
    return RepositoryError(
        f"reading {git_dir} failed, git cat-file {reason}{detail}; check that the mirror is intact (re-fetch it if needed)"
    )


class BrokenAnswer(Exception):
    """cat-file's output is not what its protocol says: the reason, for the caller's message."""


def read_answer(out: IO[bytes], limit: int | None) -> tuple[str, CatFileObject | None]:
    """Read one answer of ``cat-file --batch`` from ``out``: ("found", obj), ("missing", None) or
    ("ambiguous", None). An object over ``limit`` bytes is drained, never held."""
    header = out.readline()
    if not header.endswith(b"\n"):
        raise BrokenAnswer("it stopped answering")
    fields = header[:-1].rsplit(b" ", 2)
    if fields[-1] == b"missing":
        return MISSING, None
    if fields[-1] == b"ambiguous":
        return AMBIGUOUS, None
    if len(fields) != 3 or not fields[2].isdigit():
        raise BrokenAnswer(f"unexpected answer {header[:200]!r}")
    size = int(fields[2])
    data, head = _read_content(out, size, limit)
    return "found", CatFileObject(fields[0].decode("ascii"), fields[1].decode("ascii"), size, data, head)


def _read_content(out: IO[bytes], size: int, limit: int | None) -> tuple[bytes | None, bytes]:
    if limit is None or size <= limit:
        data = out.read(size)
        if len(data) != size:
            raise BrokenAnswer("it ended in the middle of an object")
        head = data[:BINARY_SNIFF_BYTES]
    else:
        # Too large to keep: read just enough to tell binary from text,
        # then drain the rest so the stream stays in step.
        data = None
        head = out.read(min(size, BINARY_SNIFF_BYTES))
        remaining = size - len(head)
        while remaining:
            chunk = out.read(min(remaining, _CHUNK))
            if not chunk:
                raise BrokenAnswer("it ended in the middle of an object")
            remaining -= len(chunk)
    if out.read(1) != b"\n":
        raise BrokenAnswer("it sent a malformed object")
    return data, head


def _stop(proc: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        stderr.close()
