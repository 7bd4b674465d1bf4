"""How many follow-ups were still to do at the end of each day: a follow-up counts from the day it
opened to the day before a person decided it, the same as counting each day afresh."""
from datetime import date, datetime, timedelta, timezone as tz

import pytest

from findings.models import FollowUp
from findings.selectors.follow_ups import open_follow_ups_over_time
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory

pytestmark = pytest.mark.django_db

TODAY = date(2026, 6, 30)


def at(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, 12, tzinfo=tz.utc)


def counted_each_day(spans, *, days: int) -> list[tuple[date, int]]:
    start = TODAY - timedelta(days=days - 1)
    return [(start + timedelta(days=offset),
             sum(1 for opened, decided in spans
                 if opened <= start + timedelta(days=offset) and (decided is None or decided > start + timedelta(days=offset))))
            for offset in range(days)]


def test_each_day_counts_the_follow_ups_opened_and_not_yet_decided(settings):
    settings.TIME_ZONE = "UTC"
    repository = RepositoryFactory(slug="acme/over-time")
    pull_request = PullRequestFactory(repository=repository)
    spans = [
        (TODAY - timedelta(days=200), None),  # opened before the chart, still open
        (TODAY - timedelta(days=200), TODAY - timedelta(days=100)),  # decided before it
        (TODAY - timedelta(days=120), TODAY - timedelta(days=5)),  # across its start
        (TODAY - timedelta(days=10), TODAY - timedelta(days=10)),  # decided the day it opened
        (TODAY - timedelta(days=10), TODAY - timedelta(days=9)),
        (TODAY, None),  # opened today
        (TODAY - timedelta(days=89), TODAY),  # the chart's first day to today
    ]
    for number, (opened, decided) in enumerate(spans, start=1):
        follow_up = FollowUp.objects.create(
            repository=repository, pull_request=pull_request, origin=FollowUp.Origin.OPEN_CLEANUP,
            finding=FindingFactory(pull_request=pull_request, number=number))
        FollowUp.objects.filter(pk=follow_up.pk).update(
            opened_at=at(opened), decided_at=at(decided) if decided else None,
            state=FollowUp.State.CLOSED if decided else FollowUp.State.OPEN)
    for days in (90, 7, 1):
        assert open_follow_ups_over_time(repository, today=TODAY, days=days) == counted_each_day(spans, days=days)
