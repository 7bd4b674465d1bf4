"""Pages of the findings list are cached as the JSON they are sent as, under the URL as asked, what
the caller may read and the version of the data: every write that can change a page changes it,
and a page goes only to callers who may read what it was built from."""
import re

import pytest
from django.apps import apps
from django.core.cache import cache
from django.db import connection
from django.db.models.signals import post_save
from django.test.utils import CaptureQueriesContext

from findings.services.authoring import finding_save
from findings.services.review_import import review_import
from findings.models import (
    EvidenceResult,
    Finding,
    FindingListState,
    PullRequestGate,
    PullRequestState,
    Tag,
    Verification,
)
from findings.services.tags_and_links import finding_tags_set
from findings.services.resolution import finding_resolve
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit, PullRequest, Repository
from tests.factories import UserFactory, large_reviewed_pull_request
from tests.findings.services.test_verification import import_review

pytestmark = pytest.mark.django_db


def urls(sha: str) -> list[str]:
    return [
        "/api/findings/",
        "/api/findings/?status=open&kind=blocker",
        f"/api/findings/?verdict=present&commit={sha[:10]}",
        "/api/findings/?tag=silent-failure",
        "/api/findings/?q=tolerance",
        "/api/findings/?ordering=-updated_at",
        "/api/findings/?cursor=",
        "/api/findings/?repository=acme/loader&pull_request_number=7&status=open",
    ]


def answers(client, sha: str) -> dict:
    found = {}
    for url in urls(sha):
        response = client.get(url)
        assert response.status_code == 200, (url, response.content)
        found[url] = response.json()
    return found


def test_a_second_read_of_a_page_is_one_query(anonymous_reader, repo, django_assert_max_num_queries):
    import_review(repo)
    first = anonymous_reader.get("/api/findings/?kind=blocker")
    # The version of the data; an anonymous reader's scope needs no query.
    with django_assert_max_num_queries(1):
        again = anonymous_reader.get("/api/findings/?kind=blocker")
    assert (again.status_code, again["Content-Type"], again.json()) == (200, "application/json", first.json())
    # Another question is a page of its own.
    assert anonymous_reader.get("/api/findings/?kind=cleanup").json()["count"] == 1


def test_every_write_that_can_change_a_page_changes_it(anonymous_reader, token_with_permission, repo):
    """After each write, every page read from the cache equals the page built afresh, and the
    write changed at least one page: a write the version does not follow fails here."""
    pull_request = import_review(repo)
    sha = repo.reviewed
    commit = Commit.objects.get(sha__startswith=sha[:8])
    maintainer = UserFactory(username="maintainer", groups=["Maintainer"])

    def check(write):
        before = answers(anonymous_reader, sha)  # cached now
        write()
        cached = answers(anonymous_reader, sha)
        cache.clear()
        assert cached == answers(anonymous_reader, sha), write.__doc__
        assert cached != before, f"{write.__doc__}: changed no page, so it shows nothing here"

    def verification():
        """A verification (the verdict filter)."""
        pull_request_verify(pull_request=pull_request, commit=commit)

    def edit():
        """An edit through the editor's service."""
        finding = Finding.objects.get(pull_request=pull_request, number=1)
        finding_save(pull_request=pull_request, number=1, finding=finding,
                     values={"title": "Tolerance of zero never stops", "summary": "tolerance"})

    def bulk_update():
        """A bulk update, as a script or an admin action makes."""
        Finding.objects.filter(pull_request=pull_request, number=2).update(title="Renamed in bulk")

    def resolve():
        """A resolve through the API."""
        finding = Finding.objects.get(pull_request=pull_request, number=2)
        response = token_with_permission.post(
            f"/api/findings/{finding.pk}/resolve", {"status": "dismissed", "note": "Not ours."}, format="json"
        )
        assert response.status_code == 200, response.content

    def resolve_by_service():
        """A resolve by a maintainer, through the service the admin and the site call."""
        finding = Finding.objects.get(pull_request=pull_request, number=1)
        finding_resolve(finding=finding, status="dismissed", actor=maintainer, source="admin", note="Later.")

    def rename_user():
        """The resolver renamed."""
        maintainer.username = "maintainer"  # unchanged name first: still a save
        maintainer.first_name = "M"
        maintainer.save(update_fields=["first_name"])
        maintainer.username = "the-maintainer"
        maintainer.save()

    def tag():
        """A tag given."""
        finding_tags_set(finding=Finding.objects.get(pull_request=pull_request, number=1), slugs=["silent-failure"],
                         actor=None)

    def rename_tag():
        """A tag renamed."""
        tag = Tag.objects.get(slug="silent-failure")
        tag.slug = "quiet-failure"
        tag.save()

    def bulk_verdicts():
        """Verdicts changed by a bulk update."""
        Verification.objects.filter(finding__pull_request=pull_request, commit=commit).update(verdict="likely_fixed")

    def imported():
        """An import that adds a finding."""
        review_import(data={
            "repository": {"slug": "acme/loader", "clone_url": str(repo.path)},
            "pull_request": {"number": 7, "title": "Loader"},
            "findings": [{"number": 9, "kind": "blocker", "title": "Tolerance once more", "evidence": []}],
        })

    def delete():
        """A finding deleted."""
        Finding.objects.get(pull_request=pull_request, number=9).delete()

    def renumber_pull_request():
        """The pull request's number corrected (its links and references show it)."""
        pr = PullRequest.objects.get(pk=pull_request.pk)
        pr.number = 8
        pr.save()

    def rename_repository():
        """The repository renamed."""
        repository = Repository.objects.get(slug="acme/loader")
        repository.slug = "acme/loader2"
        repository.save()

    for write in (verification, edit, bulk_update, resolve, resolve_by_service, rename_user, tag, rename_tag,
                  bulk_verdicts, imported, delete, renumber_pull_request, rename_repository):
        check(write)


