"""A unified diff between two commits, as files, hunks and numbered lines: the code browser's diff
view between two pins. One git process for the whole diff (`diff-tree -p`, the same plumbing and
rename detection as `GitReader.changes`, so its files come in the same order), its size bounded:
past `max_lines` lines the rest is left out and the diff says so."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.errors import RepositoryError
from engine.git.process import run_git, stderr_text
from engine.git.reader import GitReader
from engine.git.trees import STATUS_WORDS

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk: `kind` is context, added, removed or note (git's "\\ No newline at end
    of file"); `old` and `new` are its numbers on either side (None on the side it is not on)."""

    kind: str
    text: str
    old: int | None = None
    new: int | None = None


@dataclass
class Hunk:
    old_start: int
    new_start: int
    section: str  # what git names after the @@ (the enclosing function, when it can tell)
    lines: list[DiffLine] = field(default_factory=list)

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start} +{self.new_start} @@{self.section}"


@dataclass
class FileDiff:
    """One file's changes. `path` is where it is at the newer commit (its old path for a deletion);
    `old_path` is set for a rename or a copy."""

    path: str
    status: str
    old_path: str | None = None
    binary: bool = False
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def added(self) -> int:
        return sum(line.kind == "added" for hunk in self.hunks for line in hunk.lines)

    @property
    def removed(self) -> int:
        return sum(line.kind == "removed" for hunk in self.hunks for line in hunk.lines)


@dataclass
class CommitDiff:
    files: list[FileDiff]
    # Files whose lines are not shown, past the bound (they are still listed, with no hunks).
    files_cut: int = 0


def commit_diff(reader: GitReader, old: str, new: str, *, context: int = 3, max_lines: int = 20_000) -> CommitDiff:
    """The changes from `old` to `new`, file by file, with `context` lines around each change."""
    key = (reader.resolve(old), reader.resolve(new))
    changes = reader.changes(*key)
    if not changes:
        return CommitDiff(files=[])
    completed = run_git(
        ["diff-tree", "-r", "-M", "-p", f"-U{max(context, 0)}", "--no-commit-id", "--no-color", "--no-ext-diff",
         "--end-of-options", *key],
        git_dir=reader.git_dir,
    )
    if completed.returncode != 0:
        raise RepositoryError(f"cannot compare {key[0]} with {key[1]}: {stderr_text(completed)}")
    blocks = _per_change(_file_blocks(completed.stdout), changes)
    files, shown, cut = [], 0, 0
    for change, block in zip(changes, blocks, strict=True):
        path = change.new_path if change.new_path is not None else change.old_path
        diff = FileDiff(path=path or "", status=STATUS_WORDS.get(change.status, "modified"),
                        old_path=change.old_path if change.status in ("R", "C") else None)
        if shown >= max_lines:
            cut += 1
        else:
            _parse_block(block, diff)
            shown += sum(len(hunk.lines) for hunk in diff.hunks)
        files.append(diff)
    return CommitDiff(files=files, files_cut=cut)


def _file_blocks(output: bytes) -> list[tuple[bytes, list[bytes]]]:
    """Each file's part of the patch: its `diff --git` header and the lines after it."""
    blocks: list[tuple[bytes, list[bytes]]] = []
    for line in output.split(b"\n"):
        if line.startswith(b"diff --git "):
            blocks.append((line, []))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def _per_change(blocks, changes) -> list[list[bytes]]:
    """The patch's parts, one per change. A type change (a file become a symbolic link) is one
    change with two parts, the old one's removal and the new one's addition, under one header."""
    parts: list[list[bytes]] = []
    index = 0
    for change in changes:
        if index >= len(blocks):
            break
        header, lines = blocks[index]
        index += 1
        if change.status == "T" and index < len(blocks) and blocks[index][0] == header:
            lines = lines + blocks[index][1]
            index += 1
        parts.append(lines)
    if len(parts) != len(changes) or index != len(blocks):
        raise RepositoryError(f"git diff-tree's patch has {len(blocks)} parts for {len(changes)} changed files; retry")
    return parts


def _parse_block(block: list[bytes], diff: FileDiff) -> None:
    """The hunks of one file's part. A hunk holds as many lines as its header counts on each side
    (a note after its last line included); anything else is a header (modes, paths, binary)."""
    hunk: Hunk | None = None
    old = new = old_left = new_left = 0
    for raw in block:
        match = _HUNK.match(raw)
        if match:
            old, new = int(match.group(1)), int(match.group(3))
            old_left = int(match.group(2)) if match.group(2) is not None else 1
            new_left = int(match.group(4)) if match.group(4) is not None else 1
            hunk = Hunk(old_start=old, new_start=new, section=_text(match.group(5)))
            diff.hunks.append(hunk)
        elif hunk is not None and raw.startswith(b"\\"):
            hunk.lines.append(DiffLine("note", _text(raw[1:].strip())))
        elif hunk is not None and (old_left or new_left):
            if raw.startswith(b"+"):
                hunk.lines.append(DiffLine("added", _text(raw[1:]), new=new))
                new, new_left = new + 1, new_left - 1
            elif raw.startswith(b"-"):
                hunk.lines.append(DiffLine("removed", _text(raw[1:]), old=old))
                old, old_left = old + 1, old_left - 1
            else:  # context: " " and the text, or an empty line where git trims the space
                hunk.lines.append(DiffLine("context", _text(raw[1:]), old=old, new=new))
                old, new, old_left, new_left = old + 1, new + 1, old_left - 1, new_left - 1
        elif raw.startswith(b"Binary files ") or raw == b"GIT binary patch":
            diff.binary = True


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").rstrip("\r")
