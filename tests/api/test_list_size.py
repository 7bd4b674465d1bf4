"""The findings list does not grow with the database: a page counts its matches only up to a bound
past it (`count_exact` says when there are more), its query count is the same at 3 rows and at
20,000, and its cached pages are keyed by the generation of the pull requests it may show, so a
write to one pull request leaves another's pages cached."""
import pytest
from django.core.cache import cache
from django.utils import timezone

from api import pagination
from findings.models import Finding
from findings.services.resolution import finding_resolve
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory, UserFactory

pytestmark = pytest.mark.django_db

LIST = "/api/findings/"


def bulk_findings(pull_request, count: int, *, start: int = 1, numbers=None) -> None:
    now = timezone.now()
    Finding.objects.bulk_create(
        (
            Finding(pull_request=pull_request, number=number, kind="blocker" if number % 5 == 0 else "cleanup",
                    title=f"Finding {number}", status="open" if number % 10 == 0 else "fixed",
                    resolved_at=None if number % 10 == 0 else now)
            for number in (numbers if numbers is not None else range(start, start + count))
        ),
        batch_size=5000,
    )


# --- A bounded count ----------------------------------------------------------------------------


def test_a_page_counts_up_to_a_bound_past_it_and_says_when_there_are_more(anonymous_reader, monkeypatch):
    monkeypatch.setattr(pagination, "COUNT_BOUND", 10)
    bulk_findings(PullRequestFactory(), 25)

    first = anonymous_reader.get(LIST, {"page_size": 5}).json()
    assert (first["count"], first["count_exact"], len(first["results"])) == (10, False, 5)
    assert first["next"] and "page=2" in first["next"]
    # Page 2 ends at row 10: the count runs on to the next bound, 20.
    second = anonymous_reader.get(LIST, {"page_size": 5, "page": 2}).json()
    assert (second["count"], second["count_exact"]) == (20, False)
    last = anonymous_reader.get(LIST, {"page_size": 5, "page": 5}).json()
    assert (last["count"], last["count_exact"], len(last["results"]), last["next"]) == (25, True, 5, None)
    beyond = anonymous_reader.get(LIST, {"page_size": 5, "page": 6})
    assert beyond.status_code == 404 and "Page 6 does not exist" in beyond.json()["detail"]
    # Walking `next` from page 1 reaches every finding once.
    seen, url = [], LIST + "?page_size=5"
    while url:
        body = anonymous_reader.get(url).json()
        seen += [row["id"] for row in body["results"]]
        url = body["next"]
    assert sorted(seen) == sorted(Finding.objects.values_list("pk", flat=True))


def test_a_short_list_is_counted_exactly(anonymous_reader):
    bulk_findings(PullRequestFactory(), 3)
    body = anonymous_reader.get(LIST).json()
    assert (body["count"], body["count_exact"]) == (3, True)


# --- Queries that do not grow with the rows -----------------------------------------------------


def page_queries(client, url, django_assert_max_num_queries, limit: int) -> dict:
    cache.clear()  # afresh: the first read after a write
    with django_assert_max_num_queries(limit) as captured:
        response = client.get(url)
    assert response.status_code == 200, response.content
    return {"queries": len(captured.captured_queries), "body": response.json()}


LIST_QUERIES = [
    "?page_size=50", "?page_size=50&kind=blocker&status=open", "?page_size=50&pull_request={pr}",
    "?page_size=50&repository=acme/big&pull_request_number=1&status=open", "?cursor=&page_size=50",
]


def test_the_list_s_query_count_is_the_same_at_3_rows_and_at_20000(anonymous_reader, django_assert_max_num_queries):
    repository = RepositoryFactory(slug="acme/big")
    pull_request = PullRequestFactory(repository=repository, number=1)
    urls = [LIST + query.format(pr=pull_request.pk) for query in LIST_QUERIES]
    # Three open blockers, so every list has rows to show at either size.
    bulk_findings(pull_request, 3, numbers=[10, 20, 30])
    small = {url: page_queries(anonymous_reader, url, django_assert_max_num_queries, 4) for url in urls}

    bulk_findings(pull_request, 20_000 - 3, numbers=[number for number in range(1, 20_001) if number not in (10, 20, 30)])
    large = {url: page_queries(anonymous_reader, url, django_assert_max_num_queries, 4) for url in urls}

    for url in urls:
        assert small[url]["queries"] == large[url]["queries"], url
        assert len(large[url]["body"]["results"]) == 50, url
        if "count" in large[url]["body"]:  # page numbers: counted up to the bound, not to 20,000
            assert (large[url]["body"]["count"], large[url]["body"]["count_exact"]) == (pagination.COUNT_BOUND, False)
            assert small[url]["body"]["count_exact"] is True


# --- Caches keyed by the generation they read ---------------------------------------------------


@pytest.fixture
def two_pull_requests():
    repository = RepositoryFactory(slug="acme/loader")
    other_repository = RepositoryFactory(slug="acme/tools")
    first = PullRequestFactory(repository=repository, number=1)
    second = PullRequestFactory(repository=repository, number=2)
    third = PullRequestFactory(repository=other_repository, number=3)
    for pull_request in (first, second, third):
        for number in (1, 2):
            FindingFactory(pull_request=pull_request, number=number)
    return first, second, third


def test_a_write_to_one_pull_request_leaves_another_s_pages_cached(anonymous_reader, two_pull_requests,
                                                                  django_assert_max_num_queries):
    first, second, third = two_pull_requests
    maintainer = UserFactory(username="mona", groups=["Maintainer"])
    urls = {
        "second": f"{LIST}?pull_request={second.pk}",
        "second by number": f"{LIST}?repository=acme/loader&pull_request_number=2",
        "first": f"{LIST}?pull_request={first.pk}",
        "acme/tools": f"{LIST}?repository=acme/tools",
        "acme/loader": f"{LIST}?repository=acme/loader",
        "everything": LIST,
    }
    pages = {name: anonymous_reader.get(url).json() for name, url in urls.items()}  # cached now

    finding_resolve(finding=Finding.objects.get(pull_request=first, number=1), status="dismissed",
                    actor=maintainer, source="admin", note="Not ours.")

    # A list that cannot show the first pull request's findings is still served from the cache...
    for name in ("second", "second by number", "acme/tools"):
        with django_assert_max_num_queries(1):
            assert anonymous_reader.get(urls[name]).json() == pages[name], name
    # ...and one that can is built again, and shows the change.
    for name in ("first", "acme/loader", "everything"):
        fresh = anonymous_reader.get(urls[name]).json()
        assert fresh != pages[name], name
        assert "dismissed" in [row["status"] for row in fresh["results"]]
        cache.clear()
        assert anonymous_reader.get(urls[name]).json() == fresh, name


def test_a_pull_request_made_or_deleted_later_is_not_hidden_by_a_cached_page(anonymous_reader, two_pull_requests):
    first, second, third = two_pull_requests
    url = f"{LIST}?repository=acme/loader&pull_request_number=9"
    assert anonymous_reader.get(url).json()["count"] == 0
    later = PullRequestFactory(repository=first.repository, number=9)
    FindingFactory(pull_request=later, number=1)
    assert anonymous_reader.get(url).json()["count"] == 1
    by_id = f"{LIST}?pull_request={later.pk}"
    assert anonymous_reader.get(by_id).json()["count"] == 1
    later.delete()
    assert anonymous_reader.get(url).json()["count"] == 0
    assert anonymous_reader.get(by_id).json()["count"] == 0
