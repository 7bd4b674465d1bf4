"""Work routed by kind and by repository, through the real Celery app's router (the one
configuration every process sends with) and a real worker consuming a shard queue."""
import os
import subprocess
import sys
import time
from datetime import timedelta
from importlib import import_module

import pytest
from celery.signals import task_prerun
from django.conf import settings as django_settings
from django.utils import timezone

from findings.models import CheckReport, VerificationRun
from findings.services.runs import verification_run_request
from recheck import routing
from recheck.celery import app
from recheck.routing import QUEUE_OF_TASK, served_queues, shard_queue, verify_shard
from reviews.models import WorkerHost
from reviews.services import worker_host_heartbeat
from tests.factories import CommitFactory, PullRequestFactory, RepositoryFactory
from tests.findings.services.test_verification import LOADER, import_review
from tests.gitrepo import GitRepoBuilder
from tests.workers import real_broker, worker_thread

SHARDS = 4


@pytest.fixture
def sharded(settings):
    settings.RECHECK_VERIFY_SHARDS = SHARDS
    settings.RECHECK_ROUTING_CACHE_SECONDS = 0
    served_queues.forget()
    yield
    served_queues.forget()


def routed(name: str, *args) -> str:
    """The queue the app sends the task `name` with `args` to."""
    return app.amqp.router.route({}, name, args, {})["queue"].name


def test_every_task_of_the_project_has_a_queue_of_its_kind():
    for module in ("findings.tasks", "forge.tasks", "presentation.tasks", "notify.tasks"):
        import_module(module)
    ours = {name for name in app.tasks if name.split(".")[0] in {"findings", "forge", "presentation", "notify"}}
    assert ours == set(QUEUE_OF_TASK)
    declared = {queue.name for queue in app.amqp.queues.values()}
    assert set(QUEUE_OF_TASK.values()) <= declared


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "queue"), [
    ("forge.tasks.send_github_call", "forge"),
    ("forge.tasks.sync_review_threads", "forge"),
    ("presentation.tasks.render_companion_pages", "render"),
    ("findings.tasks.reap_dead_runs", "maintenance"),
    ("findings.tasks.run_import", "maintenance"),
    ("notify.tasks.send_webhook", "notify"),
    ("notify.tasks.catch_up_timelines", "notify"),
])
def test_work_goes_to_the_queue_of_its_kind(name, queue, sharded):
    assert routed(name, 1) == queue


