"""A run whose worker stopped saying it is running it is reaped within the lapse window, well before
the task time limit: its host died, its process was killed or restarted (decision 0032). A worker
that beats keeps its slow runs; a run with no recorded worker keeps the time rule."""
import datetime as dt
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from core.vocabulary import events as ev
from findings.models import ReviewEvent, Verification, VerificationRun
from findings.services.runs import (
    verification_run_claim,
    verification_run_finish,
    verification_runs_reap,
    verification_runs_vouch,
)
from findings.tasks import reap_dead_runs
from reviews.models import WorkerHost
from tests.findings.services.test_runs_reaping import repo  # noqa: F401 (fixture)
from tests.findings.services.test_verification import import_review
from tests.findings.test_tasks import celery_worker  # noqa: F401 (fixture)
from tests.findings.test_tasks import wait_for
from tests.workers import real_broker, worker_thread

pytestmark = pytest.mark.django_db(transaction=True)

LAPSE = timedelta(seconds=settings.RECHECK_WORKER_LAPSE_SECONDS)
STALE = timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS)


def claimed_by(pull_request, worker: str, *, task_id: str = "a-task-of-a-process-gone", **fields) -> VerificationRun:
    """A run the worker `worker` claimed (as its task does) for the task `task_id`."""
    run = VerificationRun.objects.create(pull_request=pull_request, **fields)
    assert verification_run_claim(run.pk, worker=worker, task_id=task_id)
    return VerificationRun.objects.get(pk=run.pk)


def beat_at(hostname: str, moment) -> None:
    WorkerHost.objects.update_or_create(hostname=hostname, defaults={"queues": ["verify"], "seen_at": moment})


def test_a_run_whose_worker_stopped_beating_is_reaped_before_the_time_limit_and_done_by_its_retry(
    repo, celery_worker  # noqa: F811
):
    pull_request = import_review(repo)
    dead = claimed_by(pull_request, "w1@hostA")
    # The host died a lapse window ago: its last heartbeat and its last word on the run.
    last = timezone.now() - LAPSE - timedelta(seconds=5)
    beat_at("w1@hostA", last)
    VerificationRun.objects.filter(pk=dead.pk).update(worker_seen_at=last)
    assert not VerificationRun.objects.filter(pk=dead.pk, heartbeat_at__lt=timezone.now() - STALE).exists()

    reaped = reap_dead_runs.apply().get()

    dead.refresh_from_db()
    retry = wait_for(VerificationRun.objects.get(retry_of=dead))
    assert [tuple(pair) for pair in reaped] == [(dead.pk, retry.pk)]
    assert dead.status == "failed" and dead.finished_at - dead.started_at < STALE
    stamp = last.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    assert dead.message == f"The worker w1@hostA stopped saying it is alive (last at {stamp}); queued again as run {retry.pk}."
    [event] = ReviewEvent.objects.filter(kind=ev.RUN_REAPED)
    assert event.payload == {"run": dead.pk, "message": dead.message, "retry": retry.pk, "commit": None}
    assert retry.status == "done", retry.message
    assert WorkerHost.objects.filter(hostname=retry.worker).exists(), "claimed by the worker thread, as it beats"
    assert Verification.objects.filter(commit__sha=repo.reviewed).count() == 3


def test_a_worker_that_has_not_beaten_yet_has_its_run_reaped_only_once_the_run_is_older_than_the_lapse(repo):  # noqa: F811
    pull_request = import_review(repo)
    run = claimed_by(pull_request, "w2@hostB")
    assert not WorkerHost.objects.exists()
    assert verification_runs_reap(now=run.started_at + LAPSE - timedelta(seconds=1)) == []
    [(reaped, _)] = verification_runs_reap(now=run.started_at + LAPSE + timedelta(seconds=1))
    run.refresh_from_db()
    assert reaped == run.pk and run.message.startswith("The worker w2@hostB stopped saying it is alive (last at ")


def test_a_run_with_no_worker_keeps_the_time_rule(repo):  # noqa: F811
    pull_request = import_review(repo)
    run = VerificationRun.objects.create(pull_request=pull_request)
    verification_run_claim(run.pk)  # in-process: no broker, no worker
    run.refresh_from_db()
    assert run.worker == "" and run.worker_seen_at is None
    assert verification_runs_reap(now=run.heartbeat_at + LAPSE + timedelta(seconds=60)) == []
    [(reaped, _)] = verification_runs_reap(now=run.heartbeat_at + STALE + timedelta(seconds=1))
    run.refresh_from_db()
    assert reaped == run.pk and run.message.startswith("The worker stopped showing signs of life (last at ")


