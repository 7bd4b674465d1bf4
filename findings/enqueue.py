"""Handing work to Celery by task name.

Services decide that work must happen; tasks (`findings/tasks.py`) load by id and call services.
Looking a task up by its registered name keeps that direction one way: no service imports the
tasks module, so the two can never import each other. The registry lookup (unlike
`send_task`) still honours eager mode, where no broker is configured and tasks run in-process."""
from celery import current_app


def enqueue(task_name: str, *args, **kwargs):
    """`delay` the task registered as `task_name`; returns its AsyncResult."""
    return current_app.tasks[task_name].delay(*args, **kwargs)


def enqueue_later(task_name: str, *args, countdown: float):
    """Like `enqueue`, to run no sooner than `countdown` seconds from now (a retry's backoff)."""
    return current_app.tasks[task_name].apply_async(args, countdown=countdown)


def tasks_run_in_process() -> bool:
    """Whether `enqueue` runs the task right here (no broker configured) rather than handing it on."""
    return bool(current_app.conf.task_always_eager)
