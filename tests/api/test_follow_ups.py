"""`GET /api/repos/{owner}/{name}/follow-ups/`: a repository's follow-ups with their verdict at
the default branch's head, read from a real repository after the merge and two pushes."""
import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from findings.models import FollowUp
from reviews.models import Repository
from tests.factories import FindingFactory, UserFactory
from tests.findings.follow_up_world import checked_world
from tests.personas import api_client

pytestmark = pytest.mark.django_db
URL = "/api/repos/acme/loader/follow-ups/"


@pytest.fixture
def world(tmp_path):
    return checked_world(tmp_path)


def by_number(response):
    return {row["finding_number"]: row for row in response.json()["results"]}


def test_it_lists_one_still_present_at_its_new_place_and_one_verified_fixed_at_the_fixing_commit(world):
    response = APIClient().get(URL)
    assert response.status_code == 200, response.json()
    rows = by_number(response)
    assert set(rows) == {2, 3}
    helper, debug = rows[2], rows[3]
    assert (helper["state"], helper["verdict"], helper["checked_commit"]) == ("open", "present", world.fixed)
    assert helper["evidence"][0]["where"] == "src/helpers.py:3–4" and helper["evidence"][0]["state"] == "moved"
    assert (debug["state"], debug["verdict"], debug["fixed_commit"]) == ("verified_fixed", "likely_fixed", world.fixed)
    assert debug["evidence"][0]["where"] == "gone, last seen at src/loader.py:16"
    assert helper["pull_request"] == "acme/loader#7" and helper["merge_commit"] == world.merge
    assert helper["origin"] == "open_cleanup" and helper["age_days"] == 0 and helper["decided_by"] is None


def test_state_keeps_one_state_and_unclosed_what_a_ci_job_warns_about(world):
    assert set(by_number(APIClient().get(URL, {"state": "verified_fixed"}))) == {3}
    assert set(by_number(APIClient().get(URL, {"state": "unclosed"}))) == {2, 3}
    assert by_number(APIClient().get(URL, {"state": "closed"})) == {}
    response = APIClient().get(URL, {"state": "done"})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "state"


def test_a_private_repository_s_follow_ups_answer_as_missing(world):
    Repository.objects.filter(slug="acme/loader").update(visibility="private")
    assert APIClient().get(URL).status_code == 404
    assert api_client(UserFactory()).get(URL).status_code == 404


def test_the_list_reads_in_a_bounded_number_of_queries(world, django_assert_max_num_queries):
    with django_assert_max_num_queries(8):
        response = APIClient().get(URL)
    assert response.json()["count"] == 2
    # Ten more, each decided by someone, read in as many queries as two.
    for number in range(10, 20):
        finding = FindingFactory(pull_request=world.pull_request, number=number, kind="cleanup")
        FollowUp.objects.create(repository=world.pull_request.repository, finding=finding,
                                pull_request=world.pull_request, origin="open_cleanup", state="closed",
                                reason="no", decided_at=timezone.now(), decided_by=UserFactory())
    with django_assert_max_num_queries(8):
        response = APIClient().get(URL)
    assert response.json()["count"] == 12
