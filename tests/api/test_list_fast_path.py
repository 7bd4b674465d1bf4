"""The findings list's fast path (`FindingList._unfiltered`: a page number of the list, unfiltered
or filtered by equalities alone, read with SQL written out) answers every request exactly as the
filter set (`FindingFilter`) and the ORM answer it: the same findings in the same order, the same
count, the same links, the same bytes, or the same refusal.

Each request is asked twice through the test client, the cache emptied before each: once as it
comes, and once with the fast path turned off, its `_unfiltered` answering None as it does for any
request it does not take, so the view reads the page through `filter_queryset` like every other
request. Beside each request stands whether the fast path takes it (for a caller who reads every
repository, or anonymously the public ones), so the comparison cannot pass by the fast path never
running; the `next` and `previous` pages of each answer are compared the same way."""
import json
from urllib.parse import urlsplit

import django_filters
import pytest
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.http import QueryDict
from django.utils import timezone
from rest_framework.test import APIClient

from api.filters import FindingFilter
from api.views.findings import FindingList
from findings.models import Finding
from findings.selectors.list_rows import ListIds
from reviews.models import Repository
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory, make_api_token, store_state

pytestmark = pytest.mark.django_db

LIST = "/api/findings/"

# (query, taken by the fast path). `{pr}` is acme/loader#4108's id, `{secret}` that of a pull
# request in a private repository.
QUERIES = [
    # Unfiltered, page numbers and sizes.
    ("", True),
    ("page_size=2", True),
    ("page_size=2&page=2", True),
    ("page_size=1&page=7", True),
    ("page_size=2&page=99", True),  # past the end: a 404
    ("page=0", True),
    ("page=abc", False),
    ("page=", False),
    ("page_size=200", True),
    ("page_size=500", True),
    ("page_size=0", True),
    ("page_size=abc", True),
    ("format=json", True),
    ("unknown=1", True),
    # Each equality alone.
    ("pull_request={pr}", True),
    ("pull_request={secret}", True),
    ("pull_request=9223372036854775807", True),
    ("kind=cleanup", True),
    ("status=fixed", True),
    ("status=dismissed", True),
    ("caught_by=ci", True),
    ("caught_by=none", True),
    ("repository=acme/loader", True),
    ("repository=acme/secret", True),
    ("repository=acme/nothing", True),
    ("pull_request_number=4108", True),
    ("pull_request_number=4109", True),
    # Combinations.
    ("repository=acme/loader&pull_request_number=4108", True),
    ("repository=acme/loader&pull_request_number=4108&kind=blocker&status=open", True),
    ("repository=acme/other&pull_request_number=4108&caught_by=ci", True),
    ("pull_request={pr}&status=open&page_size=2&page=2", True),
    ("status=open&kind=blocker&caught_by=none&page_size=3", True),
    ("pull_request_number=4108&kind=blocker&page=1", True),
    ("repository=acme/loader&kind=cleanup&unknown=1", True),
    # Values the filter does not take as typed: handed back to it (a 400, or what it makes of them).
    ("kind=Blocker", False),
    ("kind=unknown", False),
    ("kind=", False),
    ("status=", False),
    ("status=open&status=bogus", False),
    ("caught_by=null", False),
    ("repository=", False),
    ("repository=%20acme/loader", False),
    ("repository=acme/loader%00", False),
    ("pull_request=abc", False),
    ("pull_request=0", False),
    ("pull_request=-1", False),
    ("pull_request=%2B{pr}", False),
    ("pull_request={pr}.0", False),
    ("pull_request=1e3", False),
    ("pull_request=99999999999999999999", False),
    ("pull_request_number=%D9%A4%D9%A1%D9%A0%D9%A8", False),  # 4108 in Arabic-Indic digits
    ("pull_request_number=4108&kind=", False),
    # Repeated parameters (the filter set reads the last one): left to the filter set.
    ("kind=blocker&kind=cleanup", False),
    ("pull_request_number=4108&pull_request_number=4109", False),
    # Not equalities, or not a page number: the filter set's own.
    ("path=src/", False),
    ("tag=perf", False),
    ("q=Tolerance", False),
    ("ordering=-number", False),
    ("kind=blocker&ordering=number", False),
    ("cursor=&page_size=2", False),
    ("cursor=&kind=blocker&page_size=2", False),
]


@pytest.fixture
def listed(review):
    """The review (acme/loader#4108, its state stored) beside acme/loader#4109 (state not stored
    yet), a public acme/other#4108 and a private acme/secret#4108, so each filter, the public
    scope and the pages have something to tell apart."""
    loader = review.repository
    second = PullRequestFactory(repository=loader, number=4109)
    FindingFactory(pull_request=second, number=1, kind=Finding.Kind.CLEANUP, caught_by=Finding.CaughtBy.CI)
    FindingFactory(pull_request=second, number=2, status=Finding.Status.DISMISSED, resolved_at=timezone.now(),
                   resolution_note="Another PR.")
    FindingFactory(pull_request=second, number=3)
    other = PullRequestFactory(repository=RepositoryFactory(slug="acme/other"), number=4108)
    FindingFactory(pull_request=other, number=1, caught_by=Finding.CaughtBy.CI)
    FindingFactory(pull_request=other, number=2, kind=Finding.Kind.CLEANUP)
    secret = PullRequestFactory(
        repository=RepositoryFactory(slug="acme/secret", visibility=Repository.Visibility.PRIVATE), number=4108,
    )
    FindingFactory(pull_request=secret, number=1)
    FindingFactory(pull_request=secret, number=2, caught_by=Finding.CaughtBy.CI)
    store_state(review.pull_request)
    return {"pr": review.pull_request.pk, "secret": secret.pk, "loader": loader}


