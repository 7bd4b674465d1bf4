"""The pages across a repository's pull requests (the repository's, a file's, its follow-ups, its
needs-a-decision queue), a tag's and the needs-a-decision queue across repositories, and a PR's
review threads and code diff: kept by the version of what they read and the reader's visibility,
answered 304 while current and 200 again after a write, never served across visibility, and
rendered when the cache is down."""
import html

import pytest
from django.core.cache import cache
from django.test import Client

from findings.models import Finding, FollowUp, Tag, TagDescription
from forge.threads.models import ReviewThread
from reviews.models import PullRequest, Repository
from tests.factories import UserFactory, reviewed_pull_request, store_state
from tests.personas import member_of, site_client
from tests.web.test_code_browser import browsed_pull_request

pytestmark = pytest.mark.django_db

SLUG, NUMBER = "acme/rl", 4108
PAGES = {
    "repository": f"/{SLUG}/",
    "file": f"/{SLUG}/files/src/loader.py",
    "follow-ups": f"/{SLUG}/follow-ups/",
    "repository decisions": f"/{SLUG}/decisions/",
    "decisions": "/decisions/",
    "tag": "/tags/shared-tag/",
    "threads": f"/{SLUG}/pull/{NUMBER}/threads/",
}
# The pages of the one repository (a 404 to whoever may not read it).
REPOSITORY_PAGES = ("repository", "file", "follow-ups", "repository decisions", "threads")


@pytest.fixture
def data():
    data = reviewed_pull_request(blockers=3, cleanups=1, slug=SLUG, number=NUMBER)
    pull_request = data.pull_request
    findings = {finding.number: finding for finding in Finding.objects.filter(pull_request=pull_request)}
    Finding.objects.filter(pk=findings[1].pk).update(path="src/loader.py")
    findings[1].tags.add(Tag.objects.create(slug="shared-tag"))
    FollowUp.objects.create(repository=pull_request.repository, pull_request=pull_request, finding=findings[4],
                            origin=FollowUp.Origin.OPEN_CLEANUP)
    ReviewThread.objects.create(pull_request=pull_request, root_comment_id=9001, path="src/loader.py",
                                original_line=3)
    store_state(pull_request)
    return data


def test_each_page_is_kept_answered_304_and_200_again_after_a_write(client, data, django_assert_max_num_queries):
    for name, url in PAGES.items():
        first = client.get(url)
        assert first.status_code == 200 and first.has_header("ETag"), name
        # Read again and revalidated: its key only (what it reads at which version, what the reader
        # may read), never the page's rows.
        with django_assert_max_num_queries(3):
            assert client.get(url).content == first.content, name
        with django_assert_max_num_queries(3):
            not_modified = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
        assert not_modified.status_code == 304 and not not_modified.content, name
    etags = {name: client.get(url)["ETag"] for name, url in PAGES.items()}
    finding = Finding.objects.get(pull_request=data.pull_request, number=1)
    finding.title = "A title written since"
    finding.save()
    for name, url in PAGES.items():
        changed = client.get(url, HTTP_IF_NONE_MATCH=etags[name])
        assert changed.status_code == 200 and changed["ETag"] != etags[name], name


