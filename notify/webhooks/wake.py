"""Telling a sender that webhooks (and emails) are waiting, once the transaction that wrote them commits: with
a broker, a worker's task for each message, counted down to its time (waits past
COUNTDOWN_LIMIT_SECONDS are left to beat); without one (the embedded default), the process's
sender (`manage.py send_notifications`, started by scripts/serve), woken through `sender_event`."""
import logging
import threading

from django.db import transaction
from django.utils import timezone

from findings.enqueue import enqueue_later, tasks_run_in_process

logger = logging.getLogger(__name__)

COUNTDOWN_LIMIT_SECONDS = 300
sender_event = threading.Event()


def webhooks_wake(messages) -> None:
    _wake_when_committed(messages, "notify.tasks.send_webhook", "Webhook message")


def mails_wake(messages) -> None:
    """The same for emails: the in-process sender, or a worker's round when each falls due."""
    _wake_when_committed(messages, "notify.tasks.send_mail", "Mail message")


def _wake_when_committed(messages, task: str, what: str) -> None:
    due = [(message.pk, message.due_at) for message in messages]
    if due:
        transaction.on_commit(lambda: _wake(due, task, what))


def _wake(due: list, task: str, what: str) -> None:
    sender_event.set()
    if tasks_run_in_process():
        return
    now = timezone.now()
    for pk, due_at in due:
        countdown = max(0.0, (due_at - now).total_seconds())
        if countdown > COUNTDOWN_LIMIT_SECONDS:
            continue
        try:
            enqueue_later(task, pk, countdown=countdown)
        except Exception:  # the broker is down: the row stays pending, and beat sends it
            logger.exception("%s %s could not be queued", what, pk)
