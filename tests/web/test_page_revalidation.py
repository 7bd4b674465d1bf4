"""A kept page's 304: its ETag moves with everything the page's bytes depend on (the generation,
the reader's visibility, the render version, the server's secret), a 304 is never answered for a
page the reader may not read, and a 304 carries its validators and caching fields, no policy."""
import pytest
from django.http import HttpResponse
from django.test import Client, RequestFactory

from access.models import Membership
from reviews.models import PullRequest, Repository
from tests.factories import UserFactory, reviewed_pull_request
from tests.personas import member_of, site_client
from web import pagecache

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return reviewed_pull_request(blockers=3, cleanups=1)


def url_of(data) -> str:
    return data.pull_request.get_absolute_url()


def revalidated(client, url: str, etag: str):
    """The answer to `etag`, and the ETag the page is served with now."""
    answer = client.get(url, HTTP_IF_NONE_MATCH=etag)
    return answer.status_code, answer["ETag"] if answer.has_header("ETag") else None


def test_the_etag_moves_with_the_generation(data):
    client, url = Client(), url_of(data)
    etag = client.get(url)["ETag"]
    assert revalidated(client, url, etag) == (304, etag)
    PullRequest.objects.get(pk=data.pull_request.pk).save()  # a write: the generation moves
    status, now = revalidated(client, url, etag)
    assert status == 200 and now != etag
    assert revalidated(client, url, now) == (304, now)


def test_the_etag_moves_with_the_readers_role_and_a_role_taken_away_is_a_404(data, settings):
    settings.RECHECK_PUBLIC_READ = False
    repository = data.pull_request.repository
    Repository.objects.filter(pk=repository.pk).update(visibility=Repository.Visibility.PRIVATE)
    user = member_of(repository, UserFactory(username="member"), "reader")
    client, url = site_client(user), url_of(data)
    client.get(url)  # the CSRF cookie the page sets is part of a signed-in reader's ETag
    as_reader = client.get(url)["ETag"]
    assert revalidated(client, url, as_reader) == (304, as_reader)
    member_of(repository, user, "maintainer")  # the buttons a page shows move with the role
    status, as_maintainer = revalidated(client, url, as_reader)
    assert status == 200 and as_maintainer != as_reader
    Membership.objects.filter(user=user).delete()
    assert client.get(url, HTTP_IF_NONE_MATCH=as_maintainer).status_code == 404
    assert client.get(url, HTTP_IF_NONE_MATCH=as_reader).status_code == 404


def test_the_etag_moves_with_the_render_version_and_the_secret(data, monkeypatch, settings):
    client, url = Client(), url_of(data)
    etag = client.get(url)["ETag"]
    monkeypatch.setattr(pagecache, "render_version", lambda: "another-version")
    status, drawn_anew = revalidated(client, url, etag)
    assert status == 200 and drawn_anew != etag
    settings.SECRET_KEY = "another-secret-" + "x" * 40
    status, signed_anew = revalidated(client, url, drawn_anew)
    assert status == 200 and signed_anew not in (etag, drawn_anew)
    assert revalidated(client, url, signed_anew) == (304, signed_anew)


@pytest.mark.parametrize("signed_in", [False, True])
def test_a_304_carries_its_validators_and_caching_fields_and_no_policy(data, signed_in):
    client = site_client(UserFactory(username="reader", groups=["Reader"]) if signed_in else None)
    client.get(url_of(data))  # the CSRF cookie the page sets is part of a signed-in reader's ETag
    page = client.get(url_of(data))
    assert page.has_header("Content-Security-Policy")
    not_modified = client.get(url_of(data), HTTP_IF_NONE_MATCH=page["ETag"])
    assert not_modified.status_code == 304 and not not_modified.content
    assert not_modified["ETag"] == page["ETag"]
    assert not_modified["Vary"] == page["Vary"] and "Cookie" in not_modified["Vary"]
    assert not_modified["Cache-Control"] == page["Cache-Control"]
    assert not_modified["Cache-Control"] == ("private, no-cache" if signed_in else "no-cache")
    # No body to govern: the browser keeps the policy its copy came with.
    assert not not_modified.has_header("Content-Security-Policy")


def test_the_headers_of_an_answer_that_has_its_own_are_patched(data):
    request = RequestFactory().get(url_of(data))
    request.user = UserFactory(username="reader", groups=["Reader"])
    response = HttpResponse()
    response["Vary"] = "Accept-Encoding"
    response["Cache-Control"] = "max-age=60"
    pagecache._headers(response, request, '"tag"')
    assert response["ETag"] == '"tag"' and response["Vary"] == "Accept-Encoding, Cookie"
    assert set(response["Cache-Control"].split(", ")) == {"max-age=60", "private", "no-cache"}
