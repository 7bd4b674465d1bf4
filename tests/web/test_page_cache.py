"""Pages built once per generation: kept under a key of what they read and who reads them,
revalidated with ETags, never served across visibility, never stale, and never a 500 when the
cache is down."""
import re

import pytest
from django.core.cache import cache
from django.test import Client

from findings.models import Finding
from reviews.models import PullRequest, Repository
from tests.factories import UserFactory, reviewed_pull_request
from tests.personas import member_of, site_client
from web import pagecache
from web.views import pages as page_views

pytestmark = pytest.mark.django_db

PAGES = ["", "blockers/", "cleanups/"]
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


@pytest.fixture
def data():
    return reviewed_pull_request(blockers=3, cleanups=1)


def url_of(data, page: str = "") -> str:
    return data.pull_request.get_absolute_url() + page


def without_tokens(html: str) -> str:
    return CSRF.sub('name="csrfmiddlewaretoken" value=""', html)


def fresh(client, url: str, monkeypatch) -> str:
    """The page as it is rendered for one request, with nothing kept: the user in the templates,
    the navigation and the token rendered in place."""
    with monkeypatch.context() as patch:
        patch.setattr(page_views, "page_served", lambda request, key, build: pagecache.page_rendered(request, build))
        return client.get(url).content.decode()


@pytest.mark.parametrize("page", PAGES)
def test_a_page_read_again_is_the_kept_page_in_fewer_queries(client, data, page, django_assert_max_num_queries):
    first = client.get(url_of(data, page))
    assert first.status_code == 200 and first["ETag"]
    # The PR with its repository, a run under way, failed forge calls: the key, in one query;
    # nothing of the page.
    with django_assert_max_num_queries(1):
        again = client.get(url_of(data, page))
    assert again.content == first.content and again["ETag"] == first["ETag"]


@pytest.mark.parametrize("page", PAGES)
def test_a_kept_page_is_what_a_fresh_render_makes_for_each_persona(data, page, reader_user, maintainer_user,
                                                                   superuser, monkeypatch):
    for client in (Client(), site_client(UserFactory(username="nobody")), site_client(reader_user),
                   site_client(maintainer_user), site_client(superuser)):
        client.get(url_of(data, page))
        kept = client.get(url_of(data, page)).content.decode()  # from the cache
        assert without_tokens(kept) == without_tokens(fresh(client, url_of(data, page), monkeypatch))


def test_a_reader_never_gets_a_maintainers_buttons_from_the_cache(data, reader_user, maintainer_user):
    url = url_of(data, "blockers/")
    maintainers = site_client(maintainer_user).get(url).content.decode()
    assert "Mark fixed" in maintainers and "New finding" in maintainers and "Verify now" not in maintainers
    readers = site_client(reader_user).get(url).content.decode()
    assert "Mark fixed" not in readers and "New finding" not in readers
    # And the other way round: the reader's page kept first, the maintainer's still has its buttons.
    cache.clear()
    assert "Mark fixed" not in site_client(reader_user).get(url).content.decode()
    assert "Mark fixed" in site_client(maintainer_user).get(url).content.decode()


def test_a_role_granted_on_the_repository_is_a_page_of_its_own(data):
    user = UserFactory(username="grows")
    client = site_client(user)
    url = url_of(data, "blockers/")
    assert "Mark fixed" not in client.get(url).content.decode()
    member_of(data.pull_request.repository, user, "maintainer")
    assert "Mark fixed" in client.get(url).content.decode()
    member_of(data.pull_request.repository, user, "reader")
    assert "Mark fixed" not in client.get(url).content.decode()


def test_no_user_name_is_kept_in_a_shared_page(data):
    ann, bob = UserFactory(username="ann-reads"), UserFactory(username="bob-reads")
    url = url_of(data)
    assert "ann-reads" in site_client(ann).get(url).content.decode()
    bobs = site_client(bob).get(url).content.decode()
    assert "bob-reads" in bobs and "ann-reads" not in bobs
    [kept] = kept_pages()
    assert "ann-reads" not in kept and "bob-reads" not in kept and pagecache.NAV_MARK in kept


