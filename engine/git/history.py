"""Questions about a repository's history, answered by git itself.

Counting commits and deciding ancestry are git's own algorithms (``rev-list --left-right
--count``, ``merge-base --is-ancestor``); reimplementing them over parsed commits would be slower
and would disagree with git on the cases that matter (merges, grafts, shallow mirrors).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import RepositoryError
from engine.git.process import run_git, stderr_text
from engine.git.reader import GitReader


@dataclass(frozen=True)
class Divergence:
    """How ``ours`` and ``theirs`` have diverged: ``ahead`` commits only ``ours`` has, ``behind``
    commits only ``theirs`` has, and their best common ancestor (``fork``, None if unrelated)."""

    ahead: int
    behind: int
    fork: str | None


def is_ancestor(reader: GitReader, ancestor: str, descendant: str) -> bool:
    """Whether ``ancestor`` is reachable from ``descendant`` (a commit is its own ancestor)."""
    old, new = reader.resolve(ancestor), reader.resolve(descendant)
    completed = run_git(["merge-base", "--is-ancestor", old, new], git_dir=reader.git_dir)
    if completed.returncode in (0, 1):
        return completed.returncode == 0
    raise RepositoryError(f"git merge-base could not compare {old[:8]} with {new[:8]}: {stderr_text(completed)}")


def divergence(reader: GitReader, ours: str, theirs: str, *, fork: bool = True) -> Divergence:
    """``ours`` against ``theirs``: what ``git rev-list --left-right --count ours...theirs`` says,
    and (unless ``fork`` is off, which saves a process) where they fork."""
    left, right = reader.resolve(ours), reader.resolve(theirs)
    completed = run_git(["rev-list", "--left-right", "--count", f"{left}...{right}"], git_dir=reader.git_dir)
    fields = completed.stdout.decode("ascii", "replace").split()
    if completed.returncode != 0 or len(fields) != 2 or not all(field.isdigit() for field in fields):
        raise RepositoryError(f"git rev-list could not count {left[:8]}...{right[:8]}: {stderr_text(completed)}")
    return Divergence(
        ahead=int(fields[0]), behind=int(fields[1]), fork=merge_base(reader, left, right) if fork else None
    )


def merge_base(reader: GitReader, one: str, other: str) -> str | None:
    """The best common ancestor of two commits, or None when their histories never meet."""
    completed = run_git(["merge-base", reader.resolve(one), reader.resolve(other)], git_dir=reader.git_dir)
    sha = completed.stdout.decode("ascii", "replace").strip()
    if completed.returncode == 0 and sha:
        return sha
    if completed.returncode == 1:
        return None
    raise RepositoryError(f"git merge-base failed: {stderr_text(completed)}")


def subjects_between(reader: GitReader, exclude: str, include: str, *, limit: int = 3) -> list[str]:
    """The subjects of the newest ``limit`` commits ``include`` has that ``exclude`` lacks."""
    old, new = reader.resolve(exclude), reader.resolve(include)
    listed = run_git(
        ["log", "--no-color", "--format=%s", f"--max-count={limit}", f"{old}..{new}"], git_dir=reader.git_dir
    )
    if listed.returncode != 0:
        raise RepositoryError(f"git log could not list {old[:8]}..{new[:8]}: {stderr_text(listed)}")
    return listed.stdout.decode("utf-8", "replace").splitlines()
