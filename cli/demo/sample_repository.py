"""The sample that runs end to end offline: a small git repository built on this machine, and the
review of its pull request #1 as a bundle.

This module builds the repository (`sample_repository_build`) and says what every build yields.
Beside it are the files of each commit (`cli.demo.sample_commits`), the toolkit submodule's
repository (`cli.demo.toolkit_repository`), the git plumbing that writes both
(`cli.demo.git_plumbing`) and the review as a bundle (`cli.demo.sample_bundle`).

The repository is bare and built with git's plumbing (hash-object, update-index, write-tree,
commit-tree) under fixed names and dates, so every build yields the same SHAs (`EXPECTED_SHAS`).
Its history:

    base ── upstream                          main (moved on after the review)
      │        └── rebased ── head           pr-1 (the PR after its rebase, then one more push)
      └── reviewed                            pr-1-before-rebase (what the review was written at)

- **base**: sample-loader before the PR: a JSONL reader that stops after 100 bad records, its
  tests (one of them: every module that counts bad records in a row stops somewhere) and its
  linter's settings (ruff's defaults and no `print`), which the demo runs at each pinned commit
  (`cli.demo.sample_ci`).
- **reviewed**: the PR: `stream.py` (tolerance 0, a bare `zstandard` import, `print`), `turns.py`
  (a guard that lets an odd count through), a personal scratch config, the `vendor/toolkit`
  submodule moved to a feature-branch commit. No tests, no changelog.

The toolkit submodule is a second bare repository built beside the sample (`toolkit.git`), with a
main line and a feature branch, so its pin history is real (see TOOLKIT_MAIN_LINE in
`cli.demo.toolkit_repository`).
- **upstream**: main gains a three-line licence header at the top of its Python files.
- **rebased**: the PR replayed on upstream. The evidence moves but stays: `stream.py` gets the
  header (everything in it 3 lines lower), `turns.py` is renamed `conversation.py` unchanged,
  and the zstandard block is wrapped in an `if` (re-indented by 4 spaces, 1 line lower still).
- **head**: a later push that fixes two blockers for real: the tolerance becomes 100 and the
  scratch config is deleted.

Pinned to the PR: reviewed (role reviewed), rebased (rebased), head (head). Base and upstream are
not pinned: verifying at a commit without the PR's code would only report everything fixed.

Expected verdicts at each pin (a verdict sums up the evidence: all checkable evidence holds →
present, none → likely_fixed; only notes → unverifiable). `EXPECTED_VERDICTS` holds the same as
data; the verification engine gives exactly these 27 verdicts once the sample's own CI has
reported at each pin (without pytest and ruff, #4 and #7 wait for CI).

| # | finding              | group   | evidence                                | reviewed     | rebased                | head         |
|---|----------------------|---------|-----------------------------------------|--------------|------------------------|--------------|
| 1 | toolkit pin          | ci      | gitlinks pinned/off branch/no ff; note  | present      | present                | present      |
| 2 | scratch config       | ci      | path exists; snippet jdoe-scratch:3-4   | present      | present                | likely_fixed |
| 3 | no tests             | ci      | path missing tests/test_stream.py       | present      | present                | present      |
| 4 | tolerance 0          | ci      | snippet stream.py:4-5; pattern present; | present      | present (moved: 7-8)   | likely_fixed |
|   |                      |         | check unit-tests names test_limits.py   |              |                        |              |
| 5 | odd turn count       | none    | snippet turns.py:7-8; pattern absent    | present      | present (renamed)      | present      |
| 6 | zstandard undeclared | none    | snippet stream.py:9-13; pattern absent  | present      | present (re-indented)  | present      |
| 7 | print, not logging   | cleanup | pattern present `print(`; check lint    | present      | present (moved: 29)    | present      |
|   |                      |         | names T201 at stream.py:23              |              |                        |              |
| 8 | no changelog         | cleanup | path missing CHANGELOG.md               | present      | present                | present      |
| 9 | the loader's name    | cleanup | note only                               | unverifiable | unverifiable           | unverifiable |

At rebased, #5's snippet is in conversation.py (same lines) and #6's is at stream.py:13-17,
indented four spaces deeper.

`SNIPPET_LINES` (in `cli.demo.sample_commits`) records where each snippet sits at each pinned commit
(what the tests check).
"""
from dataclasses import dataclass
from pathlib import Path

from cli.demo.git_plumbing import build
from cli.demo.sample_commits import BRANCHES, snapshots
from cli.demo.toolkit_repository import TOOLKIT_BRANCHES, toolkit_path, toolkit_snapshots

# The table above as data: finding number -> pin role -> verdict.
_ALWAYS_PRESENT = {"reviewed": "present", "rebased": "present", "head": "present"}
_FIXED_AT_HEAD = {"reviewed": "present", "rebased": "present", "head": "likely_fixed"}
EXPECTED_VERDICTS = {
    1: _ALWAYS_PRESENT,
    2: _FIXED_AT_HEAD,
    3: _ALWAYS_PRESENT,
    4: _FIXED_AT_HEAD,
    5: _ALWAYS_PRESENT,
    6: _ALWAYS_PRESENT,
    7: _ALWAYS_PRESENT,
    8: _ALWAYS_PRESENT,
    9: {"reviewed": "unverifiable", "rebased": "unverifiable", "head": "unverifiable"},
}

# What every build produces; a change to the files, messages or dates changes these.
EXPECTED_SHAS = {
    "base": "e1c3fea3a599fae944bd7f3e9d7623bf93903986",
    "reviewed": "9e607138e1cb3e583ffe1c34cbc2828d86befb26",
    "upstream": "20b2d7844a47da196624e5d465e389afb05d99bb",
    "rebased": "fa4baebeb5d63856c4b7b3636d135615736a7a34",
    "head": "6731714a0401b0dc5c9bacc627d8c9ef88a05387",
}


@dataclass(frozen=True)
class SampleRepository:
    path: Path
    commits: dict[str, str]  # base, reviewed, upstream, rebased, head -> full SHA

    @property
    def clone_url(self) -> str:
        return str(self.path)


# --- Building it -------------------------------------------------------------------------------


def sample_repository_build(path: Path) -> SampleRepository:
    """Build (or rebuild in place: the result is the same) the sample repository at `path`."""
    path = Path(path)
    build(toolkit_path(path), [(*snapshot, {}) for snapshot in toolkit_snapshots()], TOOLKIT_BRANCHES)
    commits = build(path, snapshots(), BRANCHES)
    return SampleRepository(path=path, commits=commits)
