"""A PR page at 2,000 findings weighs no more than three times the same page at 10, in the same
number of queries: pages build only their own findings, a page of the list at a time."""
import pytest

from presentation.paging import FINDINGS_PER_PAGE
from tests.factories import large_reviewed_pull_request

pytestmark = pytest.mark.django_db

PAGES = {"overview": "", "blockers": "blockers/", "cleanups": "cleanups/"}


def page(client, pull_request, name, django_assert_max_num_queries, **query):
    with django_assert_max_num_queries(12):
        response = client.get(pull_request.get_absolute_url() + PAGES[name], query)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    ("name", "kind"),
    [("overview", ""), ("blockers", ""), ("blockers", "blocker"), ("cleanups", "cleanup")],
)
def test_a_page_of_two_thousand_findings_weighs_at_most_three_times_the_page_of_ten(
    client, django_assert_max_num_queries, name, kind
):
    small = large_reviewed_pull_request(findings=10, slug="acme/small", kind=kind)
    large = large_reviewed_pull_request(findings=2000, slug="acme/large", kind=kind)
    small_html = page(client, small, name, django_assert_max_num_queries)
    large_html = page(client, large, name, django_assert_max_num_queries)
    if name != "overview":
        assert small_html.count('class="finding finding-') == (10 if kind else {"blockers": 8, "cleanups": 2}[name])
    ratio = len(large_html.encode()) / len(small_html.encode())
    assert ratio <= 3, ratio


def test_the_blockers_page_shows_one_page_of_its_list_and_links_the_next(client, django_assert_max_num_queries):
    pull_request = large_reviewed_pull_request(findings=2000)
    first = page(client, pull_request, "blockers", django_assert_max_num_queries)
    assert first.count('class="finding finding-') == FINDINGS_PER_PAGE
    assert 'href="?page=2" rel="next"' in first and "of 1500 · page 1 of 60" in first
    # Blockers caught by CI come first, as the page groups them.
    assert 'id="finding-3"' in first and 'id="finding-1"' not in first

    last = page(client, pull_request, "blockers", django_assert_max_num_queries, page=60)
    assert last.count('class="finding finding-') == FINDINGS_PER_PAGE and 'id="finding-1999"' in last
    assert "What blocks the merge <span class=\"count\" title=\"open\">1500</span>" in last


def test_the_cleanups_page_builds_no_blocker(client, django_assert_max_num_queries):
    pull_request = large_reviewed_pull_request(findings=2000)
    html = page(client, pull_request, "cleanups", django_assert_max_num_queries)
    assert html.count('class="finding finding-') == FINDINGS_PER_PAGE
    assert 'id="finding-4"' in html and 'id="finding-1"' not in html and "def load_1(" not in html


def test_the_overview_lists_the_first_findings_and_links_the_rest(client, django_assert_max_num_queries):
    pull_request = large_reviewed_pull_request(findings=2000)
    html = page(client, pull_request, "overview", django_assert_max_num_queries)
    assert "All 1500 blockers →" in html and "All 500 cleanups →" in html
    assert 'class="finding finding-' not in html and "highlight" not in html
    # A blocker listed at a glance links to the page of the list it is on.
    assert 'href="/acme/large/pull/1/blockers/?page=21#finding-1"' in html


def test_a_findings_own_page_links_back_to_the_page_of_the_list_it_is_on(client):
    pull_request = large_reviewed_pull_request(findings=2000)
    base = pull_request.get_absolute_url()
    for number, page_number, kind in [(3, 1, "blockers"), (1, 21, "blockers"), (1999, 60, "blockers"),
                                      (4, 1, "cleanups"), (2000, 20, "cleanups")]:
        html = client.get(f"{base}findings/{number}/").content.decode()
        query = f"?page={page_number}" if page_number > 1 else ""
        assert f'href="{base}{kind}/{query}#finding-{number}"' in html, number
        listed = client.get(f"{base}{kind}/", {"page": page_number}).content.decode()
        assert f'id="finding-{number}"' in listed
