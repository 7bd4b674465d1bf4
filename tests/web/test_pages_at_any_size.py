"""A pull request's pages read in as many queries at 10,000 findings as at 9, built and kept, and
its overview stays under a fixed size: counts come from the stored state, lists in bounded
sections, and the verification picture reads only the findings it names."""
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import large_reviewed_pull_request

pytestmark = pytest.mark.django_db

PAGES = {"overview": "", "blockers": "blockers/", "cleanups": "cleanups/", "finding": "findings/1/"}
OVERVIEW_MAX_BYTES = 100_000


def queries(client, url: str) -> tuple[int, int, int]:
    """Queries of a page built (its PR's state already stored) and of the same page kept; its size."""
    client.get(url)  # the first read after the import stores the state
    cache.clear()
    with CaptureQueriesContext(connection) as built:
        response = client.get(url)
    assert response.status_code == 200
    with CaptureQueriesContext(connection) as kept:
        assert client.get(url).content == response.content
    return len(built), len(kept), len(response.content)


def test_each_page_reads_as_much_at_ten_thousand_findings_as_at_nine(client):
    small = large_reviewed_pull_request(findings=9, slug="acme/small")
    large = large_reviewed_pull_request(findings=10_000, slug="acme/large")
    for name, page in PAGES.items():
        small_built, small_kept, small_size = queries(client, small.get_absolute_url() + page)
        large_built, large_kept, large_size = queries(client, large.get_absolute_url() + page)
        assert (large_built, large_kept) == (small_built, small_kept), name
        assert small_kept <= 3, name  # the PR (or finding), a run under way, what else it shows
        if name == "overview":
            assert large_size <= OVERVIEW_MAX_BYTES, large_size
