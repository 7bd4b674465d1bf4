"""Deep reads page with a cursor: every row once, in order, with no count and no OFFSET."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from findings.models import Finding
from tests.factories import large_reviewed_pull_request

pytestmark = pytest.mark.django_db


def read_all(client, url, **query):
    pages, ids, sqls = 0, [], []
    next_url = url
    params = {"cursor": "", **query}
    while next_url:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(next_url, params)
        assert response.status_code == 200, response.content
        body = response.json()
        assert "count" not in body
        ids += [item["id"] for item in body["results"]]
        sqls += [query["sql"] for query in queries.captured_queries]
        next_url, params, pages = body["next"], None, pages + 1
    return ids, pages, sqls


def test_a_cursor_walks_every_finding_once_without_counting_or_offsets(anonymous_reader, django_assert_max_num_queries):
    large_reviewed_pull_request(findings=450)
    ids, pages, sqls = read_all(anonymous_reader, "/api/findings/", page_size=100)
    assert ids == list(Finding.objects.order_by("id").values_list("id", flat=True))
    assert pages == 5
    # The one count is of the pull requests, for the version pages are cached by; none of findings.
    finding_reads = [sql for sql in sqls if "findings_finding" in sql]
    assert finding_reads and not [sql for sql in finding_reads if "COUNT(" in sql.upper() or " OFFSET " in sql.upper()]


def test_a_cursor_follows_the_ordering_asked_for_and_the_filters(anonymous_reader):
    large_reviewed_pull_request(findings=120)
    ids, _, _ = read_all(anonymous_reader, "/api/findings/", kind="cleanup", ordering="-number", page_size=7)
    assert ids == list(Finding.objects.filter(kind="cleanup").order_by("-number").values_list("id", flat=True))


def test_a_cursor_page_reads_in_as_many_queries_as_the_first(anonymous_reader, django_assert_max_num_queries):
    large_reviewed_pull_request(findings=300)
    first = anonymous_reader.get("/api/findings/", {"cursor": "", "page_size": 50}).json()
    with django_assert_max_num_queries(4):
        deep = anonymous_reader.get(first["next"])
    assert deep.status_code == 200 and len(deep.json()["results"]) == 50


def test_page_numbers_still_count(anonymous_reader):
    large_reviewed_pull_request(findings=30)
    assert anonymous_reader.get("/api/findings/", {"page": 2, "page_size": 20}).json()["count"] == 30
