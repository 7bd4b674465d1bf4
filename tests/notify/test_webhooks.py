"""Outgoing webhooks, end to end: a real git repository's push becomes events, the events become
signed messages, and a local receiver (pytest-httpserver on 127.0.0.1) verifies each with the
reference implementation of Standard Webhooks."""
import json
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError
from werkzeug import Response

from access.models import AuditEntry, Membership
from access.permissions import ActionRefused
from core.vocabulary import events as ev
from notify.models import WebhookAttempt, WebhookEndpoint, WebhookMessage
from notify.webhooks.addresses import WebhookUrlRefused
from notify.webhooks.sending import webhook_message_send, webhooks_send_due
from notify.webhooks.services import (
    webhook_endpoint_create,
    webhook_message_resend,
    webhook_secret_rotate,
)
from tests import personas
from tests.timeline_world import TimelineWorld

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 0
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["localhost"]  # the receiver, pytest-httpserver
    settings.RECHECK_SITE_URL = "https://recheck.example"
    return TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada"))


@pytest.fixture
def admin(world):
    world.imported()
    return personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="adam"),
                              Membership.Role.ADMIN)


def endpoint_for(world, admin, httpserver, *, kinds=(ev.FINDING_VERDICT_CHANGED, ev.FINDING_REGRESSED), **options):
    return webhook_endpoint_create(repository=world.pull_request.repository, actor=admin,
                                   url=httpserver.url_for("/hooks/recheck"), kinds=list(kinds), **options)


def received(httpserver):
    """What the receiver got: (headers, body text) per request, in order."""
    return [(dict(request.headers), request.get_data(as_text=True)) for request, _ in httpserver.log]


def test_a_push_is_one_signed_webhook_per_event_kind_that_verifies(world, admin, httpserver):
    endpoint, secret = endpoint_for(world, admin, httpserver)
    httpserver.expect_request("/hooks/recheck", method="POST").respond_with_data("ok")
    world.first_push()
    webhooks_send_due()
    httpserver.log.clear()
    before = WebhookMessage.objects.count()
    world.second_push()
    assert WebhookMessage.objects.count() == before + 2
    assert webhooks_send_due() == 2
    deliveries = received(httpserver)
    assert len(deliveries) == 2
    bodies = [Webhook(secret).verify(body, headers) for headers, body in deliveries]
    assert [body["type"] for body in bodies] == [ev.FINDING_VERDICT_CHANGED, ev.FINDING_REGRESSED]
    fixed, back = bodies[0]["data"]["events"][0], bodies[1]["data"]["events"][0]
    assert (fixed["finding_number"], fixed["payload"]["from"], fixed["payload"]["to"]) == (1, "present", "likely_fixed")
    assert (back["finding_number"], back["payload"]["finding"]["possibly_regressed"]) == (2, True)
    assert fixed["sha"] == world.head.sha and fixed["url"].startswith("https://recheck.example/acme/loader/pull/7/")
    assert bodies[0]["data"]["pull_request"]["number"] == 7
    # The same event, as the API's timeline gives it.
    api = personas.api_client(admin).get("/api/repos/acme/loader/pulls/7/events/", {"page_size": 200}).json()
    listed = {row["id"]: row for row in api["results"]}
    for key in ("kind", "cause", "actor", "generation", "finding_number", "sha", "payload", "repository"):
        assert listed[fixed["id"]][key] == fixed[key], key
    # A signature that does not match refuses: the receiver's check is real.
    headers, body = deliveries[0]
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(body.replace("likely_fixed", "present"), headers)
    assert all(message.status == "sent" for message in WebhookMessage.objects.filter(endpoint=endpoint))


def test_a_resent_message_keeps_its_webhook_id_and_is_audited(world, admin, httpserver):
    endpoint, secret = endpoint_for(world, admin, httpserver)
    httpserver.expect_request("/hooks/recheck").respond_with_data("ok")
    world.first_push()
    webhooks_send_due()
    message = WebhookMessage.objects.filter(endpoint=endpoint).first()
    first_id = received(httpserver)[0][0]["Webhook-Id"]
    webhook_message_resend(message=message, actor=admin)
    webhooks_send_due()
    headers, body = received(httpserver)[-1]
    assert headers["Webhook-Id"] == first_id == message.message_id
    Webhook(secret).verify(body, headers)
    assert AuditEntry.objects.filter(action="webhook.resend", actor=admin).count() == 1
    reader = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="rita"),
                                Membership.Role.READER)
    with pytest.raises(ActionRefused):
        webhook_message_resend(message=message, actor=reader)
    assert WebhookAttempt.objects.filter(message=message).count() == 2


