"""The Follow-ups page: a repository's follow-ups after a merge and two pushes, the same answer as
the API's, a maintainer's decision from it, the figure on the repository's page and the history
on the finding's page."""
import re

import pytest
from rest_framework.test import APIClient

from findings.models import FollowUp
from tests.factories import UserFactory
from tests.findings.follow_up_world import checked_world, merged_world
from tests.personas import site_client

pytestmark = pytest.mark.django_db
PAGE = "/acme/loader/follow-ups/"


@pytest.fixture
def world(tmp_path):
    return checked_world(tmp_path)


def rows(html: str) -> dict[str, str]:
    return {match[1]: match[2] for match in re.finditer(r'data-follow-up="([^"]+)">(.*?)</tr>', html, re.S)}


def text(fragment: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)).strip()


def test_the_page_shows_one_still_present_at_its_new_place_and_one_verified_fixed_at_the_fixing_commit(world):
    response = site_client().get(PAGE)
    assert response.status_code == 200
    found = rows(response.content.decode())
    helper, debug = text(found["acme/loader#7/2"]), text(found["acme/loader#7/3"])
    assert "Still present at " + world.fixed[:8] in helper and "src/helpers.py:3–4" in helper
    assert "Likely fixed at " + world.fixed[:8] in debug and "gone, last seen at src/loader.py:16" in debug
    assert f"Verified fixed, to be marked at {world.fixed[:8]}" in debug and "Waiting for a maintainer" in debug
    assert "Open cleanup" in helper and "#7" in helper


def test_the_page_and_the_api_give_one_answer(world):
    html = rows(site_client().get(PAGE).content.decode())
    api = APIClient().get("/api/repos/acme/loader/follow-ups/").json()["results"]
    assert set(html) == {row["finding"] for row in api}
    for row in api:
        shown = text(html[row["finding"]])
        assert row["state_label"] in shown and row["verdict_label"] in shown
        assert all(item["where"] in shown for item in row["evidence"])
        assert f"{row['age_days']} day" in shown


def test_a_maintainer_marks_the_verified_one_fixed_from_the_page(world):
    maintainer = UserFactory(groups=["Maintainer"])
    client = site_client(maintainer)
    assert "Mark fixed" in client.get(PAGE).content.decode()
    response = client.post("/acme/loader/pull/7/findings/3/follow-up/", {"action": "mark_fixed"})
    assert response.status_code == 302 and response["Location"] == PAGE
    follow_up = world.follow_up(3)
    assert (follow_up.state, follow_up.fixed_commit.sha, follow_up.decided_by) == ("fixed", world.fixed, maintainer)
    shown = text(rows(client.get(PAGE).content.decode())["acme/loader#7/3"])
    assert maintainer.username in shown and "Fixed" in shown


def test_a_reader_sees_no_buttons_and_is_refused(world):
    reader = UserFactory(groups=["Reviewer"])
    client = site_client(reader)
    assert "Mark fixed" not in client.get(PAGE).content.decode()
    response = client.post("/acme/loader/pull/7/findings/3/follow-up/", {"action": "close", "reason": "no"})
    assert response.status_code == 403
    assert world.follow_up(3).state == "verified_fixed"


def test_closing_without_a_reason_says_why_and_changes_nothing(world):
    client = site_client(UserFactory(groups=["Maintainer"]))
    response = client.post("/acme/loader/pull/7/findings/2/follow-up/", {"action": "close", "reason": ""}, follow=True)
    assert "closing a follow-up needs a reason" in response.content.decode()
    assert world.follow_up(2).state == "open"


def test_the_state_filter_keeps_one_state(world):
    found = rows(site_client().get(PAGE, {"state": "verified_fixed"}).content.decode())
    assert set(found) == {"acme/loader#7/3"}


def test_the_page_reads_in_a_bounded_number_of_queries(world, django_assert_max_num_queries):
    from django.utils import timezone

    from tests.factories import FindingFactory

    client = site_client(UserFactory(groups=["Maintainer"]))
    client.get(PAGE)
    with django_assert_max_num_queries(12):
        client.get(PAGE)
    for number in range(10, 20):
        finding = FindingFactory(pull_request=world.pull_request, number=number, kind="cleanup")
        FollowUp.objects.create(repository=world.pull_request.repository, finding=finding,
                                pull_request=world.pull_request, origin="open_cleanup", state="closed",
                                reason="no", decided_at=timezone.now(), decided_by=UserFactory())
    with django_assert_max_num_queries(12):
        assert len(rows(client.get(PAGE).content.decode())) == 12


def test_the_repository_page_draws_open_follow_ups_over_time_and_links_the_page(world):
    html = site_client().get("/acme/loader/").content.decode()
    assert 'class="chart chart-line"' in html and "2 open follow-ups now" in html
    assert f'href="{PAGE}"' in html


def test_the_finding_page_tells_the_follow_up_s_whole_life(world):
    html = text(site_client().get("/acme/loader/pull/7/findings/3/").content.decode())
    assert "Follow-up on main" in html
    for step in ("Recorded in review", "Merged with its pull request", "Checked on the default branch: likely fixed, "
                 "verified fixed, to be marked at " + world.fixed[:8]):
        assert step in html
    assert FollowUp.objects.count() == 2


def test_a_finding_of_a_pull_request_closed_unmerged_says_it_is_not_followed_up(tmp_path):
    world = merged_world(tmp_path, merge=False)
    world.pull_request.state = "closed"
    world.pull_request.save()
    html = text(site_client().get("/acme/loader/pull/7/findings/2/").content.decode())
    assert "was closed without merging: what it left open is not followed up" in html


def test_the_cleanups_page_of_a_merged_pull_request_points_at_its_follow_ups(world):
    html = text(site_client().get("/acme/loader/pull/7/cleanups/").content.decode())
    assert "#7 has merged: what it left open is followed up on main , checked at every push" in html
