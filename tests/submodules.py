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


def verified_submodule_review(tmp_path: Path, *, number: int = 4108):
    """A superproject whose PR moves its submodule off the main line, reviewed with a finding of
    three gitlink items (pinned_at, off_branch, not_fast_forward) and a moving snippet, verified at
    its base, reviewed and head commits. Returns (pull request, BridgeHistory)."""
    from findings.services.review_import import review_import
    from findings.services.verification.run import pull_request_verify
    from reviews.models import PullRequest

    bridge = BridgeHistory(tmp_path)
    repo = GitRepoBuilder(tmp_path, "rl")
    loader = "".join(f"line {n}\n" for n in range(1, 11)).replace("line 5\n", "tolerance = 0\n")
    repo.write("README.md", "rl\n").write("src/loader.py", loader)
    base = pin_submodule(repo, "3rdparty/bridge", bridge.base_pin, url=bridge.url).commit("base")
    reviewed = pin_submodule(repo, "3rdparty/bridge", bridge.pr_pin).commit("repin bridge to its feature branch")
    repo.write("src/loader.py", "# header\n# header\n" + loader)
    head = repo.commit("two lines above the tolerance")
    gitlink = {"kind": "gitlink", "path": "3rdparty/bridge", "sha": bridge.pr_pin}
    review_import(
        data={
            "repository": {"slug": "acme/rl", "clone_url": repo.url, "web_url": "https://github.com/acme/rl"},
            "pull_request": {"number": number, "title": "Nemotron family"},
            "commits": [{"sha": base, "role": "base"}, {"sha": reviewed, "role": "reviewed"},
                        {"sha": head, "role": "head"}],
            "findings": [
                {"number": 1, "kind": "blocker", "caught_by": "ci", "title": "The Bridge pin points off main",
                 "evidence": [gitlink, {**gitlink, "expect": "off_branch"},
                              {**gitlink, "expect": "not_fast_forward"}]},
                {"number": 2, "kind": "blocker", "title": "A broken dataset never stops the job",
                 "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 5, "end_line": 5}]},
            ],
        }
    )
    pull_request = PullRequest.objects.get(repository__slug="acme/rl", number=number)
    for pin in pull_request.pins.select_related("commit").order_by("pinned_at", "id"):
        pull_request_verify(pull_request=pull_request, commit=pin.commit)
    return pull_request, bridge
