"""Verification benchmark.

Builds a repository of a few thousand files and a few hundred commits of edits, moves and renames,
records a pull request with 10,000 snippet evidence items at an early commit, then measures the
time to verify them all at the last commit and store the results. The floor, measured in the same
run, is what any verifier must at least do: extract the files at that commit (`git archive`) and
search them for the snippets' first lines (`grep -rF -f`).

    .venv/bin/python bench/verify_bench.py [--files 2000] [--commits 300] [--evidence 10000] [--pairs 7]

Floor and subject runs alternate (--pairs of them), and each figure is the median and range of the
pairs, with the load average beside each pair: on a shared machine the ratio is what holds.
"""
import argparse
import cProfile
import pstats
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup  # noqa: E402
from _interleave import interleave, load_average, print_pairs, spread  # noqa: E402

WORDS = ["loader", "sample", "encoder", "packing", "tolerance", "dataset", "cooker", "media", "audio", "token"]


def make_line(rng: random.Random, file_no: int, line_no: int) -> str:
    indent = "    " * rng.randint(0, 2)
    return f"{indent}{rng.choice(WORDS)}_{file_no}_{line_no} = {rng.choice(WORDS)}({line_no}, {rng.randint(0, 10**6)})\n"


def build_repository(path: Path, files: int, lines: int, commits: int, seed: int = 7,
                     touch_all: bool = False, rewrites: bool = False) -> tuple[list[str], dict]:
    """Write the history with `git fast-import` (one process for every commit). Returns the commit
    SHAs and the file contents at the commit evidence is recorded at (a third of the way in).
    With `touch_all`, the commit after that one appends a line to every file (a sweeping change),
    so every file is among those changed between the recorded commit and the last. With `rewrites`,
    each commit after that one also deletes blocks, rewrites blocks in place and moves blocks to
    other modules with a line edited on the way, so that many items are gone with a successor of
    each kind to find."""
    rng = random.Random(seed)
    subprocess.run(["git", "init", "--quiet", "--bare", str(path)], check=True)
    tree = {f"pkg{n % 40}/module_{n}.py": [make_line(rng, n, i) for i in range(lines)] for n in range(files)}
    stream = []
    recorded_at_index = commits // 3
    snapshot = None
    counter = files

    def blob(content: str) -> None:
        data = content.encode()
        stream.append(f"data {len(data)}\n".encode() + data + b"\n")

    for index in range(commits):
        when = 1_700_000_000 + index * 60
        message = f"change {index}"
        stream.append(
            f"commit refs/heads/main\nmark :{index + 1}\ncommitter Bench <bench@example.com> {when} +0000\n".encode()
        )
        blob(message)
        if index:
            stream.append(f"from :{index}\n".encode())
        changed = list(tree) if index == 0 or (touch_all and index == recorded_at_index + 1) else []
        if touch_all and index == recorded_at_index + 1:
            for content in tree.values():
                content.append("# reviewed\n")
        if index:
            for _ in range(8):  # edits: lines inserted above and below existing code
                name = rng.choice(list(tree))
                at = rng.randint(0, len(tree[name]))
                counter += 1
                tree[name][at:at] = [make_line(rng, counter, j) for j in range(rng.randint(1, 4))]
                changed.append(name)
            if index % 3 == 0:  # a rename
                old = rng.choice(list(tree))
                new = old.replace(".py", f"_r{index}.py")
                tree[new] = tree.pop(old)
                stream.append(f"D {old}\n".encode())
                changed.append(new)
            if index % 5 == 0:  # a block moved to another module
                source, target = rng.sample(list(tree), 2)
                start = rng.randint(0, max(0, len(tree[source]) - 6))
                block = tree[source][start : start + 5]
                del tree[source][start : start + 5]
                tree[target].extend(block)
                changed.extend([source, target])
        if rewrites and index > recorded_at_index:
            for _ in range(3):  # a block deleted
                name = rng.choice(list(tree))
                start = rng.randint(0, max(0, len(tree[name]) - 4))
                del tree[name][start : start + 4]
                changed.append(name)
            for _ in range(2):  # a block rewritten in place
                name = rng.choice(list(tree))
                start = rng.randint(0, max(0, len(tree[name]) - 3))
                counter += 1
                tree[name][start : start + 3] = [make_line(rng, counter, j) for j in range(3)]
                changed.append(name)
            for _ in range(2):  # a block moved to another module, a line of it edited on the way
                source, target = rng.sample(list(tree), 2)
                start = rng.randint(0, max(0, len(tree[source]) - 6))
                block = tree[source][start : start + 6]
                del tree[source][start : start + 6]
                if block:
                    block[len(block) // 2] = block[len(block) // 2].replace(" = ", " = 1 + ", 1)
                at = rng.randint(0, len(tree[target]))
                tree[target][at:at] = block
                changed.extend([source, target])
        for name in dict.fromkeys(changed):
            if name not in tree:  # edited, then renamed in the same commit
                continue
            stream.append(f"M 100644 inline {name}\n".encode())
            blob("".join(tree[name]))
        if index == recorded_at_index:
            snapshot = {name: list(content) for name, content in tree.items()}
    stream.append(b"done\n")
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"], cwd=path, input=b"".join(stream), check=True
    )
    shas = subprocess.run(
        ["git", "rev-list", "--reverse", "main"], cwd=path, capture_output=True, text=True, check=True
    ).stdout.split()
    return shas, {"index": recorded_at_index, "tree": snapshot}


