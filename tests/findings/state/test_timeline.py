"""A pull request's timeline: the difference between its stored states, as events written with
the newer state; once, however often it is derived."""
import pytest

from core.vocabulary import events as ev
from findings.models import ReviewEvent, TimelineMark
from findings.services.runs import verification_run_finish, verification_run_request
from findings.state.stored import pull_request_state, pull_request_state_derive
from findings.state.timeline import EMPTY, diff, replay, replayed, snapshot
from tests import personas
from tests.timeline_world import TimelineWorld

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    return TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada"))


def finding(number, *, status="open", resolution=None, verdict=None, regressed=False, kind="blocker"):
    return {"number": number, "kind": kind, "status": status, "resolution": resolution or status,
            "verdict": verdict, "possibly_regressed": regressed}


def test_the_difference_of_two_snapshots_replays_to_the_newer():
    old = {**EMPTY, "findings": {"1": finding(1, verdict="present"), "2": finding(2, verdict="likely_fixed"),
                                 "3": finding(3)}, "gate": {"mergeable": False, "verified": True}}
    new = {**EMPTY, "findings": {"1": finding(1, verdict="likely_fixed"),
                                 "2": finding(2, status="fixed", verdict="present", regressed=True),
                                 "4": finding(4, kind="cleanup")},
           "head_sha": "a" * 40, "latest_sha": "a" * 40, "gate": {"mergeable": True, "verified": True}}
    events = diff(old, new)
    assert [(event["kind"], event["finding_number"]) for event in events] == [
        (ev.FINDING_VERDICT_CHANGED, 1), (ev.FINDING_STATUS_CHANGED, 2), (ev.FINDING_REGRESSED, 2),
        (ev.FINDING_RECORDED, 4), (ev.FINDING_REMOVED, 3), (ev.GATE_CHANGED, None),
    ]
    assert replay(old, events) == replayed(new)
    assert diff(new, new) == []


def test_a_push_that_fixes_one_blocker_and_brings_another_back_gives_exactly_those_two_events(world):
    world.imported().first_push()
    before = world.events().count()
    world.second_push()
    events = list(world.events()[before:])
    assert [(event.kind, event.finding_number, event.cause) for event in events] == [
        (ev.FINDING_VERDICT_CHANGED, 1, ev.CAUSE_RECHECK), (ev.FINDING_REGRESSED, 2, ev.CAUSE_RECHECK),
    ]
    assert events[0].payload["from"] == "present" and events[0].payload["to"] == "likely_fixed"
    assert events[1].payload["to"] == "present" and events[1].payload["finding"]["possibly_regressed"] is True
    assert {event.sha for event in events} == {world.head.sha}


def test_a_status_set_by_a_person_says_who_and_why(world):
    world.imported().first_push()
    status = world.events().get(kind=ev.FINDING_STATUS_CHANGED)
    assert (status.cause, status.actor.username, status.finding_number) == (ev.CAUSE_PERSON, "ada", 2)
    assert status.payload["from"] == {"status": "open", "resolution": "open"}
    assert status.payload["to"] == {"status": "fixed", "resolution": "fixed"}
    assert status.payload["note"] == "Config is gone." and status.sha == world.head.sha
    recorded = world.events().filter(kind=ev.FINDING_RECORDED)
    assert sorted(recorded.values_list("finding_number", flat=True)) == [1, 2]


def test_the_same_state_change_derived_twice_gives_one_event(world):
    world.imported().first_push()
    count = world.events().count()
    state = pull_request_state_derive(pull_request_id=world.pull_request.pk)  # the same generation again
    pull_request_state(pull_request_id=world.pull_request.pk)
    assert world.events().count() == count
    # Derived from scratch at a newer generation with nothing changed: no event either.
    world.pull_request.refresh_from_db()
    from reviews.services import pull_request_changed

    pull_request_changed(pull_request_id=world.pull_request.pk)
    assert pull_request_state(pull_request_id=world.pull_request.pk)["generation"] == state["generation"] + 1
    assert world.events().count() == count
    assert TimelineMark.objects.get(pk=world.pull_request.pk).generation == state["generation"] + 1


def test_the_events_replayed_give_the_current_state(world):
    world.imported().first_push().second_push()
    rows = [{"kind": event.kind, "payload": event.payload} for event in world.events()]
    assert replay(EMPTY, rows) == replayed(snapshot(world.read()))


def test_a_failed_run_is_on_the_timeline_once(world):
    world.imported()
    run = verification_run_request(pull_request=world.pull_request, commit_sha=None, commit_known=True)
    verification_run_finish(run, message="The mirror could not be read.", failed=True)
    verification_run_finish(run, message="The mirror could not be read.", failed=True)
    failed = ReviewEvent.objects.filter(kind=ev.RUN_FAILED)
    assert failed.count() == 1
    assert failed.get().payload["message"] == "The mirror could not be read."
