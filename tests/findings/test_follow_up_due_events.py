"""A follow-up falling due soon, then overdue, is an event of its timeline once per crossing, with
the clock moved: from beat's sweep (`record_follow_ups_due`) and from the sender loop of a process
without a worker. A regression that restarts the clock gives it a new due date, which crosses again."""
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from core.vocabulary import events as ev
from findings.models import FollowUp, ReviewEvent
from findings.services.policy import repository_policy_update
from findings.tasks import record_follow_ups_due
from notify.sender import notifications_send_forever
from presentation.events import event_summary
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory
from tests.findings.follow_up_world import check, merged_world, push_the_move_and_the_fix

DUE_KINDS = (ev.FOLLOW_UP_DUE_SOON, ev.FOLLOW_UP_OVERDUE)


def moved_clock(monkeypatch, days: float):
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real() + timedelta(days=days))
    return real


def crossings():
    return sorted((event.kind, event.finding_number, event.payload["due_at"])
                  for event in ReviewEvent.objects.filter(kind__in=DUE_KINDS))


@pytest.mark.django_db
def test_each_crossing_is_one_event_and_a_new_due_date_crosses_again(tmp_path, settings, monkeypatch):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    world = push_the_move_and_the_fix(merged_world(tmp_path))  # cleanups 2 and 3: due in 30 days
    repository_policy_update(repository=world.pull_request.repository, actor=None, cleanup_due_days=5,
                             regression_restarts_clock=True)
    due = {number: world.follow_up(number).due_at.isoformat() for number in (2, 3)}
    assert record_follow_ups_due.apply().get() == 0  # due later: nothing yet

    real = moved_clock(monkeypatch, 24)  # six days left
    assert record_follow_ups_due.apply().get() == 2
    assert record_follow_ups_due.apply().get() == 0  # the next round: the same crossing, no event
    assert crossings() == [(ev.FOLLOW_UP_DUE_SOON, 2, due[2]), (ev.FOLLOW_UP_DUE_SOON, 3, due[3])]
    event = ReviewEvent.objects.get(kind=ev.FOLLOW_UP_DUE_SOON, finding_number=3)
    assert (event.pull_request, event.cause, event.payload["follow_up"]) == (
        world.pull_request, ev.CAUSE_RECHECK, world.follow_up(3).pk)
    assert event_summary(event.kind, event.payload, finding_number=3) == \
        f"Finding 3's follow-up is due soon: on {due[3][:10]}."

    monkeypatch.setattr(timezone, "now", lambda: real() + timedelta(days=31))
    assert record_follow_ups_due.apply().get() == 2
    assert record_follow_ups_due.apply().get() == 0
    overdue = [row for row in crossings() if row[0] == ev.FOLLOW_UP_OVERDUE]
    assert overdue == [(ev.FOLLOW_UP_OVERDUE, 2, due[2]), (ev.FOLLOW_UP_OVERDUE, 3, due[3])]

    # DEBUG is removed on main (follow-up 3 verified fixed: still to be decided, still due), then
    # comes back: open again, and the policy restarts its clock: five days from now.
    check(world)
    repo = world.repo
    repo.write("src/loader.py", repo.read("src/loader.py") + "\nDEBUG = True\n")
    check(world, repo.commit("DEBUG again"))
    follow_up = world.follow_up(3)
    assert follow_up.state == FollowUp.State.OPEN and follow_up.due_at.isoformat() != due[3]
    assert record_follow_ups_due.apply().get() == 1
    newest = ReviewEvent.objects.filter(kind__in=DUE_KINDS).latest("id")
    assert (newest.kind, newest.finding_number, newest.payload["due_at"]) == (
        ev.FOLLOW_UP_DUE_SOON, 3, follow_up.due_at.isoformat())
    monkeypatch.setattr(timezone, "now", lambda: real() + timedelta(days=37))
    assert record_follow_ups_due.apply().get() == 1
    assert record_follow_ups_due.apply().get() == 0
    assert len([row for row in crossings() if row[1] == 3]) == 4


@pytest.mark.django_db
def test_a_follow_up_done_or_past_due_soon_between_rounds_is_said_once(monkeypatch):
    pull_request = PullRequestFactory(repository=RepositoryFactory(slug="acme/rl"), number=3)
    follow_ups = [FollowUp.objects.create(
        repository=pull_request.repository, finding=FindingFactory(pull_request=pull_request, number=n, kind="cleanup"),
        pull_request=pull_request, origin="open_cleanup", due_at=timezone.now() + timedelta(days=10))
        for n in (1, 2)]
    # Closed by a person: nothing left to do, nothing due.
    FollowUp.objects.filter(pk=follow_ups[1].pk).update(state=FollowUp.State.CLOSED, decided_at=timezone.now(),
                                                        reason="wontfix")
    moved_clock(monkeypatch, 12)  # no round ran while it was due soon: overdue only
    assert record_follow_ups_due.apply().get() == 1
    assert [(event.kind, event.finding_number) for event in ReviewEvent.objects.filter(kind__in=DUE_KINDS)] == [
        (ev.FOLLOW_UP_OVERDUE, 1)]


@pytest.mark.django_db(transaction=True)
def test_the_sender_loop_without_a_worker_records_them(monkeypatch, settings):
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 0
    pull_request = PullRequestFactory(repository=RepositoryFactory(slug="acme/rl"), number=3)
    FollowUp.objects.create(repository=pull_request.repository, finding=FindingFactory(
        pull_request=pull_request, number=1, kind="cleanup"), pull_request=pull_request, origin="open_cleanup",
        due_at=timezone.now() + timedelta(days=10))
    moved_clock(monkeypatch, 11)
    stop = threading.Event()
    sender = threading.Thread(target=notifications_send_forever, kwargs={"stop": stop, "poll": 0.1}, daemon=True)
    sender.start()
    try:
        deadline = time.monotonic() + 30
        while not ReviewEvent.objects.filter(kind=ev.FOLLOW_UP_OVERDUE).exists():
            assert time.monotonic() < deadline, "the sender loop wrote no event"
            time.sleep(0.1)
        time.sleep(0.5)  # a few more rounds: still one
    finally:
        stop.set()
        sender.join(timeout=10)
    assert ReviewEvent.objects.filter(kind__in=DUE_KINDS).count() == 1
