"""The real Celery app for a test, on the configured broker (Redis in CI) or, with none
configured, Celery's in-memory transport; and a worker thread on it."""
from contextlib import contextmanager

from celery.app.trace import reset_worker_optimizations, setup_worker_optimizations
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from celery.utils.nodenames import default_nodename
from django.conf import settings
from django.db import connections

from recheck.celery import app


def forget_broker_connections():
    """Let go of the app's connection and producer pools, so the next message goes to the broker
    now configured: an eager task acquires a producer too, which binds the pools to the broker URL
    of that moment (the default, when none is configured). Not closed: kombu keeps one pool per
    broker URL and hands the same one out again."""
    app._pool = None
    app.amqp._producer_pool = None


def _close_connections(**kwargs):
    connections.close_all()


@contextmanager
def real_broker():
    """The app sends tasks to a broker instead of running them in the caller; put back as it was
    after. Messages left behind by earlier tests are purged first, and this test's after: nothing
    queued here runs once its database is gone."""
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "result_backend")}
    if not settings.CELERY_BROKER_URL:
        app.conf.update(broker_url="memory://", result_backend="cache+memory://")
    forget_broker_connections()
    app.conf.task_always_eager = False
    app.control.purge()
    # A worker thread's own database connection would outlive the test database otherwise.
    task_postrun.connect(_close_connections, weak=False)
    try:
        yield app
        app.control.purge()
    finally:
        task_postrun.disconnect(_close_connections)
        app.conf.update(saved)
        forget_broker_connections()


@contextmanager
def worker_thread(*, queues=None, **options):
    """A worker on the real app in a thread of the test's process (`start_worker`'s context
    manager), one task at a time; `queues` (every queue the app declares when not given) and
    `options` (its hostname) as a worker's command line would name them.

    The queues are always named: a worker started with some selects them in the app itself
    (`app.amqp.queues.select`), and a later worker named none would consume only those.

    Its tasks run as `celery worker` runs them (`setup_worker_optimizations`, undone after), so a
    task's `request.hostname` is the worker's node name, as its heartbeat names it, and not the
    machine's."""
    queues = list(app.amqp.queues) if queues is None else queues
    options["hostname"] = default_nodename(options.get("hostname"))
    # Before the worker starts: its consumer picks how to run each task as it starts.
    setup_worker_optimizations(app, options["hostname"])
    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, shutdown_timeout=30,
                          queues=queues, **options) as worker:
            yield worker
    finally:
        reset_worker_optimizations(app)
