"""A GitLab project in nested groups (group/subgroup/project) through every page of the site and
every operation of the API, walked from the URL patterns and the schema as the persona matrix walks
them: each reaches the project (the owner captured as the group and its subgroups), never a 404.
Its permalinks are GitLab's, its bundle says `forge: gitlab`, and a slug GitHub cannot have or
whose subgroup would clash with a route is refused."""
import pytest
from django.core.exceptions import ValidationError
from django.urls import resolve

from access.models import ApiToken
from findings.exchange.bundle import bundle_export
from findings.exchange.schema import BundleSerializer
from forge.models import ForgeCall, ReviewThread
from reviews.models import Repository
from tests.access.persona_world import SITE_MIRROR_PAGES, SITE_WRITE_DONE, _fill, api_operations, site_routes
from tests.api.test_actions import bundle
from tests.factories import reviewed_pull_request
from tests.personas import api_client, member_of, site_client, user_with_role

pytestmark = pytest.mark.django_db

SLUG = "platform/tools/recheck-demo"
OWNER, NAME = "platform/tools", "recheck-demo"


@pytest.fixture
def nested(queued_tasks_any):
    review = reviewed_pull_request(slug=SLUG, number=12, blockers=2, cleanups=1)
    repository = review.pull_request.repository
    Repository.objects.filter(pk=repository.pk).update(
        forge="gitlab", web_url=f"https://gitlab.example.com/{SLUG}", forge_url="https://gitlab.example.com")
    repository.refresh_from_db()
    finding = review.findings[0]
    call = ForgeCall.objects.create(repository=repository, sha="0" * 40, kind=ForgeCall.Kind.COMMIT_STATUS,
                                     state="failed", digest="x", body={}, status=ForgeCall.Status.FAILED)
    from findings.models import FindingLink

    link = FindingLink.objects.create(source=finding, target=review.findings[1], kind="same_cause")
    admin = member_of(repository, user_with_role("no_role", username="gitlab-admin"), "admin")
    thread = ReviewThread.objects.create(pull_request=review.pull_request, root_comment_id=7001, path=finding.path)
    from findings.models import GateOverride

    override = GateOverride.objects.create(pull_request=review.pull_request, commit=review.pins[0].commit,
                                           reason="urgent_fix", by_label="someone")
    from notify.models import WebhookEndpoint, WebhookMessage

    hook = WebhookEndpoint.objects.create(repository=repository, url="https://hooks.example.com/recheck",
                                          kinds=["gate.changed"], secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
    message = WebhookMessage.objects.create(endpoint=hook, kind="gate.changed", message_id=f"msg_nested_{hook.pk}")
    ids = {
        "endpoint_id": hook.pk, "endpoint": hook.pk, "webhooks": hook.pk, "message_id": message.pk,
        "message": message.pk, "messages": message.pk, "token": "not-a-signed-token",
        "owner": OWNER, "name": NAME, "number": 12, "finding_number": finding.number, "sha": review.latest_commit.sha,
        "path": finding.path, "call_id": call.pk, "findings": finding.pk, "link": link.pk, "links": link.pk,
        "evidence": finding.evidence.first().pk, "pulls": review.pull_request.pk,
        "thread_id": thread.root_comment_id, "overrides": override.pk, "override_id": override.pk,
    }
    return repository, admin, ids


@pytest.fixture
def queued_tasks_any(monkeypatch):
    from findings import tasks
    from tests.queued import record_queued

    return record_queued(monkeypatch, tasks.run_verification, tasks.run_import)


def test_every_site_page_of_a_nested_group_project_reaches_it(nested):
    repository, admin, ids = nested
    client = site_client(admin)
    routes = [route for route in site_routes() if "{owner}" in route]
    assert len(routes) >= 15
    for route in routes:
        url = "/" + _fill(route, ids)
        match = resolve(url)
        assert (match.kwargs["owner"], match.kwargs["name"]) == (OWNER, NAME), url
        response = client.get(url)
        if response.status_code == 405:
            response = client.post(url)
        assert response.status_code < 500, (url, response.status_code)
        # A write whose object the world lacks (a follow-up of a PR that never merged) is a 404
        # that the persona matrix expects too; the route still resolved to the nested project.
        if route not in SITE_MIRROR_PAGES and 404 not in SITE_WRITE_DONE.get(route, ()):
            assert response.status_code != 404, (url, response.content[:300])


def test_every_api_operation_on_a_nested_group_project_reaches_it(nested):
    repository, admin, ids = nested
    client = api_client(admin, scopes=("read", "verify", "import", "resolve", "settings"))
    # Deletes last: one removes the sample object (a webhook) that the other operations read.
    operations = sorted(((method, path) for method, path in api_operations() if "{owner}" in path),
                        key=lambda operation: operation[0] == "delete")
    assert len(operations) >= 9
    for method, path in operations:
        url = _fill(path, ids)
        match = resolve(url)
        assert (match.kwargs["owner"], match.kwargs["name"]) == (OWNER, NAME), url
        body = {"publish_checks": False} if path.endswith("/publishing") else {}
        response = client.get(url) if method == "get" else getattr(client, method)(url, body, format="json")
        assert response.status_code not in (404, 500), (method, url, response.status_code, response.content[:300])
    assert ApiToken.objects.filter(user=admin).exists()


def test_the_api_links_of_a_nested_group_project_are_its_own(nested):
    repository, admin, ids = nested
    client = api_client(admin)
    detail = client.get(f"/api/repos/{SLUG}/").json()
    assert detail["url"].endswith(f"/api/repos/{SLUG}/")
    pull = client.get(f"/api/repos/{SLUG}/pulls/12/").json()
    assert f"/api/repos/{SLUG}/pulls/12/" in pull["url"]


def test_a_gitlab_permalink_is_gitlabs_and_a_github_one_stays_githubs(nested):
    repository, _, _ = nested
    sha = "a" * 40
    assert repository.permalink(sha, "src/app.py", 10, 12) == (
        f"https://gitlab.example.com/{SLUG}/-/blob/{sha}/src/app.py#L10-12")
    assert repository.commit_link(sha) == f"https://gitlab.example.com/{SLUG}/-/commit/{sha}"
    assert repository.tree_link(sha, "src") == f"https://gitlab.example.com/{SLUG}/-/tree/{sha}/src"
    github = Repository(slug="acme/widgets", web_url="https://github.com/acme/widgets")
    assert github.permalink(sha, "src/app.py", 10, 12) == f"https://github.com/acme/widgets/blob/{sha}/src/app.py#L10-L12"


def test_a_nested_group_projects_pages_link_to_gitlab(nested):
    repository, admin, _ = nested
    response = site_client(admin).get(f"/{SLUG}/pull/12/blockers/")
    assert response.status_code == 200
    assert f"https://gitlab.example.com/{SLUG}/-/blob/".encode() in response.content
    assert f"/{SLUG}/blob/".encode() not in response.content


def test_the_bundle_of_a_nested_group_project_says_its_forge_and_imports_back(nested):
    repository, _, _ = nested
    exported = bundle_export(pull_request=repository.pull_requests.get())
    assert exported["repository"]["forge"] == "gitlab"
    assert exported["repository"]["forge_url"] == "https://gitlab.example.com"
    serializer = BundleSerializer(data=exported)
    assert serializer.is_valid(), serializer.errors


def test_a_bundle_without_a_forge_is_githubs_and_cannot_name_nested_groups():
    plain = BundleSerializer(data=bundle(repository={"slug": "acme/widgets",
                                                     "clone_url": "https://github.com/acme/widgets.git"}))
    assert plain.is_valid(), plain.errors
    assert "forge" not in plain.validated_data["repository"]
    nested = BundleSerializer(data=bundle(repository={"slug": SLUG, "clone_url": f"https://gitlab.com/{SLUG}.git"}))
    assert not nested.is_valid()
    assert "forge: gitlab" in str(nested.errors)
    gitlab = BundleSerializer(data=bundle(repository={"slug": SLUG, "forge": "gitlab",
                                                      "clone_url": f"https://gitlab.com/{SLUG}.git"}))
    assert gitlab.is_valid(), gitlab.errors


def test_a_subgroup_named_like_a_route_is_refused():
    clashing = Repository(slug="platform/tools/decisions", forge="gitlab", clone_url="https://gitlab.com/x.git")
    with pytest.raises(ValidationError, match="decisions"):
        clashing.full_clean()
    serializer = BundleSerializer(data=bundle(repository={"slug": "platform/pull/recheck", "forge": "gitlab",
                                                          "clone_url": "https://gitlab.com/x.git"}))
    assert not serializer.is_valid()
    assert "clash" in str(serializer.errors)
    Repository(slug="platform/pull", forge="gitlab", clone_url="https://gitlab.com/x.git").full_clean()
    with pytest.raises(ValidationError, match="files"):
        Repository(slug="platform/files/x", forge="gitlab", clone_url="https://gitlab.com/x.git").full_clean()


def test_github_keeps_owner_name_slugs():
    with pytest.raises(ValidationError, match="GitHub names a repository owner/name"):
        Repository(slug=SLUG, forge="github", clone_url="https://github.com/x.git").full_clean()


def test_the_admin_registers_a_nested_group_project_on_gitlab_only():
    from tests.personas import superuser

    client = site_client(superuser())
    form = {"slug": "platform/tools/loader", "clone_url": "https://gitlab.com/platform/tools/loader.git",
            "default_branch": "main", "visibility": "public"}
    refused = client.post("/admin/reviews/repository/add/", form)
    assert refused.status_code == 200 and "GitHub names a repository owner/name" in refused.content.decode()
    assert client.post("/admin/reviews/repository/add/", {**form, "forge": "gitlab"}).status_code == 302
    assert Repository.objects.get(slug="platform/tools/loader").forge == "gitlab"
