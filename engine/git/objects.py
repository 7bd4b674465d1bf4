"""Plain value types returned by GitReader."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

BINARY_SNIFF_BYTES = 8000


@dataclass(frozen=True)
class CommitInfo:
    sha: str
    message: str
    author: str  # "Name <email>"
    committed_at: datetime  # timezone-aware, in the committer's offset
    parents: tuple[str, ...]


@dataclass(frozen=True)
class Blob:
    """A file's content at a commit.

    ``data`` is None when the blob is larger than the reader's limit
    (``too_large``); it was never held in memory in full.
    """

    path: str
    size: int
    data: bytes | None
    is_binary: bool
    too_large: bool
    sha: str = field(default="", compare=False)

    @property
    def text(self) -> str:
        """The content decoded as UTF-8 (invalid bytes replaced); '' when not loaded."""
        return (self.data or b"").decode("utf-8", "replace")

    def lines(self) -> list[str]:
        """The lines without terminators; CRLF counts as LF."""
        return split_lines(self.text)


def split_lines(text: str) -> list[str]:
    """Split on LF only (not on the other separators str.splitlines knows), dropping CRs.

    Line numbers then agree with git and editors: "a\\nb\\n" is two lines.
    """
    if not text:
        return []
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    elif lines[-1].endswith("\r"):
        lines[-1] = lines[-1][:-1]
    return lines


@dataclass(frozen=True)
class TreeEntry:
    path: str
    mode: str  # six octal digits, e.g. "100644", "040000", "160000"
    type: str  # "blob", "tree" or "commit" (a gitlink / submodule pin)
    sha: str


@dataclass(frozen=True)
class Change:
    """One file changed between two commits.

    ``status`` is git's letter: A added, D deleted, M modified, R renamed,
    C copied, T type changed. ``old_path`` is None for A, ``new_path`` for D.
    """

    status: str
    old_path: str | None
    new_path: str | None
