"""A worker's heartbeat thread lives as long as the worker: while its consumer is down (a broker
that went away) or shutting down with a task still under way, it stops refreshing the worker's row
but goes on vouching for the runs of its active tasks (decision 0032)."""
import time
from types import SimpleNamespace

import pytest
from celery.worker import state

from findings.models import VerificationRun
from findings.services.runs import verification_run_claim
from recheck.heartbeat import WorkerHeartbeat, active_task_ids
from reviews.models import WorkerHost
from tests.findings.services.test_runs_reaping import repo  # noqa: F401 (fixture)
from tests.findings.services.test_verification import import_review

pytestmark = pytest.mark.django_db(transaction=True)


class ActiveRequest:
    """A task a worker's pool is carrying out, as `celery.worker.state` keeps it."""

    def __init__(self, task_id: str, hostname: str):
        self.id, self.hostname = task_id, hostname


def consumer(hostname: str):
    return SimpleNamespace(hostname=hostname, task_consumer=SimpleNamespace(queues=[SimpleNamespace(name="verify")]))


def wait_until(condition, timeout: float = 20):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def test_the_heartbeat_vouches_for_its_runs_while_its_consumer_is_down_and_while_it_shuts_down(repo, settings):  # noqa: F811
    settings.RECHECK_WORKER_HEARTBEAT_SECONDS = 0.1
    pull_request = import_review(repo)
    run = VerificationRun.objects.create(pull_request=pull_request)
    verification_run_claim(run.pk, worker="w1@hostA", task_id="t-1")
    other = ActiveRequest("t-2", "w2@hostB")  # another worker's task in the same process is not this one's
    request = ActiveRequest("t-1", "w1@hostA")
    state.active_requests.add(request)
    state.active_requests.add(other)
    assert active_task_ids("w1@hostA") == ["t-1"]
    worker, step = consumer("w1@hostA"), WorkerHeartbeat(SimpleNamespace())

    def seen():
        return VerificationRun.objects.values_list("worker_seen_at", flat=True).get(pk=run.pk)

    try:
        step.start(worker)
        row = wait_until(lambda: WorkerHost.objects.filter(hostname="w1@hostA").first())
        claimed = seen()
        wait_until(lambda: seen() > claimed)

        step.stop(worker)  # the broker went away: the consumer restarts
        time.sleep(0.3)  # a beat under way when it stopped may still land
        stopped_at = WorkerHost.objects.get(hostname="w1@hostA").seen_at
        vouched = seen()
        wait_until(lambda: seen() > vouched)
        assert WorkerHost.objects.get(hostname="w1@hostA").seen_at == stopped_at, "no row refreshed meanwhile"

        step.start(worker)  # reconnected
        wait_until(lambda: WorkerHost.objects.get(hostname="w1@hostA").seen_at > stopped_at)
        assert row.seen_at < stopped_at

        step.shutdown(worker)  # a warm shutdown waits for the task under way
        assert not WorkerHost.objects.filter(hostname="w1@hostA").exists()
        vouched = seen()
        wait_until(lambda: seen() > vouched)
        assert step._thread.is_alive()
        state.active_requests.discard(request)
        wait_until(lambda: not step._thread.is_alive())
        assert not WorkerHost.objects.filter(hostname="w1@hostA").exists(), "not written again after it left"
    finally:
        state.active_requests.discard(request)
        state.active_requests.discard(other)
        step.shutdown(worker)
        if step._thread is not None:
            step._thread.join(10)


def lapse_settings(**env):
    import os
    import subprocess
    import sys

    read = "import recheck.settings as s; print(s.RECHECK_WORKER_LAPSE_SECONDS)"
    base = {key: value for key, value in os.environ.items() if not key.startswith("RECHECK_WORKER_")}
    return subprocess.run([sys.executable, "-c", read], env={**base, "SECRET_KEY": "x", **env},
                          capture_output=True, text=True)


def test_the_lapse_window_is_three_heartbeats_and_a_margin_and_never_under_two_heartbeats():
    assert lapse_settings().stdout.strip() == "120.0"
    assert lapse_settings(RECHECK_WORKER_HEARTBEAT_SECONDS="2").stdout.strip() == "36.0"
    refused = lapse_settings(RECHECK_WORKER_HEARTBEAT_SECONDS="30", RECHECK_WORKER_LAPSE_SECONDS="45")
    assert refused.returncode != 0 and "RECHECK_WORKER_LAPSE_SECONDS must be at least two" in refused.stderr