def test_during_a_rotation_every_secret_signs(world, admin, httpserver):
    endpoint, old = endpoint_for(world, admin, httpserver)
    new = webhook_secret_rotate(endpoint=endpoint, actor=admin)
    httpserver.expect_request("/hooks/recheck").respond_with_data("ok")
    world.first_push()
    webhooks_send_due()
    headers, body = received(httpserver)[0]
    assert len(headers["Webhook-Signature"].split(" ")) == 2
    Webhook(old).verify(body, headers)
    Webhook(new).verify(body, headers)
    webhook_secret_rotate(endpoint=endpoint, actor=admin, retire=True)
    endpoint.refresh_from_db()
    assert endpoint.secrets == [new]


@pytest.mark.parametrize("url", [
    "https://127.0.0.1/hook", "https://10.1.2.3/hook", "https://[::1]/hook", "https://169.254.169.254/latest",
    "https://0x7f.1/hook", "https://[::ffff:192.168.0.1]/hook", "http://hooks.example.com/hook",
    "https://user:pass@hooks.example.com/hook", "ftp://hooks.example.com/", "not a url",
])
def test_an_internal_or_unsafe_url_is_refused_when_it_is_set(world, admin, url, settings):
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = []
    with pytest.raises(WebhookUrlRefused):
        webhook_endpoint_create(repository=world.pull_request.repository, actor=admin, url=url,
                                kinds=[ev.GATE_CHANGED])
    assert not WebhookEndpoint.objects.exists()


def test_only_the_repositorys_admin_sets_a_webhook_and_it_is_audited(world, admin, httpserver):
    maintainer = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="mo"),
                                    Membership.Role.MAINTAINER)
    with pytest.raises(ActionRefused):
        endpoint_for(world, maintainer, httpserver)
    endpoint, secret = endpoint_for(world, admin, httpserver)
    refused = AuditEntry.objects.get(action="webhook.create", outcome=AuditEntry.Outcome.REFUSED)
    entry = AuditEntry.objects.get(action="webhook.create", outcome=AuditEntry.Outcome.DONE)
    assert refused.actor == maintainer and entry.actor == admin and secret not in json.dumps(entry.changes)


def test_a_name_that_resolves_to_an_internal_address_at_send_time_is_refused_then(world, admin, monkeypatch, settings):
    from engine.git import safety

    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = []
    monkeypatch.setattr(safety, "resolve_host", lambda host, port: ["93.184.216.34"])
    endpoint, _ = webhook_endpoint_create(repository=world.pull_request.repository, actor=admin,
                                          url="https://hooks.example.com/recheck", kinds=[ev.FINDING_VERDICT_CHANGED])
    monkeypatch.setattr(safety, "resolve_host", lambda host, port: ["10.0.0.7"])  # the record changed since
    world.first_push()
    message = WebhookMessage.objects.get(endpoint=endpoint)
    webhook_message_send(message_id=message.pk)
    attempt = WebhookAttempt.objects.get(message=message)
    assert attempt.response_status is None and "private address" in attempt.error
    message.refresh_from_db()
    assert message.status == "pending" and message.due_at > timezone.now()


def test_a_redirect_is_not_followed_and_a_huge_answer_is_not_read(world, admin, httpserver):
    endpoint, _ = endpoint_for(world, admin, httpserver)
    httpserver.expect_request("/hooks/recheck").respond_with_response(
        Response("", status=302, headers={"Location": httpserver.url_for("/internal")}))
    httpserver.expect_request("/internal").respond_with_data("should never be reached")
    world.first_push()
    webhooks_send_due()
    assert [request.path for request, _ in httpserver.log] == ["/hooks/recheck"]
    message = WebhookMessage.objects.get(endpoint=endpoint)
    assert message.status == "pending" and "redirect" in message.last_error
    httpserver.clear()
    httpserver.expect_request("/hooks/recheck").respond_with_data("x" * 5_000_000)
    webhook_message_resend(message=message, actor=admin)
    webhooks_send_due()
    attempt = WebhookAttempt.objects.filter(message=message).last()
    assert attempt.response_status == 200 and len(attempt.response_body) <= 4096


def test_a_410_turns_the_endpoint_off(world, admin, httpserver):
    endpoint, _ = endpoint_for(world, admin, httpserver)
    httpserver.expect_request("/hooks/recheck").respond_with_data("gone", status=410)
    world.first_push()
    webhooks_send_due()
    endpoint.refresh_from_db()
    assert not endpoint.active and "410" in endpoint.disabled_reason
    assert WebhookMessage.objects.get(endpoint=endpoint).status == "failed"
    world.second_push()
    assert WebhookMessage.objects.filter(endpoint=endpoint).count() == 1  # nothing more is written for it


