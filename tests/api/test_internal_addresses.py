"""Clone URLs that name internal addresses are refused where they come in, and a fetch that fails
tells readers no more than that it failed; staff read why."""
import pytest
from rest_framework.test import APIClient

from findings.models import Verification
from findings.services.runs import verification_run_request
from findings.tasks import run_verification
from reviews.models import Repository
from tests.factories import EvidenceFactory, FindingFactory, PinnedCommitFactory, PullRequestFactory
from tests.api.test_actions import bundle
from tests.engine.git.test_internal_addresses import INTERNAL_URLS, Listener, loopback_spellings


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def test_importing_a_bundle_whose_clone_url_is_internal_is_a_400_and_nothing_is_contacted(
    token_with_permission, listener
):
    for url in [*loopback_spellings(listener.port), *INTERNAL_URLS]:
        response = token_with_permission.post(
            "/api/reviews/import", bundle(repository={"slug": "acme/app", "clone_url": url}), format="json"
        )
        assert response.status_code == 400, url
        assert response.json()["errors"][0]["field"] == "repository.clone_url"
    assert not Repository.objects.exists()
    assert listener.connections == 0


def test_only_allowlisted_forges_can_be_imported_when_a_list_is_configured(token_with_permission, settings):
    settings.RECHECK_ALLOWED_GIT_HOSTS = ["gitlab.example.com"]
    response = token_with_permission.post("/api/reviews/import", bundle(), format="json")
    assert response.status_code == 400
    assert "RECHECK_ALLOWED_GIT_HOSTS" in response.json()["detail"]


def test_a_recorded_internal_clone_url_is_refused_when_git_would_connect(listener, settings, staff_maintainer, client):
    # Recorded before the rule existed, or a name that resolved elsewhere when it was accepted.
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = False
    url = f"https://127.0.0.1:{listener.port}/acme/app.git"
    pull_request = PullRequestFactory(repository__slug="acme/app", repository__clone_url=url)
    pin = PinnedCommitFactory(pull_request=pull_request)
    EvidenceFactory(finding=FindingFactory(pull_request=pull_request, number=1), commit=pin.commit)
    run = verification_run_request(pull_request=pull_request)
    run_verification.apply(args=[run.pk])

    assert listener.connections == 0
    run.refresh_from_db()
    verification = Verification.objects.get()
    assert verification.verdict == "error"
    reader = APIClient()
    settings.RECHECK_PUBLIC_READ = True
    shown = [
        run.message,
        verification.detail,
        reader.get(f"/api/runs/{run.pk}/").content.decode(),
        reader.get(f"/api/verifications/{verification.pk}/").content.decode(),
        reader.get(f"{pull_request.get_absolute_url()}runs/latest.json").content.decode(),
        reader.get(pull_request.get_absolute_url()).content.decode(),
    ]
    for text in shown:
        assert "127.0.0.1" not in text and str(listener.port) not in text and "loopback" not in text
    assert "could not be fetched" in run.message

    # Staff read what happened on the repository's admin page.
    repository = pull_request.repository
    repository.refresh_from_db()
    assert "loopback" in repository.fetch_error
    client.force_login(staff_maintainer)
    staff_maintainer.user_permissions.add(*_view_repository())
    page = client.get(f"/admin/reviews/repository/{repository.pk}/change/").content.decode()
    assert "loopback" in page


def _view_repository():
    from django.contrib.auth.models import Permission

    return Permission.objects.filter(codename="view_repository")


def test_the_admin_refuses_an_internal_clone_url_and_normalises_the_slug(staff_maintainer, client):
    from django.contrib.auth.models import Permission

    staff_maintainer.user_permissions.add(*Permission.objects.filter(codename__in=["add_repository"]))
    client.force_login(staff_maintainer)
    form = {"slug": "acme/app.git", "clone_url": "https://169.254.169.254/acme/app.git", "default_branch": "main",
            "visibility": "public"}
    response = client.post("/admin/reviews/repository/add/", form)
    assert response.status_code == 200 and "link-local" in response.content.decode()
    assert not Repository.objects.exists()

    form["clone_url"] = "https://github.com/acme/app.git"
    assert client.post("/admin/reviews/repository/add/", form).status_code == 302
    assert Repository.objects.get().slug == "acme/app"