def test_a_repository_maps_to_the_same_shard_in_every_process():
    """Python salts its hash of a string per process: the shard must not depend on it."""
    here = [verify_shard(repository_id, SHARDS) for repository_id in range(1, 50)]
    code = f"from recheck.routing import verify_shard; print([verify_shard(i, {SHARDS}) for i in range(1, 50)])"
    for seed in ("1", "2"):
        output = subprocess.run(
            [sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True,
            check=True,
        ).stdout
        assert output.strip() == str(here)
    assert set(here) == set(range(SHARDS)), "the repositories spread over every shard"


@pytest.mark.django_db
def test_verification_goes_to_its_repositorys_shard_only_while_a_worker_serves_it(sharded):
    pull_request = PullRequestFactory()
    run = VerificationRun.objects.create(pull_request=pull_request)
    report = CheckReport.objects.create(
        repository=pull_request.repository, commit=CommitFactory(repository=pull_request.repository),
        check_name="unit-tests", source="upload", conclusion="failure", digest="0" * 64,
    )
    queue = shard_queue(verify_shard(pull_request.repository_id, SHARDS))
    assert routed("findings.tasks.run_verification", run.pk) == "verify", "nobody serves the shard yet"

    worker_host_heartbeat(hostname="celery@host-a", queues=[queue, "verify"])
    for name, argument in [
        ("findings.tasks.run_verification", run.pk),
        ("findings.tasks.track_pull_request_head", pull_request.pk),
        ("findings.tasks.fetch_repository", pull_request.repository_id),
        ("findings.tasks.rederive_report", report.pk),
    ]:
        assert routed(name, argument) == queue, name

    # Its worker stops sending heartbeats: the shard is given up once it counts as gone.
    WorkerHost.objects.update(seen_at=timezone.now() - timedelta(seconds=django_settings.RECHECK_WORKER_ALIVE_SECONDS + 1))
    assert routed("findings.tasks.run_verification", run.pk) == "verify"


@pytest.mark.django_db
def test_rendering_goes_to_its_repositorys_render_shard_only_while_a_worker_serves_it(sharded):
    """The companion pages read the mirror (what a pull request changes): routed as verification
    is, by the same mapping, to the render shard of the repository; a verification shard served
    is not a render shard served."""
    pull_request = PullRequestFactory()
    shard = verify_shard(pull_request.repository_id, SHARDS)
    worker_host_heartbeat(hostname="celery@host-a", queues=[shard_queue(shard), "verify"])
    assert routed("presentation.tasks.render_companion_pages", pull_request.pk) == "render"

    worker_host_heartbeat(hostname="celery@host-r", queues=[shard_queue(shard, "render"), "render"])
    assert routed("presentation.tasks.render_companion_pages", pull_request.pk) == f"render.{shard}"
    assert routed("findings.tasks.track_pull_request_head", pull_request.pk) == f"verify.{shard}"
    other = RepositoryFactory()
    while verify_shard(other.pk, SHARDS) == shard:
        other = RepositoryFactory()
    assert routed("presentation.tasks.render_companion_pages", PullRequestFactory(repository=other).pk) == "render"

    WorkerHost.objects.filter(hostname="celery@host-r").update(
        seen_at=timezone.now() - timedelta(seconds=django_settings.RECHECK_WORKER_ALIVE_SECONDS + 1))
    assert routed("presentation.tasks.render_companion_pages", pull_request.pk) == "render"


@pytest.mark.django_db
def test_a_worker_of_another_shard_does_not_take_a_repository(sharded):
    repository = RepositoryFactory()
    mine = verify_shard(repository.pk, SHARDS)
    worker_host_heartbeat(hostname="celery@host-b", queues=[shard_queue((mine + 1) % SHARDS), "verify"])
    assert routed("findings.tasks.fetch_repository", repository.pk) == "verify"


@pytest.mark.django_db
def test_without_shards_verification_goes_to_the_plain_queue(settings):
    settings.RECHECK_VERIFY_SHARDS = 0
    repository = RepositoryFactory()
    worker_host_heartbeat(hostname="celery@host-a", queues=[shard_queue(0), "verify"])
    assert routed("findings.tasks.fetch_repository", repository.pk) == "verify"


@pytest.mark.django_db
def test_the_served_queues_are_read_once_per_cache_period(settings, django_assert_num_queries):
    settings.RECHECK_VERIFY_SHARDS = SHARDS
    settings.RECHECK_ROUTING_CACHE_SECONDS = 60
    served_queues.forget()
    repository = RepositoryFactory()
    with django_assert_num_queries(1):
        for _ in range(20):
            routed("findings.tasks.fetch_repository", repository.pk)
    served_queues.forget()


@pytest.mark.django_db
def test_with_no_broker_the_work_runs_in_process_and_is_not_routed(
    monkeypatch, tmp_path, django_capture_on_commit_callbacks
):
    def never(*args, **kwargs):
        raise AssertionError("routed")

    monkeypatch.setattr(routing, "verify_queue", never)
    # What the settings choose when CELERY_BROKER_URL is unset (CI sets one).
    monkeypatch.setitem(app.conf, "task_always_eager", True)
    repo = GitRepoBuilder(tmp_path)
    repo.reviewed = repo.write("src/loader.py", LOADER).commit("reviewed")
    pull_request = import_review(repo)
    with django_capture_on_commit_callbacks(execute=True):
        run = verification_run_request(pull_request=pull_request)
    run.refresh_from_db()
    assert run.status == "done", run.message


# --- A real worker on a shard ----------------------------------------------------------------

@pytest.fixture
def shard_worker(transactional_db, settings, sharded):
    """A worker thread of the real app consuming every shard queue and the plain queues, with its
    heartbeat (Redis in CI, Celery's in-memory transport without a configured broker)."""
    settings.RECHECK_WORKER_HEARTBEAT_SECONDS = 0.2
    delivered = []

    def record(task=None, **kwargs):
        delivered.append((task.name, task.request.delivery_info.get("routing_key")))

    queues = [*(shard_queue(shard, kind) for kind in ("verify", "render") for shard in range(SHARDS)), "verify",
              "render", "forge", "maintenance"]
    with real_broker():
        task_prerun.connect(record, weak=False)
        try:
            with worker_thread(queues=queues, hostname="celery@shard-host") as worker:
                worker.delivered = delivered
                yield worker
                app.control.purge()
        finally:
            task_prerun.disconnect(record)


def _wait(predicate, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.05)
    raise AssertionError("timed out")


@pytest.mark.django_db(transaction=True)
def test_a_worker_serving_the_shards_says_so_and_gets_each_repositorys_verifications_on_its_shard(
    tmp_path, shard_worker
):
    host = _wait(lambda: WorkerHost.objects.filter(hostname="celery@shard-host").first())
    assert set(host.queues) == {*(shard_queue(shard, kind) for kind in ("verify", "render") for shard in range(SHARDS)),
                                "verify", "render", "forge", "maintenance"}
    assert host.mirror_bytes is not None, "its heartbeat says how big its host's mirror cache is"

    repo = GitRepoBuilder(tmp_path)
    repo.reviewed = repo.write("src/loader.py", LOADER).commit("reviewed")
    pull_request = import_review(repo)
    run = verification_run_request(pull_request=pull_request)
    run = _wait(lambda: VerificationRun.objects.filter(pk=run.pk, status__in=["done", "failed"]).first())
    assert run.status == "done", run.message
    shard = verify_shard(pull_request.repository_id, SHARDS)
    assert ("findings.tasks.run_verification", shard_queue(shard)) in shard_worker.delivered
    # Its pages, rendered after the verification from the same host's mirror: the render shard.
    _wait(lambda: any(name == "presentation.tasks.render_companion_pages" for name, _ in shard_worker.delivered))
    assert ("presentation.tasks.render_companion_pages", shard_queue(shard, "render")) in shard_worker.delivered


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_shuts_down_is_forgotten(shard_worker):
    _wait(lambda: WorkerHost.objects.filter(hostname="celery@shard-host").exists())
    shard_worker.stop()
    assert not WorkerHost.objects.filter(hostname="celery@shard-host").exists()
