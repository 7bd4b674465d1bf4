"""The operations figures: the health page's JSON and the Prometheus metrics say the same, behind a
token from the environment, read in a bounded number of queries; queue depths are read from the
broker's Redis (a redis-server of the test's own)."""
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from findings.enqueue import enqueue
from findings.models import VerificationRun
from forge.models import ForgeCall
from recheck.celery import app
from recheck.routing import served_queues, verify_shard
from reviews.models import PinnedCommit, WorkerHost
from reviews.services import worker_host_heartbeat
from tests.factories import CommitFactory, PullRequestFactory
from tests.forge.outbox.test_budget import needs_redis
from tests.findings.test_redis_restart import OwnRedis

TOKEN = "operations-token-for-the-test"


@pytest.fixture
def operator(settings, client):
    settings.RECHECK_OPERATIONS_TOKEN = TOKEN
    return {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}


def metric_values(text: str) -> dict[tuple, float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/healthz/operations", "/metrics"])
def test_without_the_token_the_figures_are_not_there(client, settings, path):
    settings.RECHECK_OPERATIONS_TOKEN = ""
    assert client.get(path).status_code == 404
    assert client.get(path, HTTP_AUTHORIZATION="Bearer ").status_code == 404
    settings.RECHECK_OPERATIONS_TOKEN = TOKEN
    assert client.get(path, HTTP_AUTHORIZATION="Bearer not-the-token").status_code == 404
    assert client.get(path).status_code == 404
    assert client.get(path, HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200


@pytest.mark.django_db
def test_the_health_page_and_the_metrics_say_the_same(client, operator, django_assert_max_num_queries):
    now = timezone.now()
    pull_request = PullRequestFactory()
    head = CommitFactory(repository=pull_request.repository)
    pin = PinnedCommit.objects.create(pull_request=pull_request, commit=head, role="head")
    PinnedCommit.objects.filter(pk=pin.pk).update(pinned_at=now - timedelta(seconds=42))
    VerificationRun.objects.create(pull_request=pull_request, commit=head, status="done", finished_at=now)
    waiting = VerificationRun.objects.create(pull_request=pull_request)
    VerificationRun.objects.filter(pk=waiting.pk).update(created_at=now - timedelta(seconds=300))
    ForgeCall.objects.create(repository=pull_request.repository, forge="github", sha="c" * 40, kind="commit_status",
                             state="pending", digest="d" * 64, body={}, due_at=now - timedelta(seconds=120))
    worker_host_heartbeat(hostname="celery@verify-0", queues=["verify.0", "verify"], mirror_bytes=123456)

    with django_assert_max_num_queries(5):
        figures = client.get("/healthz/operations", **operator).json()
    metrics = client.get("/metrics", **operator)

    assert figures["push_to_verdict_seconds"]["count"] == 1
    assert 41 <= figures["push_to_verdict_seconds"]["median"] <= 44
    assert 299 <= figures["oldest_waiting_seconds"]["verify"] <= 310
    assert 119 <= figures["oldest_waiting_seconds"]["forge"] <= 130
    assert [(w["hostname"], w["mirror_bytes"]) for w in figures["workers"]] == [("celery@verify-0", 123456)]
    values = metric_values(metrics.content.decode())
    assert values[("recheck_worker_mirror_bytes", (("hostname", "celery@verify-0"),))] == 123456
    assert values[("recheck_push_to_verdict_runs", ())] == 1
    assert abs(values[("recheck_push_to_verdict_seconds", (("statistic", "median"),))]
               - figures["push_to_verdict_seconds"]["median"]) < 2
    assert abs(values[("recheck_oldest_waiting_seconds", (("queue", "verify"),))]
               - figures["oldest_waiting_seconds"]["verify"]) < 2
    assert values[("recheck_host_mirror_bytes", ())] == figures["this_host_mirror_bytes"]


@pytest.mark.django_db
def test_a_worker_gone_silent_is_not_listed(client, operator):
    worker_host_heartbeat(hostname="celery@gone", queues=["verify"], mirror_bytes=1)
    WorkerHost.objects.update(seen_at=timezone.now() - timedelta(seconds=django_settings.RECHECK_WORKER_ALIVE_SECONDS + 1))
    assert client.get("/healthz/operations", **operator).json()["workers"] == []


@needs_redis
@pytest.mark.django_db
def test_queue_depths_are_read_from_the_broker(client, operator, settings):
    server = OwnRedis()
    server.start()
    url = f"redis://127.0.0.1:{server.port}/0"
    # A broker configured from the environment (CI) was copied to broker_write_url when the app
    # was configured: both are pointed at this Redis.
    keys = ("task_always_eager", "broker_url", "broker_write_url")
    saved = {key: app.conf.get(key) for key in keys}
    try:
        settings.CELERY_BROKER_URL = url
        app.conf.update(broker_url=url, broker_write_url=url, task_always_eager=False)
        app._pool = None
        app.amqp._producer_pool = None
        for job in range(3):
            enqueue("findings.tasks.run_import", job)
        time.sleep(1.5)
        enqueue("presentation.tasks.render_companion_pages", 1)
        # Sharded: the pages of a repository whose render shard a worker serves wait in that shard.
        settings.RECHECK_VERIFY_SHARDS, settings.RECHECK_ROUTING_CACHE_SECONDS = 2, 0
        pull_request = PullRequestFactory()
        shard = f"render.{verify_shard(pull_request.repository_id, 2)}"
        worker_host_heartbeat(hostname="celery@render-x", queues=[shard, "render"])
        served_queues.forget()
        enqueue("presentation.tasks.render_companion_pages", pull_request.pk)
        figures = client.get("/healthz/operations", **operator).json()
        depths, ages = figures["queues"], figures["queue_age_seconds"]
        assert (depths["maintenance"], depths["render"], depths[shard], depths["verify"]) == (3, 1, 1, 0)
        assert {"verify.0", "verify.1", "render.0", "render.1"} <= set(depths)
        # The oldest message's age, in every queue: the first import waited longest.
        assert 1.5 <= ages["maintenance"] < 30 and 0 <= ages["render"] < ages["maintenance"]
        assert ages["verify"] is None and set(ages) == set(depths)
        values = metric_values(client.get("/metrics", **operator).content.decode())
        assert values[("recheck_queue_depth", (("queue", "maintenance"),))] == 3
        assert values[("recheck_queue_age_seconds", (("queue", "maintenance"),))] >= 1.5

        server.stop()
        assert client.get("/healthz/operations", **operator).json()["queues"] is None, "a broker down is said"
    finally:
        app.conf.update(saved)
        app._pool = None
        app.amqp._producer_pool = None
        served_queues.forget()
        server.stop()