# Written with a stored state, from it (findings.state.timeline, notify's receivers): read while
# the state is stored, never to draw an answer.
TIMELINE_MODELS = {"findings.TimelineMark", "findings.ReviewEvent", "findings.FindingEvent", "notify.WebhookEndpoint",
                   "notify.WebhookMessage", "notify.Subscription", "notify.MailMessage"}


def test_every_table_a_page_reads_moves_the_version_when_written(anonymous_reader, repo):
    """A table added to the list's reads (a filter's, a row's) without a way to move the version
    fails here."""
    pull_request = import_review(repo)
    pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha__startswith=repo.reviewed[:8]))
    finding_tags_set(finding=Finding.objects.get(pull_request=pull_request, number=1), slugs=["silent-failure"],
                         actor=None)
    with CaptureQueriesContext(connection) as queries:
        for url in urls(repo.reviewed):
            assert anonymous_reader.get(url).status_code == 200
    tables = {name for query in queries.captured_queries for name in re.findall(r'(?:FROM|JOIN) "(\w+)"', query["sql"])}
    models = {model._meta.db_table: model for model in apps.get_models()}
    read = {models[table] for table in tables if table in models}
    assert {model.__name__ for model in read} >= {"Finding", "Verification", "PullRequest", "Commit", "Tag"}
    for model in read - {PullRequest}:
        if model._meta.auto_created:  # a many-to-many table: m2m_changed on its field
            continue
        if not model._meta.managed:  # the search index, which triggers keep from the finding's own row
            continue
        if model in (EvidenceResult, PullRequestState, PullRequestGate, FindingListState) or \
                model._meta.label in TIMELINE_MODELS:
            # Results are written by the verification store alone, which moves the generation; the
            # stored state (and its list rows) is keyed by the generation it was derived at; the
            # timeline, and what is delivered of it, is written from the state, never read by a page.
            continue
        assert post_save.has_listeners(model), model


def test_a_page_goes_only_to_those_who_may_read_what_it_was_built_from(private_review, anonymous_reader):
    seen = private_review.member.get("/api/findings/").json()
    assert seen["count"] == 3  # cached now, for the member
    for client in private_review.others:
        body = client.get("/api/findings/").json()
        assert body["count"] == 0 and "acme/loader" not in str(body)

    assert private_review.member.get("/api/findings/").json() == seen
    private_review.membership.delete()
    assert private_review.member.get("/api/findings/").json()["count"] == 0

    # Made public again: anonymous readers see it at once.
    private_review.repository.visibility = Repository.Visibility.PUBLIC
    private_review.repository.save()
    assert anonymous_reader.get("/api/findings/").json()["count"] == 3


def test_the_browsable_api_and_errors_are_built_each_time(anonymous_reader, repo):
    import_review(repo)
    assert anonymous_reader.get("/api/findings/?status=nonsense").status_code == 400
    assert anonymous_reader.get("/api/findings/?status=nonsense").status_code == 400
    page = anonymous_reader.get("/api/findings/", HTTP_ACCEPT="text/html")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("query", ["page=11&page_size=2", "NEXT_CURSOR", "utm_source=nightly", "kind=blocker&x=1"])
def test_deep_pages_cursor_walks_and_unknown_parameters_are_not_cached(anonymous_reader, query):
    """Only what is asked again is kept: a crawler walking deep pages or a cursor, or one URL with
    ever new junk in it, does not fill the cache (which production shares with the broker)."""
    large_reviewed_pull_request(findings=30)
    if query == "NEXT_CURSOR":
        query = anonymous_reader.get("/api/findings/?cursor=&page_size=2").json()["next"].split("?", 1)[1]
    assert anonymous_reader.get(f"/api/findings/?{query}").status_code == 200
    with CaptureQueriesContext(connection) as again:
        assert anonymous_reader.get(f"/api/findings/?{query}").status_code == 200
    assert [sql for sql in again.captured_queries if "findings_finding" in sql["sql"]]
    # The last page that is kept: built once, then found with the one query for the version.
    anonymous_reader.get("/api/findings/?page=10&page_size=2")
    with CaptureQueriesContext(connection) as kept:
        anonymous_reader.get("/api/findings/?page=10&page_size=2")
    assert len(kept.captured_queries) == 1


@pytest.mark.parametrize("query", [
    "repository=%20acme/loader%20", "repository=acme/loader%20&pull_request_number=7",
    "repository=acme/loader&pull_request_number=%207", "pull_request=%20{pk}", "pull_request={pk}&pull_request={pk}",
    "repository=acme/loader%00", "repository=acme/loader&pull_request_number=7%00",
])
def test_a_page_is_kept_by_what_its_filters_read(anonymous_reader, repo, query):
    """The key of a page names the pull request or the repository it shows as the filter set reads
    the parameters (padding stripped, the last of repeated values, a refused value refused): a
    slug or a number typed another way never keys a page by a version that no write moves."""
    pull_request = import_review(repo)
    url = f"/api/findings/?{query.format(pk=pull_request.pk)}"
    before = anonymous_reader.get(url)
    Finding.objects.filter(pull_request=pull_request, number=1).update(title="Renamed in bulk")
    again = anonymous_reader.get(url)
    cache.clear()
    assert (again.status_code, again.content) == (anonymous_reader.get(url).status_code,
                                                  anonymous_reader.get(url).content), url
    if before.status_code == 200:
        assert b"Renamed in bulk" in again.content
