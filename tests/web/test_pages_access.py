"""Who may read the pages and who may start a verification, by persona."""
from unittest import mock

import pytest
from django.urls import reverse

from findings.models import VerificationRun
from tests.factories import UserFactory, reviewed_pull_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return reviewed_pull_request(blockers=3, cleanups=1)


def reader_urls(pull_request) -> list[str]:
    base = pull_request.get_absolute_url()
    return ["/", base, base + "blockers/", base + "cleanups/", base + "findings/1/", base + "runs/latest.json",
            base + "companion.zip"]


@pytest.fixture
def verify_url():
    return reverse("findings:verify", args=["acme", "rl", 4108])


@pytest.fixture
def staff_verifier(db):
    """A reviewer (the group the roles migration made) who may start verifications; no staff status."""
    return UserFactory(username="verifier", groups=["Reviewer"])


def test_an_anonymous_reader_reads_every_page_when_reading_is_public(client, data, settings):
    settings.RECHECK_PUBLIC_READ = True
    for url in reader_urls(data.pull_request):
        assert client.get(url).status_code == 200, url


def test_an_anonymous_reader_is_sent_to_log_in_when_reading_is_private(client, data, settings):
    settings.RECHECK_PUBLIC_READ = False
    for url in reader_urls(data.pull_request):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("account_login") + "?next=")


def test_a_logged_in_reader_reads_when_reading_is_private(client, data, settings):
    settings.RECHECK_PUBLIC_READ = False
    client.force_login(UserFactory())
    for url in reader_urls(data.pull_request):
        assert client.get(url).status_code == 200, url


@pytest.mark.parametrize(
    "url",
    [
        "/nobody/nothing/pull/4108/",
        "/acme/rl/pull/9999/",
        "/acme/rl/pull/9999/blockers/",
        "/acme/other/pull/4108/cleanups/",
        "/acme/rl/pull/4108/findings/99/",
        "/acme/rl/pull/9999/runs/latest.json",
        "/acme/rl/pull/9999/companion.zip",
    ],
)
def test_an_unknown_owner_name_number_or_finding_is_not_found(client, data, url):
    assert client.get(url).status_code == 404


def test_only_a_user_allowed_to_verify_sees_verify_now(client, data, staff_verifier, staff_maintainer):
    url = data.pull_request.get_absolute_url()
    assert "Verify now" not in client.get(url).content.decode()
    client.force_login(staff_maintainer)  # staff, but without findings.verify_pullrequest
    assert "Verify now" not in client.get(url).content.decode()
    client.force_login(staff_verifier)
    html = client.get(url).content.decode()
    assert "Verify now" in html and 'name="csrfmiddlewaretoken"' in html


def test_an_anonymous_post_to_verify_is_forbidden(client, data, verify_url):
    assert client.post(verify_url).status_code == 403
    assert not VerificationRun.objects.exists()


def test_staff_without_the_permission_cannot_start_a_verification(client, data, verify_url, staff_maintainer):
    client.force_login(staff_maintainer)
    assert client.post(verify_url).status_code == 403
    assert not VerificationRun.objects.exists()


def test_a_reader_cannot_either(client, data, verify_url):
    client.force_login(UserFactory(groups=["Reader"]))
    assert client.post(verify_url).status_code == 403
    assert not VerificationRun.objects.exists()


def test_a_reviewer_queues_a_verification_and_comes_back_with_a_message(
    client, data, verify_url, staff_verifier, django_capture_on_commit_callbacks
):
    client.force_login(staff_verifier)
    with mock.patch("findings.tasks.run_verification.delay") as delay:
        delay.return_value.id = "task-1"
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(verify_url)

    assert response.status_code == 302 and response["Location"] == data.pull_request.get_absolute_url()
    run = VerificationRun.objects.get()
    assert (run.pull_request, run.requested_by, run.commit, run.task_id) == (data.pull_request, staff_verifier, None, "task-1")
    delay.assert_called_once_with(run.pk)
    page = client.get(response["Location"]).content.decode()
    assert "Verification of acme/rl#4108 queued" in page
    assert "<progress" in page and "disabled" in page.split("Verify now")[0].rsplit("<button", 1)[1]


def test_verify_now_does_not_queue_a_second_run_while_one_is_active(client, data, verify_url, staff_verifier):
    VerificationRun.objects.create(pull_request=data.pull_request, status="running", total=4)
    client.force_login(staff_verifier)
    response = client.post(verify_url, follow=True)

    assert VerificationRun.objects.count() == 1
    assert "already under way" in response.content.decode()


def test_verify_needs_a_post_and_a_csrf_token(data, verify_url, staff_verifier):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(staff_verifier)
    assert client.get(verify_url).status_code == 405
    assert client.post(verify_url).status_code == 403
    assert not VerificationRun.objects.exists()


def test_a_refusal_and_a_missing_page_explain_themselves(client, data, verify_url, settings):
    settings.DEBUG = False
    refused = client.post(verify_url)
    assert refused.status_code == 403
    assert "Sign in to start verifications of acme/rl" in refused.content.decode()
    missing = client.get("/acme/rl/pull/1/")
    assert missing.status_code == 404 and "There is no such repository, pull request or finding" in missing.content.decode()
