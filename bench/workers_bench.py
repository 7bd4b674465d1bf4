"""Scaling benchmark: how much more do two Celery workers verify than one? And with `--hosts`,
how do 1, 2 and 3 simulated hosts share a stream of pushes?

    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... \
        .venv/bin/python bench/workers_bench.py [--pull-requests 20] [--items 500] [--pairs 2]
    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... \
        .venv/bin/python bench/workers_bench.py --hosts 1,2,3 [--pull-requests 6] [--pushes 4] [--rounds 2]

Builds one generated repository per pull request (so no two runs share a mirror), records
`--pull-requests` PRs of `--items` snippet evidence items each, then times rounds of: request a
verification of every PR, wait until every run is done and its companion pages are rendered. A
round with one worker process and a round with two alternate, `--pairs` times; the figure is the
median and range of the pairs' speed-up, with the load average beside each round. It needs a
database and a broker that several processes share: PostgreSQL and Redis.

Beside each pair of rounds, the same machine's ceiling: a fixed amount of pure-Python CPU work
done by one process, then split over two (`--cpu-seconds` of it for one process). No worker can
gain more from a second process than this does; on a machine whose cores are busy with other
work, it is what a second worker can get.
"""
import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup  # noqa: E402
from _interleave import Pairs, interleave, load_average, print_pairs, spread  # noqa: E402
from verify_bench import build_repository, record_review  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


CPU_WORK = """
import sys
total = 0
for index in range(int(sys.argv[1])):
    total += (index * index) % 7
"""


def cpu_round(processes: int, loops: int) -> float:
    """Seconds for `processes` Python processes to share `loops` iterations of pure CPU work."""
    started = time.perf_counter()
    children = [
        subprocess.Popen([sys.executable, "-c", CPU_WORK, str(loops // processes)]) for _ in range(processes)
    ]
    for child in children:
        child.wait()
    return time.perf_counter() - started


def calibrate(seconds: float) -> int:
    """Loops of CPU_WORK that take one process about `seconds`."""
    loops = 2_000_000
    while (elapsed := cpu_round(1, loops)) < 0.5:
        loops *= 4
    return int(loops * seconds / elapsed)


def start_workers(count: int, env: dict) -> list[subprocess.Popen]:
    workers = [
        subprocess.Popen(
            [str(ROOT / ".venv/bin/celery"), "-A", "recheck", "worker", "--pool=solo", "--concurrency=1",
             "--loglevel=WARNING", "-n", f"bench{index}-{os.getpid()}@%h"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
        )
        for index in range(count)
    ]
    from recheck.celery import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        names = {name for reply in app.control.ping(timeout=0.5) or [] for name in reply}
        if sum(1 for name in names if f"-{os.getpid()}@" in name) >= count:
            return workers
    stop_workers(workers)
    raise SystemExit("the workers did not answer within a minute: is the broker reachable?")


def stop_workers(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pull-requests", type=int, default=20)
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--cpu-seconds", type=float, default=8.0,
                        help="Pure CPU work for one process in the ceiling's rounds (default 8 s).")
    parser.add_argument("--hosts", default="",
                        help="Simulated hosts per round, e.g. 1,2,3: each a worker with its own mirror root "
                             "serving its verification shard (bench/_hosts.py).")
    parser.add_argument("--pushes", type=int, default=4, help="With --hosts: heads pushed to each PR per round.")
    parser.add_argument("--rounds", type=int, default=2, help="With --hosts: rounds of each host count.")
    args = parser.parse_args()
    if not os.environ.get("CELERY_BROKER_URL") or not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("Set DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis): the workers share them.")

    root = setup("workers", broker=True)
    from django.db import connection

    from reviews.models import Repository

    if Repository.objects.exists():
        raise SystemExit("DATABASE_URL names a database with data in it: give the benchmark an empty one.")

    from findings.models import CompanionPages, Verification, VerificationRun
    from findings.services.runs import verification_run_request
    from recheck.celery import app

    app.loader.import_default_modules()  # this process queues by task name: register the tasks

    if args.hosts:
        from _hosts import hosts_rounds

        hosts_rounds(args, root, calibrate, cpu_round)
        return
    pull_requests = []
    for index in range(args.pull_requests):
        source = root / f"source{index}.git"
        shas, snapshot = build_repository(source, args.files, 200, args.commits, seed=index)
        pull_request, target, _ = record_review(
            source, shas, snapshot, args.items, 10, slug=f"bench/repo{index}"
        )
        pull_requests.append(pull_request)
    print(f"{args.pull_requests} pull requests of {args.items} items, each in its own repository of "
          f"{args.files} files, on {connection.vendor}; load average {load_average():.1f} on {os.cpu_count()} cores")

    env = {**os.environ, "RECHECK_MIRROR_ROOT": os.environ["RECHECK_MIRROR_ROOT"],
           "RECHECK_ALLOW_LOCAL_REPOSITORIES": "1", "LOG_LEVEL": "WARNING"}

    def round_with(count: int) -> float:
        Verification.objects.all().delete()
        VerificationRun.objects.all().delete()
        CompanionPages.objects.all().delete()
        workers = start_workers(count, env)
        try:
            started = time.perf_counter()
            runs = [verification_run_request(pull_request=pr) for pr in pull_requests]
            while True:
                active = VerificationRun.objects.filter(pk__in=[run.pk for run in runs]).active().count()
                rendered = CompanionPages.objects.filter(pull_request__in=pull_requests).count()
                if not active and rendered == len(pull_requests):
                    return time.perf_counter() - started
                time.sleep(0.05)
        finally:
            stop_workers(workers)

    loops = calibrate(args.cpu_seconds)
    ceiling = Pairs("the machine's ceiling: pure CPU work in two processes against one (seconds)")

    def workers_then_ceiling(count: int) -> float:
        # The ceiling is measured right after each round, under the same neighbours' load.
        seconds = round_with(count)
        (ceiling.floors if count == 2 else ceiling.subjects).append(cpu_round(count, loops))
        if count == 2:
            ceiling.loads.append(load_average())
        return seconds

    result = interleave("two workers against one (seconds per round)", args.pairs,
                        lambda: workers_then_ceiling(2), lambda: workers_then_ceiling(1))
    print_pairs(result, target=">= 1.9x")
    print_pairs(ceiling)
    efficiency = [workers / cpu for workers, cpu in zip(result.ratios, ceiling.ratios, strict=True)]
    print(f"two workers' speed-up as a share of the machine's: {spread(efficiency)} "
          "(1.00: the workers scale as far as the cores they get allow)")
    failed = VerificationRun.objects.exclude(status="done").count()
    print(f"runs not done: {failed}")


if __name__ == "__main__":
    main()
