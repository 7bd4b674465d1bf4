"""A worker says it is alive, which queues it consumes and how big its host's mirror cache is:
a row (`reviews.models.WorkerHost`) refreshed every `RECHECK_WORKER_HEARTBEAT_SECONDS` by a thread of
the worker's main process, read by the router (a shard queue nobody serves is not used) and by
the health page. A consumer bootstep, so it starts and stops with the worker's consumer, in
`celery worker` and in the test worker alike."""
import logging
import os
import threading
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


class WorkerHeartbeat(bootsteps.StartStopStep):
    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, consumer):
        from django.conf import settings

        interval = settings.RECHECK_WORKER_HEARTBEAT_SECONDS
        self._stopped.clear()

        def run():
            while True:
                queues = [queue.name for queue in consumer.task_consumer.queues]
                try:
                    beat(consumer.hostname, queues)
                except Exception as error:  # the database restarting: the next beat tries again
                    logger.warning("Worker heartbeat of %s not recorded: %s", consumer.hostname, error)
                if self._stopped.wait(interval):
                    return

        self._thread = threading.Thread(target=run, name="recheck-heartbeat", daemon=True)
        self._thread.start()

    def stop(self, consumer):
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def shutdown(self, consumer):
        self.stop(consumer)
        from django.db import connections

        from reviews.services import worker_host_leave

        try:
            worker_host_leave(hostname=consumer.hostname)
        except Exception as error:  # its row ages out instead
            logger.warning("Worker %s not forgotten on shutdown: %s", consumer.hostname, error)
        finally:
            connections.close_all()
