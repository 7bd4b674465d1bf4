"""Where the policy lets overdue cleanups block, a cleanup follow-up of the repository falling due
closes every open pull request's gate, with time alone: the stored state says until when it holds,
and after that every interface reads it derived again (the API's gate, the blockers page, GitHub's
check content). A follow-up marked fixed opens the gates again. Also: a regression restarts the
clock where the policy says so, and the repository page's figure counts overdue follow-ups."""
from datetime import timedelta

import pytest
from django.utils import timezone

from findings.models import FollowUp
from findings.selectors.follow_ups import follow_up_summary, overdue_follow_ups_over_time
from findings.services.policy import repository_policy_update
from findings.tasks import move_expired_states
from forge.content import FAILURE, SUCCESS, commit_report
from reviews.models import PullRequest
from tests import personas
from tests.api.test_merge_policy import only_a_regressed_blocker
from tests.factories import FindingFactory, PullRequestFactory

pytestmark = pytest.mark.django_db

GATE = "/api/repos/acme/loader/pulls/4108/gate"


def a_merged_cleanup(review, *, due_in: timedelta) -> FollowUp:
    merged = PullRequestFactory(repository=review.repository, number=4000, state=PullRequest.State.MERGED)
    finding = FindingFactory(pull_request=merged, number=1, kind="cleanup", title="Rename the helper")
    return FollowUp.objects.create(repository=review.repository, finding=finding, pull_request=merged,
                                   origin="open_cleanup", due_at=timezone.now() + due_in)


def moved_clock(monkeypatch, days: float):
    real = timezone.now
    monkeypatch.setattr(timezone, "now", lambda: real() + timedelta(days=days))


def says(review, client) -> tuple:
    answer = client.get(GATE, {"commit": review.head.sha}).json()
    page = personas.site_client().get(f"{review.pull_request.get_absolute_url()}blockers/").content.decode()
    report = commit_report(pull_request=review.pull_request, commit=review.head)
    return answer["mergeable"], "may merge</h2>" in page, report.conclusion, answer["overdue_cleanups_count"]


def test_an_overdue_cleanup_closes_every_gate_when_the_policy_says_so_and_time_alone_does_it(
    review, anonymous_reader, monkeypatch
):
    only_a_regressed_blocker(review)
    follow_up = a_merged_cleanup(review, due_in=timedelta(days=1))
    assert says(review, anonymous_reader) == (True, True, SUCCESS, 0)
    repository_policy_update(repository=review.repository, actor=None, overdue_cleanups_block=True)
    # Not due yet: still mergeable, and the stored answer says until when it holds.
    assert says(review, anonymous_reader) == (True, True, SUCCESS, 0)
    moved_clock(monkeypatch, 2)
    # The API's gate and GitHub's check read the state, and see it expired: derived again.
    answer = anonymous_reader.get(GATE, {"commit": review.head.sha}).json()
    assert (answer["mergeable"], answer["overdue_cleanups_count"]) == (False, 1)
    # A kept page follows once beat's job moved the generation (every minute).
    assert move_expired_states.apply().get() == 0  # moved already, by the read above
    mergeable, page, conclusion, overdue = says(review, anonymous_reader)
    assert (mergeable, page, conclusion, overdue) == (False, False, FAILURE, 1)
    answer = anonymous_reader.get(GATE, {"commit": review.head.sha}).json()
    assert answer["overdue_cleanups"][0]["finding"] == "acme/loader#4000/1"
    assert "cleanup follow-up(s) of the repository are overdue" in answer["reason"]
    # Decided by a person: the gates open again (the follow-up's save moves them).
    follow_up.state, follow_up.decided_at = FollowUp.State.CLOSED, timezone.now()
    follow_up.save()
    assert says(review, anonymous_reader)[:3] == (True, True, SUCCESS)


def test_the_policy_off_an_overdue_cleanup_blocks_nothing(review, anonymous_reader, monkeypatch):
    only_a_regressed_blocker(review)
    a_merged_cleanup(review, due_in=timedelta(days=-1))
    assert says(review, anonymous_reader) == (True, True, SUCCESS, 0)


def test_due_states_and_the_figure_of_overdue_follow_ups(review):
    follow_up = a_merged_cleanup(review, due_in=timedelta(days=10))
    now = timezone.now()
    assert follow_up_summary(follow_up, now=now)["due_state"] == "due"
    assert follow_up_summary(follow_up, now=now + timedelta(days=4))["due_state"] == "due_soon"
    assert follow_up_summary(follow_up, now=now + timedelta(days=11))["due_state"] == "overdue"
    points = overdue_follow_ups_over_time(review.repository, now=now + timedelta(days=12), days=5)
    assert [count for _, count in points] == [0, 0, 1, 1, 1]
    # Closed: no longer due, and no longer counted from the day it was decided.
    follow_up.state, follow_up.decided_at = FollowUp.State.CLOSED, now + timedelta(days=11, hours=12)
    follow_up.save()
    assert follow_up_summary(follow_up, now=now + timedelta(days=12))["due_state"] == ""
    points = overdue_follow_ups_over_time(review.repository, now=now + timedelta(days=12), days=5)
    assert [count for _, count in points][-1] == 0


def test_beat_moves_the_generation_of_a_state_that_expired_unread(review, anonymous_reader, monkeypatch):
    only_a_regressed_blocker(review)
    a_merged_cleanup(review, due_in=timedelta(days=1))
    repository_policy_update(repository=review.repository, actor=None, overdue_cleanups_block=True)
    page = f"{review.pull_request.get_absolute_url()}blockers/"
    assert "may merge</h2>" in personas.site_client().get(page).content.decode()  # kept under its generation
    moved_clock(monkeypatch, 2)
    assert move_expired_states.apply().get() == 1
    assert "may not merge</h2>" in personas.site_client().get(page).content.decode()
    assert move_expired_states.apply().get() == 0
