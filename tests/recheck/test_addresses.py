"""A NUL in an address is a 400 that says so, never a 500 (PostgreSQL refuses NUL in text). Found
by sending one in every kind of path and parameter: a repository's page and every page under a
slug (the path), the merge gate's `commit` and the audit log's `action` (parameters) were 500s.
A path is refused before anything reads it; a parameter where it is read, naming it (the
search's own answer, beside its box, is in `tests/findings/search/test_search.py`)."""
import pytest

from recheck.addresses import REFUSED
from tests import personas
from tests.factories import PinnedCommitFactory, PullRequestFactory

pytestmark = pytest.mark.django_db

API_PATHS = ["/api/repos/ac%00me/loader/pulls/7/gate", "/api/repos/acme/loader/commits/ab%00cdef1/reports/"]
SITE_PATHS = ["/acme/lo%00ader/", "/acme/lo%00ader/pull/7/", "/acme/loader/pull/7%00/"]


@pytest.fixture
def pull_request():
    pull_request = PullRequestFactory(repository__slug="acme/loader", number=7)
    PinnedCommitFactory(pull_request=pull_request)
    return pull_request


@pytest.mark.parametrize("url", API_PATHS)
def test_a_nul_in_an_api_path_is_a_json_400_that_says_why(client, pull_request, url, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get(url)
    assert response.status_code == 400
    assert response.json() == {"detail": f"Bad request: {REFUSED}."}


@pytest.mark.parametrize("url", SITE_PATHS)
def test_a_nul_in_a_page_s_path_is_a_400_page_under_the_site_s_policy(client, pull_request, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "Content-Security-Policy" in response
    assert response["X-Content-Type-Options"] == "nosniff"
    page = response.content.decode()
    assert '<h1 class="page-title">Bad request</h1>' in page and "NUL character (%00)" in page


def test_a_nul_in_the_gate_s_commit_is_the_400_any_malformed_commit_gets(client, pull_request):
    refused = client.get("/api/repos/acme/loader/pulls/7/gate", {"commit": "ab\x00cdef1"})
    malformed = client.get("/api/repos/acme/loader/pulls/7/gate", {"commit": "not-a-sha"})
    assert (refused.status_code, malformed.status_code) == (400, 400)
    assert "is not a commit SHA: give 7 to 40 hexadecimal digits" in refused.json()["detail"]


def test_a_nul_in_the_audit_log_s_action_filter_is_a_400_naming_the_filter(client):
    client.force_login(personas.superuser())
    response = client.get("/audit/", {"action": "finding.resolve\x00"})
    assert response.status_code == 400
    assert "the action filter: null characters are not allowed" in response.content.decode()
    assert client.get("/audit/", {"action": "finding.resolve"}).status_code == 200


def test_the_same_addresses_without_the_nul_are_served(client, pull_request):
    assert client.get("/acme/loader/").status_code == 200
    assert client.get("/acme/loader/pull/7/").status_code == 200
    assert client.get("/api/findings/?q=ab").status_code == 200
