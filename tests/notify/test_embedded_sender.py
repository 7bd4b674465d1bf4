"""The embedded default (no broker): `manage.py send_notifications`'s loop writes the events of the
pull requests nobody read and delivers each webhook once, in order, after the receiver comes back."""
import threading
import time

import pytest
from standardwebhooks import Webhook
from werkzeug import Response

from access.models import Membership
from core.vocabulary import events as ev
from notify.models import WebhookMessage
from notify.sender import notifications_send_forever
from notify.webhooks.services import webhook_endpoint_create
from reviews.services import pull_request_changed
from tests import personas
from tests.timeline_world import TimelineWorld


def _wait(predicate, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


@pytest.mark.django_db(transaction=True)
def test_the_in_process_sender_catches_up_and_delivers_once_in_order(tmp_path, settings, httpserver):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    settings.RECHECK_NOTIFY_BATCH_SECONDS = 0
    settings.RECHECK_WEBHOOK_INTERNAL_HOSTS = ["localhost"]
    settings.RECHECK_WEBHOOK_RETRY_SCHEDULE = [0.3] * 30
    world = TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada")).imported()
    admin = personas.member_of(world.pull_request.repository, personas.user_with_role("no_role", username="adam"),
                               Membership.Role.ADMIN)
    endpoint, secret = webhook_endpoint_create(repository=world.pull_request.repository, actor=admin,
                                               url=httpserver.url_for("/hook"), kinds=list(ev.EVENT_KINDS))
    up = {"now": False}
    httpserver.expect_request("/hook").respond_with_handler(
        lambda request: Response("ok") if up["now"] else Response("down", status=503))
    world.first_push()
    world.second_push()
    # A change nobody reads: only the sender's catch-up derives the state and writes its event.
    from findings.services.resolution import finding_resolve

    finding_resolve(finding=world.finding(1), status="fixed", actor=world.actor, source="site", commit=world.head,
                    note="Fixed at the head.")
    pull_request_changed(pull_request_id=world.pull_request.pk)
    stop = threading.Event()
    sender = threading.Thread(target=notifications_send_forever, kwargs={"stop": stop, "poll": 0.2}, daemon=True)
    sender.start()
    try:
        _wait(lambda: WebhookMessage.objects.filter(endpoint=endpoint, kind=ev.FINDING_STATUS_CHANGED).count() == 2)
        _wait(lambda: len(httpserver.log) >= 2)
        up["now"] = True
        _wait(lambda: set(WebhookMessage.objects.filter(endpoint=endpoint).values_list("status", flat=True))
              == {"sent"})
    finally:
        stop.set()
        sender.join(timeout=10)
    written = list(WebhookMessage.objects.filter(endpoint=endpoint).order_by("id").values_list("message_id", flat=True))
    delivered = [request.headers["webhook-id"] for request, response in httpserver.log if response.status_code == 200]
    assert delivered == written
    for request, _ in httpserver.log:
        Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
