"""The git plumbing that writes the demo's repositories: each commit's files hashed into a fresh
index (gitlinks for submodules), written as a tree and committed under fixed names and dates, so
every build yields the same SHAs."""
import os
import subprocess
import tempfile
from pathlib import Path

from core.errors import RecheckError

AUTHOR = ("Sam Ple", "sam.ple@example.invalid")


def build(path: Path, snapshots, branches: dict[str, str]) -> dict[str, str]:
    if path.exists() and any(path.iterdir()) and not (path / "HEAD").is_file():
        raise RecheckError(
            f"{path} exists and is not the demo's git repository; move it away and load the demo again."
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    _git(None, "init", "--quiet", "--bare", "--initial-branch=main", str(path))
    commits: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="recheck-demo-") as scratch:
        index = Path(scratch) / "index"
        for name, parent, date, message, files, gitlinks in snapshots:
            index.unlink(missing_ok=True)
            entries = [f"100644 {_git(path, 'hash-object', '-w', '--stdin', input=text)}\t{file}"
                       for file, text in sorted(files.items())]
            # A submodule is a gitlink: an entry of mode 160000 naming a commit of another repository.
            entries += [f"160000 {sha}\t{file}" for file, sha in sorted(gitlinks.items())]
            _git(path, "update-index", "--add", "--index-info", input="\n".join(entries) + "\n", index=index)
            tree = _git(path, "write-tree", index=index)
            parents = ["-p", commits[parent]] if parent else []
            commits[name] = _git(path, "commit-tree", tree, *parents, "-m", message, date=date)
    for branch, name in branches.items():
        _git(path, "update-ref", f"refs/heads/{branch}", commits[name])
    return commits


def _git(git_dir: Path | None, *args: str, input: str | None = None, index: Path | None = None,
         date: str | None = None) -> str:
    # A clean environment: no user or system config (signing, hooks, templates, another default
    # branch or object format) may change what gets written, and so the SHAs.
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": AUTHOR[0],
        "GIT_AUTHOR_EMAIL": AUTHOR[1],
        "GIT_COMMITTER_NAME": AUTHOR[0],
        "GIT_COMMITTER_EMAIL": AUTHOR[1],
    }
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    if date is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    try:
        result = subprocess.run(
            ["git", *args], input=input.encode() if input is not None else None, env=env,
            capture_output=True, timeout=60, check=False,
        )
    except FileNotFoundError:
        raise RecheckError("git is not installed: the demo's sample repository needs the git command.") from None
    if result.returncode != 0:
        raise RecheckError(
            f"git {args[0]} failed while building the demo repository: {result.stderr.decode(errors='replace').strip()}"
        )
    return result.stdout.decode().strip()