def test_a_follow_ups_write_moves_its_repositorys_pages(client, data):
    etag = client.get(PAGES["follow-ups"])["ETag"]
    follow_up = FollowUp.objects.get()
    follow_up.state = FollowUp.State.VERIFIED_FIXED  # as a check on the default branch says
    follow_up.save()
    changed = client.get(PAGES["follow-ups"], HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and "Waiting for a maintainer" in changed.content.decode()
    # A bulk write, which sends no signal, moves them too.
    etag = changed["ETag"]
    FollowUp.objects.filter(pk=follow_up.pk).update(decided_by=UserFactory(username="decider"), reason="Not ours")
    assert "decider: Not ours" in client.get(PAGES["follow-ups"], HTTP_IF_NONE_MATCH=etag).content.decode()


def test_a_threads_write_moves_its_inbox(client, data):
    etag = client.get(PAGES["threads"])["ETag"]
    # As the sync and the replies write: a bulk update, no signal.
    ReviewThread.objects.filter(root_comment_id=9001).update(resolved=True)
    changed = client.get(PAGES["threads"], HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and "Resolved on" in changed.content.decode()
    etag = changed["ETag"]
    thread = ReviewThread.objects.get(root_comment_id=9001)
    thread.comments.create(github_id=77, author_login="octocat", body="A comment that came since")
    assert "A comment that came since" in client.get(PAGES["threads"], HTTP_IF_NONE_MATCH=etag).content.decode()


def test_a_tag_description_moves_the_tags_page(client, data):
    etag = client.get(PAGES["tag"])["ETag"]
    tag = Tag.objects.get(slug="shared-tag")
    other = Repository.objects.create(slug="acme/elsewhere", clone_url="https://example.com/acme/elsewhere.git")
    TagDescription.objects.create(tag=tag, repository=other, description="Said where it is not carried")
    changed = client.get(PAGES["tag"], HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and "Said where it is not carried" in changed.content.decode()


def test_the_repository_page_lists_its_oldest_open_blockers_and_counts_them_all(client, data, monkeypatch):
    from web.views import repository_pages

    monkeypatch.setattr(repository_pages, "REPOSITORY_BLOCKERS_SHOWN", 2)
    page = client.get(PAGES["repository"]).content.decode()
    assert "The oldest 2 of 3 open blockers" in html.unescape(page)


def test_a_reader_never_gets_a_maintainers_buttons_from_the_cache(data, reader_user, maintainer_user):
    buttons = {"follow-ups": "Mark fixed", "threads": "Sync threads"}
    for name, button in buttons.items():
        cache.clear()
        assert button in site_client(maintainer_user).get(PAGES[name]).content.decode(), name
        assert button not in site_client(reader_user).get(PAGES[name]).content.decode(), name
        # And the reader's page kept first: the maintainer's still has its buttons.
        cache.clear()
        assert button not in site_client(reader_user).get(PAGES[name]).content.decode(), name
        assert button in site_client(maintainer_user).get(PAGES[name]).content.decode(), name


def test_a_reader_never_gets_a_maintainers_decisions_queue(data, reader_user, maintainer_user):
    from findings.models import Verification

    Verification.objects.filter(finding__pull_request=data.pull_request).update(verdict="likely_fixed")
    store_state(data.pull_request)
    for url in (PAGES["decisions"], PAGES["repository decisions"]):
        maintainers = site_client(maintainer_user).get(url).content.decode()
        assert "Decide about finding" in maintainers, url
        assert "Decide about finding" not in site_client(reader_user).get(url).content.decode(), url


def test_a_private_repositorys_pages_are_never_served_to_an_outsider(data):
    repository = data.pull_request.repository
    Repository.objects.filter(pk=repository.pk).update(visibility="private")
    PullRequest.objects.filter(pk=data.pull_request.pk).update(generation=10_000)
    member = member_of(repository, UserFactory(username="member"), "reader")
    outsider = site_client(UserFactory(username="outsider"))
    title = Finding.objects.get(pull_request=data.pull_request, number=1).title
    for name, url in PAGES.items():
        kept = site_client(member).get(url)
        assert kept.status_code == 200 and kept.has_header("ETag"), name
        for stranger in (outsider, Client()):
            if name in REPOSITORY_PAGES:
                assert stranger.get(url).status_code == 404, name
                assert stranger.get(url, HTTP_IF_NONE_MATCH=kept["ETag"]).status_code == 404, name
            else:  # across repositories: served, without what the stranger may not read
                response = stranger.get(url, HTTP_IF_NONE_MATCH=kept["ETag"])
                assert response.status_code in (200, 404) and title not in response.content.decode(), name


def test_with_the_cache_down_each_page_is_rendered_and_served(client, data, settings, caplog):
    settings.CACHES = {"default": {"BACKEND": "recheck.cache.ForgivingRedisCache",
                                   "LOCATION": "redis://127.0.0.1:9/0"}}
    for name, url in PAGES.items():
        assert client.get(url).status_code == 200, name
    assert "cache unavailable" in caplog.text


@pytest.fixture
def browsed(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    return browsed_pull_request(tmp_path)


def diff_url(browsed) -> str:
    return f"{browsed.pull_request.get_absolute_url()}diff/?from={browsed.base}&to={browsed.reviewed}"


def test_the_code_diff_is_kept_answered_304_and_200_again_after_a_write(client, browsed,
                                                                          django_assert_max_num_queries):
    first = client.get(diff_url(browsed))
    assert first.status_code == 200 and first.has_header("ETag")
    with django_assert_max_num_queries(1):
        assert client.get(diff_url(browsed), HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    Finding.objects.create(pull_request=browsed.pull_request, number=5, kind="blocker", title="Placed since",
                           path="src/app.py", line=7)
    changed = client.get(diff_url(browsed), HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]
    # Asked as the default pins (no parameters) it is kept too; any other parameter is not.
    assert client.get(f"{browsed.pull_request.get_absolute_url()}diff/").has_header("ETag")
    assert not client.get(diff_url(browsed) + "&utm=1").has_header("ETag")


def test_a_private_code_diff_is_never_served_to_an_outsider(browsed, settings):
    settings.RECHECK_PUBLIC_READ = True
    repository = browsed.pull_request.repository
    Repository.objects.filter(pk=repository.pk).update(visibility="private")
    PullRequest.objects.filter(pk=browsed.pull_request.pk).update(generation=10_000)
    member = member_of(repository, UserFactory(username="member"), "reader")
    kept = site_client(member).get(diff_url(browsed))
    assert kept.status_code == 200 and kept.has_header("ETag")
    for stranger in (site_client(UserFactory(username="outsider")), Client()):
        assert stranger.get(diff_url(browsed), HTTP_IF_NONE_MATCH=kept["ETag"]).status_code == 404


def test_with_the_cache_down_the_code_diff_is_rendered(client, browsed, settings):
    settings.CACHES = {"default": {"BACKEND": "recheck.cache.ForgivingRedisCache",
                                   "LOCATION": "redis://127.0.0.1:9/0"}}
    response = client.get(diff_url(browsed))
    assert response.status_code == 200 and "files changed" in response.content.decode()


def test_a_long_inbox_asks_for_the_findings_number_and_attaches_by_it(data, maintainer_user, monkeypatch):
    from web.views import threads

    client = site_client(maintainer_user)
    assert '<select name="attach">' in client.get(PAGES["threads"]).content.decode()
    monkeypatch.setattr(threads, "ATTACH_CHOICES", 2)  # fewer than the PR's four findings
    cache.clear()
    page = client.get(PAGES["threads"]).content.decode()
    assert '<select name="attach">' not in page and '<input type="number" name="attach"' in page
    response = client.post(f"/{SLUG}/pull/{NUMBER}/threads/9001/triage/", {"outcome": "attach", "attach": "3"})
    assert response.status_code == 302
    assert ReviewThread.objects.get(root_comment_id=9001).finding.number == 3
    assert "Finding <a" in client.get(PAGES["threads"]).content.decode()