def _compare(client, url: str, monkeypatch) -> bool:
    """Whether the fast path took `url`, once its answer is the filter set's."""
    expected, _ = _answer(client, url, monkeypatch, fast=False)
    answer, took = _answer(client, url, monkeypatch, fast=True)
    assert answer == expected, url
    return took


def _clients(listed, superuser, reader_user) -> dict:
    """The callers, each with whether the fast path may take its requests."""
    signed_in, reader = APIClient(), APIClient()
    signed_in.force_authenticate(superuser)
    reader.force_authenticate(reader_user)
    limited = APIClient(HTTP_AUTHORIZATION=f"Token {make_api_token(reader_user, repositories=[listed['loader']])}")
    return {"anonymous": (APIClient(), True), "superuser": (signed_in, True), "reader": (reader, True),
            "token limited to acme/loader": (limited, False)}


def _answer(client, url: str, monkeypatch, *, fast: bool) -> tuple[tuple, bool]:
    """The answer to `url` (status, content type, body) and whether the fast path took it."""
    taken = []
    original = FindingList._unfiltered

    def unfiltered(view, request):
        listed = original(view, request) if fast else None
        taken.append(listed is not None)
        return listed

    cache.clear()
    with monkeypatch.context() as patched:
        patched.setattr(FindingList, "_unfiltered", unfiltered)
        response = client.get(url)
    return (response.status_code, response.get("Content-Type"), response.content), any(taken)


def _links(content: bytes) -> list[str]:
    try:
        body = json.loads(content)
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    return [urlsplit(body[name])._replace(scheme="", netloc="").geturl()
            for name in ("next", "previous") if body.get(name)]


@pytest.mark.parametrize("query, taken", QUERIES, ids=[query or "unfiltered" for query, _ in QUERIES])
def test_the_fast_path_answers_as_the_filter_set_does(
    listed, superuser, reader_user, monkeypatch, query, taken,
):
    url = f"{LIST}?{query.format(**listed)}" if query else LIST
    for persona, (client, may_take) in _clients(listed, superuser, reader_user).items():
        expected, _ = _answer(client, url, monkeypatch, fast=False)
        answer, took = _answer(client, url, monkeypatch, fast=True)
        assert answer == expected, (persona, url)
        assert took == (taken and may_take), (persona, url)
        # The pages its links lead to, a second page by number or by cursor among them.
        for link in _links(answer[2]):
            expected, _ = _answer(client, link, monkeypatch, fast=False)
            answer, _ = _answer(client, link, monkeypatch, fast=True)
            assert answer == expected, (persona, link)


def test_the_comparison_sees_findings_pages_and_refusals(listed, superuser, monkeypatch):
    """The requests above answer with findings, more than one page, nothing, and refusals alike,
    and the public scope hides the private repository's findings: the comparison is not of empty
    pages."""
    signed_in = APIClient()
    signed_in.force_authenticate(superuser)

    def body(client, query):
        (status, _, content), _ = _answer(client, f"{LIST}?{query.format(**listed)}", monkeypatch, fast=True)
        return status, content

    status, content = body(signed_in, "page_size=2")
    assert status == 200 and b'"count":12' in content and b'"next":' in content and b'"next":null' not in content
    status, content = body(APIClient(), "page_size=2")
    assert status == 200 and b'"count":10' in content
    assert body(APIClient(), "pull_request={secret}")[1].startswith(b'{"count":0,')
    assert body(signed_in, "pull_request={secret}")[1].startswith(b'{"count":2,')
    assert body(signed_in, "kind=unknown")[0] == 400
    assert body(signed_in, "page_size=2&page=99")[0] == 404


def test_a_filter_declared_an_equality_is_read_by_both_paths(listed, superuser, monkeypatch):
    """What the fast path takes, and the SQL it writes, come from the filter set's declaration:
    a filter added to it is read by both paths alike."""

    class WithMore(FindingFilter):
        file = django_filters.CharFilter(field_name="path")
        line = django_filters.NumberFilter(field_name="line")
        pull_request_title = django_filters.CharFilter(field_name="pull_request__title")
        status = django_filters.ChoiceFilter(choices=Finding.Status.choices, null_label="No status")
        equality_filters = (*FindingFilter.equality_filters, "file", "line", "pull_request_title")

    monkeypatch.setattr(FindingList, "filterset_class", WithMore)
    client = APIClient()
    client.force_authenticate(superuser)
    for query, taken in [
        ("file=src/check.py", True), ("file=src/check.py&kind=blocker&repository=acme/loader", True),
        ("line=42&status=open", True), ("pull_request_title=Load%20a%20second%20family", True),
        ("line=42.0", True), ("file=%20src/check.py", False), ("line=%2B42", False), ("line=x", False),
        ("file=src/check.py&path=src/", False),
        ("status=open&kind=blocker", True), ("status=null", False),  # "null" is the filter's "is null"
    ]:
        assert _compare(client, f"{LIST}?{query}", monkeypatch) == taken, query
    assert client.get(f"{LIST}?file=src/check.py").json()["count"] == 1


def test_only_plain_equalities_the_list_can_read_are_declared():
    for name in FindingFilter.equality_filters:
        ListIds(public_only=True, filters={FindingFilter.base_filters[name].field_name: "1"})

    class NotAnEquality(FindingFilter):
        equality_filters = ("path",)  # a prefix

    with pytest.raises(ImproperlyConfigured):
        NotAnEquality.equalities(QueryDict("path=src/"))

    class NotPlain(FindingFilter):
        equality_filters = ("possibly_regressed",)  # a method

    with pytest.raises(ImproperlyConfigured):
        NotPlain.equalities(QueryDict("possibly_regressed=true"))
    with pytest.raises(ValueError):
        ListIds(public_only=False, filters={"tags__slug": "perf"})
