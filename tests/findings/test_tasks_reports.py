"""A report's re-derivation is a task (findings.tasks.rederive_report) enqueued once the report is
committed: an upload is answered at once and a worker derives the state again, through the real
Celery app; with no broker the task runs in-process, so the state is current when the request
returns; a duplicated message verifies once; a broker that cannot take it keeps the report."""
import time

import pytest
from django.conf import settings

from findings.models import CheckReport, EvidenceResult, Verification
from findings.services.verification.run import pull_request_verify
from findings.tasks import rederive_report
from reviews.models import Commit
from tests.findings.services.test_verification import LOADER, import_review
from tests.workers import real_broker, worker_thread
from tests.gitrepo import GitRepoBuilder
from tests.personas import api_client, member_of, user_with_role

CHECKED = [{"number": 1, "kind": "blocker", "title": "The pin does not fast-forward", "caught_by": "ci",
            "evidence": [{"kind": "check", "check": "fast-forward"}]}]


@pytest.fixture
def waiting(tmp_path):
    """acme/loader#7 with a check item, verified at its reviewed commit before any report: waiting for CI."""
    repo = GitRepoBuilder(tmp_path)
    repo.reviewed = repo.write("src/loader.py", LOADER).commit("reviewed")
    pull_request = import_review(repo, findings=CHECKED, commits=[{"sha": repo.reviewed, "role": "reviewed"}])
    pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha=repo.reviewed))
    assert outcome(repo.reviewed) == ("error", "waiting")
    pull_request.repo = repo
    return pull_request


def outcome(sha: str) -> tuple[str, str]:
    verification = Verification.objects.get(commit__sha=sha)
    return verification.verdict, EvidenceResult.objects.get(verification=verification).facts["outcome"]


def upload(pull_request, conclusion: str):
    """The CI job's upload of a bare conclusion, with a token scoped to the repository."""
    user = member_of(pull_request.repository, user_with_role("no_role", username="ci-bot"), "reviewer")
    client = api_client(user, scopes=("reports:write",), repositories=(pull_request.repository,))
    sha = pull_request.repo.reviewed
    return client.post(
        f"/api/repos/{pull_request.repository.slug}/commits/{sha}/reports/?check=fast-forward&conclusion={conclusion}"
    )


@pytest.fixture
def queued(transactional_db):
    """The real app handing work to a broker (Redis where configured, else the in-memory transport)
    that no worker consumes yet: `start` starts one."""
    with real_broker():
        yield worker_thread


@pytest.mark.django_db(transaction=True)
def test_an_upload_is_answered_before_the_state_is_derived_again_and_a_worker_derives_it(waiting, queued):
    sent = upload(waiting, "success")
    assert sent.status_code == 201, sent.json()
    report = CheckReport.objects.get()
    # Answered with the re-derivation queued, not done: the stored state is still the one before.
    assert report.rederived_at is None and outcome(waiting.repo.reviewed) == ("error", "waiting")

    with queued():
        deadline = time.monotonic() + 60
        while outcome(waiting.repo.reviewed) != ("likely_fixed", "passes"):
            assert time.monotonic() < deadline, f"still {outcome(waiting.repo.reviewed)}"
            time.sleep(0.1)
        report.refresh_from_db()
        assert report.rederived_at is not None


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_tasks")  # as with no broker, even where one is configured (CI)
def test_with_no_broker_the_state_is_current_when_the_upload_returns(waiting):
    from findings.enqueue import tasks_run_in_process

    assert tasks_run_in_process()
    sent = upload(waiting, "failure")
    assert sent.status_code == 201, sent.json()
    assert outcome(waiting.repo.reviewed) == ("present", "fails")
    gate = api_client(None).get(f"/api/repos/{waiting.repository.slug}/pulls/7/gate",
                                {"commit": waiting.repo.reviewed}).json()
    assert gate["verified"] and not gate["mergeable"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_tasks")
def test_a_duplicated_message_verifies_once(waiting):
    assert upload(waiting, "success").status_code == 201
    report = CheckReport.objects.get()
    checked = set(Verification.objects.values_list("pk", "checked_at"))
    # The in-process run claimed it when the upload committed: a second copy of the message does nothing.
    assert rederive_report.apply(args=[report.pk]).get() == {"report": report.pk, "verified": []}
    assert set(Verification.objects.values_list("pk", "checked_at")) == checked


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_cannot_take_the_re_derivation_keeps_the_report(waiting, monkeypatch, caplog):
    def unreachable(*args, **kwargs):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    monkeypatch.setattr(rederive_report, "delay", unreachable)
    sent = upload(waiting, "success")
    assert sent.status_code == 201 and CheckReport.objects.get().rederived_at is None
    assert "re-derivation not queued" in caplog.text
    # The next verification at that commit reads the kept report.
    pull_request_verify(pull_request=waiting, commit=Commit.objects.get(sha=waiting.repo.reviewed))
    assert outcome(waiting.repo.reviewed) == ("likely_fixed", "passes")


def killed_claim(pull_request, monkeypatch, *, silent_for: float) -> CheckReport:
    """A report whose re-derivation a worker claimed and then died with (SIGKILL: it never finished)."""
    from datetime import timedelta

    from django.utils import timezone

    with monkeypatch.context() as patch:
        patch.setattr(rederive_report, "delay", lambda *args, **kwargs: None)  # the message its worker took
        assert upload(pull_request, "success").status_code == 201
    CheckReport.objects.update(rederived_at=timezone.now() - timedelta(seconds=silent_for))
    return CheckReport.objects.get()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_tasks")
def test_a_re_derivation_whose_worker_died_after_claiming_it_is_taken_up_by_the_reaper(waiting, monkeypatch):
    from findings.tasks import reap_dead_runs

    report = killed_claim(waiting, monkeypatch, silent_for=settings.RECHECK_RUN_STALE_SECONDS + 1)
    assert outcome(waiting.repo.reviewed) == ("error", "waiting")  # stale: the report says it passed

    reap_dead_runs.apply().get()

    assert outcome(waiting.repo.reviewed) == ("likely_fixed", "passes")
    report.refresh_from_db()
    assert report.rederived_at is not None and report.rederive_done_at is not None
    checked = set(Verification.objects.values_list("pk", "checked_at"))
    reap_dead_runs.apply().get()  # done now: nothing is taken up twice
    assert set(Verification.objects.values_list("pk", "checked_at")) == checked


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_tasks")
def test_a_claim_younger_than_a_task_may_run_is_left_to_its_worker(waiting, monkeypatch):
    from findings.services.reports import check_reports_reap

    report = killed_claim(waiting, monkeypatch, silent_for=settings.RECHECK_RUN_STALE_SECONDS - 30)

    assert check_reports_reap() == []
    report.refresh_from_db()
    assert report.rederive_done_at is None and outcome(waiting.repo.reviewed) == ("error", "waiting")
