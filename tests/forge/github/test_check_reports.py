"""Other apps' check runs and commit statuses on GitHub, delivered to the signed webhook endpoint
and recorded as CI reports that move a check item's verdict. Payloads are GitHub's example
payloads (webhook_examples/, from @octokit/webhooks-examples), changed only to name this test's
repository and commit, and validated against githubkit's webhook models before they are sent."""
import pytest

from findings.models import CheckReport, EvidenceResult, Verification, WebhookDelivery
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit
from tests.api.test_webhooks import deliver
from tests.findings.services.test_verification import import_review
from tests.forge.github.test_webhook_events import SECRET, example

# A report's re-derivation runs in-process even where a broker is configured (CI).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

# The examples' names: the check run "Octocoders-linter" (by the app github-actions when it failed)
# and the status context "default" (set by Codertocat).
FINDINGS = [
    {"number": 1, "kind": "blocker", "title": "The linter fails", "caught_by": "ci",
     "evidence": [{"kind": "check", "check": "Octocoders-linter", "app": "github-actions"}]},
    {"number": 2, "kind": "blocker", "title": "The default status fails", "caught_by": "ci",
     "evidence": [{"kind": "check", "check": "default"}]},
]


@pytest.fixture
def checked(repo, settings):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = SECRET
    pull_request = import_review(repo, findings=FINDINGS, commits=[{"sha": repo.reviewed, "role": "reviewed"}])
    pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha=repo.reviewed))
    assert outcomes(repo.reviewed) == {1: ("error", "waiting"), 2: ("error", "waiting")}
    return pull_request


def outcomes(sha: str) -> dict:
    return {
        verification.finding.number: (verification.verdict,
                                      EvidenceResult.objects.get(verification=verification).facts["outcome"])
        for verification in Verification.objects.filter(commit__sha=sha).select_related("finding")
    }


def at(sha: str):
    def change(payload):
        if "check_run" in payload:
            payload["check_run"]["head_sha"] = sha
            payload["check_run"]["check_suite"]["head_sha"] = sha
        else:
            payload["sha"] = sha
            payload["commit"]["sha"] = sha
            # The example predates the field GitHub's statuses carry now (githubkit's model needs it).
            payload["commit"]["commit"]["verification"].setdefault("verified_at", None)
    return change


def send(client, capture, event, payload, delivery):
    with capture(execute=True):
        return deliver(client, payload, event=event, delivery=delivery, secret=SECRET)


def test_a_completed_check_run_is_recorded_and_moves_the_verdict_of_its_check(
    client, repo, checked, django_capture_on_commit_callbacks
):
    response = send(client, django_capture_on_commit_callbacks, "check_run",
                    example("check_run.completed", at(repo.reviewed)), "cr-failed")
    assert response.status_code in (200, 202), response.json()
    report = CheckReport.objects.get()
    assert (report.check_name, report.app, report.conclusion, report.source, report.url) == (
        "Octocoders-linter", "github-actions", "failure", "github",
        "https://github.com/Codertocat/Hello-World/runs/128620228")
    assert report.completed_at is not None and report.commit.sha == repo.reviewed
    assert outcomes(repo.reviewed)[1] == ("present", "fails")
    assert "Recorded Octocoders-linter (failed)" in WebhookDelivery.objects.get(delivery_id="cr-failed").outcome

    # Delivered again: one report, nothing moves.
    again = send(client, django_capture_on_commit_callbacks, "check_run",
                 example("check_run.completed", at(repo.reviewed)), "cr-failed")
    assert again.status_code in (200, 202) and CheckReport.objects.count() == 1


def test_a_check_run_from_another_app_than_the_item_names_moves_nothing(
    client, repo, checked, django_capture_on_commit_callbacks
):
    # The success example names no app slug: not github-actions, which the item trusts.
    response = send(client, django_capture_on_commit_callbacks, "check_run",
                    example("check_run.completed.success", at(repo.reviewed)), "cr-other-app")
    assert response.status_code in (200, 202), response.json()
    assert CheckReport.objects.get().conclusion == "success"
    assert outcomes(repo.reviewed)[1] == ("error", "waiting")


def test_a_status_is_recorded_as_the_report_of_its_context(client, repo, checked, django_capture_on_commit_callbacks):
    response = send(client, django_capture_on_commit_callbacks, "status", example("status", at(repo.reviewed)),
                    "st-1")
    assert response.status_code in (200, 202), response.json()
    report = CheckReport.objects.get()
    assert (report.check_name, report.app, report.conclusion, report.source) == (
        "default", "Codertocat", "success", "github")
    assert outcomes(repo.reviewed)[2] == ("likely_fixed", "passes")


@pytest.mark.parametrize(("state", "outcome"), [("failure", ("present", "fails")), ("error", ("error", "uncheckable"))])
def test_a_failed_or_errored_status_is_never_fixed(client, repo, checked, django_capture_on_commit_callbacks,
                                                   state, outcome):
    def failed(payload):
        at(repo.reviewed)(payload)
        payload["state"] = state

    send(client, django_capture_on_commit_callbacks, "status", example("status", failed), f"st-{state}")
    assert outcomes(repo.reviewed)[2] == outcome


def test_a_pending_status_and_a_commit_the_repository_does_not_have_keep_nothing(
    client, repo, checked, django_capture_on_commit_callbacks
):
    def pending(payload):
        at(repo.reviewed)(payload)
        payload["state"] = "pending"

    response = send(client, django_capture_on_commit_callbacks, "status", example("status", pending), "st-pending")
    assert response.status_code in (200, 202) and "pending" in response.json()["detail"]
    unknown = send(client, django_capture_on_commit_callbacks, "status", example("status", at("f" * 40)), "st-ghost")
    assert unknown.status_code == 400, unknown.json()
    assert not CheckReport.objects.exists()
    assert outcomes(repo.reviewed)[2] == ("error", "waiting")