def test_a_receiver_down_then_back_gets_every_event_once_in_order(world, admin, httpserver, settings):
    settings.RECHECK_WEBHOOK_RETRY_SCHEDULE = [5, 5, 5]
    endpoint, secret = endpoint_for(world, admin, httpserver, kinds=ev.EVENT_KINDS)
    up = {"now": False}

    def receiver(request):
        return Response("ok") if up["now"] else Response("down", status=503)

    httpserver.expect_request("/hooks/recheck").respond_with_handler(receiver)
    world.first_push()
    world.second_push()
    written = list(WebhookMessage.objects.filter(endpoint=endpoint).order_by("id").values_list("message_id", flat=True))
    assert len(written) >= 4
    webhooks_send_due()  # down: the first message is tried, the others wait behind it
    assert len(httpserver.log) == 1
    later = timezone.now() + timedelta(seconds=6)
    webhooks_send_due(now=later)  # still down
    up["now"] = True
    for step in range(2, 12):
        webhooks_send_due(now=timezone.now() + timedelta(seconds=6 * step))
    delivered = [headers["Webhook-Id"] for (headers, body), (_, response) in zip(received(httpserver), httpserver.log,
                                                                                   strict=True)
                 if response.status_code == 200]
    assert delivered == written  # each once, in the order they were written
    for headers, body in received(httpserver):
        Webhook(secret).verify(body, headers)
    assert set(WebhookMessage.objects.filter(endpoint=endpoint).values_list("status", flat=True)) == {"sent"}


def test_the_chat_preset_sends_slack_compatible_text_and_blocks(world, admin, httpserver):
    endpoint, secret = endpoint_for(world, admin, httpserver, preset="chat")
    httpserver.expect_request("/hooks/recheck").respond_with_data("ok")
    world.first_push()
    webhooks_send_due()
    headers, body = received(httpserver)[0]
    chat = Webhook(secret).verify(body, headers)
    assert set(chat) == {"text", "blocks"}
    assert "acme/loader#7" in chat["text"] and "Finding 2" in chat["text"]
    assert [block["type"] for block in chat["blocks"]] == ["section", "section"]


def test_it_connects_to_the_address_it_checked_not_to_a_second_lookup(world, admin, httpserver, monkeypatch, settings):
    """The name is resolved once, checked, and the connection made to that address with the name
    in the Host header: `hooks.invalid` resolves nowhere but through the check's own lookup."""
    from engine.git import safety

    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["hooks.invalid"]
    monkeypatch.setattr(safety, "resolve_host", lambda host, port: ["127.0.0.1"])
    url = f"http://hooks.invalid:{httpserver.port}/hook"
    endpoint, secret = webhook_endpoint_create(repository=world.pull_request.repository, actor=admin, url=url,
                                               kinds=[ev.FINDING_VERDICT_CHANGED])
    httpserver.expect_request("/hook").respond_with_data("ok")
    world.first_push()
    webhooks_send_due()
    headers, body = received(httpserver)[0]
    assert headers["Host"] == f"hooks.invalid:{httpserver.port}"
    Webhook(secret).verify(body, headers)


def test_the_signature_is_the_specifications_test_vector():
    """The Standard Webhooks specification's own example, as docs/using/notifications.md gives it."""
    from datetime import UTC, datetime

    from notify.webhooks.signing import signed_headers

    headers = signed_headers(message_id="msg_p5jXN8AQM9LWM0D4loKWxJek",
                             timestamp=datetime.fromtimestamp(1614265330, tz=UTC), body='{"test": 2432232314}',
                             secrets=["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"])
    assert headers["webhook-signature"] == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
    assert headers["webhook-timestamp"] == "1614265330"


def test_a_slow_receiver_is_given_up_on_at_the_timeout_and_tried_again(world, admin, httpserver, settings):
    import time

    settings.RECHECK_WEBHOOK_TIMEOUT = 0.5
    endpoint, _ = endpoint_for(world, admin, httpserver)

    def slow(request):
        time.sleep(1.5)
        return Response("late")

    httpserver.expect_request("/hooks/recheck").respond_with_handler(slow)
    world.first_push()
    webhooks_send_due()
    message = WebhookMessage.objects.get(endpoint=endpoint)
    attempt = WebhookAttempt.objects.get(message=message)
    assert attempt.response_status is None and "Timeout" in attempt.error
    assert message.status == "pending" and message.due_at > timezone.now()
    # The receiver is still answering the request given up on: it finishes here, or its late entry
    # would land in the log of the next test (the server outlives each test).
    deadline = time.monotonic() + 10
    while not httpserver.log and time.monotonic() < deadline:
        time.sleep(0.05)
