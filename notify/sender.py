"""The sender of a process without a worker (`manage.py send_notifications`, started beside the
site by scripts/serve): the timelines that moved and nobody read, the follow-ups that fell due
soon or overdue, the webhooks and the emails as they fall due."""
import logging
import threading

from django.conf import settings
from django.db import connections
from django.utils import timezone

from core.rounds import rounds_run_until_stopped
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
    rounds_run_until_stopped(
        stop=stop, wake=sender_event, poll=float(settings.RECHECK_NOTIFY_BATCH_SECONDS if poll is None else poll),
        round_run=_round, after_round=connections.close_all, what="Sending the due notifications", logger=logger,
    )


def _round() -> float | None:
    timelines_catch_up()
    follow_ups_due_record()
    webhooks_send_due()
    mails_send_due()
    next_due = webhooks_next_due()
    return None if next_due is None else (next_due - timezone.now()).total_seconds()
