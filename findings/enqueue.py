"""Handing work to Celery by task name.

Services decide that work must happen; tasks (`findings/tasks.py`) load by id and call services.
Looking a task up by its registered name keeps that direction one way: no service imports the
tasks module, so the two can never import each other. The registry lookup (unlike
`send_task`) still honours eager mode, where no broker is configured and tasks run in-process.

The Celery app and the tasks are loaded the first time work is handed on, not when Django starts:
Celery takes longer to import than the rest of a command's start-up, and a command that never
enqueues (most of them) should not pay for it. The app is the one settings name
(`RECHECK_CELERY_APP`); a worker loads it with `celery -A recheck` and finds the tasks itself."""
import functools
import sys
from importlib import import_module


@functools.cache
def celery_app():
    """The project's Celery app, configured from the Django settings."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    return import_string(settings.RECHECK_CELERY_APP)


def _task(task_name: str):
    app = celery_app()
    if task_name not in app.tasks:
        # Registers the module's tasks with the app (`@shared_task`).
        import_module(task_name.rpartition(".")[0])
    return app.tasks[task_name]


def enqueue(task_name: str, *args, **kwargs):
    """`delay` the task registered as `task_name`; returns its AsyncResult."""
    return _task(task_name).delay(*args, **kwargs)


def enqueue_later(task_name: str, *args, countdown: float):
    """Like `enqueue`, to run no sooner than `countdown` seconds from now (a retry's backoff)."""
    return _task(task_name).apply_async(args, countdown=countdown)


def tasks_run_in_process() -> bool:
    """Whether `enqueue` runs the task right here (no broker configured) rather than handing it on.

    Asked after every verification, most often by a command that hands nothing on: until the app
    is loaded, the answer is the setting it would be configured from, and Celery stays unloaded."""
    from django.conf import settings

    if settings.RECHECK_CELERY_APP.rpartition(".")[0] in sys.modules:
        # Loaded (a worker, a process that handed work on, a test): its configuration is the
        # answer, as it may have changed since it was loaded.
        return bool(celery_app().conf.task_always_eager)
    return bool(getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False))
