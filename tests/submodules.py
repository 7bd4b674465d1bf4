"""A submodule repository with a real history, for tests of gitlink evidence and its pictures:

    m1 ─ m2 ─ m3 ─ m4 ─ m5 ─ m6 ─ m7 ─ m8        main (head m8)
                └─ f1 ─ f2 ─ f3 ─ f4             feature (head f4)

A superproject that pins m6 at its base and moves the pin to f4 in the PR sees a pin 4 ahead of
main and 5 behind; the move adds f1..f4 and drops m4..m6, so it is not a fast-forward."""
from __future__ import annotations

import subprocess
from pathlib import Path

from tests.gitrepo import GitRepoBuilder


class BridgeHistory:
    def __init__(self, tmp_path: Path, name: str = "bridge") -> None:
        self.repo = GitRepoBuilder(tmp_path, name)
        repo = self.repo
        self.main = [repo.write("bridge.py", f"version = {n}\n").commit(f"main change {n}") for n in range(1, 4)]
        repo.branch("feature").checkout("feature")
        self.feature = [repo.write("feature.py", f"step = {n}\n").commit(f"feature step {n}") for n in range(1, 5)]
        repo.checkout("main")
        self.main += [repo.write("bridge.py", f"version = {n}\n").commit(f"main change {n}") for n in range(4, 9)]

    @property
    def url(self) -> str:
        return self.repo.url

    @property
    def base_pin(self) -> str:
        return self.main[5]

    @property
    def pr_pin(self) -> str:
        return self.feature[3]

    @property
    def head(self) -> str:
        return self.main[7]


def git_answer(git_dir: Path, *args: str) -> tuple[int, str]:
    """What git itself answers on a mirror: the truth the engine's figures must equal."""
    completed = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, text=True)
    return completed.returncode, completed.stdout.strip()


def pin_submodule(repo: GitRepoBuilder, path: str, sha: str, *, url: str | None = None) -> GitRepoBuilder:
    """Pin `path` at `sha`, declaring it in .gitmodules when `url` is given."""
    if url is not None:
        repo.write(".gitmodules", f'[submodule "{path}"]\n\tpath = {path}\n\turl = {url}\n')
    return repo.gitlink(path, sha)