def record_review(repo_path: Path, shas: list[str], snapshot: dict, evidence_count: int, per_finding: int,
                  slug: str = "bench/big"):
    from django.utils import timezone

    from findings.models import Evidence, Finding
    from reviews.models import Commit, PinnedCommit, PullRequest, Repository

    rng = random.Random(11)
    repository = Repository.objects.create(slug=slug, clone_url=str(repo_path))
    pull_request = PullRequest.objects.create(repository=repository, number=1, title="A large pull request")
    recorded = Commit.objects.create(repository=repository, sha=shas[snapshot["index"]], resolved=True,
                                     committed_at=timezone.now(), message="recorded")
    target = Commit.objects.create(repository=repository, sha=shas[-1], resolved=True,
                                   committed_at=timezone.now(), message="target")
    PinnedCommit.objects.create(pull_request=pull_request, commit=recorded, role="reviewed")
    PinnedCommit.objects.create(pull_request=pull_request, commit=target, role="rebased")
    findings = Finding.objects.bulk_create(
        Finding(pull_request=pull_request, number=n + 1, kind="blocker", title=f"Finding {n + 1}")
        for n in range(evidence_count // per_finding)
    )
    names = sorted(snapshot["tree"])
    evidence = []
    for index in range(evidence_count):
        name = rng.choice(names)
        lines = snapshot["tree"][name]
        start = rng.randint(1, len(lines) - 3)
        end = start + rng.randint(0, 2)
        evidence.append(
            Evidence(finding=findings[index // per_finding], position=index % per_finding, kind="snippet",
                     commit=recorded, path=name, start_line=start, end_line=end,
                     text="".join(lines[start - 1 : end]))
        )
    Evidence.objects.bulk_create(evidence, batch_size=2000)
    return pull_request, target, evidence


def measure_floor(mirror: Path, sha: str, patterns: Path, scratch: Path) -> float:
    """Extract the files at `sha` into tmpfs and grep them for the snippets' first lines."""
    extract = Path(tempfile.mkdtemp(dir=scratch))
    started = time.perf_counter()
    subprocess.run(f"git -C '{mirror}' archive --format=tar {sha} | tar -x -C '{extract}'", shell=True, check=True)
    subprocess.run(["grep", "-rF", "-f", str(patterns), str(extract)], stdout=subprocess.DEVNULL, check=False)
    elapsed = time.perf_counter() - started
    shutil.rmtree(extract)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--evidence", type=int, default=10_000)
    parser.add_argument("--touch-all", action="store_true",
                        help="A commit after the recorded one changes every file, so the search for code that left "
                             "its file looks through all of them.")
    parser.add_argument("--rewrites", action="store_true",
                        help="Commits after the recorded one also delete, rewrite, and move and edit blocks, so that "
                             "many items are gone, with successors of every kind to find.")
    parser.add_argument("--per-finding", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=7, help="Floor/subject pairs, interleaved (default 7).")
    parser.add_argument("--subjects", default="engine,unshared,command",
                        help="engine (the warm engine and storage), unshared (the same without the decoded blobs of "
                             "the last run), command (manage.py verify --json end to end), successors (the warm "
                             "engine with gone items' successors against the same without them, in place of the "
                             "floor), successors-unshared (the same with nothing kept from the last run).")
    parser.add_argument("--profile", action="store_true", help="Print where the verification spends its time.")
    parser.add_argument("--memory", action="store_true", help="Also print the peak memory of a cold verification.")
    parser.add_argument("--sort", default="cumulative", help="Profile order: cumulative or tottime.")
    args = parser.parse_args()

    root = setup("verify")
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count

    from findings.models import EvidenceResult, Verification
    from findings.services.verification.run import pull_request_verify
    from reviews.mirrors import repository_fetch

    source = root / "source.git"
    started = time.perf_counter()
    shas, snapshot = build_repository(source, args.files, args.lines, args.commits, touch_all=args.touch_all,
                                      rewrites=args.rewrites)
    changed = subprocess.run(["git", "-C", str(source), "diff", "--name-only", shas[snapshot["index"]], shas[-1]],
                             capture_output=True, text=True, check=True).stdout.count("\n")
    print(f"repository: {args.files} files x {args.lines} lines, {len(shas)} commits, {changed} files changed "
          f"between the recorded commit and the last (built in {time.perf_counter() - started:.1f}s)")
    pull_request, target, evidence = record_review(source, shas, snapshot, args.evidence, args.per_finding)
    repository_fetch(repository=pull_request.repository)
    print(f"review: {args.evidence} snippet evidence items in {args.evidence // args.per_finding} findings, "
          f"recorded at commit {snapshot['index']}, verified at commit {len(shas) - 1} "
          f"on {connection.vendor}; load average {load_average():.1f} on {os.cpu_count()} cores")

    # The floor extracts to tmpfs: on a disk the extraction itself is what varies from run to run.
    scratch = Path(tempfile.mkdtemp(prefix="recheck-floor-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    patterns = scratch / "patterns.txt"
    patterns.write_text("".join(item.text.splitlines()[0].strip() + "\n" for item in evidence))

    def floor() -> float:
        return measure_floor(source, shas[-1], patterns, scratch)

    def engine(successors: bool = True) -> float:
        started = time.perf_counter()
        pull_request_verify(pull_request=pull_request, commit=target, fetch=False, successors=successors)
        return time.perf_counter() - started

    def without_successors() -> float:
        return engine(successors=False)

    def engine_unshared(successors: bool = True) -> float:
        # The decoded blobs (and the diffs between them) of earlier runs forgotten: what the first
        # verification of code the process has not seen costs, with git's own caches warm.
        from engine.verification import textcaches

        textcaches.shared_texts.clear()
        textcaches.shared_line_changes.clear()
        return engine(successors=successors)

    def unshared_without_successors() -> float:
        return engine_unshared(successors=False)

    def command() -> float:
        started = time.perf_counter()
        with open(os.devnull, "w") as sink:
            call_command("verify", pull_request.repository.slug, str(pull_request.number), "--commit", target.sha,
                         "--json", stdout=sink)
        return time.perf_counter() - started

    engine()  # the first run reads every blob; the pairs measure the warm engine, as the target says
    if args.profile:  # a warm run, as the pairs measure
        profiler = cProfile.Profile()
        profiler.enable()
        pull_request_verify(pull_request=pull_request, commit=target, fetch=False)
        profiler.disable()
        pstats.Stats(profiler).sort_stats(args.sort).print_stats(30)
    if args.memory:
        # A cold run (a new reader, so nothing cached) under tracemalloc: the peak of what Python
        # allocates while verifying, whatever the process held before.
        from engine.verification import textcaches

        textcaches._caches.clear()
        textcaches.shared_texts.clear()
        tracemalloc.start()
        started = time.perf_counter()
        pull_request_verify(pull_request=pull_request, commit=target, fetch=False)
        elapsed = time.perf_counter() - started
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"cold run under tracemalloc: peak {peak / 2**20:.0f} MiB ({elapsed:.2f}s, slowed by the tracing)")
    subjects = {
        "engine": (engine, "warm engine + storage", "<= 3x"),
        "unshared": (engine_unshared, "warm engine + storage, no blobs kept from the last run", ""),
        "command": (command, "verify --json", "<= 5x"),
    }
    for name in args.subjects.split(","):
        if name in ("successors", "successors-unshared"):
            # The same verification with and without the successors of gone items, alternating: the
            # ratio is what finding them costs.
            if name == "successors":
                result = interleave("warm engine + storage, with successors (subject) against without (floor)",
                                    args.pairs, without_successors, engine)
            else:
                result = interleave("the same, no blobs or diffs kept from the last run, with successors against "
                                    "without", args.pairs, unshared_without_successors, engine_unshared)
            print_pairs(result, target="<= 1.15x")
            engine()
            kinds = dict(EvidenceResult.objects.filter(state="gone").values_list("successor__kind")
                         .annotate(Count("id")))
            print(f"  gone items by successor: {kinds}")
            continue
        function, label, target_text = subjects[name]
        result = interleave(label, args.pairs, floor, function)
        print_pairs(result, target=target_text)
        if name == "engine":
            print(f"  checks/s: {spread([args.evidence / t for t in result.subjects], '{:,.0f}')}")
    shutil.rmtree(scratch, ignore_errors=True)
    verdicts = dict(Verification.objects.values_list("verdict").annotate(Count("id")))
    print(f"verdicts: {verdicts}")


if __name__ == "__main__":
    main()
