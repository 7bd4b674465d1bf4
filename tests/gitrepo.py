"""Build real git repositories in temporary directories for tests.

    repo = GitRepoBuilder(tmp_path)
    first = repo.write("a.py", "x = 1\\n").commit("add a")
    second = repo.rename("a.py", "b.py").commit("rename")
    repo.gitlink("vendor/lib", "3961f399" + "0" * 32).commit("pin lib")

Commits get fixed, increasing dates and a fixed identity, so the same
sequence of calls yields the same SHAs on every run. User and system git
config are ignored. Methods that change files return the builder, so calls
chain; ``commit`` returns the new commit's SHA.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
from pathlib import Path

_BASE_TIME = 1_700_000_000


class GitRepoBuilder:
    def __init__(self, tmp_path: Path, name: str = "repo", *, branch: str = "main") -> None:
        self.path = Path(tmp_path) / name
        self.path.mkdir(parents=True)
        self._ticks = 0
        self.git("init", "--quiet", f"--initial-branch={branch}")

    @property
    def git_dir(self) -> Path:
        """Hand this to GitReader to read the repository directly."""
        return self.path / ".git"

    @property
    def url(self) -> str:
        """Hand this to fetch_mirror(..., allow_local=True) to mirror the repository."""
        return str(self.path)

    def git(self, *args: str, input: bytes | None = None) -> str:
        """Run git in the work tree and return its stdout (stripped); fail loudly."""
        completed = subprocess.run(
            ["git", *args],
            cwd=self.path,
            input=input,
            capture_output=True,
            env=self._env(),
            check=False,
        )
        if completed.returncode != 0:
            raise AssertionError(
                f"git {' '.join(args)} failed: {completed.stderr.decode(errors='replace')}"
            )
        return completed.stdout.decode("utf-8", "surrogateescape").strip()

    def _env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
        when = f"{_BASE_TIME + self._ticks * 60} +0000"
        env.update(
            GIT_CONFIG_NOSYSTEM="1",
            GIT_CONFIG_GLOBAL="/dev/null",
            GIT_AUTHOR_NAME="Ada Reviewer",
            GIT_AUTHOR_EMAIL="ada@example.com",
            GIT_COMMITTER_NAME="Ada Reviewer",
            GIT_COMMITTER_EMAIL="ada@example.com",
            GIT_AUTHOR_DATE=when,
            GIT_COMMITTER_DATE=when,
        )
        return env

    # -- changing the work tree ---------------------------------------------

    def write(self, path: str, content: str | bytes) -> GitRepoBuilder:
        """Create or overwrite a file (parent directories are created)."""
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            # newline="" so "\r\n" in the text reaches the file unchanged.
            with open(target, "w", encoding="utf-8", newline="") as handle:
                handle.write(content)
        else:
            target.write_bytes(content)
        return self

    def read(self, path: str) -> str:
        return (self.path / path).read_text(encoding="utf-8")

    def delete(self, path: str) -> GitRepoBuilder:
        (self.path / path).unlink()
        return self

    def rename(self, old: str, new: str) -> GitRepoBuilder:
        target = self.path / new
        target.parent.mkdir(parents=True, exist_ok=True)
        (self.path / old).rename(target)
        return self

    def gitlink(self, path: str, sha: str) -> GitRepoBuilder:
        """Pin a submodule at ``sha`` (a gitlink entry; no submodule is cloned)."""
        self.git("update-index", "--add", "--cacheinfo", f"160000,{sha},{path}")
        # An empty directory makes git see the (unpopulated) submodule as unchanged.
        (self.path / path).mkdir(parents=True, exist_ok=True)
        return self

    def remove_gitlink(self, path: str) -> GitRepoBuilder:
        self.git("rm", "--cached", "--quiet", "--", path)
        return self

    # -- recording history ---------------------------------------------------

    def commit(self, message: str = "change") -> str:
        """Commit everything written, deleted or renamed since the last commit."""
        self.git("add", "--all")
        self._ticks += 1
        self.git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", message)
        return self.head()

    def head(self) -> str:
        return self.git("rev-parse", "HEAD")

    def branch(self, name: str, sha: str | None = None) -> GitRepoBuilder:
        self.git("branch", "--force", name, sha or "HEAD")
        return self

    def checkout(self, name: str) -> GitRepoBuilder:
        self.git("checkout", "--quiet", name)
        return self

    def tag(self, name: str, sha: str | None = None) -> GitRepoBuilder:
        self.git("tag", name, sha or "HEAD")
        return self

    def update_ref(self, ref: str, sha: str) -> GitRepoBuilder:
        """Point any ref at ``sha``, e.g. ``refs/pull/7/head`` as a forge would."""
        self.git("update-ref", ref, sha)
        return self

    def numstat(self, old: str, new: str) -> dict[str, tuple[str, str, str | None]]:
        """What ``git diff --numstat -M old new`` prints, by path: (added, removed, old path of a
        rename), the counts as git writes them ("-" for a binary file). Read with ``-z`` only so a
        rename's two paths come apart unambiguously."""
        tokens = self.git("diff", "--numstat", "-z", "-M", old, new).split("\0")
        stats, position = {}, 0
        while position < len(tokens) and tokens[position]:
            added, removed, path = tokens[position].split("\t", 2)
            old_path = None
            if not path:
                old_path, path = tokens[position + 1], tokens[position + 2]
                position += 2
            stats[path] = (added, removed, old_path)
            position += 1
        return stats

    def write_object(self, kind: str, data: bytes) -> str:
        """Store a raw object (e.g. a hand-made commit) and return its SHA."""
        return self.git("hash-object", "-t", kind, "-w", "--stdin", input=data)

    def empty_tree(self) -> str:
        return self.write_object("tree", b"")

    def colliding_commits(self, prefix_length: int = 7) -> list[str]:
        """Store two (unreferenced) commits whose SHAs share ``prefix_length`` hex digits.

        Found by hashing candidate commit objects in Python: a 7-digit
        collision takes some 20,000 tries, a few hundredths of a second.
        """
        tree = self.empty_tree()
        seen: dict[str, bytes] = {}
        for number in itertools.count():
            body = (
                f"tree {tree}\nauthor A <a@example.com> {_BASE_TIME} +0000\n"
                f"committer A <a@example.com> {_BASE_TIME} +0000\n\ncandidate {number}\n"
            ).encode()
            prefix = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()[:prefix_length]
            if prefix in seen:
                return [self.write_object("commit", seen[prefix]), self.write_object("commit", body)]
            seen[prefix] = body
        raise AssertionError("unreachable")
