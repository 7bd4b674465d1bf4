"""Tasks recorded instead of sent, for tests about what a request asks the workers to do rather
than about the work itself."""
from types import SimpleNamespace


def record_queued(monkeypatch, *tasks) -> list:
    """Each of `tasks` (Celery tasks taking one id) records the id it is delayed with in the list
    returned, and answers as a sent task would (an AsyncResult-like object with an `id`)."""
    queued = []

    def delay(object_id):
        queued.append(object_id)
        return SimpleNamespace(id=f"task-{object_id}")

    for task in tasks:
        monkeypatch.setattr(task, "delay", delay)
    return queued