def iter_keys():
    return [key for key in cache._cache if ":page:1:" in key]  # noqa: SLF001 - the memory cache's keys


def kept_pages() -> list[str]:
    return [cache.get(key.split(":", 2)[2]) for key in iter_keys()]


def test_a_kept_page_carries_the_requests_own_working_csrf_token(data, maintainer_user):
    user_client = Client(enforce_csrf_checks=True)
    user_client.force_login(maintainer_user)
    other = Client(enforce_csrf_checks=True)
    other.force_login(maintainer_user)
    other.get(url_of(data))  # kept with another session's token... or none: a mark
    html = user_client.get(url_of(data)).content.decode()
    token = CSRF.search(html).group(0).split('value="')[1][:-1]
    assert token != pagecache.CSRF_MARK
    response = user_client.post(data.pull_request.get_absolute_url() + "verify/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302  # accepted: a token of this session


def test_a_private_repository_made_public_and_back(data, settings):
    settings.RECHECK_PUBLIC_READ = True
    repository = data.pull_request.repository
    anonymous = Client()
    assert anonymous.get(url_of(data)).status_code == 200
    repository.visibility = Repository.Visibility.PRIVATE
    repository.save()
    assert anonymous.get(url_of(data)).status_code == 404
    member = UserFactory(username="member")
    member_of(repository, member, "reader")
    private_page = site_client(member).get(url_of(data))
    assert private_page.status_code == 200
    repository.visibility = Repository.Visibility.PUBLIC
    repository.save()
    assert anonymous.get(url_of(data)).status_code == 200
    repository.visibility = Repository.Visibility.PRIVATE
    repository.save()
    assert anonymous.get(url_of(data)).status_code == 404
    assert Client().get(url_of(data), HTTP_IF_NONE_MATCH=private_page["ETag"]).status_code == 404


@pytest.mark.parametrize("page", PAGES)
def test_a_current_copy_is_answered_304_and_a_write_makes_it_200_again(client, data, page,
                                                                         django_assert_max_num_queries):
    url = url_of(data, page)
    etag = client.get(url)["ETag"]
    with django_assert_max_num_queries(3):
        not_modified = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert not_modified.status_code == 304 and not_modified["ETag"] == etag and not not_modified.content
    finding = Finding.objects.get(pull_request=data.pull_request, number=1)
    finding.title = "A title written since"
    finding.save()
    changed = client.get(url, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert "A title written since" in changed.content.decode() or page == "cleanups/"


@pytest.mark.parametrize(
    ("header", "status"),
    [
        ("{etag}", 304),
        ("W/{etag}", 304),  # If-None-Match compares weakly
        ('"other", {etag}', 304),
        ('"other", "another"', 200),
        ("*", 304),
        ("{bare}", 200),  # not a quoted entity tag: matches nothing
        ("garbage, , ,", 200),
        ('"unterminated', 200),
        ("", 200),
    ],
)
def test_if_none_match_is_read_as_http_says(client, data, header, status):
    etag = client.get(url_of(data))["ETag"]
    response = client.get(url_of(data), HTTP_IF_NONE_MATCH=header.format(etag=etag, bare=etag.strip('"')))
    assert response.status_code == status


def test_the_headers_say_whose_page_it_is(client, data, reader_user):
    anonymous = client.get(url_of(data))
    assert "Cookie" in anonymous["Vary"] and "no-cache" in anonymous["Cache-Control"]
    assert "private" not in anonymous["Cache-Control"]
    signed_in = site_client(reader_user).get(url_of(data))
    assert "Cookie" in signed_in["Vary"] and "private" in signed_in["Cache-Control"]
    assert signed_in["ETag"] != anonymous["ETag"]


def test_another_readers_etag_is_not_a_304(data, reader_user):
    etag = site_client(reader_user).get(url_of(data))["ETag"]
    other = site_client(UserFactory(username="another-reader", groups=["Reader"]))
    assert other.get(url_of(data), HTTP_IF_NONE_MATCH=etag).status_code == 200


def test_a_page_with_a_run_under_way_is_not_kept(client, data):
    from findings.models import VerificationRun

    VerificationRun.objects.create(pull_request=data.pull_request, status=VerificationRun.Status.RUNNING)
    response = client.get(url_of(data))
    assert response.status_code == 200 and not response.has_header("ETag")
    assert not list(iter_keys())


def test_a_url_with_other_parameters_is_rendered_and_not_kept(client, data):
    for query in ("?utm=1", "?page=01", "?page=2&page=3", "?page=999", "?commit=XYZ"):
        response = client.get(url_of(data, "blockers/") + query)
        assert response.status_code in (200, 404) and not response.has_header("ETag"), query
    assert not list(iter_keys())
    assert client.get(url_of(data, "blockers/") + "?page=2").has_header("ETag")


def test_a_write_while_the_page_is_built_is_never_kept_as_current(client, data, monkeypatch):
    built = page_views.pull_request_page

    def built_while_written(pull_request, **kwargs):
        page = built(pull_request, **kwargs)
        Finding.objects.filter(pull_request=pull_request, number=1).get().save()  # moves the generation
        return page

    monkeypatch.setattr(page_views, "pull_request_page", built_while_written)
    first = client.get(url_of(data))
    assert first.status_code == 200 and not first.has_header("ETag")
    assert not list(iter_keys())
    monkeypatch.setattr(page_views, "pull_request_page", built)
    generation = PullRequest.objects.get(pk=data.pull_request.pk).generation
    assert client.get(url_of(data)).has_header("ETag")
    assert PullRequest.objects.get(pk=data.pull_request.pk).generation == generation


def test_an_evicted_page_is_built_again(client, data):
    first = client.get(url_of(data))
    cache.clear()
    again = client.get(url_of(data))
    assert again.status_code == 200 and again["ETag"] == first["ETag"] and again.content == first.content


def test_with_the_cache_down_a_page_is_rendered_and_served(client, data, settings, caplog):
    # A Redis no one listens on: every read and write of the cache fails.
    settings.CACHES = {"default": {"BACKEND": "recheck.cache.ForgivingRedisCache",
                                   "LOCATION": "redis://127.0.0.1:9/0"}}
    for page in PAGES:
        response = client.get(url_of(data, page))
        assert response.status_code == 200 and "What" in response.content.decode()
    assert "cache unavailable" in caplog.text


def finding_url(data, number: int = 1) -> str:
    return f"{data.pull_request.get_absolute_url()}findings/{number}/"


def test_a_finding_page_is_kept_and_revalidated(client, data, django_assert_max_num_queries):
    first = client.get(finding_url(data))
    assert first.status_code == 200 and first["ETag"]
    # The finding (with whether threads or a follow-up show), every PR's version, a run under way.
    with django_assert_max_num_queries(3):
        assert client.get(finding_url(data)).content == first.content
    with django_assert_max_num_queries(3):
        assert client.get(finding_url(data), HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304


def test_a_finding_page_never_carries_a_maintainers_buttons_to_a_reader(data, reader_user, maintainer_user):
    assert "Mark fixed" in site_client(maintainer_user).get(finding_url(data)).content.decode()
    assert "Mark fixed" not in site_client(reader_user).get(finding_url(data)).content.decode()


def test_a_link_made_to_a_finding_shows_on_its_kept_page(client, data):
    from findings.models import FindingLink

    etag = client.get(finding_url(data, 2))["ETag"]
    source = Finding.objects.get(pull_request=data.pull_request, number=1)
    target = Finding.objects.get(pull_request=data.pull_request, number=2)
    FindingLink.objects.create(source=source, target=target, kind=FindingLink.Kind.values[0])
    response = client.get(finding_url(data, 2), HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and source.title in response.content.decode()


def test_a_related_finding_of_a_private_repository_stays_with_who_may_read_it(data, settings):
    """Finding 1's page lists a finding of another, private repository on the same tag: its member
    sees it there; a reader without a role on it, served after the member, does not."""
    from findings.models import Tag

    other = reviewed_pull_request(blockers=1, cleanups=0, slug="acme/secret", number=9)
    secret = Finding.objects.get(pull_request=other.pull_request, number=1)
    secret.title = "A secret finding on the same tag"
    secret.save()
    tag = Tag.objects.create(slug="shared-tag")
    secret.tags.add(tag)
    Finding.objects.get(pull_request=data.pull_request, number=1).tags.add(tag)
    Repository.objects.filter(pk=other.pull_request.repository_id).update(visibility="private")
    PullRequest.objects.filter(pk=other.pull_request.pk).update(generation=10_000)
    member, outsider = UserFactory(username="member"), UserFactory(username="outsider")
    member_of(other.pull_request.repository, member, "reader")
    assert secret.title in site_client(member).get(finding_url(data)).content.decode()
    assert secret.title not in site_client(outsider).get(finding_url(data)).content.decode()
    assert secret.title not in Client().get(finding_url(data)).content.decode()


def test_a_finding_page_with_review_threads_is_kept_and_a_threads_write_moves_it(client, data):
    from forge.threads.models import ReviewThread

    finding = Finding.objects.get(pull_request=data.pull_request, number=1)
    thread = ReviewThread.objects.create(pull_request=data.pull_request, finding=finding, root_comment_id=9001,
                                         path="src/loader.py", original_line=3)
    first = client.get(finding_url(data))
    assert first.status_code == 200 and first.has_header("ETag")
    thread.comments.create(github_id=78, author_login="octocat", body="A reply written since")
    response = client.get(finding_url(data), HTTP_IF_NONE_MATCH=first["ETag"])
    assert response.status_code == 200 and "A reply written since" in response.content.decode()


def test_a_finding_page_with_a_follow_up_is_rendered_for_each_request(client, data):
    from findings.models import FollowUp

    finding = Finding.objects.get(pull_request=data.pull_request, number=4)
    FollowUp.objects.create(repository=data.pull_request.repository, pull_request=data.pull_request,
                            finding=finding, origin=FollowUp.Origin.OPEN_CLEANUP)
    response = client.get(finding_url(data, 4))
    assert response.status_code == 200 and not response.has_header("ETag")


def test_the_home_page_and_a_search_are_kept_and_revalidated(client, data, django_assert_max_num_queries):
    for url in ("/", "/?q=the", "/?q=the&kind=blocker&page=1"):
        first = client.get(url)
        assert first.status_code == 200 and first["ETag"], url
        # Every repository the reader may read, every PR's version.
        with django_assert_max_num_queries(2):
            assert client.get(url).content == first.content
        with django_assert_max_num_queries(2):
            assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304


def test_the_home_page_follows_repositories_made_renamed_and_hidden(client, data):
    from tests.factories import RepositoryFactory

    etag = client.get("/")["ETag"]
    new = RepositoryFactory(slug="acme/brand-new")
    response = client.get("/", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 200 and "acme/brand-new" in response.content.decode()
    Repository.objects.filter(pk=new.pk).update(slug="acme/renamed")
    assert "acme/renamed" in client.get("/").content.decode()
    Repository.objects.filter(pk=new.pk).update(visibility="private")
    assert "acme/renamed" not in client.get("/").content.decode()


def test_a_search_result_changes_with_a_write(client, data):
    assert "Zanzibar" not in client.get("/?q=zanzibar").content.decode()
    finding = Finding.objects.get(pull_request=data.pull_request, number=1)
    finding.title = "Zanzibar loader"
    finding.save()
    assert "Zanzibar loader" in client.get("/?q=zanzibar").content.decode()


def test_a_search_with_other_parameters_is_rendered_and_not_kept(client, data):
    assert not client.get("/?q=the&utm_source=x").has_header("ETag")
    assert not client.get("/?q=" + "x" * 201).has_header("ETag")
