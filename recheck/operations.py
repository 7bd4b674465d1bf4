"""What an operator watches across hosts, computed once for the health page and the Prometheus
metrics (recheck.health): each queue's depth and how long its oldest work has waited, each
worker's mirror cache, this host's own, and how long a push waits for its verdicts."""
import logging
import statistics
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from findings.selectors.operations import oldest_queued_run_at, push_to_verdict_seconds
from forge.outbox.selectors import oldest_due_call_at
from recheck.heartbeat import directory_bytes
from recheck.queue_age import message_sent_at
from recheck.routing import FORGE, SHARDED, TASK_QUEUES, VERIFY, shard_queue
from reviews.selectors import worker_hosts

logger = logging.getLogger(__name__)

# Push-to-verdict latency is read over the runs that ended in this last stretch.
LATENCY_WINDOW = timedelta(hours=1)
# kombu's Redis transport keeps a queue's messages sent with a priority in lists of their own.
PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")


def queue_names() -> list[str]:
    """Every queue declared (each kind, a queue added later too), each sharded kind followed by its
    shards."""
    names = []
    for name in [VERIFY, *(queue.name for queue in TASK_QUEUES if queue.name != VERIFY)]:
        names.append(name)
        if name in SHARDED:
            names.extend(shard_queue(n, name) for n in range(settings.RECHECK_VERIFY_SHARDS))
    return names


def queue_depths_and_ages() -> tuple[dict[str, int] | None, dict[str, float | None] | None]:
    """Messages waiting in each queue, and the seconds the oldest of them has waited (None for an
    empty queue); None, None when there is no broker to ask (tasks run in-process) or it does not
    answer (logged). One round trip: a length and the oldest message of each list."""
    url = settings.CELERY_BROKER_URL
    if not url or not url.startswith(("redis://", "rediss://")):
        return None, None
    import redis

    names = queue_names()
    try:
        client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        with client.pipeline(transaction=False) as pipe:
            for name in names:
                for suffix in PRIORITY_SUFFIXES:
                    # kombu pushes on the left and takes from the right: the oldest is the last.
                    pipe.llen(name + suffix)
                    pipe.lindex(name + suffix, -1)
            answers = pipe.execute()
    except redis.RedisError as error:
        logger.warning("Queue depths not read: the broker does not answer (%s)", error)
        return None, None
    now = time.time()
    step = 2 * len(PRIORITY_SUFFIXES)
    depths, ages = {}, {}
    for index, name in enumerate(names):
        own = answers[index * step:(index + 1) * step]
        depths[name] = sum(own[0::2])
        stamps = [stamp for stamp in map(message_sent_at, own[1::2]) if stamp is not None]
        ages[name] = max(0.0, now - min(stamps)) if stamps else None
    return depths, ages


def _age(moment, now) -> float | None:
    return None if moment is None else max(0.0, (now - moment).total_seconds())


def operations_figures() -> dict:
    """The figures, as plain values (the health page's JSON; the metrics are made from them)."""
    now = timezone.now()
    latencies = push_to_verdict_seconds(since=now - LATENCY_WINDOW)
    hosts = worker_hosts(within_seconds=settings.RECHECK_WORKER_ALIVE_SECONDS)
    depths, ages = queue_depths_and_ages()
    return {
        "queues": depths,
        # How long the oldest message in each queue has waited, by its sent-at stamp.
        "queue_age_seconds": ages,
        # How long the oldest work of a kind has waited, read from its rows: a verification queued,
        # a forge call due.
        "oldest_waiting_seconds": {
            VERIFY: _age(oldest_queued_run_at(), now),
            FORGE: _age(oldest_due_call_at(now), now),
        },
        "workers": [
            {"hostname": host.hostname, "queues": host.queues, "mirror_bytes": host.mirror_bytes,
             "seen_seconds_ago": _age(host.seen_at, now)}
            for host in hosts
        ],
        "this_host_mirror_bytes": directory_bytes(Path(settings.RECHECK_MIRROR_ROOT)),
        "push_to_verdict_seconds": {
            "window_seconds": LATENCY_WINDOW.total_seconds(),
            "count": len(latencies),
            "median": statistics.median(latencies) if latencies else None,
            "p95": latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))] if latencies else None,
            "max": latencies[-1] if latencies else None,
        },
    }


def prometheus_text(figures: dict) -> bytes:
    """The figures in Prometheus's text format, in a registry of their own (nothing global)."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    registry = CollectorRegistry()
    depth = Gauge("recheck_queue_depth", "Messages waiting in a Celery queue.", ["queue"], registry=registry)
    for queue, count in (figures["queues"] or {}).items():
        depth.labels(queue).set(count)
    age = Gauge("recheck_queue_age_seconds", "How long the oldest message waiting in a Celery queue has waited.",
                ["queue"], registry=registry)
    for queue, seconds in (figures["queue_age_seconds"] or {}).items():
        age.labels(queue).set(seconds or 0)
    waiting = Gauge("recheck_oldest_waiting_seconds", "How long the oldest work of a kind has waited.", ["queue"],
                    registry=registry)
    for queue, seconds in figures["oldest_waiting_seconds"].items():
        waiting.labels(queue).set(seconds or 0)
    mirrors = Gauge("recheck_worker_mirror_bytes", "The size of a worker's mirror cache, as its last heartbeat said.",
                    ["hostname"], registry=registry)
    seen = Gauge("recheck_worker_seen_seconds_ago", "Seconds since a worker's last heartbeat.", ["hostname"],
                 registry=registry)
    for worker in figures["workers"]:
        mirrors.labels(worker["hostname"]).set(worker["mirror_bytes"] or 0)
        seen.labels(worker["hostname"]).set(worker["seen_seconds_ago"])
    Gauge("recheck_host_mirror_bytes", "The size of this host's mirror cache.",
          registry=registry).set(figures["this_host_mirror_bytes"])
    latency = figures["push_to_verdict_seconds"]
    Gauge("recheck_push_to_verdict_runs", "Runs of pushed heads that ended in the window.",
          registry=registry).set(latency["count"])
    summary = Gauge("recheck_push_to_verdict_seconds", "Seconds from a push recorded to its verdicts, over the window.",
                    ["statistic"], registry=registry)
    for statistic in ("median", "p95", "max"):
        if latency[statistic] is not None:
            summary.labels(statistic).set(latency[statistic])
    return generate_latest(registry)
