"""The workers bench with simulated hosts (`workers_bench.py --hosts 1,2,3`): rounds of pushes to
pull requests, each in its own repository, verified by 1, 2 or 3 "hosts", each a Celery worker with
its own, empty, mirror root serving its verification shard and the plain verify queue.

A round pushes `--pushes` heads to every pull request in one burst (so runs queued behind a newer
head are superseded, as in production), and ends when every run has. It reports the verified heads
per second, the push-to-verdict time of each verified head (its run queued to its run ended), the
fetches each host made and the runs that found their commit in the host's cache (the hosts' own
log lines), and beside them the machine's ceiling: the same pure CPU work in as many processes as
hosts, against one. On a machine with fewer cores than hosts the figures are about routing and
cache reuse, not speed-up."""
import os
import re
import statistics
import subprocess
import time
from collections import Counter
from pathlib import Path

from _interleave import load_average
from verify_bench import build_repository, record_review

ROOT = Path(__file__).resolve().parent.parent
FETCH_LINE = re.compile(r"Mirror (fetched|already held) of (\S+) on")


def _start(count: int, round_dir: Path) -> list[tuple[subprocess.Popen, Path]]:
    hosts = []
    for index in range(count):
        log = round_dir / f"host{index}.log"
        env = {**os.environ, "RECHECK_MIRROR_ROOT": str(round_dir / f"host{index}-mirrors"),
               "RECHECK_VERIFY_SHARDS": str(count), "RECHECK_WORKER_HEARTBEAT_SECONDS": "1",
               "RECHECK_ALLOW_LOCAL_REPOSITORIES": "1", "LOG_LEVEL": "INFO"}
        process = subprocess.Popen(
            [str(ROOT / ".venv/bin/celery"), "-A", "recheck", "worker", "--pool=solo", "--without-mingle",
             "--without-gossip", "--loglevel=INFO", "-Q", f"verify.{index},verify",
             "-n", f"host{index}-{os.getpid()}@bench"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True,
        )
        hosts.append((process, log))
    return hosts


def _stop(hosts) -> None:
    for process, _ in hosts:
        process.terminate()
    for process, _ in hosts:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def _round(count: int, pull_requests, heads, pushes: int, work: Path, number: int) -> dict:
    from django.conf import settings

    from findings.models import CompanionPages, Verification, VerificationRun
    from findings.services.tracking import pull_request_record_head
    from recheck.routing import served_queues
    from reviews.models import WorkerHost

    Verification.objects.all().delete()
    VerificationRun.objects.all().delete()
    CompanionPages.objects.all().delete()
    WorkerHost.objects.all().delete()
    settings.RECHECK_VERIFY_SHARDS = count
    settings.RECHECK_WORKER_ALIVE_SECONDS = 3
    settings.RECHECK_ROUTING_CACHE_SECONDS = 0.5
    round_dir = work / f"round{number}-{count}hosts"
    round_dir.mkdir()
    hosts = _start(count, round_dir)
    try:
        deadline = time.monotonic() + 90
        while WorkerHost.objects.count() < count:
            if time.monotonic() > deadline:
                raise SystemExit("the hosts did not start within 90 s: is the broker reachable?")
            time.sleep(0.2)
        served_queues.forget()
        started = time.perf_counter()
        for push in range(pushes):
            for pull_request, shas in zip(pull_requests, heads, strict=True):
                pull_request_record_head(pull_request=pull_request, sha=shas[push])
        while VerificationRun.objects.active().exists():
            time.sleep(0.05)
        seconds = time.perf_counter() - started
    finally:
        _stop(hosts)
        _drop_queued_renders()
    done = list(VerificationRun.objects.filter(status="done").values_list("created_at", "finished_at"))
    latencies = sorted((finished - created).total_seconds() for created, finished in done)
    fetched, held = Counter(), Counter()
    for index, (_, log) in enumerate(hosts):
        for kind, _slug in FETCH_LINE.findall(log.read_text()):
            (fetched if kind == "fetched" else held)[index] += 1
    return {
        "seconds": seconds, "verified": len(done), "per_second": len(done) / seconds,
        "superseded": VerificationRun.objects.filter(status="superseded").count(),
        "not_done": VerificationRun.objects.exclude(status__in=["done", "superseded"]).count(),
        "latency_median": statistics.median(latencies) if latencies else float("nan"),
        "latency_p95": latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if latencies else float("nan"),
        "fetches": [fetched[index] for index in range(count)], "cached": sum(held.values()),
        "load": load_average(),
    }


def _drop_queued_renders() -> None:
    """The rounds run no render worker: the companion pages each run queued are dropped, not left
    in the broker for a later worker."""
    import redis
    from django.conf import settings

    redis.Redis.from_url(settings.CELERY_BROKER_URL).delete("render")


def hosts_rounds(args, root: Path, calibrate, cpu_round) -> None:
    counts = [int(count) for count in args.hosts.split(",")]
    pull_requests, heads = [], []
    commits = max(args.commits, 3 * (args.pushes + 2))
    for index in range(args.pull_requests):
        source = root / f"source{index}.git"
        shas, snapshot = build_repository(source, args.files, 200, commits, seed=index)
        pull_request, _, _ = record_review(source, shas, snapshot, args.items, 10, slug=f"bench/repo{index}")
        pull_requests.append(pull_request)
        heads.append(shas[snapshot["index"] + 1:][:args.pushes])
    print(f"{args.pull_requests} pull requests of {args.items} items, each in its own repository of {args.files} "
          f"files; {args.pushes} pushes to each per round; load average {load_average():.1f} on {os.cpu_count()} cores")
    loops = calibrate(args.cpu_seconds)
    results: dict[int, list[dict]] = {count: [] for count in counts}
    ceiling: dict[int, list[float]] = {count: [] for count in counts}
    for number in range(args.rounds):
        for count in counts:  # interleaved, so a neighbour's load falls on every count alike
            results[count].append(_round(count, pull_requests, heads, args.pushes, root, number))
            ceiling[count].append(cpu_round(1, loops) / cpu_round(count, loops))
    print("| hosts | round (s) | verified heads/s | push to verdict, median / p95 (s) | superseded | "
          "fetches per host | runs served from the cache | ceiling: CPU work in N processes vs 1 | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for count in counts:
        rounds = results[count]

        def median(key, rounds=rounds):
            return statistics.median(result[key] for result in rounds)

        fetches = " / ".join(str(round(statistics.median(result["fetches"][index] for result in rounds), 1))
                             for index in range(count))
        loads = [result["load"] for result in rounds]
        print(f"| {count} | {median('seconds'):.2f} | {median('per_second'):.2f} | "
              f"{median('latency_median'):.2f} / {median('latency_p95'):.2f} | {median('superseded'):.0f} | "
              f"{fetches} | {median('cached'):.0f} | {statistics.median(ceiling[count]):.2f}x | "
              f"{min(loads):.1f}-{max(loads):.1f} |")
    not_done = sum(result["not_done"] for rounds in results.values() for result in rounds)
    print(f"runs neither done nor superseded: {not_done}")
