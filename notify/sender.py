"""The sender of a process without a worker (`manage.py send_notifications`, started beside the
site by scripts/serve): the timelines that moved and nobody read, the follow-ups that fell due
soon or overdue, the webhooks and the emails as they fall due."""
import logging
import threading
import time

from django.conf import settings
from django.utils import timezone

from findings.selectors.timeline import timelines_catch_up
from findings.services.follow_ups.due import follow_ups_due_record
from notify.mail.sending import mails_send_due
from notify.webhooks.sending import webhooks_next_due, webhooks_send_due
from notify.webhooks.wake import sender_event

logger = logging.getLogger(__name__)


def notifications_send_forever(*, stop: threading.Event, poll: float | None = None) -> None:
    """The sender of a process without a worker (`manage.py send_notifications`): catch up the
    timelines that moved, send what is due, sleep until the next is due or new messages are written
    in this process, or `poll` seconds pass; until `stop` is set."""
    poll = float(settings.RECHECK_NOTIFY_BATCH_SECONDS if poll is None else poll)
    while not stop.is_set():
        wait = poll
        try:
            sender_event.clear()
            timelines_catch_up()
            follow_ups_due_record()
            webhooks_send_due()
            mails_send_due()
            next_due = webhooks_next_due()
            if next_due is not None:
                wait = min(poll, max(0.0, (next_due - timezone.now()).total_seconds()))
        except Exception:
            logger.exception("Sending the due notifications failed; trying again in %.1f s", poll)
        finally:
            from django.db import connections

            connections.close_all()
        deadline = time.monotonic() + wait
        while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
            if sender_event.wait(min(left, 0.25)):
                break
