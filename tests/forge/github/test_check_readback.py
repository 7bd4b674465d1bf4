"""On verification of a pinned commit with no report yet for a check item, the commit's check runs
and combined status are read back from GitHub's API (the fake GitHub on 127.0.0.1, every answer
validated with githubkit's models) and recorded as reports, moving the item's verdict; a check
that names its app is moved only by that app's run; the calls come out of the forge budget, and a
commit's checks are not read again for every verification."""
import pytest
from django.test import TestCase

from findings.models import CheckReport
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit
from tests.findings.services.test_verification import import_review
from tests.forge.github.test_check_reports import outcomes

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

FINDINGS = [
    {"number": 1, "kind": "blocker", "title": "The unit tests fail", "caught_by": "ci",
     "evidence": [{"kind": "check", "check": "unit-tests", "app": "github-actions"}]},
    {"number": 2, "kind": "blocker", "title": "The lint status fails", "caught_by": "ci",
     "evidence": [{"kind": "check", "check": "ci/lint"}]},
    {"number": 3, "kind": "blocker", "title": "The secrets scan fails", "caught_by": "ci",
     "evidence": [{"kind": "check", "check": "secrets", "app": "github-actions"}]},
]


@pytest.fixture
def awaiting(repo, fake_github):
    pull_request = import_review(repo, findings=FINDINGS, commits=[{"sha": repo.reviewed, "role": "reviewed"}])
    fake_github.install("acme/loader")
    return pull_request


def verify(pull_request, sha):
    # As a worker's run: the read-back is queued once the verification commits.
    with TestCase.captureOnCommitCallbacks(execute=True):
        pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha=sha))


def test_a_waiting_check_is_read_back_from_github_and_moves_the_verdict(awaiting, repo, fake_github):
    sha = repo.reviewed
    fake_github.other_run("acme/loader", sha, "unit-tests", "failure", app="github-actions")
    # The same name from another app, and a run still going: neither says anything of finding 1 or 3.
    fake_github.other_run("acme/loader", sha, "secrets", "success", app="impostor")
    fake_github.other_run("acme/loader", sha, "build", None, app="github-actions")
    fake_github.other_status(sha, "ci/lint", "success", target_url="https://ci.example/lint/9")
    fake_github.other_status(sha, "ci/docs", "pending")

    verify(awaiting, sha)

    assert outcomes(sha) == {1: ("present", "fails"), 2: ("likely_fixed", "passes"), 3: ("error", "waiting")}
    kept = set(CheckReport.objects.values_list("check_name", "app", "conclusion", "source", "url"))
    assert kept == {
        ("unit-tests", "github-actions", "failure", "github", f"https://github.com/acme/loader/runs/{_id(fake_github, 'unit-tests')}"),
        ("secrets", "impostor", "success", "github", f"https://github.com/acme/loader/runs/{_id(fake_github, 'secrets')}"),
        ("ci/lint", "", "success", "github", "https://ci.example/lint/9"),
    }
    assert fake_github.calls("GET", rf"/commits/{sha}/check-runs$") and fake_github.calls("GET", rf"/commits/{sha}/status$")


def _id(fake_github, name: str) -> int:
    return next(run["id"] for run in fake_github.check_runs.values() if run["name"] == name)


def test_a_commit_s_checks_are_read_once_however_often_it_is_verified(awaiting, repo, fake_github):
    fake_github.other_run("acme/loader", repo.reviewed, "unit-tests", "failure", app="github-actions")

    verify(awaiting, repo.reviewed)
    verify(awaiting, repo.reviewed)  # finding 2 and 3 still wait: GitHub is not asked again so soon

    assert len(fake_github.calls("GET", r"/check-runs$")) == 1
    assert len(fake_github.calls("GET", r"/status$")) == 1


def test_nothing_is_read_when_every_check_item_has_its_report(awaiting, repo, fake_github):
    from findings.services.reports import check_report_record

    for check, app in (("unit-tests", "github-actions"), ("ci/lint", ""), ("secrets", "github-actions")):
        check_report_record(repository=awaiting.repository, sha=repo.reviewed, check=check, source="upload",
                            conclusion="failure", app=app)

    verify(awaiting, repo.reviewed)

    assert fake_github.calls("GET", r"/check-runs$") == []


def test_a_spent_forge_budget_reads_nothing_now_and_github_is_not_called(awaiting, repo, fake_github, settings):
    from forge.github.client import budget_key
    from forge.outbox.budget import forge_budget

    settings.RECHECK_FORGE_BUDGET_CALLS = 1
    # The outbox took the window's one call, counted where the repository's installation is.
    forge_budget().acquire(budget_key(awaiting.repository))

    verify(awaiting, repo.reviewed)

    assert fake_github.calls("GET", r"/check-runs$") == [] and not CheckReport.objects.exists()
    assert outcomes(repo.reviewed)[1] == ("error", "waiting")


def test_github_failing_to_answer_keeps_the_items_waiting(awaiting, repo, fake_github):
    fake_github.fail("GET", r"/check-runs$", 502, "Server Error")

    verify(awaiting, repo.reviewed)

    assert not CheckReport.objects.exists() and outcomes(repo.reviewed)[1] == ("error", "waiting")
