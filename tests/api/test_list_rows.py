"""The findings list read as values (`findings.selectors.list_rows`) says what the serializer's
fields say of each finding with its state read whole, for every way a page is reached; its state
comes from the stored state's list rows (`findings.state.listed`), which are the state's own
entries, and from the state itself where they are missing."""
import pytest
from django.core.cache import cache
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIRequestFactory

from api.serializers.findings import FindingSerializer
from findings.models import Finding, FindingListState, PullRequestGate, PullRequestState
from findings.state.listed import listed_rows
from findings.state.stored import pull_request_state
from tests.factories import FindingFactory, PullRequestFactory, UserFactory, store_state

pytestmark = pytest.mark.django_db

LIST = "/api/findings/"


def generic_rows(results: list[dict]) -> list[dict]:
    """What the serializer's fields make of the same findings, each with its state read whole."""
    request = APIRequestFactory().get(LIST)
    rows = []
    for row in results:
        finding = Finding.objects.select_related("pull_request__repository", "resolved_by", "resolved_commit").get(
            pk=row["id"]
        )
        rows.append(dict(serializers.ModelSerializer.to_representation(
            FindingSerializer(context={"request": request}), finding
        )))
    return rows


URLS = [
    LIST, LIST + "?page_size=2", LIST + "?page_size=2&page=2", LIST + "?kind=blocker", LIST + "?ordering=-number",
    LIST + "?cursor=&page_size=2", LIST + "?repository=acme/loader&pull_request_number=4108",
    LIST + "?status=open&caught_by=none", LIST + "?pull_request_number=4108&kind=blocker&page=1",
    LIST + "?pull_request={pk}&status=open", LIST + "?repository=acme/loader&status=open&kind=blocker",
]


@pytest.mark.parametrize("stored", [True, False], ids=["state stored", "state not stored yet"])
def test_every_page_says_what_the_fields_and_the_whole_state_say(anonymous_reader, review, stored):
    FindingFactory(pull_request=PullRequestFactory(), number=1)  # another pull request, no verification
    if stored:
        store_state(review.pull_request)
    superuser = UserFactory(username="root", is_superuser=True, is_staff=True)
    signed_in = anonymous_reader.__class__()
    signed_in.force_authenticate(superuser)
    verdicts = set()
    for client in (anonymous_reader, signed_in):
        for url in URLS:
            cache.clear()
            response = client.get(url.format(pk=review.pull_request.pk))
            assert response.status_code == 200, (url, response.content)
            results = response.json()["results"]
            assert results, url
            assert results == generic_rows(results), url
            verdicts |= {(row["verdict"], row["resolution"], row["possibly_regressed"]) for row in results}
    # The review's findings give each part of the state something to say.
    assert {verdict for verdict, _, _ in verdicts} >= {None, "present", "likely_fixed"}
    assert {resolution for _, resolution, _ in verdicts} >= {"open", "dismissed"}


def test_the_browsable_api_lists_the_same_findings(staff_session, review):
    store_state(review.pull_request)
    page = staff_session.get(LIST, HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and b"Tolerance lowered to 10" in page.content


def test_a_stored_state_s_list_rows_are_its_findings_entries(review):
    store_state(review.pull_request)
    state = pull_request_state(pull_request_id=review.pull_request.pk)
    stored = PullRequestState.objects.get(pull_request=review.pull_request, generation=state["generation"])

    def values(rows):
        return sorted((row.finding_id, row.shape, row.verdict, row.resolution, row.possibly_regressed) for row in rows)

    written = values(FindingListState.objects.filter(state=stored))
    assert written == values(listed_rows(stored.pk, state["findings"]))
    assert len(written) == 5
    # A new generation's state replaces the old one, its list rows with it.
    FindingFactory(pull_request=review.pull_request, number=6)
    store_state(review.pull_request)
    assert PullRequestState.objects.filter(pull_request=review.pull_request).count() == 1
    assert not FindingListState.objects.filter(state=stored).exists()
    assert FindingListState.objects.filter(state__pull_request=review.pull_request).count() == 6


def test_without_list_rows_a_page_reads_the_state_itself(anonymous_reader, review):
    store_state(review.pull_request)
    expected = anonymous_reader.get(LIST).json()
    FindingListState.objects.all().delete()  # as a state stored before the rows were
    cache.clear()
    assert anonymous_reader.get(LIST).json() == expected
    # Rows of another shape are not read.
    PullRequestState.objects.all().delete()
    PullRequestGate.objects.all().delete()
    store_state(review.pull_request)
    assert FindingListState.objects.update(shape=0, verdict="error") == 5
    cache.clear()
    assert anonymous_reader.get(LIST).json() == expected


def test_a_page_is_the_bytes_drf_s_renderer_writes(anonymous_reader, review):
    odd = 'Quotes " and \\ back\nslash, \t tab, \x01 control, é, 🦀, \u2028 and \u2029 line separators'
    FindingFactory(pull_request=review.pull_request, number=6, title=odd, summary=odd, path="src/é/\"x\".py", line=None)
    store_state(review.pull_request)
    for url in (LIST, LIST + "?cursor=", LIST + "?kind=blocker&page_size=3"):
        cache.clear()
        response = anonymous_reader.get(url)
        body = response.json()
        assert odd in [row["title"] for row in body["results"]] or "kind" in url, url
        # Written out, byte for byte what DRF's renderer makes of the same data.
        assert response.content == JSONRenderer().render(body), url
        assert b"\\u2028" in response.content or "kind" in url
        # Asked indented, the page is rendered by DRF from the rows as values: the same data.
        cache.clear()
        indented = anonymous_reader.get(url, HTTP_ACCEPT="application/json; indent=4")
        assert indented.content.startswith(b"{\n    ") and indented.json() == body, url
