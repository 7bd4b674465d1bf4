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


def finding(number, *, status="open", resolution=None, verdict=None, reason="", regressed=False, kind="blocker"):
    return {"number": number, "kind": kind, "status": status, "resolution": resolution or status,
            "verdict": verdict, "verdict_reason": reason, "possibly_regressed": regressed}


def before_reasons(finding_: dict) -> dict:
    """A finding as a mark stored before reasons were on the timeline kept it."""
    return {name: value for name, value in finding_.items() if name != "verdict_reason"}


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


def test_a_new_reason_with_the_same_verdict_is_a_verdict_change_that_carries_both_reasons():
    waiting = {**EMPTY, "latest_sha": "a" * 40, "findings": {
        "1": finding(1, verdict="error", reason="waiting"), "2": finding(2, verdict="error", reason="waiting"),
        "3": finding(3, verdict="error", reason="waiting"), "4": finding(4, status="fixed", verdict="likely_fixed")}}
    reported = {**waiting, "latest_sha": "b" * 40, "findings": {
        "1": finding(1, verdict="error", reason="flaky"),  # the report came: flaky
        "2": finding(2, verdict="partly_fixed"),  # the report came: one of two tests still fails
        "3": finding(3, verdict="error", reason="waiting"),  # no report yet: nothing to say
        "4": finding(4, status="fixed", verdict="present", regressed=True)}}
    events = diff(waiting, reported)
    assert [(event["kind"], event["finding_number"], event["sha"]) for event in events] == [
        (ev.FINDING_VERDICT_CHANGED, 1, "b" * 40), (ev.FINDING_VERDICT_CHANGED, 2, "b" * 40),
        (ev.FINDING_REGRESSED, 4, "b" * 40)]
    assert [{name: event["payload"][name] for name in ("from", "to", "from_reason", "to_reason")}
            for event in events] == [
        {"from": "error", "to": "error", "from_reason": "waiting", "to_reason": "flaky"},
        {"from": "error", "to": "partly_fixed", "from_reason": "waiting", "to_reason": ""},
        {"from": "likely_fixed", "to": "present", "from_reason": "", "to_reason": ""}]
    assert events[0]["payload"]["finding"]["verdict_reason"] == "flaky"
    assert replay(waiting, events) == replayed(reported)
    # Back to waiting (a new commit with no report yet), and the regression cleared with it.
    cleared = {**reported, "findings": {**reported["findings"], "1": finding(1, verdict="error", reason="waiting"),
                                        "4": finding(4, status="fixed", verdict="error", reason="waiting")}}
    events = diff(reported, cleared)
    assert [(event["kind"], event["finding_number"], event["payload"]["from_reason"],
             event["payload"]["to_reason"]) for event in events] == [
        (ev.FINDING_VERDICT_CHANGED, 1, "flaky", "waiting"), (ev.FINDING_VERDICT_CHANGED, 4, "", "waiting")]
    assert replay(waiting, diff(waiting, reported) + events) == replayed(cleared)


def test_a_mark_stored_before_reasons_were_on_the_timeline_is_their_baseline():
    current = {**EMPTY, "latest_sha": "a" * 40, "findings": {
        "1": finding(1, verdict="error", reason="waiting"), "2": finding(2, verdict="error", reason="flaky"),
        "3": finding(3, verdict="present")}}
    older = {**current, "findings": {pk: before_reasons(item) for pk, item in current["findings"].items()}}
    # The first state after the upgrade: the reasons it finds are not news, for any finding.
    assert diff(older, current) == []
    # A verdict that did move says it, and that the reason before is not known.
    moved = {**current, "findings": {**current["findings"], "3": finding(3, verdict="error", reason="waiting")}}
    [event] = diff(older, moved)
    assert (event["kind"], event["finding_number"]) == (ev.FINDING_VERDICT_CHANGED, 3)
    assert (event["payload"]["from"], event["payload"]["to"]) == ("present", "error")
    assert (event["payload"]["from_reason"], event["payload"]["to_reason"]) == (None, "waiting")
    # From the mark that state leaves, a reason alone is news again, and the replay gives it.
    after = {**moved, "findings": {**moved["findings"], "1": finding(1, verdict="error", reason="not_run")}}
    events = diff(moved, after)
    assert [(event["kind"], event["payload"]["from_reason"], event["payload"]["to_reason"]) for event in events] \
        == [(ev.FINDING_VERDICT_CHANGED, "waiting", "not_run")]
    assert replay(moved, events) == replayed(after)


def test_a_stored_state_without_a_reason_for_a_finding_gives_none_not_an_unknown_one():
    state = {"findings": {"1": {"number": 1, "kind": "blocker", "status": "open", "resolution": "open",
                                "verdict": "present", "possibly_regressed": False}}}
    assert snapshot(state)["findings"]["1"]["verdict_reason"] == ""


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
