"""A worker says it is alive, which queues it consumes and how big its host's mirror cache is:
a row (`reviews.models.WorkerHost`) refreshed every `RECHECK_WORKER_HEARTBEAT_SECONDS` by a thread of
the worker's main process, read by the router (a shard queue nobody serves is not used) and by
the health page. At each beat the same thread also vouches for the verification runs whose tasks
are active in the process, which is how the reaper tells a run whose worker died from a slow one
(decision 0032). A consumer bootstep, so it starts with the worker's consumer, in `celery worker`
and in the test worker alike."""
import logging
import os
import threading
import time
from pathlib import Path

from celery import bootsteps

logger = logging.getLogger(__name__)


def directory_bytes(root: Path) -> int:
    """The bytes of the files under `root` (0 when it is not there yet)."""
    total = 0
    for directory, _, files in os.walk(root):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                continue  # a file git removed meanwhile (a gc, a pack replaced)
    return total


def active_task_ids(hostname: str) -> list[str]:
    """The ids of the tasks the worker `hostname` is carrying out in this process now (its pool
    processes' included: the main process keeps them)."""
    from celery.worker import state

    for _ in range(3):
        try:
            return [request.id for request in list(state.active_requests) if request.hostname == hostname]
        except RuntimeError:  # the pool added or ended a task while the set was read: read again
            continue
    return []


def beat(hostname: str, queues: list[str]) -> None:
    """Record one heartbeat of the worker `hostname`."""
    from django.conf import settings
    from django.db import connections

    from reviews.services import worker_host_heartbeat

    try:
        worker_host_heartbeat(
            hostname=hostname, queues=queues, mirror_bytes=directory_bytes(Path(settings.RECHECK_MIRROR_ROOT))
        )
    finally:
        # The thread's own connection: not held open between beats, nor across a database restart.
        connections.close_all()


def vouch(hostname: str, task_ids: list[str]) -> None:
    """Say that the worker `hostname` is still carrying out the runs of `task_ids` (decision 0032)."""
    from django.db import connections

    from findings.services.runs import verification_runs_vouch

    try:
        verification_runs_vouch(worker=hostname, task_ids=task_ids)
    finally:
        connections.close_all()


class WorkerHeartbeat(bootsteps.StartStopStep):
    """One thread for the worker's life. While the consumer is up it refreshes the worker's row;
    and throughout, including while the consumer reconnects to a broker that went away and while
    a warm shutdown waits for the tasks under way, it vouches for the runs those tasks carry out,
    so that the reaper leaves them alone (decision 0032). It ends once the worker shuts down and
    has no task left."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self._wake = threading.Event()
        self._leaving = threading.Event()
        # Held while the row is written, so that no beat writes it again after stop() or shutdown().
        self._row = threading.Lock()
        self._serving = False
        self._left_at = 0.0
        self._thread: threading.Thread | None = None

    def start(self, consumer):
        from django.conf import settings

        interval, longest = settings.RECHECK_WORKER_HEARTBEAT_SECONDS, settings.RECHECK_RUN_STALE_SECONDS
        with self._row:
            self._serving = True
        self._wake.set()  # a consumer back after a restart says so at once
        if self._thread is not None and self._thread.is_alive():
            return
        self._leaving.clear()
        self._wake.clear()

        def run():
            while True:
                running = active_task_ids(consumer.hostname)
                try:
                    if running:
                        vouch(consumer.hostname, running)
                except Exception as error:  # the database restarting: the next beat tries again
                    logger.warning("Runs of worker %s not vouched for: %s", consumer.hostname, error)
                try:
                    with self._row:
                        if self._serving:
                            beat(consumer.hostname, [queue.name for queue in consumer.task_consumer.queues])
                except Exception as error:
                    logger.warning("Worker heartbeat of %s not recorded: %s", consumer.hostname, error)
                # Shut down: done once its tasks are, or once none of them can still be running.
                if self._leaving.is_set() and (not running or time.monotonic() - self._left_at > longest):
                    return
                self._wake.wait(interval)
                self._wake.clear()

        self._thread = threading.Thread(target=run, name="recheck-heartbeat", daemon=True)
        self._thread.start()

    def stop(self, consumer):
        # The consumer stops (a broker connection lost, or the worker shutting down): the row ages
        # out, so nothing is routed to a worker that takes nothing; the runs under way are still
        # vouched for.
        with self._row:
            self._serving = False

    def shutdown(self, consumer):
        self.stop(consumer)
        self._left_at = time.monotonic()
        self._leaving.set()
        self._wake.set()
        from django.db import connections

        from reviews.services import worker_host_leave

        try:
            worker_host_leave(hostname=consumer.hostname)
        except Exception as error:  # its row ages out instead
            logger.warning("Worker %s not forgotten on shutdown: %s", consumer.hostname, error)
        finally:
            connections.close_all()
