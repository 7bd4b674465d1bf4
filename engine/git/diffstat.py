"""What a pull request changes, in git's own numbers: per file the lines added and removed, the old
path of a rename, and whether it was added or deleted, between two commits.

One git process (``git diff --raw --numstat -z -M``) gives both listings in the same order: the raw
records carry the status letter (added, deleted, renamed), the numstat records the counts. The
counts are git's, not recomputed here, so they equal what ``git diff --numstat -M`` prints for the
same two commits; a binary file has no line counts, as git reports it (``-``).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from dataclasses import dataclass

from core.errors import RepositoryError
from engine.git.process import run_git, stderr_text
from engine.git.reader import GitReader

TOP_LEVEL = ""


@dataclass(frozen=True)
class FileStat:
    """One file changed between two commits. ``path`` is where it is in the newer commit (the old
    path for a deleted file), ``old_path`` is set for a rename; ``added`` and ``removed`` are None
    for a binary file. ``status`` is git's letter: A, D, M, R, T."""

    path: str
    added: int | None
    removed: int | None
    status: str
    old_path: str | None = None

    @property
    def binary(self) -> bool:
        return self.added is None

    @property
    def lines(self) -> int:
        return (self.added or 0) + (self.removed or 0)

    @property
    def directory(self) -> str:
        return posixpath.dirname(self.path)


@dataclass(frozen=True)
class DirectoryStat:
    """The files changed in one directory (its own files, not its subdirectories')."""

    directory: str
    files: int
    added: int
    removed: int

    @property
    def lines(self) -> int:
        return self.added + self.removed


def diff_numstat(reader: GitReader, old: str, new: str) -> list[FileStat]:
    """The files changed from ``old`` to ``new``, with git's rename detection, in git's order."""
    left, right = reader.resolve(old), reader.resolve(new)
    if left == right:
        return []
    completed = run_git(
        ["diff", "--raw", "--numstat", "-z", "-M", "--no-color", "--no-ext-diff", "--no-textconv",
         "--end-of-options", left, right],
        git_dir=reader.git_dir,
    )
    if completed.returncode != 0:
        raise RepositoryError(f"cannot compare {left[:8]} with {right[:8]}: {stderr_text(completed)}")
    try:
        return parse_raw_numstat(completed.stdout)
    except (ValueError, IndexError) as exc:
        raise RepositoryError(f"git diff gave output it cannot have meant for {left[:8]}..{right[:8]} ({exc})") from exc


def parse_raw_numstat(output: bytes) -> list[FileStat]:
    """Parse ``--raw --numstat -z``: every raw record (``:modes shas STATUS\\0path\\0[new\\0]``),
    then as many numstat records (``added\\tremoved\\tpath\\0``, or ``added\\tremoved\\t\\0old\\0new\\0``
    for a rename), in the same order."""
    tokens = [token.decode("utf-8", "surrogateescape") for token in output.split(b"\0")]
    statuses: list[str] = []
    position = 0
    while position < len(tokens) and tokens[position].startswith(":"):
        letter = tokens[position].split()[-1][0]
        statuses.append(letter)
        position += 3 if letter in "RC" else 2
    stats = []
    for status in statuses:
        added, removed, path = tokens[position].split("\t", 2)
        old_path = None
        if path == "":
            old_path, path = tokens[position + 1], tokens[position + 2]
            position += 3
        else:
            position += 1
        counts = (None, None) if (added, removed) == ("-", "-") else (int(added), int(removed))
        stats.append(FileStat(path=path, added=counts[0], removed=counts[1], status=status, old_path=old_path))
    if any(tokens[position:]):
        raise ValueError("the raw and numstat listings disagree")
    return stats


def by_directory(stats: list[FileStat]) -> list[DirectoryStat]:
    """The changed files summed per directory, the most lines changed first (then by name)."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for stat in stats:
        row = sums[stat.directory]
        row[0] += 1
        row[1] += stat.added or 0
        row[2] += stat.removed or 0
    rows = [DirectoryStat(directory, *values) for directory, values in sums.items()]
    return sorted(rows, key=lambda row: (-row.lines, -row.files, row.directory))
