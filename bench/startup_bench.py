"""What a command costs as its own process, start-up included: what a cron job, a CI step or an
operator at a shell pays for every call.

Two figures, each against a floor measured in the same run, pair after pair:

- `verify` of a pull request that does not exist (start-up, one query, the error) against
  importing django, the admin, DRF and celery in a new interpreter. Target <= 1.5x.
- `verify --json` of a 10,000-item pull request whose mirror is already fetched, a new process
  writing its JSON to /dev/null, against `git archive | tar -x` + `grep -rF` of the snippets' lines
  at the same commit (bench/verify_bench.py's floor). Target <= 5x.

Both start real processes (`manage.py` with this interpreter), so what is measured is what a user
meets: the interpreter, Django's set-up, the apps' imports, the work and the output.

    .venv/bin/python bench/startup_bench.py [--pairs 7] [--evidence 10000] [--only unknown|json]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import setup  # noqa: E402
from _interleave import interleave, load_average, print_pairs  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FLOOR_IMPORTS = "import django, django.contrib.admin, rest_framework, celery"


def timed(command: list[str], *, env: dict | None = None, expect: int | None = 0) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - started
    if expect is not None and result.returncode != expect:
        raise SystemExit(f"{' '.join(command)} exited {result.returncode}: {result.stderr.decode()[-2000:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=7, help="Floor/subject pairs, interleaved (default 7).")
    parser.add_argument("--evidence", type=int, default=10_000, help="Snippet items of the large PR.")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--only", choices=["unknown", "json"], help="Measure one of the two figures.")
    args = parser.parse_args()

    root = setup("startup")
    from django.db import connection

    python = sys.executable
    env = dict(os.environ)
    # A command runs with its modules' bytecode cached, as Python writes it on a first run (and the
    # image compiles it at build time): a shell that forbids writing it would time compiling every
    # module of the project in each subject, and of none in the floor.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    print(f"database {connection.vendor}; {os.cpu_count()} cores; load average {load_average():.1f}")

    if args.only in (None, "unknown"):
        def import_floor() -> float:
            return timed([python, "-c", FLOOR_IMPORTS], env=env)

        def verify_unknown() -> float:
            return timed([python, "manage.py", "verify", "bench/nowhere", "1"], env=env, expect=1)

        import_floor(), verify_unknown()  # the first runs write what later runs read from the cache
        print_pairs(interleave("verify of an unknown pull request, new process", args.pairs, import_floor,
                               verify_unknown), target="<= 1.5x")

    if args.only in (None, "json"):
        from verify_bench import build_repository, measure_floor, record_review

        from reviews.mirrors import repository_fetch

        source = root / "source.git"
        shas, snapshot = build_repository(source, args.files, args.lines, args.commits)
        pull_request, target, evidence = record_review(source, shas, snapshot, args.evidence, 10)
        repository_fetch(repository=pull_request.repository)
        scratch = Path(tempfile.mkdtemp(prefix="recheck-floor-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
        patterns = scratch / "patterns.txt"
        patterns.write_text("".join(item.text.splitlines()[0].strip() + "\n" for item in evidence))
        command = [python, "manage.py", "verify", pull_request.repository.slug, str(pull_request.number),
                   "--commit", target.sha, "--json"]
        timed(command, env=env)  # the first run stores the first verdicts; the pairs re-verify, as users do
        print(f"review: {args.evidence} snippet items, {args.files} files x {args.lines} lines, mirror fetched")
        print_pairs(interleave("verify --json of the large pull request, new process", args.pairs,
                               lambda: measure_floor(source, shas[-1], patterns, scratch),
                               lambda: timed(command, env=env)), target="<= 5x")
        shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
