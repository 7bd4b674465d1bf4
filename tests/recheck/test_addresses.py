"""A NUL in an address is a 400 that says so, before anything reads the address: found by sending
one in every kind of path and parameter, where the merge gate's `commit` and a repository's page
were 500s (PostgreSQL refuses NUL in text)."""
import pytest

from recheck.addresses import REFUSED
from tests.factories import PullRequestFactory

pytestmark = pytest.mark.django_db

API = ["/api/repos/acme/loader/pulls/7/gate?commit=ab%00cdef1", "/api/repos/ac%00me/loader/pulls/7/gate",
       "/api/findings/?q=a%00b", "/api/repos/acme/loader/commits/ab%00cdef1/reports/"]
SITE = ["/acme/lo%00ader/", "/acme/loader/pulls/7/?x=%00", "/?q=a%00b"]


@pytest.fixture
def pull_request():
    return PullRequestFactory(repository__slug="acme/loader", number=7)


@pytest.mark.parametrize("url", API)
def test_a_nul_in_an_api_address_is_a_json_400_that_says_why(client, pull_request, url, django_assert_num_queries):
    with django_assert_num_queries(0):
        response = client.get(url)
    assert response.status_code == 400
    assert response.json() == {"detail": f"Bad request: {REFUSED}."}


@pytest.mark.parametrize("url", SITE)
def test_a_nul_in_a_page_s_address_is_a_400_page_under_the_site_s_policy(client, pull_request, url):
    response = client.get(url)
    assert response.status_code == 400
    assert "Content-Security-Policy" in response
    assert response["X-Content-Type-Options"] == "nosniff"
    page = response.content.decode()
    assert "<h1 class=\"page-title\">Bad request</h1>" in page and "NUL character (%00)" in page


def test_the_same_addresses_without_the_nul_are_served(client, pull_request):
    assert client.get("/acme/loader/").status_code == 200
    assert client.get("/api/findings/?q=ab").status_code == 200
