"""The tasks through the real Celery app: a worker thread consuming from the configured broker
(Redis in CI; Celery's in-memory transport on a laptop without one)."""
import time

import pytest
from celery.exceptions import Retry
from django.conf import settings

from findings.models import CompanionPages, Verification, VerificationRun
from findings.services.runs import QueueUnavailable, verification_run_request
from findings.tasks import fetch_repository, run_verification, track_open_pull_requests, track_pull_request_head
from recheck.celery import app
from reviews.models import Commit, PinnedCommit
from tests.findings.services.test_verification import LOADER, import_review
from tests.gitrepo import GitRepoBuilder
from tests.workers import real_broker, worker_thread


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/loader.py", LOADER).write("config.yaml", "x: 1\n").commit("reviewed")
    return builder


@pytest.fixture
def celery_worker(transactional_db):
    """A worker thread on the real app. Without a configured broker, the in-memory transport."""
    with real_broker(), worker_thread() as worker:
        yield worker
        app.control.purge()  # before the worker stops: nothing queued by this test runs after it


def wait_for(run: VerificationRun, timeout: float = 60) -> VerificationRun:
    """Wait until the run is over and the companion pages it triggers are rendered, so no work
    of this test is still running on the worker when the test ends."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if not run.is_active and CompanionPages.objects.filter(
            pull_request=run.pull_request, rendered_at__gte=run.finished_at
        ).exists():
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run.pk} still {run.status} after {timeout}s ({run.done}/{run.total})")


@pytest.mark.django_db(transaction=True)
def test_a_requested_verification_runs_on_a_worker_and_reports_progress(repo, celery_worker):
    pull_request = import_review(repo)
    run = verification_run_request(pull_request=pull_request)  # autocommit: queued right away
    run = wait_for(run)
    assert run.status == "done", run.message
    assert (run.done, run.total) == (3, 3) and run.task_id
    assert Verification.objects.filter(commit__sha=repo.reviewed).count() == 3
    assert app.AsyncResult(run.task_id).get(timeout=30)["pull_request"] == "acme/loader#7"
    assert "present" in CompanionPages.objects.get(pull_request=pull_request).blockers_html


@pytest.mark.django_db(transaction=True)
def test_verifying_a_new_commit_pins_it_as_rebased(repo, celery_worker):
    pull_request = import_review(repo)
    rebased = repo.write("src/loader.py", "# moved\n" + LOADER).commit("rebased")
    run = wait_for(verification_run_request(pull_request=pull_request, commit_sha=rebased))
    assert run.status == "done", run.message
    assert PinnedCommit.objects.get(commit__sha=rebased).role == "rebased"
    assert set(Verification.objects.filter(commit__sha=rebased).values_list("verdict", flat=True)) == {
        "present", "unverifiable"
    }


@pytest.mark.django_db(transaction=True)
def test_running_a_run_twice_leaves_one_result_per_finding_and_commit(repo):
    pull_request = import_review(repo)
    first = VerificationRun.objects.create(pull_request=pull_request)
    second = VerificationRun.objects.create(pull_request=pull_request)
    run_verification.apply(args=[first.pk])
    run_verification.apply(args=[second.pk])
    run_verification.apply(args=[first.pk])  # a redelivered message: the run is already done
    assert Verification.objects.count() == 3
    assert VerificationRun.objects.filter(status="done").count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_duplicated_message_for_a_run_another_worker_claimed_does_nothing(repo):
    pull_request = import_review(repo)
    # Another worker took the first copy of the message: the run is running, nothing verified yet.
    run = VerificationRun.objects.create(pull_request=pull_request, status="running")
    assert run_verification.apply(args=[run.pk]).get() == {"run": run.pk, "status": "running"}
    assert not Verification.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_copies_of_one_run_message_verify_once(repo):
    pull_request = import_review(repo)
    run = VerificationRun.objects.create(pull_request=pull_request)
    first = run_verification.apply(args=[run.pk]).get()
    checked = set(Verification.objects.values_list("pk", "checked_at"))
    second = run_verification.apply(args=[run.pk]).get()
    assert "verdicts" in first and second == {"run": run.pk, "status": "done"}
    assert set(Verification.objects.values_list("pk", "checked_at")) == checked
    run.refresh_from_db()
    assert (run.status, run.done, run.total) == ("done", 3, 3)


@pytest.mark.django_db
def test_the_fetch_task_records_the_mirror_and_resolves_abbreviations(repo):
    pull_request = import_review(repo)
    result = fetch_repository.apply(args=[pull_request.repository.pk]).get()
    assert result["unresolved"] == []
    assert Commit.objects.get().sha == repo.reviewed


@pytest.mark.django_db
def test_the_fetch_task_retries_an_unreachable_repository(repo, tmp_path):
    pull_request = import_review(repo)
    pull_request.repository.clone_url = str(tmp_path / "nowhere")
    pull_request.repository.save()
    with pytest.raises(Retry) as retry:
        fetch_repository.apply(args=[pull_request.repository.pk])
    # The first retry waits up to one backoff step; full jitter may pick any delay in it, 0 included.
    assert "does not exist" in str(retry.value.exc) and 0 <= retry.value.when <= fetch_repository.retry_backoff
    pull_request.repository.refresh_from_db()
    assert "does not exist" in pull_request.repository.fetch_error
    assert fetch_repository.max_retries == 4 and fetch_repository.retry_jitter


@pytest.mark.django_db
def test_tracking_pins_a_new_head_once(repo):
    pull_request = import_review(repo)
    repo.update_ref("refs/pull/7/head", repo.write("a.py", "x\n").commit("pushed"))
    assert track_pull_request_head.apply(args=[pull_request.pk]).get()["queued"] is True
    assert track_pull_request_head.apply(args=[pull_request.pk]).get()["queued"] is False
    head = PinnedCommit.objects.get(role="head")
    assert head.commit.sha == repo.head() and head.pull_request == pull_request


@pytest.mark.django_db
def test_a_head_the_webhook_reported_is_not_queued_again_by_tracking(repo, client, settings,
                                                                     django_capture_on_commit_callbacks):
    from tests.api.test_webhooks import deliver, pull_request_event

    settings.RECHECK_GITHUB_WEBHOOK_SECRET = "s"
    pull_request = import_review(repo)
    pushed = repo.write("a.py", "x\n").commit("pushed")
    repo.update_ref("refs/pull/7/head", pushed)
    with django_capture_on_commit_callbacks():
        response = deliver(client, pull_request_event(slug="acme/loader", number=7, sha=pushed), secret="s")
    assert response.status_code == 202
    with django_capture_on_commit_callbacks():
        tracked = track_pull_request_head.apply(args=[pull_request.pk]).get()
    assert tracked["queued"] is False and tracked["run"] == response.json()["run"]
    assert VerificationRun.objects.filter(commit__sha=pushed).count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_beat_job_tracks_and_verifies_the_heads_of_open_pull_requests(repo, celery_worker):
    pull_request = import_review(repo)
    repo.update_ref("refs/pull/7/head", repo.write("a.py", "x\n").commit("pushed"))
    assert track_open_pull_requests.delay().get(timeout=60) == 1
    deadline = time.monotonic() + 60
    while not VerificationRun.objects.filter(commit__sha=repo.head()).exists():
        assert time.monotonic() < deadline, "the new head was not queued for verification"
        time.sleep(0.1)
    wait_for(VerificationRun.objects.get(commit__sha=repo.head()))
    assert Verification.objects.filter(commit__sha=repo.head()).count() == 3
    assert PinnedCommit.objects.get(role="head", pull_request=pull_request).commit.sha == repo.head()


def test_the_beat_schedule_names_registered_tasks():
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks


def test_time_limits_stay_below_the_visibility_timeout():
    assert app.conf.task_time_limit < app.conf.broker_transport_options["visibility_timeout"]
    assert app.conf.task_soft_time_limit < app.conf.task_time_limit
    assert app.conf.task_acks_late and app.conf.task_reject_on_worker_lost
    assert app.conf.worker_prefetch_multiplier == 1


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_cannot_take_the_run_marks_it_failed_with_what_to_do(repo, monkeypatch):
    pull_request = import_review(repo)

    def unreachable(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    monkeypatch.setattr(run_verification, "delay", unreachable)
    with pytest.raises(QueueUnavailable, match="retry in"):
        verification_run_request(pull_request=pull_request)
    run = VerificationRun.objects.get()
    assert run.status == "failed"
    assert "could not be queued" in run.message and "CELERY_BROKER_URL" in run.message
    assert "6379" not in run.message  # where the broker lives is for the log, not for readers
