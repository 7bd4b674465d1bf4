"""Runs always end: a run whose worker died (or whose message the broker lost) is failed by the
reaper and queued again once, and nothing waits on it meanwhile."""
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from findings.models import Verification, VerificationRun
from findings.services.runs import verification_run_claim, verification_runs_reap
from findings.tasks import reap_dead_runs
from recheck.celery import app
from tests.findings.test_tasks import celery_worker  # noqa: F401 (fixture)
from tests.findings.test_tasks import wait_for
from tests.findings.services.test_verification import import_review
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db(transaction=True)

LOADER = "".join(f"line {n}\n" for n in range(1, 21)).replace("line 10\n", "    tolerance = 0\n")


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/loader.py", LOADER).write("config.yaml", "x: 1\n").commit("reviewed")
    return builder


def killed_run(pull_request, *, silent_for: float | None = None, **fields) -> VerificationRun:
    """A run a worker claimed and then died with (SIGKILL: no except, no finally ran)."""
    run = VerificationRun.objects.create(pull_request=pull_request, **fields)
    verification_run_claim(run.pk)
    silent_for = settings.RECHECK_RUN_STALE_SECONDS + 1 if silent_for is None else silent_for
    VerificationRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=silent_for))
    return VerificationRun.objects.get(pk=run.pk)


def test_a_killed_worker_s_run_is_reaped_and_completed_by_its_retry(repo, celery_worker):  # noqa: F811
    pull_request = import_review(repo)
    dead = killed_run(pull_request)

    reaped = reap_dead_runs.apply().get()

    dead.refresh_from_db()
    retry = wait_for(VerificationRun.objects.get(retry_of=dead))
    assert reaped == [[dead.pk, retry.pk]] or reaped == [(dead.pk, retry.pk)]
    assert dead.status == "failed" and dead.finished_at
    assert "stopped showing signs of life" in dead.message and f"queued again as run {retry.pk}" in dead.message
    assert retry.status == "done", retry.message
    assert Verification.objects.filter(commit__sha=repo.reviewed).count() == 3  # nothing lost


def test_a_retry_that_dies_too_is_failed_and_not_queued_again(repo):
    pull_request = import_review(repo)
    first = VerificationRun.objects.create(pull_request=pull_request, status="failed")
    dead_retry = killed_run(pull_request, retry_of=first)

    assert verification_runs_reap() == [(dead_retry.pk, None)]
    dead_retry.refresh_from_db()
    assert dead_retry.status == "failed" and "request a verification again" in dead_retry.message
    assert VerificationRun.objects.filter(status__in=["queued", "running"]).count() == 0


def test_a_queued_run_whose_message_the_broker_lost_is_reaped_too(repo, celery_worker):  # noqa: F811
    pull_request = import_review(repo)
    lost = VerificationRun.objects.create(pull_request=pull_request)
    VerificationRun.objects.filter(pk=lost.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.RECHECK_RUN_STALE_SECONDS + 1)
    )
    [(reaped, retry)] = verification_runs_reap()
    assert reaped == lost.pk and wait_for(VerificationRun.objects.get(pk=retry)).status == "done"


def test_a_run_that_shows_signs_of_life_is_left_alone(repo):
    pull_request = import_review(repo)
    alive = killed_run(pull_request, silent_for=settings.RECHECK_RUN_STALE_SECONDS - 60)
    assert verification_runs_reap() == []
    alive.refresh_from_db()
    assert alive.status == "running"


def test_reaping_twice_fails_a_dead_run_once_and_queues_one_retry(repo):
    pull_request = import_review(repo)
    dead = killed_run(pull_request)
    verification_runs_reap()
    assert verification_runs_reap() == []
    assert VerificationRun.objects.filter(retry_of=dead).count() == 1


def test_the_verify_button_and_the_gate_ignore_a_dead_run(repo, staff_maintainer, celery_worker):  # noqa: F811
    pull_request = import_review(repo)
    head = pull_request.pins.get().commit
    dead = killed_run(pull_request, commit=head)

    gate = APIClient().get(f"/api/repos/acme/loader/pulls/7/gate?commit={head.sha}").json()
    assert gate["verification_run"] is None and "verify" in gate["how_to_verify"].lower()
    assert APIClient().get("/acme/loader/pull/7/runs/latest.json").json()["run"]["is_active"] is False

    staff_maintainer.user_permissions.add(Permission.objects.get(codename="verify_pullrequest"))
    browser = Client()
    browser.force_login(staff_maintainer)
    page = browser.post("/acme/loader/pull/7/verify/", follow=True).content.decode()
    assert "already under way" not in page and "queued" in page
    assert wait_for(VerificationRun.objects.exclude(pk=dead.pk).get()).status == "done"


def test_the_reaper_runs_on_beat_and_the_stale_limit_outlasts_the_hard_time_limit():
    assert app.conf.beat_schedule["reap-dead-runs"]["task"] == "findings.tasks.reap_dead_runs"
    assert "findings.tasks.reap_dead_runs" in app.tasks
    assert settings.RECHECK_RUN_STALE_SECONDS > app.conf.task_time_limit
    assert app.conf.task_time_limit < app.conf.broker_transport_options["visibility_timeout"] <= 3600 / 2
    assert app.conf.worker_cancel_long_running_tasks_on_connection_loss is False


def test_a_database_restart_mid_run_is_retried_and_the_run_ends_done(repo, monkeypatch):
    import threading

    from django.db import connections

    from findings.services.verification import run as verifying
    from findings.tasks import run_verification
    from tests.recheck.test_outages import closed_port

    pull_request = import_review(repo)
    run = VerificationRun.objects.create(pull_request=pull_request)
    original = verifying.verification_run_advance
    connection = connections["default"]
    saved = dict(connection.settings_dict)
    calls = []

    def restart():
        connection.settings_dict.update(saved)

    def advance(run_, *, by=1):
        calls.append(by)
        if len(calls) == 1:
            # The database goes away for a second under the running verification, then returns.
            connection.close()
            if connection.vendor == "sqlite":
                connection.settings_dict["NAME"] = "/nonexistent/recheck/db.sqlite3"
            else:
                connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
            threading.Timer(1.0, restart).start()
        original(run_, by=by)

    monkeypatch.setattr(verifying, "verification_run_advance", advance)
    # In-process, the retry runs at once instead of after its countdown (throw=False lets it).
    run_verification.apply(args=[run.pk], throw=False)

    run.refresh_from_db()
    assert run.status == "done", run.message
    assert Verification.objects.filter(commit__sha=repo.reviewed).count() == 3
    assert len(calls) > 1  # the retry did the work again after the reconnect
