"""Fast, read-only access to a (bare) repository through one ``git cat-file --batch``.

Reading thousands of files must not cost thousands of processes, so all
object reads go through a single long-lived cat-file process; only
whole-tree operations (listing paths, diffing two commits) start their own
git process, once per call, and their results are cached.

A GitReader is not thread-safe: use one per thread (or per task).
"""

from __future__ import annotations

import re
import subprocess
import threading
import weakref
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from core.errors import AmbiguousCommit, CommitNotFound, RepositoryError
from engine.git.blobreads import MIN_BLOBS, BlobReads, blobs_by_path
from engine.git.catfile import AMBIGUOUS, CatFileBatch, CatFileObject
from engine.git.objects import Blob, Change, CommitInfo, TreeEntry
from engine.git.parsing import parse_commit, parse_hunk_headers, parse_ls_tree, parse_name_status, parse_tree
from engine.git.process import GitStarted, run_git, stderr_text
from engine.git.safety import validate_repo_path, validate_revision

# Files one ``files_line_changes`` process diffs at most (their paths go on its command line).
_DIFF_PATHS = 500
_INDEX_LINE = re.compile(rb"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)

_HEX = re.compile(r"^[0-9a-f]+$")
# Parsed tree entries kept in memory (roughly 300 bytes each).
_TREE_ENTRY_BUDGET = 300_000


class GitReader(CatFileBatch):
    """Read commits, trees and blobs of the repository at ``mirror_dir``.

    Use as a context manager (or call ``close()``) so the cat-file process
    ends with the run. ``min_abbrev`` is the shortest hex string accepted as
    an abbreviated SHA; shorter hex strings are only looked up as branch or
    tag names.
    """

    def __init__(self, mirror_dir: Path | str, *, max_blob_bytes: int = 1_000_000, min_abbrev: int = 7) -> None:
        self.git_dir = _git_dir(Path(mirror_dir))
        self.max_blob_bytes = max_blob_bytes
        self.min_abbrev = min_abbrev
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._finalizer: weakref.finalize | None = None
        self._resolved: dict[str, str] = {}
        self._commit_raw: dict[str, bytes] = {}
        self._commit_info: dict[str, CommitInfo] = {}
        self._trees: dict[str, dict[str, tuple[str, str, str]]] = {}
        self._tree_entries = 0
        self._paths: dict[str, tuple[str, ...]] = {}
        self._changes: dict[tuple[str, str], tuple[Change, ...]] = {}
        self._changes_started: dict[tuple[str, str], GitStarted] = {}

    # -- lifecycle -----------------------------------------------------------

    def close(self) -> None:
        """End the cat-file process, and any git started in the background and not asked for."""
        for started in self._changes_started.values():
            started.close()
        self._changes_started.clear()
        super().close()

    def __enter__(self) -> GitReader:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- commits -------------------------------------------------------------

    def resolve(self, rev: str) -> str:
        """The full SHA of the commit ``rev`` names (SHA, abbreviated SHA or ref).

        Raises CommitNotFound or AmbiguousCommit (naming the candidates).
        Results are cached, so a branch name keeps meaning the commit it named
        when first resolved: use a new reader after fetching.
        """
        if not isinstance(rev, str):
            raise CommitNotFound(f"{rev!r} is not a revision; give a commit SHA or a branch name")
        cached = self._resolved.get(rev)
        if cached is not None:
            return cached
        validate_revision(rev)
        lowered = rev.lower()
        is_hex = bool(_HEX.fullmatch(lowered))
        if is_hex and len(rev) < self.min_abbrev:
            specs = [f"refs/heads/{rev}", f"refs/tags/{rev}"]
        else:
            specs = [rev]
        for spec in specs:
            _, obj = self._lookup(f"{spec}^{{commit}}", limit=None)
            if obj is not None:
                self._commit_raw[obj.sha] = obj.data or b""
                self._resolved[rev] = self._resolved[obj.sha] = obj.sha
                return obj.sha
        if is_hex and len(rev) >= self.min_abbrev:
            self._raise_if_ambiguous(lowered)
        hint = ""
        if is_hex and len(rev) < self.min_abbrev:
            hint = f" (abbreviated SHAs need at least {self.min_abbrev} characters)"
        raise CommitNotFound(
            f"no commit {rev!r} in the repository{hint}; check the SHA or fetch the repository again"
        )

    def _raise_if_ambiguous(self, prefix: str) -> None:
        # With a ^{commit} suffix git reports an ambiguous prefix as merely
        # missing, so ask again without it.
        status, _ = self._lookup(prefix, limit=0)
        if status != AMBIGUOUS:
            return
        candidates = self._commit_candidates(prefix)
        if candidates:
            raise AmbiguousCommit(prefix, candidates)

    def commit_info(self, sha: str) -> CommitInfo:
        """Message, author, commit time and parents of a commit."""
        full = self.resolve(sha)
        info = self._commit_info.get(full)
        if info is None:
            try:
                info = parse_commit(full, self._commit_raw[full])
            except ValueError as exc:
                raise RepositoryError(f"commit {full} in {self.git_dir} is corrupt ({exc}); re-fetch the mirror") from exc
            self._commit_info[full] = info
        return info

    def _commit_candidates(self, prefix: str) -> list[str]:
        """The commits an ambiguous abbreviated SHA could mean ([] unless two or more)."""
        listed = run_git(["rev-parse", f"--disambiguate={prefix}"], git_dir=self.git_dir)
        shas = listed.stdout.decode("ascii", "replace").split()
        if not shas:
            return []
        types = run_git(
            ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
            git_dir=self.git_dir,
            input="".join(f"{sha}\n" for sha in shas).encode(),
        )
        commits = [
            line.split()[0]
            for line in types.stdout.decode("ascii", "replace").splitlines()
            if line.endswith(" commit")
        ]
        return commits if len(commits) > 1 else []

    # -- trees and blobs -----------------------------------------------------

    def read_blob(self, commit: str, path: str) -> Blob | None:
        """The file at ``path`` in ``commit``, or None when there is no file there.

        Blobs over ``max_blob_bytes`` come back with ``too_large`` and no data.
        """
        entry = self.tree_entry(commit, path)
        if entry is None or entry.type != "blob":
            return None
        _, obj = self._lookup(entry.sha, limit=self.max_blob_bytes)
        if obj is None:
            raise RepositoryError(
                f"the content of {entry.path} ({entry.sha}) is missing from {self.git_dir}; re-fetch the mirror"
            )
        return Blob(
            path=entry.path,
            size=obj.size,
            data=obj.data,
            is_binary=b"\0" in obj.head,
            too_large=obj.data is None,
            sha=obj.sha,
        )

    def tree_entry(self, commit: str, path: str) -> TreeEntry | None:
        """The tree entry at ``path`` (file, directory or gitlink), or None."""
        path = validate_repo_path(path)
        tree = self._root_tree(self.resolve(commit))
        *directories, name = path.split("/")
        for directory in directories:
            item = self._tree_items(tree).get(directory)
            if item is None or item[1] != "tree":
                return None
            tree = item[2]
        item = self._tree_items(tree).get(name)
        return None if item is None else TreeEntry(path, *item)

    def _root_tree(self, commit_sha: str) -> str:
        raw = self._commit_raw[commit_sha]
        if not raw.startswith(b"tree "):
            raise RepositoryError(f"commit {commit_sha} in {self.git_dir} is corrupt; re-fetch the mirror")
        return raw[5 : raw.index(b"\n")].decode("ascii")

    def _tree_items(self, tree_sha: str) -> dict[str, tuple[str, str, str]]:
        """name -> (mode, type, sha) of a tree. Trees are walked here, with a cache,
        rather than by git (``commit:path``), which re-reads every tree on the way
        for every single request."""
        items = self._trees.get(tree_sha)
        if items is None:
            _, obj = self._lookup(tree_sha, limit=None)
            if obj is None or obj.type != "tree":
                raise RepositoryError(f"tree {tree_sha} is missing from {self.git_dir}; re-fetch the mirror")
            try:
                items = parse_tree(obj.data or b"", raw_len=len(tree_sha) // 2)
            except ValueError as exc:
                raise RepositoryError(
                    f"tree {tree_sha} in {self.git_dir} is corrupt ({exc}); re-fetch the mirror"
                ) from exc
            self._tree_entries += len(items)
            if self._tree_entries > _TREE_ENTRY_BUDGET:
                self._trees.clear()
                self._tree_entries = len(items)
            self._trees[tree_sha] = items
        return items

    def list_paths(self, commit: str) -> list[str]:
        """Every file (blob) path in ``commit``, sorted as git sorts them."""
        sha = self.resolve(commit)
        cached = self._paths.get(sha)
        if cached is None:
            completed = run_git(["ls-tree", "-r", "-z", "--full-tree", "--end-of-options", sha], git_dir=self.git_dir)
            if completed.returncode != 0:
                raise RepositoryError(f"cannot list the files of commit {sha}: {stderr_text(completed)}")
            cached = self._paths[sha] = tuple(parse_ls_tree(completed.stdout))
        return list(cached)

    def start_changes(self, old: str, new: str) -> None:
        """Have git work out ``changes(old, new)`` in the background (rename detection is most of
        what it costs), for a caller that will likely ask and has other work to do meanwhile."""
        key = (self.resolve(old), self.resolve(new))
        if key[0] != key[1] and key not in self._changes and key not in self._changes_started:
            self._changes_started[key] = GitStarted(_changes_args(key), git_dir=self.git_dir)

    def changes(self, old: str, new: str) -> list[Change]:
        """Files added, deleted, modified or renamed between two commits."""
        key = (self.resolve(old), self.resolve(new))
        cached = self._changes.get(key)
        if cached is None:
            if key[0] == key[1]:
                cached = ()
            else:
                started = self._changes_started.pop(key, None)
                completed = started.result() if started else run_git(_changes_args(key), git_dir=self.git_dir)
                if completed.returncode != 0:
                    raise RepositoryError(
                        f"cannot compare {key[0]} with {key[1]}: {stderr_text(completed)}"
                    )
                try:
                    cached = tuple(parse_name_status(completed.stdout))
                except IndexError as exc:
                    raise RepositoryError(f"git diff-tree gave truncated output for {key[0]}..{key[1]}; retry") from exc
            self._changes[key] = cached
        return list(cached)

    def blob_line_changes(self, old_blob: str, new_blob: str) -> list[tuple[int, int, int, int]]:
        """The hunks of git's diff between two blobs, as (old start, old count, new start, new
        count) with git's -U0 numbering: a count of 0 means lines inserted (or removed) after that
        line. Differences only in trailing whitespace or CR line ends are not changes."""
        if old_blob == new_blob:
            return []
        completed = run_git(
            ["diff", "--no-color", "--no-ext-diff", "--ignore-space-at-eol", "-U0", "--end-of-options",
             old_blob, new_blob],
            git_dir=self.git_dir,
        )
        if completed.returncode not in (0, 1):
            raise RepositoryError(f"cannot compare blobs {old_blob} and {new_blob}: {stderr_text(completed)}")
        return parse_hunk_headers(completed.stdout)

    def files_line_changes(self, old: str, new: str, paths: Iterable[str]) -> dict[tuple[str, str], list]:
        """What ``blob_line_changes`` gives for each of ``paths`` between two commits, keyed by
        (old blob, new blob), from one git process for many files (``_DIFF_PATHS`` at a time)
        rather than one each. Files unchanged, added, deleted or binary are left out."""
        old_sha, new_sha = self.resolve(old), self.resolve(new)
        wanted = sorted(set(paths))
        found: dict[tuple[str, str], list] = {}
        for start in range(0, len(wanted), _DIFF_PATHS):
            completed = run_git(
                ["diff-tree", "-r", "-p", "-U0", "--full-index", "--no-renames", "--ignore-space-at-eol", "--no-color",
                 "--no-ext-diff", "--end-of-options", old_sha, new_sha, "--",
                 # Literal: a path may hold what a pathspec reads as a wildcard.
                 *(f":(literal){path}" for path in wanted[start : start + _DIFF_PATHS])],
                git_dir=self.git_dir,
            )
            if completed.returncode != 0:
                raise RepositoryError(f"cannot compare {old_sha[:12]} with {new_sha[:12]}: {stderr_text(completed)}")
            for block in completed.stdout.split(b"\ndiff --git ")[0 if completed.stdout else 1 :]:
                index = _INDEX_LINE.search(block)
                if index is None or b"\nBinary files " in block or index.group(1).strip(b"0") == b"" \
                        or index.group(2).strip(b"0") == b"":
                    continue
                found[(index.group(1).decode("ascii"), index.group(2).decode("ascii"))] = parse_hunk_headers(block)
        return found

    # -- the cat-file process ------------------------------------------------

    def read_blobs(self, commit: str, paths: Iterable[str]) -> dict[str, Blob]:
        """Many files of one commit, by path (paths that are no file there are left out).

        The requests go to cat-file from a second thread while this one reads the answers, so git
        decompresses the next object while we take in the last one instead of waiting for us."""
        return self._read_entries(self._blob_entries(commit, paths))

    def _read_entries(self, entries: dict[str, TreeEntry]) -> dict[str, Blob]:
        shas = list(dict.fromkeys(entry.sha for entry in entries.values()))
        if not shas:
            return {}
        proc = self._cat_file()
        assert proc.stdin is not None and proc.stdout is not None
        stdin = proc.stdin

        def send() -> None:
            try:
                stdin.write(b"".join(f"{sha}\n".encode("ascii") for sha in shas))
                stdin.flush()
            except OSError:
                pass  # the reading side reports the broken process

        writer = threading.Thread(target=send, name="cat-file-requests", daemon=True)
        writer.start()
        objects: dict[str, CatFileObject] = {}
        try:
            for sha in shas:
                status, obj = self._answer(proc.stdout, self.max_blob_bytes)
                if obj is None:
                    raise RepositoryError(f"blob {sha} is {status} in {self.git_dir}; re-fetch the mirror")
                objects[sha] = obj
        except OSError as exc:
            raise self._broken(str(exc)) from exc
        finally:
            writer.join()
        return blobs_by_path(entries, objects)

    def start_reading_blobs(self, commit: str, paths: Iterable[str]) -> BlobReads:
        """Start reading many files of one commit in the background (``BlobReads``: a git process
        of its own, decompressing on another core); ``collect()`` on the answer returns them as
        ``read_blobs`` would. For a caller with other work to do meanwhile, and blobs by the
        thousand: a few are read at once, through the reader's own process."""
        entries = self._blob_entries(commit, paths)
        if len(entries) < MIN_BLOBS:
            return BlobReads.read(self._read_entries(entries))
        return BlobReads(self.git_dir, entries, self.max_blob_bytes)

    def _blob_entries(self, commit: str, paths: Iterable[str]) -> dict[str, TreeEntry]:
        entries: dict[str, TreeEntry] = {}
        for path in paths:
            entry = self.tree_entry(commit, path)
            if entry is not None and entry.type == "blob":
                entries[entry.path] = entry
        return entries


def _changes_args(key: tuple[str, str]) -> list[str]:
    return ["diff-tree", "-r", "-z", "-M", "--name-status", "--no-commit-id", "--end-of-options", *key]


def _git_dir(path: Path) -> Path:
    if (path / ".git").is_dir():
        path = path / ".git"
    if not (path / "HEAD").is_file() or not (path / "objects").is_dir():
        raise RepositoryError(
            f"{path} is not a git repository; fetch the mirror first (fetch_mirror)"
        )
    return path.resolve()
