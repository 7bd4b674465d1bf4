"""The embedded default (no broker): `manage.py send_notifications`'s loop writes the events of the
pull requests nobody read and delivers each webhook once, in order, after the receiver comes back."""
import threading

import pytest
from standardwebhooks import Webhook

from core.vocabulary import events as ev
from notify.models import WebhookMessage
from notify.sender import notifications_send_forever
from reviews.services import pull_request_changed
from tests.notify.receiver_down import receiver_down_at_first, wait_for


@pytest.mark.django_db(transaction=True)
def test_the_in_process_sender_catches_up_and_delivers_once_in_order(tmp_path, settings, httpserver):
    receiver = receiver_down_at_first(tmp_path, settings, httpserver, retry_seconds=0.3, retries=30)
    world, endpoint, secret, up = receiver.world, receiver.endpoint, receiver.secret, receiver.up
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
        wait_for(lambda: WebhookMessage.objects.filter(endpoint=endpoint, kind=ev.FINDING_STATUS_CHANGED).count() == 2)
        wait_for(lambda: len(httpserver.log) >= 2)
        up["now"] = True
        wait_for(lambda: set(WebhookMessage.objects.filter(endpoint=endpoint).values_list("status", flat=True))
              == {"sent"})
    finally:
        stop.set()
        sender.join(timeout=10)
    written = list(WebhookMessage.objects.filter(endpoint=endpoint).order_by("id").values_list("message_id", flat=True))
    delivered = [request.headers["webhook-id"] for request, response in httpserver.log if response.status_code == 200]
    assert delivered == written
    for request, _ in httpserver.log:
        Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
