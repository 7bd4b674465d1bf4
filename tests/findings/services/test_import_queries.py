"""An import's queries are counted per bundle, not per finding: a fresh import of 200 findings, and
a re-import of them that changes nothing, take no more queries than the same of 10, but for the
statements a database splits one bulk insert into (SQLite takes 999 values a statement, so about
40 findings; PostgreSQL takes the thousand rows the import asks for)."""
import math

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from findings.models import Evidence, Finding, FindingEvent
from findings.services.review_import import review_import
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

# Whatever a bundle of 10 findings takes, one of 200 may take this many more (a query a finding
# would be 190 more), beside the inserts below.
MORE_AT_MOST = 2


def insert_statements(model, rows: int) -> int:
    """How many INSERT statements the database splits a bulk insert of `rows` rows into."""
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    per_statement = min(1000, connection.ops.bulk_batch_size(fields, [None] * rows) or rows)
    return math.ceil(rows / per_statement)


def more_inserts(findings: int, items: int) -> int:
    """The INSERT statements a fresh import of `findings` findings with `items` evidence items
    each takes beyond the one a table that a bundle of 10 findings takes."""
    return sum(insert_statements(model, rows) - 1 for model, rows in (
        (Finding, findings), (Evidence, findings * items), (FindingEvent, findings),
    ))


def bundle(pull_request: int, count: int) -> dict:
    return {
        "repository": {"slug": "acme/large", "clone_url": "https://github.com/acme/large.git"},
        "pull_request": {"number": pull_request, "title": "A large review"},
        "commits": [{"sha": "d044f40", "role": "reviewed"}],
        "findings": [
            {"number": n, "kind": "blocker", "title": f"Finding {n}", "summary": "One of many.",
             "location": {"path": f"src/module_{n % 7}.py", "line": n},
             "evidence": [
                 {"kind": "snippet", "path": f"src/module_{n % 7}.py", "start_line": 3, "end_line": 4,
                  "text": "x = 1\ny = 2\n"},
                 {"kind": "pattern", "path": "src/*.py", "regex": "drop\\(", "expect": "present", "commit": "5ed97996"},
                 {"kind": "note", "text": "Seen twice."},
             ]}
            for n in range(1, count + 1)
        ],
    }


@pytest.fixture
def actor():
    user = UserFactory(username="importer", is_staff=True, is_superuser=True)
    review_import(data=bundle(1, 0), actor=user)  # the repository and its commit, in place for both
    return user


def queries_of(data, actor) -> int:
    with CaptureQueriesContext(connection) as queries:
        review_import(data=data, actor=actor)
    return len(queries)


def test_a_fresh_import_of_200_findings_takes_no_more_queries_than_one_of_10(actor, django_assert_max_num_queries):
    small = queries_of(bundle(2, 10), actor)
    with django_assert_max_num_queries(small + MORE_AT_MOST + more_inserts(200, 3)):
        report = review_import(data=bundle(3, 200), actor=actor)
    assert len(report.created) == 200 + 2  # the findings, the PR and its pin
    assert Finding.objects.filter(pull_request__number=3).count() == 200
    assert Evidence.objects.filter(finding__pull_request__number=3).count() == 600
    assert FindingEvent.objects.filter(finding__pull_request__number=3, kind=FindingEvent.Kind.CREATED).count() == 200


def test_a_re_import_that_changes_nothing_takes_no_more_queries_for_200_findings_than_for_10(
    actor, django_assert_max_num_queries
):
    review_import(data=bundle(2, 10), actor=actor)
    review_import(data=bundle(3, 200), actor=actor)
    small = queries_of(bundle(2, 10), actor)
    with django_assert_max_num_queries(small + MORE_AT_MOST):
        report = review_import(data=bundle(3, 200), actor=actor)
    assert report.created == [] and report.updated == [] and report.changes == {}
    assert FindingEvent.objects.filter(finding__pull_request__number=3).count() == 200


def test_the_bound_is_small_in_itself(actor):
    """10 findings in about 30 queries (a query a finding more would be 40), and as many again
    with nothing to change (the savepoints counted): the bounds above are not loose."""
    fresh, again = queries_of(bundle(2, 10), actor), queries_of(bundle(2, 10), actor)
    assert fresh <= 32 and again <= 24
    assert more_inserts(10, 3) == 0
