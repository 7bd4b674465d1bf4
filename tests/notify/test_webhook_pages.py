"""The webhooks page of a repository, for its Admin: add one (the secret shown once), see every
attempt, resend with the same webhook-id; nobody else reaches it."""
import re

import pytest

from access.models import AuditEntry, Membership
from core.vocabulary import events as ev
from notify.models import WebhookEndpoint, WebhookMessage
from notify.webhooks.sending import webhooks_send_due
from tests import personas
from tests.timeline_world import TimelineWorld

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 0
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["localhost"]
    world = TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada")).imported()
    world.admin = personas.member_of(world.pull_request.repository,
                                     personas.user_with_role("no_role", username="adam"), Membership.Role.ADMIN)
    return world


def test_an_admin_adds_a_webhook_sees_its_attempts_and_resends_one(world, httpserver):
    site = personas.site_client(world.admin)
    answer = site.post("/acme/loader/webhooks/", {"url": httpserver.url_for("/hook"), "preset": "standard",
                                                  "kinds": [ev.FINDING_VERDICT_CHANGED, ev.FINDING_REGRESSED]},
                       follow=True)
    secret = re.search(r"shown this once: (whsec_[A-Za-z0-9+/=]+)", answer.content.decode()).group(1)
    endpoint = WebhookEndpoint.objects.get()
    assert endpoint.secrets == [secret] and AuditEntry.objects.filter(action="webhook.create").exists()
    httpserver.expect_request("/hook").respond_with_data("nope", status=500)
    world.first_push()
    webhooks_send_due()
    page = site.get("/acme/loader/webhooks/").content.decode()
    message = WebhookMessage.objects.get(endpoint=endpoint)
    assert message.message_id in page and "500" in page and "Resend" in page
    httpserver.clear()
    httpserver.expect_request("/hook").respond_with_data("ok")
    site.post(f"/acme/loader/webhooks/{endpoint.pk}/messages/{message.pk}/resend/")
    webhooks_send_due()
    assert httpserver.log[-1][0].headers["webhook-id"] == message.message_id
    assert "Delivered" in site.get("/acme/loader/webhooks/").content.decode()


def test_nobody_but_an_admin_reaches_the_webhooks(world, httpserver):
    maintainer = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="mo"),
                                    Membership.Role.MAINTAINER)
    assert personas.site_client(maintainer).get("/acme/loader/webhooks/").status_code == 403
    answer = personas.site_client(maintainer).post("/acme/loader/webhooks/", {"url": httpserver.url_for("/hook"),
                                                                              "kinds": [ev.GATE_CHANGED]})
    assert answer.status_code == 403 and not WebhookEndpoint.objects.exists()
    assert personas.site_client().get("/acme/loader/webhooks/").status_code in (302, 403)


def test_the_api_adds_lists_rotates_and_resends_as_the_site_does(world, httpserver):
    api = personas.api_client(world.admin, scopes=("read", "settings"))
    created = api.post("/api/repos/acme/loader/webhooks/", {"url": httpserver.url_for("/hook"),
                                                             "kinds": [ev.FINDING_STATUS_CHANGED]}, format="json")
    assert created.status_code == 201, created.content
    secret, pk = created.json()["secret"], created.json()["id"]
    assert api.get("/api/repos/acme/loader/webhooks/").json()[0]["secrets"] == 1
    assert "secret" not in api.get("/api/repos/acme/loader/webhooks/").json()[0]
    rotated = api.post(f"/api/repos/acme/loader/webhooks/{pk}/secret", {}, format="json").json()["secret"]
    assert rotated.startswith("whsec_") and WebhookEndpoint.objects.get().secrets == [rotated, secret]
    httpserver.expect_request("/hook").respond_with_data("ok")
    world.first_push()
    webhooks_send_due()
    listed = api.get(f"/api/repos/acme/loader/webhooks/{pk}/messages/").json()
    assert [(row["kind"], row["status"], row["attempts_made"][0]["response_status"]) for row in listed] == [
        (ev.FINDING_STATUS_CHANGED, "sent", 200)]
    resent = api.post(f"/api/repos/acme/loader/webhooks/{pk}/messages/{listed[0]['id']}/resend")
    assert resent.status_code == 200 and resent.json()["message_id"] == listed[0]["message_id"]
    bad = api.patch(f"/api/repos/acme/loader/webhooks/{pk}", {"url": "https://10.0.0.1/hook"}, format="json")
    assert bad.status_code == 400
    reader = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="rita"),
                                Membership.Role.READER)
    assert personas.api_client(reader, scopes=("read", "settings")).get(
        "/api/repos/acme/loader/webhooks/").status_code == 403
    assert api.delete(f"/api/repos/acme/loader/webhooks/{pk}").status_code == 204
