"""Events that are not a difference of states: a run reaped (once, however often the reaper runs)
and a merged pull request's follow-ups opened and verified fixed on the default branch."""
import pytest

from core.vocabulary import events as ev
from findings.models import ReviewEvent
from findings.services.runs import verification_runs_reap
from tests.findings.follow_up_world import check, checked_world
from tests.findings.services.test_runs_reaping import killed_run
from tests.findings.services.test_verification import import_review
from tests.findings.services.test_runs_reaping import repo  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def test_a_reaped_run_is_on_the_timeline_once(repo):  # noqa: F811
    pull_request = import_review(repo)
    dead = killed_run(pull_request)
    verification_runs_reap()
    verification_runs_reap()
    [event] = ReviewEvent.objects.filter(kind=ev.RUN_REAPED)
    assert event.pull_request == pull_request and event.payload["run"] == dead.pk
    assert "signs of life" in event.payload["message"] and event.cause == ev.CAUSE_RECHECK


def test_follow_ups_opened_and_verified_fixed_are_on_the_timeline_once(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    world = checked_world(tmp_path)
    opened = ReviewEvent.objects.filter(kind=ev.FOLLOW_UP_OPENED, pull_request=world.pull_request)
    assert sorted(opened.values_list("finding_number", flat=True)) == sorted(
        world.pull_request.findings.filter(follow_up__isnull=False).values_list("number", flat=True))
    fixed = ReviewEvent.objects.filter(kind=ev.FOLLOW_UP_VERIFIED_FIXED)
    assert list(fixed.values_list("finding_number", flat=True)) == [3]
    assert fixed.get().sha == world.fixed and fixed.get().payload["state"] == "verified_fixed"
    check(world)  # checked again at the same head: nothing changed, nothing more
    assert ReviewEvent.objects.filter(kind__startswith="follow_up.").count() == opened.count() + 1
