"""A Redis restart under a running verification loses nothing: progress reports to the result
backend are best-effort, the run row and the results are in the database. The test starts its own
redis-server on a free port and restarts that one, never the machine's."""
import os
import shutil
import socket
import subprocess
import threading
import time

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.db import connections

from findings.services.verification import run as verifying
from findings.models import Verification, VerificationRun
from recheck.celery import app
from tests.findings.services.test_runs_reaping import repo  # noqa: F401 (fixture)
from tests.findings.services.test_verification import import_review

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # A laptop without redis-server skips; CI (which sets CI) must run it, and fails without one.
    pytest.mark.skipif(
        shutil.which("redis-server") is None and not os.environ.get("CI"), reason="needs redis-server"
    ),
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class OwnRedis:
    def __init__(self, bind: tuple[str, ...] = ()):
        self.port = free_port()
        # Addresses to listen on besides 127.0.0.1 (the simulated hosts' veth pairs).
        self.bind = ("127.0.0.1", *bind)
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", *self.bind, "--protected-mode", "no", "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self):
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)
            self.process = None


@pytest.fixture
def own_redis():
    server = OwnRedis()
    server.start()
    yield server
    server.stop()


def _forget_connections():
    """Make the app connect anew to whatever broker and backend it is configured with now (what
    Celery itself does after a fork)."""
    app._after_fork()
    app._backend_cache = None
    app._local.__dict__.pop("backend", None)


def _close_connections(**kwargs):
    connections.close_all()


def test_a_redis_restart_mid_run_loses_nothing(repo, own_redis, monkeypatch):  # noqa: F811
    pull_request = import_review(repo)
    saved = {key: app.conf[key] for key in ("task_always_eager", "broker_url", "result_backend")}
    url = f"redis://127.0.0.1:{own_redis.port}"
    # Celery reads CELERY_BROKER_URL and CELERY_RESULT_BACKEND from the environment before its
    # configuration (CI sets both): pointed at this Redis there too, or the run would go through
    # the machine's Redis and the restart would touch nothing it uses.
    monkeypatch.setenv("CELERY_BROKER_URL", f"{url}/0")
    monkeypatch.setenv("CELERY_RESULT_BACKEND", f"{url}/1")
    app.conf.update(broker_url=f"{url}/0", result_backend=f"{url}/1", task_always_eager=False)
    _forget_connections()
    assert (app.conf.broker_write_url, app.conf.broker_read_url, app.conf.result_backend) == (
        f"{url}/0", f"{url}/0", f"{url}/1")

    original = verifying.verification_run_advance
    restarts = []

    def advance(run, *, by=1):
        if not restarts:
            # Redis goes away under the running verification and is back two seconds later.
            own_redis.stop()
            restarts.append(threading.Timer(2.0, own_redis.start))
            restarts[0].start()
        original(run, by=by)

    monkeypatch.setattr(verifying, "verification_run_advance", advance)
    task_postrun.connect(_close_connections, weak=False)
    try:
        with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, shutdown_timeout=30):
            run = VerificationRun.objects.create(pull_request=pull_request)
            app.tasks["findings.tasks.run_verification"].delay(run.pk)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                run.refresh_from_db()
                if run.status in ("done", "failed"):
                    break
                time.sleep(0.1)
            restarts[0].join()
    finally:
        task_postrun.disconnect(_close_connections)
        monkeypatch.undo()
        app.conf.update(saved)
        _forget_connections()

    assert restarts, "the run never reported progress"
    assert run.status == "done", run.message
    assert (run.done, run.total) == (3, 3)
    assert Verification.objects.filter(commit__sha=repo.reviewed).count() == 3
