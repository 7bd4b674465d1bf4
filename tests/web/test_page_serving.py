"""What serving a kept page costs, and what keeps it right while it costs little: one query for a
kept page, a 304 and the home page read anonymously; the state a page's build derived stored once
the page is sent; the pages read lately kept in the process in front of Redis, emptied with it;
an anonymous reader's visibility worked out once, and again when the repository changes."""
import io
import shutil
import sys

import pytest
from django.core.cache import cache
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client, RequestFactory

from findings.models import PullRequestState
from recheck.cache import _Near
from reviews.models import PullRequest, Repository
from reviews.services import pull_request_changed
from tests.factories import reviewed_pull_request
from tests.findings.test_redis_restart import OwnRedis

pytestmark = pytest.mark.django_db
PAGES = ["", "blockers/", "cleanups/"]


@pytest.fixture
def data():
    return reviewed_pull_request(blockers=3, cleanups=1)


@pytest.mark.parametrize("page", PAGES)
def test_a_kept_page_and_its_304_read_one_query_for_an_anonymous_reader(data, page, django_assert_num_queries):
    url = data.pull_request.get_absolute_url() + page
    first = Client().get(url)
    with django_assert_num_queries(1):  # the key: the PR's generation, its repository, a run, a failed call
        assert Client().get(url).content == first.content
    with django_assert_num_queries(1):
        assert Client().get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304


@pytest.mark.parametrize("url", ["/", "/?q=loader"])
def test_the_home_page_and_a_search_kept_read_one_query_for_an_anonymous_reader(data, url, django_assert_num_queries):
    first = Client().get(url)
    with django_assert_num_queries(1):  # every PR's version with every repository
        assert Client().get(url).content == first.content
    # A repository renamed moves it, though no pull request's generation moved.
    repository = data.pull_request.repository
    Repository.objects.filter(pk=repository.pk).update(slug="acme/renamed")
    assert "acme/renamed" in Client().get("/").content.decode()


def _served_without_closing(url: str):
    """The site as a WSGI server runs it: the answer's bytes, then (returned) its close. The
    test's database connection is left open, as the test client leaves it."""
    request_started.disconnect(close_old_connections)
    try:
        environ = {**RequestFactory().get(url).environ, "wsgi.input": io.BytesIO(), "wsgi.errors": sys.stderr}
        answer = WSGIHandler()(environ, lambda status, headers, exc_info=None: None)
        return b"".join(answer), answer
    finally:
        request_started.connect(close_old_connections)


def test_the_state_a_page_derived_is_stored_once_the_page_is_sent(data):
    pull_request = data.pull_request
    pull_request_changed(pull_request_id=pull_request.pk)
    generation = PullRequest.objects.values_list("generation", flat=True).get(pk=pull_request.pk)
    request_finished.disconnect(close_old_connections)
    try:
        body, answer = _served_without_closing(pull_request.get_absolute_url())
        assert b"What" in body
        assert not PullRequestState.objects.filter(pull_request=pull_request, generation=generation).exists()
        answer.close()  # what the server does once the bytes are written
    finally:
        request_finished.connect(close_old_connections)
    assert PullRequestState.objects.filter(pull_request=pull_request, generation=generation).exists()
    # The page kept is the one the next reader gets, built from the same state.
    assert Client().get(pull_request.get_absolute_url()).content == body


def test_an_anonymous_readers_visibility_follows_the_repository_made_private_and_public_again(data):
    url = data.pull_request.get_absolute_url()
    assert Client().get(url).status_code == 200
    Repository.objects.filter(pk=data.pull_request.repository.pk).update(visibility="private")
    assert Client().get(url).status_code == 404
    Repository.objects.filter(pk=data.pull_request.repository.pk).update(visibility="public")
    assert Client().get(url).status_code == 200


def test_the_near_memory_keeps_the_latest_read_within_its_bound():
    near = _Near(1000)
    for index in range(10):
        near.set(f"page {index}", str(index) * 100)
    assert near.size == 1000
    assert near.get("page 0") == "0" * 100  # read last: kept over page 1
    near.set("page 10", "a" * 100)
    assert near.get("page 1") is None and near.get("page 0") == "0" * 100 and near.size == 1000
    near.set("page 0", "b" * 50)  # a key written again (never done for a page) holds its new bytes
    assert near.get("page 0") == "b" * 50 and near.size == 950
    near.set("huge", "h" * 126)  # more than an eighth of the bound: never kept near
    assert near.get("huge") is None
    near.forget("page 0")
    assert near.get("page 0") is None and near.size == 900
    near.forget()
    assert (near.get("page 2"), near.size) == (None, 0)


@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_page_read_lately_is_served_from_the_process_and_cleared_with_the_cache(data, settings):
    server = OwnRedis()
    server.start()
    try:
        settings.CACHES = {"default": {"BACKEND": "recheck.cache.ForgivingRedisCache",
                                       "LOCATION": f"redis://127.0.0.1:{server.port}/0"}}
        url = data.pull_request.get_absolute_url()
        first = Client().get(url)
        keys = [key for key in cache._cache.get_client().keys("*") if b"page:" in key]
        assert keys, "the page is kept in Redis"
        # Another process's flush (or an eviction): this process still has the page's bytes, which
        # never change under its key.
        cache._cache.get_client().flushdb()
        assert Client().get(url).content == first.content
        assert not [key for key in cache._cache.get_client().keys("*") if b"page:" in key]
        # cache.clear() empties the process's copies too: the next read builds the page again.
        cache.clear()
        again = Client().get(url)
        assert again.content == first.content
        assert [key for key in cache._cache.get_client().keys("*") if b"page:" in key]
        # A page kept near is served with Redis gone, as any page is served without the cache.
        server.stop()
        assert Client().get(url).content == first.content
    finally:
        server.stop()
        cache.clear()
