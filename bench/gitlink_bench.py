"""Submodule pin history benchmark.

Builds a submodule repository with a long main line and a feature branch forked from it, and a
superproject with many submodule paths whose pins move from the main line (at the PR's base) onto
feature-branch commits (in the PR). A review with one finding per submodule, each with its three
gitlink expectations (pinned_at, off_branch, not_fast_forward), is verified at the PR's commit
and stored. The floor, measured in the same run, is what any verifier must at least ask git for
each pin: `rev-list --left-right --count` and `merge-base` against the branch head, `merge-base
--is-ancestor` and the two `rev-list --count` of the move from the base pin.

    .venv/bin/python bench/gitlink_bench.py [--main 5000] [--feature 400] [--submodules 40]
"""
import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup  # noqa: E402


def fast_import(path: Path, stream: list[bytes]) -> None:
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)
    subprocess.run(["git", "--git-dir", str(path), "fast-import", "--quiet"], input=b"".join(stream), check=True)


def commit(stream: list[bytes], ref: str, mark: int, parent: int | None, when: int, message: str,
           files: dict[str, str] | None = None, gitlinks: dict[str, str] | None = None) -> None:
    data = message.encode()
    stream.append(f"commit {ref}\nmark :{mark}\ncommitter Bench <bench@example.com> {when} +0000\n".encode())
    stream.append(f"data {len(data)}\n".encode() + data + b"\n")
    if parent:
        stream.append(f"from :{parent}\n".encode())
    for name, content in (files or {}).items():
        blob = content.encode()
        stream.append(f"M 100644 inline {name}\ndata {len(blob)}\n".encode() + blob + b"\n")
    for name, sha in (gitlinks or {}).items():
        stream.append(f"M 160000 {sha} {name}\n".encode())
    stream.append(b"\n")


def build_submodule(path: Path, main: int, feature: int) -> tuple[list[str], list[str]]:
    """main commits m1..mN on main; feature commits forked after m(N/2) on `feature`."""
    stream: list[bytes] = []
    fork = main // 2
    for n in range(1, main + 1):
        commit(stream, "refs/heads/main", n, n - 1 or None, 1_700_000_000 + n * 60, f"main change {n}",
               {"lib.py": f"version = {n}\n"})
    for n in range(1, feature + 1):
        commit(stream, "refs/heads/feature", main + n, fork if n == 1 else main + n - 1, 1_800_000_000 + n * 60,
               f"feature step {n}", {"feature.py": f"step = {n}\n"})
    fast_import(path, stream)
    listed = subprocess.run(["git", "--git-dir", str(path), "rev-list", "--reverse", "main", "feature"],
                            capture_output=True, text=True, check=True).stdout.split()
    main_shas = subprocess.run(["git", "--git-dir", str(path), "rev-list", "--reverse", "--first-parent", "main"],
                               capture_output=True, text=True, check=True).stdout.split()
    feature_shas = [sha for sha in listed if sha not in set(main_shas)]
    return main_shas, feature_shas


def build_superproject(path: Path, submodule_url: str, base_pins: list[str], pr_pins: list[str]) -> list[str]:
    stream: list[bytes] = []
    paths = [f"3rdparty/sub{n}" for n in range(len(base_pins))]
    gitmodules = "".join(f'[submodule "{p}"]\n\tpath = {p}\n\turl = {submodule_url}\n' for p in paths)
    commit(stream, "refs/heads/main", 1, None, 1_700_000_000, "base", {".gitmodules": gitmodules},
           dict(zip(paths, base_pins, strict=True)))
    commit(stream, "refs/heads/pr", 2, 1, 1_700_000_060, "repin", {}, dict(zip(paths, pr_pins, strict=True)))
    fast_import(path, stream)
    return [subprocess.run(["git", "--git-dir", str(path), "rev-parse", ref], capture_output=True, text=True,
                           check=True).stdout.strip() for ref in ("main", "pr")]


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(mirror), *args], capture_output=True, text=True).stdout


def measure_floor(mirror: Path, pairs: list[tuple[str, str]], head: str) -> float:
    started = time.perf_counter()
    for base, pin in pairs:
        git(mirror, "rev-list", "--left-right", "--count", f"{pin}...{head}")
        git(mirror, "merge-base", pin, head)
        git(mirror, "merge-base", "--is-ancestor", base, pin)
        git(mirror, "rev-list", "--count", f"{base}..{pin}")
        git(mirror, "rev-list", "--count", f"{pin}..{base}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--main", type=int, default=5000, help="commits on the submodule's main line")
    parser.add_argument("--feature", type=int, default=400, help="commits on its feature branch")
    parser.add_argument("--submodules", type=int, default=40, help="submodule paths in the superproject")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    root = setup("gitlink")
    from findings.services.review_import import review_import
    from findings.services.verification.run import pull_request_verify
    from reviews.mirrors import repository_mirror_dir
    from reviews.models import PullRequest, Repository

    main_shas, feature_shas = build_submodule(root / "bridge.git", args.main, args.feature)
    count = args.submodules
    # Each submodule moves from its own main-line pin onto its own feature commit.
    base_pins = [main_shas[args.main // 2 + 1 + n * (args.main // 2 - 2) // count] for n in range(count)]
    pr_pins = [feature_shas[n * (args.feature - 1) // max(count - 1, 1)] for n in range(count)]
    base, pr = build_superproject(root / "rl.git", str(root / "bridge.git"), base_pins, pr_pins)
    review_import(data={
        "repository": {"slug": "bench/rl", "clone_url": str(root / "rl.git")},
        "pull_request": {"number": 1, "title": "Repin"},
        "commits": [{"sha": base, "role": "base"}, {"sha": pr, "role": "reviewed"}],
        "findings": [
            {"number": n + 1, "kind": "blocker", "title": f"sub{n} off main", "evidence": [
                {"kind": "gitlink", "path": f"3rdparty/sub{n}", "sha": pr_pins[n], "expect": expect}
                for expect in ("pinned_at", "off_branch", "not_fast_forward")]}
            for n in range(count)
        ],
    })
    pull_request = PullRequest.objects.get(number=1)
    commit_row = pull_request.pins.get(role="reviewed").commit
    print(f"submodule: {args.main} main-line commits, {args.feature} on a feature branch; "
          f"{count} submodule paths, {count * 3} gitlink items")

    # The first run fetches both mirrors and registers the submodule from .gitmodules; not timed.
    pull_request_verify(pull_request=pull_request, commit=commit_row)
    mirror = repository_mirror_dir(Repository.objects.exclude(slug="bench/rl").get())
    head = git(mirror, "rev-parse", "main").strip()
    floors = sorted(measure_floor(mirror, list(zip(base_pins, pr_pins, strict=True)), head)
                    for _ in range(args.repeat + 2))
    timings = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        verifications = pull_request_verify(pull_request=pull_request, commit=commit_row, fetch=False)
        timings.append(time.perf_counter() - started)
    elapsed = min(timings)
    verdicts = sorted({verification.verdict for verification in verifications})
    print(f"floor (5 git commands per pin):  {floors[0]:.2f}s  (runs: {', '.join(f'{t:.2f}' for t in floors)})")
    print(f"verification + storage:          {elapsed:.2f}s  (runs: {', '.join(f'{t:.2f}' for t in timings)})")
    print(f"ratio to floor:                  {elapsed / floors[0]:.2f}x")
    print(f"per gitlink item:                {1000 * elapsed / (count * 3):.1f} ms; verdicts: {verdicts}")


if __name__ == "__main__":
    main()
