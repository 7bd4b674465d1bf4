"""Which queue each task goes to: by the kind of work, and the work that reads a repository's
mirror by the repository, so that one repository's verifications and rendered pages keep going to
the host whose mirror cache holds it (decisions 0024 and 0029).

Celery calls `route_task` for every task it sends (`CELERY_TASK_ROUTES`); with no broker the
tasks run in-process and nothing is routed. A shard queue (`verify.3`, `render.3`) is used only
while a worker that consumes it says it is alive (`reviews.models.WorkerHost`, written by
`recheck.heartbeat`); otherwise the plain queue of its kind (`verify`, `render`), which every
worker of that kind consumes as well."""
import logging
import threading
import time
import zlib

from django.conf import settings
from django.db import DatabaseError
from kombu import Queue

logger = logging.getLogger(__name__)

VERIFY = "verify"
FORGE = "forge"
RENDER = "render"
MAINTENANCE = "maintenance"
# Tell people what changed: the timelines' catch-up and the outgoing webhooks (notify).
NOTIFY = "notify"
# The queue of a single-queue deployment before the queues by kind: still consumed, so that what
# it held when the queues came in is not left behind.
LEGACY = "celery"

QUEUE_OF_TASK = {
    # Read a repository's mirror: routed by repository to a shard of VERIFY.
    "findings.tasks.run_verification": VERIFY,
    "findings.tasks.track_pull_request_head": VERIFY,
    "findings.tasks.check_follow_ups": VERIFY,
    "findings.tasks.fetch_repository": VERIFY,
    "findings.tasks.rederive_report": VERIFY,
    # Talk to GitHub and GitLab, held back by their rate limits, not by verification.
    "forge.tasks.send_github_call": FORGE,
    "forge.tasks.send_due_github_calls": FORGE,
    "forge.tasks.sync_review_threads": FORGE,
    "forge.tasks.read_pipeline_test_report": FORGE,
    "forge.tasks.read_commit_checks": FORGE,
    # Reads the mirror too (what a pull request changes): routed by repository to a shard of RENDER.
    "presentation.tasks.render_companion_pages": RENDER,
    # Beat's rounds and background imports: database work, no mirror.
    "findings.tasks.run_import": MAINTENANCE,
    "findings.tasks.reap_dead_runs": MAINTENANCE,
    "findings.tasks.move_expired_states": MAINTENANCE,
    "findings.tasks.record_follow_ups_due": MAINTENANCE,
    "findings.tasks.track_open_pull_requests": MAINTENANCE,
    "findings.tasks.check_follow_ups_everywhere": MAINTENANCE,
    "notify.tasks.send_webhook": NOTIFY,
    "notify.tasks.send_due_webhooks": NOTIFY,
    "notify.tasks.catch_up_timelines": NOTIFY,
    "notify.tasks.send_mail": NOTIFY,
    "notify.tasks.send_due_mails": NOTIFY,
}

# The kinds of work that read a repository's mirror: each routed by repository to a shard of its queue.
SHARDED = (VERIFY, RENDER)

# Declared, so that a worker started without -Q consumes every kind (one machine needs one worker);
# the shard queues are made when a worker names them with -Q.
TASK_QUEUES = tuple(Queue(name, routing_key=name) for name in (VERIFY, FORGE, RENDER, MAINTENANCE, NOTIFY,
                                                                          LEGACY))


def verify_shard(repository_id: int, shards: int) -> int:
    """The shard of `shards` a repository's work goes to: the same on every host and after every
    restart (Python's own hash of a string changes with each process)."""
    return zlib.crc32(str(repository_id).encode()) % shards


def shard_queue(shard: int, kind: str = VERIFY) -> str:
    """The queue of the shard `shard` of the work `kind` (one of SHARDED)."""
    return f"{kind}.{shard}"


class ServedQueues:
    """The queues some live worker consumes, read from the database at most once every
    `RECHECK_ROUTING_CACHE_SECONDS` per process: routing asks on every verification sent."""

    def __init__(self):
        self._lock = threading.Lock()
        self._queues: frozenset[str] = frozenset()
        self._read_at = float("-inf")

    def get(self) -> frozenset[str]:
        with self._lock:
            if time.monotonic() - self._read_at >= settings.RECHECK_ROUTING_CACHE_SECONDS:
                from reviews.selectors import queues_served

                self._queues = queues_served(within_seconds=settings.RECHECK_WORKER_ALIVE_SECONDS)
                self._read_at = time.monotonic()
            return self._queues

    def forget(self) -> None:
        with self._lock:
            self._read_at = float("-inf")


served_queues = ServedQueues()


def sharded_queue(kind: str, repository_id: int | None) -> str:
    """The queue for work of `kind` (one of SHARDED) that reads the repository `repository_id`:
    its shard's queue while a worker serves it, else the plain queue of its kind. Verification
    and rendering share the mapping (RECHECK_VERIFY_SHARDS), so a host that serves both shards `n`
    renders from the mirrors its verifications fetched."""
    shards = settings.RECHECK_VERIFY_SHARDS
    if repository_id is None or shards < 1:
        return kind
    queue = shard_queue(verify_shard(repository_id, shards), kind)
    return queue if queue in served_queues.get() else kind


def verify_queue(repository_id: int | None) -> str:
    """The queue for verification work that reads the repository `repository_id`."""
    return sharded_queue(VERIFY, repository_id)


def route_task(name, args, kwargs, options, task=None, **kw):
    """Celery's router (`CELERY_TASK_ROUTES`): the queue of the task `name` sent with `args`."""
    queue = QUEUE_OF_TASK.get(name)
    if queue is None:
        return None  # not the project's: Celery's default queue
    if queue not in SHARDED:
        return {"queue": queue}
    from findings.selectors.work import task_repository_id

    try:
        return {"queue": sharded_queue(queue, task_repository_id(name, args))}
    except DatabaseError as error:
        # Routing is an optimisation: a database that cannot say which repository or which
        # shards are served must not keep the work from being queued at all.
        logger.warning("Routing %s to %s: %s", name, queue, error)
        return {"queue": queue}
