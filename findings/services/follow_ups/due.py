"""A follow-up that falls due soon, or overdue, is an event of its repository's timeline (and its
pull request's): once per follow-up, per crossing, per due date. Nothing is written when it
crosses (time alone moves it), so a sweep looks: beat's `record_follow_ups_due`, and the sender
loop of a process without a worker (`notify.sender`). A new due date (a regression that restarts
the clock) is a new crossing; one that jumped past "due soon" between two sweeps is overdue only."""
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from core import vocabulary as v
from core.vocabulary import events as ev
from findings.models import FollowUp, ReviewEvent
from findings.selectors.follow_ups import follow_up_due_state
from findings.state.timeline import timeline_event_write

KIND_OF_DUE_STATE = {v.DUE_SOON: ev.FOLLOW_UP_DUE_SOON, v.OVERDUE: ev.FOLLOW_UP_OVERDUE}


def follow_up_due_key(follow_up: FollowUp, due_state: str) -> str:
    """What makes a crossing one event: the follow-up, the state it crossed into, its due date."""
    return f"follow_up:{follow_up.pk}:{due_state}:{follow_up.due_at.isoformat()}"


def follow_ups_due_record(*, now: datetime | None = None) -> int:
    """Write the events of the follow-ups that are due soon or overdue at `now` and have no event
    of that crossing yet. Returns how many were written."""
    now = now or timezone.now()
    candidates = list(FollowUp.objects.still_due().filter(due_at__lte=now + timedelta(days=v.DUE_SOON_DAYS))
                      .select_related("finding").order_by("due_at", "id"))
    due = [(follow_up, state) for follow_up in candidates
           if (state := follow_up_due_state(follow_up, now)) in KIND_OF_DUE_STATE]
    # The crossings written already, in one query: a sweep a minute must not cost one per follow-up.
    written = set(ReviewEvent.objects.filter(
        kind__in=tuple(KIND_OF_DUE_STATE.values()),
        key__in=[follow_up_due_key(follow_up, state) for follow_up, state in due],
    ).values_list("repository_id", "key"))
    recorded = 0
    for follow_up, state in due:
        key = follow_up_due_key(follow_up, state)
        if (follow_up.repository_id, key) in written:
            continue
        try:
            with transaction.atomic():
                event = timeline_event_write(
                    repository_id=follow_up.repository_id, pull_request_id=follow_up.pull_request_id,
                    kind=KIND_OF_DUE_STATE[state], key=key, finding_id=follow_up.finding_id,
                    finding_number=follow_up.finding.number,
                    payload={"follow_up": follow_up.pk, "change": state, "state": follow_up.state,
                             "due_at": follow_up.due_at.isoformat(), "due_state": state},
                )
        except IntegrityError:
            event = None  # another sweep wrote it first: one event
        recorded += event is not None
    return recorded
