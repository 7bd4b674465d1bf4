"""Telling a sender that calls to a forge are waiting, once the transaction that wrote them commits.

With a broker, each target's first call is handed to a worker (`forge.tasks.send_github_call`),
with a countdown when it is due later; waits longer than `COUNTDOWN_LIMIT_SECONDS` are left to
beat (`send_due_github_calls`), since Redis hands out again a message that waits longer than its
visibility timeout. Without a broker (tasks run in-process) nothing is sent here: the request
that wrote the calls answers at once, and the process's sender (`manage.py send_forge_calls`,
started by scripts/serve) sends them, woken through `sender_event` when it runs in this process."""
import logging
import threading

from django.db import transaction
from django.utils import timezone

from findings.enqueue import enqueue_later, tasks_run_in_process

logger = logging.getLogger(__name__)

COUNTDOWN_LIMIT_SECONDS = 300
# Set when calls were written in this process; an in-process sender waits on it between rounds.
sender_event = threading.Event()


def outbox_wake(calls) -> None:
    firsts = {}
    for call in calls:
        firsts.setdefault((call.kind, call.sha, call.pull_request_id), (call.pk, call.due_at))
    if firsts:
        transaction.on_commit(lambda: _wake(list(firsts.values())))


def _wake(calls: list) -> None:
    sender_event.set()
    if tasks_run_in_process():
        return
    now = timezone.now()
    for pk, due_at in calls:
        countdown = max(0.0, (due_at - now).total_seconds()) if due_at else 0.0
        if countdown > COUNTDOWN_LIMIT_SECONDS:
            continue  # beat sends it when it is due
        try:
            enqueue_later("forge.tasks.send_github_call", pk, countdown=countdown)
        except Exception:  # a broker that is down: the row stays pending, and beat or a resend sends it
            logger.exception("Forge call %s could not be queued", pk)