def test_reaping_a_lapsed_run_twice_fails_it_once_and_queues_one_retry(repo):  # noqa: F811
    pull_request = import_review(repo)
    dead = claimed_by(pull_request, "w1@hostA")
    later = dead.started_at + LAPSE + timedelta(seconds=1)
    assert [reaped for reaped, _ in verification_runs_reap(now=later)] == [dead.pk]
    assert verification_runs_reap(now=later) == []
    assert VerificationRun.objects.filter(retry_of=dead).count() == 1
    assert ReviewEvent.objects.filter(kind=ev.RUN_REAPED).count() == 1


def test_a_worker_vouches_only_for_the_runs_of_its_own_active_tasks(repo):  # noqa: F811
    pull_request = import_review(repo)
    mine = claimed_by(pull_request, "w1@hostA", task_id="t-mine")
    earlier = claimed_by(pull_request, "w1@hostA", task_id="t-of-an-earlier-process", commit=pull_request.pins.get().commit)
    VerificationRun.objects.update(worker_seen_at=timezone.now() - LAPSE)
    assert verification_runs_vouch(worker="w1@hostA", task_ids=["t-mine"]) == 1
    assert verification_runs_vouch(worker="w9@hostZ", task_ids=["t-of-an-earlier-process"]) == 0
    assert verification_runs_vouch(worker="w1@hostA", task_ids=[]) == 0
    assert [reaped for reaped, _ in verification_runs_reap()] == [earlier.pk]
    mine.refresh_from_db()
    assert mine.status == "running"


def test_a_reaped_run_that_its_worker_ends_later_stays_failed(repo):  # noqa: F811
    pull_request = import_review(repo)
    run = claimed_by(pull_request, "w1@hostA")
    verification_runs_reap(now=run.started_at + LAPSE + timedelta(seconds=1))
    run.refresh_from_db()
    reaped = run.message
    # The worker was only cut off from the database; it comes back and ends the run.
    verification_run_finish(run, message="Verified 3 findings.")
    run.refresh_from_db()
    assert run.status == "failed" and run.message == reaped
    assert not ReviewEvent.objects.filter(kind=ev.RUN_FAILED).exists()


@pytest.fixture
def beating_worker(transactional_db, settings):
    """A worker thread named as a restarted worker would be, beating every 0.2 s, with a lapse
    window of a second and a half."""
    settings.RECHECK_WORKER_HEARTBEAT_SECONDS = 0.2
    settings.RECHECK_WORKER_LAPSE_SECONDS = 1.5
    with real_broker() as app, worker_thread(hostname="w1@hostA") as worker:
        yield worker
        app.control.purge()


def wait_until(condition, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
    return value


def test_a_slow_run_on_a_worker_that_beats_is_not_reaped(repo, beating_worker, monkeypatch):  # noqa: F811
    from findings.services.runs import verification_run_request
    from findings.services.verification import run as verifying

    original = verifying.verification_run_advance

    def slowly(run_, *, by=1):
        time.sleep(4)  # more than two lapse windows without a word from the run itself
        original(run_, by=by)

    monkeypatch.setattr(verifying, "verification_run_advance", slowly)
    pull_request = import_review(repo)
    run = verification_run_request(pull_request=pull_request)
    run = wait_until(lambda: VerificationRun.objects.filter(pk=run.pk, status="running").first())
    host = wait_until(lambda: WorkerHost.objects.filter(hostname="w1@hostA").first())
    # The claim names the worker as its heartbeat does.
    assert run.worker == host.hostname == "w1@hostA" and run.task_id
    reaped = []
    while VerificationRun.objects.filter(pk=run.pk, status="running").exists():
        reaped += verification_runs_reap()
        time.sleep(0.1)
    run = wait_for(run)
    assert reaped == [] and run.status == "done", run.message
    assert run.finished_at - run.started_at > 2 * timedelta(seconds=settings.RECHECK_WORKER_LAPSE_SECONDS)
    assert not VerificationRun.objects.filter(retry_of=run).exists()


def test_a_run_claimed_by_an_earlier_process_of_a_restarted_worker_is_reaped(repo, beating_worker):  # noqa: F811
    pull_request = import_review(repo)
    # Claimed by the process of w1@hostA that was killed; the worker thread is its new process.
    dead = claimed_by(pull_request, "w1@hostA", task_id="a-task-of-the-killed-process")
    claimed = dead.worker_seen_at
    reaped = wait_until(verification_runs_reap, timeout=20)
    host = WorkerHost.objects.get(hostname="w1@hostA")
    dead.refresh_from_db()
    retry = wait_for(VerificationRun.objects.get(retry_of=dead))
    assert [reaped_ for reaped_, _ in reaped] == [dead.pk]
    assert dead.worker_seen_at == claimed, "the new process never vouched for the run of the one before"
    assert host.seen_at > claimed, "the worker's name beat on all along"
    assert dead.message.startswith("The worker w1@hostA stopped saying it is running this verification (last at ")
    assert "restarted" in dead.message and f"queued again as run {retry.pk}" in dead.message
    assert retry.status == "done" and retry.worker == "w1@hostA", retry.message
