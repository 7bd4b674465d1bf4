"""Browsing a commit: every file of its tree, what changed between two commits, and one file's
content, all read from the mirror (never a checkout).

The tree listing and the comparison are one git process each (``ls-tree -r -l``, ``diff-tree -M``,
git's own rename detection); a file comes through the reader's cat-file process with its size
limit, so a huge blob is never held in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import RepositoryError
from engine.git.objects import Blob
from engine.git.process import run_git, stderr_text
from engine.git.reader import GitReader
from engine.git.safety import validate_repo_path

SUBMODULE_MODE = "160000"
SYMLINK_MODE = "120000"
EXECUTABLE_MODE = "100755"

# git's status letters in words; C (copied) only appears with copy detection, which is not asked.
STATUS_WORDS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type changed",
}


@dataclass(frozen=True)
class TreeFile:
    """One entry of a commit's tree, listed recursively: a file (``blob``) or a submodule pin
    (``commit``, a gitlink: ``sha`` is the pinned commit of the submodule, and there is no size)."""

    path: str
    mode: str
    type: str
    sha: str
    size: int | None

    @property
    def is_submodule(self) -> bool:
        return self.type == "commit"

    @property
    def is_symlink(self) -> bool:
        return self.mode == SYMLINK_MODE

    @property
    def is_executable(self) -> bool:
        return self.mode == EXECUTABLE_MODE


@dataclass(frozen=True)
class ChangedFile:
    """A file changed between two commits. ``path`` is where it is in the newer commit (the old
    path for a deleted file); ``old_path`` is set for a rename (or a copy)."""

    path: str
    status: str  # a word of STATUS_WORDS
    old_path: str | None = None

    @property
    def label(self) -> str:
        """"renamed from a.py", "added", ..."""
        if self.old_path and self.status in ("renamed", "copied"):
            return f"{self.status} from {self.old_path}"
        return self.status


@dataclass(frozen=True)
class FileRead:
    """What is at ``path`` in a commit. ``kind`` is one of ``text`` (``blob`` holds the content),
    ``binary``, ``too_large`` (``blob`` has the size but no data), ``symlink`` (``blob`` holds the
    target), ``directory``, ``submodule`` (``sha`` is the pinned commit) or ``missing``."""

    path: str
    kind: str
    blob: Blob | None = None
    sha: str = ""

    @property
    def size(self) -> int | None:
        return self.blob.size if self.blob is not None else None


def tree_files(reader: GitReader, commit: str) -> list[TreeFile]:
    """Every file and submodule of ``commit``'s tree, recursively, in git's order (by path)."""
    sha = reader.resolve(commit)
    completed = run_git(
        ["ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", sha], git_dir=reader.git_dir
    )
    if completed.returncode != 0:
        raise RepositoryError(f"cannot list the files of commit {sha}: {stderr_text(completed)}")
    try:
        return _parse_long_ls_tree(completed.stdout)
    except (ValueError, IndexError) as exc:
        raise RepositoryError(f"git ls-tree gave output it cannot have meant for {sha} ({exc}); retry") from exc


def changed_files(reader: GitReader, old: str, new: str) -> list[ChangedFile]:
    """The files changed from ``old`` to ``new`` (git diff-tree with rename detection), by path."""
    changes = []
    for change in reader.changes(old, new):
        status = STATUS_WORDS.get(change.status, "modified")
        path = change.new_path if change.new_path is not None else change.old_path
        assert path is not None
        old_path = change.old_path if change.status in ("R", "C") else None
        changes.append(ChangedFile(path=path, status=status, old_path=old_path))
    return sorted(changes, key=lambda change: change.path)


def read_file(reader: GitReader, commit: str, path: str) -> FileRead:
    """What is at ``path`` in ``commit``, read with the reader's size limit (``max_blob_bytes``).

    A file counts as binary when a NUL byte is in its first 8,000 bytes, as git decides. Raises
    UnsafePath for a path that is absolute, escapes the repository or holds control characters,
    and CommitNotFound for a commit the mirror does not have."""
    path = validate_repo_path(path)
    entry = reader.tree_entry(commit, path)
    if entry is None:
        return FileRead(path=path, kind="missing")
    if entry.type == "tree":
        return FileRead(path=path, kind="directory", sha=entry.sha)
    if entry.type == "commit":
        return FileRead(path=path, kind="submodule", sha=entry.sha)
    blob = reader.read_blob(commit, path)
    if blob is None:  # the tree changed under us: cannot happen for one resolved commit
        return FileRead(path=path, kind="missing")
    if entry.mode == SYMLINK_MODE and not blob.too_large:
        kind = "symlink"
    elif blob.is_binary:
        kind = "binary"
    elif blob.too_large:
        kind = "too_large"
    else:
        kind = "text"
    return FileRead(path=path, kind=kind, blob=blob, sha=blob.sha)


def _parse_long_ls_tree(output: bytes) -> list[TreeFile]:
    """Parse ``ls-tree -r -l -z``: ``<mode> SP <type> SP <sha> SP+ <size or -> TAB <path> NUL``."""
    files = []
    for record in output.split(b"\0"):
        if not record:
            continue
        meta, _, raw_path = record.partition(b"\t")
        mode, kind, sha, size = meta.split()
        files.append(
            TreeFile(
                path=raw_path.decode("utf-8", "surrogateescape"),
                mode=mode.decode("ascii"),
                type=kind.decode("ascii"),
                sha=sha.decode("ascii"),
                size=None if size == b"-" else int(size),
            )
        )
    return files
