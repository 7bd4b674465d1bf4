"""Webhooks sent by a real Celery worker of the real app, consuming the notify queue (Redis when
CELERY_BROKER_URL is set, Celery's in-memory transport otherwise): the receiver down for a while,
then back, gets every message once, in the order they were written."""

import pytest
from standardwebhooks import Webhook

from notify.models import WebhookMessage
from tests.notify.receiver_down import receiver_down_at_first, wait_for
from tests.workers import real_broker, worker_thread


@pytest.fixture
def notify_worker(transactional_db, settings):
    with real_broker() as app, worker_thread(queues=["notify"], hostname="celery@notify-host") as worker:
        yield worker
        app.control.purge()


def test_a_worker_delivers_every_message_once_in_order_after_the_receiver_comes_back(
        notify_worker, tmp_path, settings, httpserver):
    receiver = receiver_down_at_first(tmp_path, settings, httpserver, retry_seconds=0.5, retries=20)
    world, endpoint, secret, up = receiver.world, receiver.endpoint, receiver.secret, receiver.up
    world.first_push()
    world.second_push()
    written = list(WebhookMessage.objects.filter(endpoint=endpoint).order_by("id").values_list("message_id", flat=True))
    assert len(written) >= 4
    wait_for(lambda: len(httpserver.log) >= 2)  # the first message, tried and tried again while it is down
    up["now"] = True
    wait_for(lambda: set(WebhookMessage.objects.filter(endpoint=endpoint).values_list("status", flat=True)) == {"sent"})
    delivered = [request.headers["webhook-id"] for request, response in httpserver.log if response.status_code == 200]
    assert delivered == written
    for request, _ in httpserver.log:
        Webhook(secret).verify(request.get_data(as_text=True), dict(request.headers))
