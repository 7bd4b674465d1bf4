"""A call GitHub refused is shown where people look: the pull request's pages and the admin, with
GitHub's message and what to fix, and a maintainer can send it again once it is fixed."""
import pytest

from forge.models import ForgeCall
from tests.factories import UserFactory
from tests.forge.scenario import deliver, the_check_run, verify

pytestmark = pytest.mark.django_db

REFUSED = "Resource not accessible by integration"


@pytest.fixture
def refused(pull_request, repo, fake_github, django_capture_on_commit_callbacks):
    fake_github.fail("POST", r"/check-runs$", 403, REFUSED, times=2)
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    return pull_request


def test_the_pull_request_page_shows_githubs_message_and_what_to_fix(client, refused):
    page = client.get(refused.get_absolute_url()).content.decode()

    assert "Reporting to GitHub failed" in page
    assert f"GitHub answered 403 “{REFUSED}”" in page
    assert "The App lacks checks: write on acme/loader" in page


def test_a_failure_that_a_later_call_replaced_is_no_longer_shown(
    client, refused, repo, fake_github, django_capture_on_commit_callbacks
):
    verify(refused, repo.reviewed, django_capture_on_commit_callbacks)

    assert the_check_run(fake_github)["conclusion"] == "failure"
    assert "Reporting to GitHub failed" not in client.get(refused.get_absolute_url()).content.decode()


def test_the_admin_lists_failed_calls_and_sends_one_again(
    client, refused, fake_github, django_capture_on_commit_callbacks
):
    maintainer = UserFactory(username="reporter", is_staff=True,
                             permissions=["reporting.view_forgecall", "reporting.resend_forgecall",
                                          "findings.verify_pullrequest"])
    client.force_login(maintainer)

    listing = client.get("/admin/reporting/forgecall/?status__exact=failed").content.decode()
    assert REFUSED in listing

    failed = list(ForgeCall.objects.failed().order_by("id").values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/admin/reporting/forgecall/", {
            "action": "send_again", "_selected_action": failed,
        })
    assert response.status_code == 302
    deliver()
    assert not ForgeCall.objects.failed().exists()
    assert the_check_run(fake_github)["conclusion"] == "failure"


def test_only_a_maintainer_with_the_permission_may_send_again(client, refused):
    onlooker = UserFactory(username="onlooker2", is_staff=True, permissions=["reporting.view_forgecall"])
    client.force_login(onlooker)
    failed = list(ForgeCall.objects.failed().values_list("pk", flat=True))

    response = client.post("/admin/reporting/forgecall/", {"action": "send_again", "_selected_action": failed})

    assert ForgeCall.objects.failed().count() == len(failed)
    assert response.status_code in (200, 302)


def test_publishing_is_set_per_repository_in_the_admin(client, pull_request):
    maintainer = UserFactory(username="owner", is_staff=True,
                             permissions=["reviews.view_repository", "reviews.change_repository"])
    client.force_login(maintainer)
    repository = pull_request.repository

    form = client.get(f"/admin/reviews/repository/{repository.pk}/change/").content.decode()
    assert 'name="publish_checks"' in form and 'name="publish_comment"' in form


REPOSITORY_PAGE = "/acme/loader/"


def resend_url(call) -> str:
    return f"/acme/loader/github-calls/{call.pk}/resend/"


def test_the_repository_page_lists_failed_calls_with_a_button_for_whoever_may_verify(refused, reviewer_user,
                                                                                    reader_user):
    from tests.personas import site_client

    page = site_client(reviewer_user).get(REPOSITORY_PAGE).content.decode()
    assert "Reporting to GitHub failed" in page and f"GitHub answered 403 “{REFUSED}”" in page
    assert "of <a href=\"/acme/loader/pull/7/\">#7</a>, after 1 attempt" in page
    call = ForgeCall.objects.failed().latest("id")
    assert f'action="{resend_url(call)}"' in page and "Send again" in page

    looking = site_client(reader_user).get(REPOSITORY_PAGE).content.decode()
    assert "Reporting to GitHub failed" in looking and "Send again" not in looking


def test_sending_again_from_the_repository_page_needs_csrf_and_the_role_and_is_audited(
    refused, fake_github, reviewer_user, reader_user, django_capture_on_commit_callbacks
):
    from django.test import Client

    from access.models import AuditEntry
    from tests.personas import site_client

    call = ForgeCall.objects.failed().order_by("id").first()
    without_token = Client(enforce_csrf_checks=True)
    without_token.force_login(reviewer_user)
    assert without_token.post(resend_url(call)).status_code == 403

    response = site_client(reader_user).post(resend_url(call))
    assert response.status_code == 302
    call.refresh_from_db()
    assert call.status == "failed"
    refusal = AuditEntry.objects.get(action="github_call.resend", outcome="refused")
    assert refusal.actor == reader_user

    with django_capture_on_commit_callbacks(execute=True):
        response = site_client(reviewer_user).post(resend_url(call), follow=True)
    assert "queued to be sent again" in response.content.decode()
    done = AuditEntry.objects.get(action="github_call.resend", outcome="done")
    assert done.actor == reviewer_user and done.repository == call.repository
    deliver()
    call.refresh_from_db()
    assert call.status == "sent"
    assert fake_github.latest_run(call.sha)["status"] in ("in_progress", "completed")


def test_a_call_of_another_repository_is_not_found_from_this_one(refused, reviewer_user):
    from reviews.models import Repository
    from tests.personas import site_client

    Repository.objects.create(slug="acme/other", clone_url="https://example.com/acme/other.git")
    call = ForgeCall.objects.failed().latest("id")
    assert site_client(reviewer_user).post(f"/acme/other/github-calls/{call.pk}/resend/").status_code == 404
