"""Webhooks sent by a real Celery worker of the real app, consuming the notify queue (Redis when
CELERY_BROKER_URL is set, Celery's in-memory transport otherwise): the receiver down for a while,
then back, gets every message once, in the order they were written."""

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.conf import settings as django_settings
from django.db import connections
from standardwebhooks import Webhook

from notify.models import WebhookMessage
from recheck.celery import app
from tests.notify.receiver_down import receiver_down_at_first, wait_for


def _forget_broker_connections():
    app._pool = None
    app.amqp._producer_pool = None


def _close_connections(**kwargs):
    connections.close_all()


@pytest.fixture
def notify_worker(transactional_db, settings):
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "result_backend")}
    if not django_settings.CELERY_BROKER_URL:
        app.conf.update(broker_url="memory://", result_backend="cache+memory://")
        _forget_broker_connections()
    app.conf.task_always_eager = False
    app.control.purge()
    task_postrun.connect(_close_connections, weak=False)
    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, shutdown_timeout=30,
                          queues=["notify"], hostname="celery@notify-host") as worker:
            yield worker
            app.control.purge()
    finally:
        task_postrun.disconnect(_close_connections)
        app.conf.update(saved)
        _forget_broker_connections()


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
