"""Honest answers while the database or the broker is down: 503 with Retry-After (JSON under
/api/), never an HTML 500 and never "queued" for work nobody will do."""
import json
import socket
from contextlib import contextmanager

import pytest
from django.db import connections
from django.test import Client
from kombu.exceptions import OperationalError as BrokerError
from rest_framework.test import APIClient

from findings.models import VerificationRun, WebhookDelivery
from findings.tasks import run_verification
from tests.api.conftest import token_client
from tests.api.test_webhooks import SECRET, deliver, pull_request_event
from tests.factories import PinnedCommitFactory, PullRequestFactory, UserFactory


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def database_down():
    """Point the connection at a database that is not there, as during a restart."""
    connection = connections["default"]
    saved = dict(connection.settings_dict)
    connection.close()
    if connection.vendor == "sqlite":
        connection.settings_dict["NAME"] = "/nonexistent/recheck/db.sqlite3"
    else:
        connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.fixture
def pull_request(transactional_db):
    pull_request = PullRequestFactory(repository__slug="acme/loader", number=4108)
    PinnedCommitFactory(pull_request=pull_request, role="head")
    return pull_request


@pytest.fixture
def broker_down(monkeypatch):
    """Publishing fails the way kombu fails when Redis does not answer."""

    def refuse(*args, **kwargs):
        raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(run_verification, "delay", refuse)


def test_while_the_database_is_down_the_api_answers_503_json_with_retry_after(pull_request, settings):
    settings.RECHECK_PUBLIC_READ = True
    writer = token_client(UserFactory(username="ci-bot", permissions=["findings.verify_pullrequest"]))
    with database_down():
        responses = [
            APIClient().get("/api/findings/"),
            APIClient().get("/api/repos/acme/loader/pulls/4108/gate"),
            writer.post("/api/repos/acme/loader/pulls/4108/verify", {}, format="json"),
        ]
    for response in responses:
        assert response.status_code == 503
        assert response["Content-Type"].startswith("application/json")
        assert response["Retry-After"] == "30"
        assert "database" in response.json()["detail"]


def test_while_the_database_is_down_pages_answer_503_not_500(pull_request, settings, staff_maintainer):
    settings.RECHECK_PUBLIC_READ = True
    browser = Client(raise_request_exception=False)
    staff = Client(raise_request_exception=False)
    staff.force_login(staff_maintainer)
    with database_down():
        responses = [browser.get("/"), browser.get(pull_request.get_absolute_url()), staff.get("/admin/")]
    for response in responses:
        assert response.status_code == 503
        assert response["Retry-After"] == "30"
        assert "Back in a moment" in response.content.decode()
    assert browser.get("/").status_code == 200  # and it serves again once the database is back


def test_the_health_check_says_the_database_is_down_without_its_address(pull_request):
    with database_down():
        response = Client().get("/healthz")
    assert response.status_code == 503 and response.json() == {"status": "error", "database": "not answering"}


def test_a_verify_request_the_broker_cannot_take_is_a_503_not_a_202(pull_request, broker_down):
    writer = token_client(UserFactory(username="ci-bot", permissions=["findings.verify_pullrequest"]))
    response = writer.post("/api/repos/acme/loader/pulls/4108/verify", {}, format="json")
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert "could not be queued" in response.json()["detail"]
    run = VerificationRun.objects.get()
    assert run.status == "failed" and "6379" not in run.message


def test_a_webhook_delivery_that_could_not_be_queued_is_not_recorded_so_the_redelivery_acts(
    pull_request, settings, monkeypatch
):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = SECRET
    queued = []
    down = True

    def delay(run_id):
        if down:
            raise BrokerError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        queued.append(run_id)
        from types import SimpleNamespace

        return SimpleNamespace(id=f"task-{run_id}")

    monkeypatch.setattr(run_verification, "delay", delay)
    hook = APIClient()
    response = deliver(hook, pull_request_event(), delivery="d-outage")
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert not WebhookDelivery.objects.exists()

    down = False
    redelivered = deliver(hook, pull_request_event(), delivery="d-outage")
    assert redelivered.status_code == 202, redelivered.json()
    assert len(queued) == 1
    assert WebhookDelivery.objects.get().delivery_id == "d-outage"
    assert json.loads(redelivered.content)["duplicate"] is False


def test_the_site_s_verify_button_says_the_queue_is_down(pull_request, broker_down, staff_maintainer):
    from django.contrib.auth.models import Permission

    staff_maintainer.user_permissions.add(Permission.objects.get(codename="verify_pullrequest"))
    browser = Client()
    browser.force_login(staff_maintainer)
    response = browser.post(f"{pull_request.get_absolute_url()}verify/", follow=True)
    assert "could not be queued" in response.content.decode()
