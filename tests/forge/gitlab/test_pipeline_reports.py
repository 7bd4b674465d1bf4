"""GitLab CI's jobs, delivered as GitLab's documented Pipeline Hook and Job Hook examples
(webhook_examples/gitlab/, from GitLab's "Webhook events" page, changed only in the project and
the SHA; the Job Hook example's two `//` comments and its trailing comma, which JSON does not
allow, are left out), recorded as reports by job name that move check items' verdicts."""
import pytest

from findings.models import CheckReport, EvidenceResult, Verification, WebhookDelivery
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit, PullRequest
from tests.forge.gitlab_world import IID, PROJECT_ID, SLUG, deliver_hook, example

pytestmark = pytest.mark.django_db

# The documented examples' jobs: test-build failed, test-image passed, production was skipped,
# staging is still to run; the Job Hook's job is "test".
JOBS = ("test-build", "test-image", "production", "staging", "test")


@pytest.fixture
def checked(gitlab_repo, fake_gitlab, settings) -> PullRequest:
    review_import(data={
        "repository": {"slug": SLUG, "forge": "gitlab", "forge_url": settings.RECHECK_GITLAB_URL,
                       "clone_url": str(gitlab_repo.path), "web_url": f"https://gitlab.example.com/{SLUG}"},
        "pull_request": {"number": IID, "title": "Loader"},
        "commits": [{"sha": gitlab_repo.reviewed, "role": "reviewed"}],
        "findings": [
            {"number": number, "kind": "blocker", "title": f"The job {job} fails", "caught_by": "ci",
             "evidence": [{"kind": "check", "check": job}]}
            for number, job in enumerate(JOBS, start=1)
        ],
    }, actor=None)
    pull_request = PullRequest.objects.get(repository__slug=SLUG, number=IID)
    pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha=gitlab_repo.reviewed))
    assert set(outcomes(gitlab_repo.reviewed).values()) == {("error", "waiting")}
    return pull_request


def outcomes(sha: str) -> dict:
    return {
        verification.finding.number: (verification.verdict,
                                      EvidenceResult.objects.get(verification=verification).facts["outcome"])
        for verification in Verification.objects.filter(commit__sha=sha).select_related("finding")
    }


def ours(payload: dict, sha: str) -> dict:
    payload["project"].update(id=PROJECT_ID, path_with_namespace=SLUG, web_url=f"https://gitlab.example.com/{SLUG}")
    if payload["object_kind"] == "pipeline":
        payload["object_attributes"]["sha"] = payload["commit"]["id"] = sha
    else:
        payload["sha"] = payload["commit"]["sha"] = sha
        payload["project_id"], payload["project_name"] = PROJECT_ID, SLUG
    return payload


def hook(client, capture, payload, event, event_uuid):
    with capture(execute=True):
        return deliver_hook(client, payload, event=event, event_uuid=event_uuid)


def test_a_pipeline_s_finished_jobs_are_recorded_by_name_and_move_their_items(
    client, gitlab_repo, checked, django_capture_on_commit_callbacks
):
    sha = gitlab_repo.reviewed
    response = hook(client, django_capture_on_commit_callbacks, ours(example("pipeline"), sha), "Pipeline Hook", "p-1")
    assert response.status_code in (200, 202), response.json()
    reports = {report.check_name: report for report in CheckReport.objects.all()}
    assert {name: report.conclusion for name, report in reports.items()} == {
        "test-build": "failure", "test-image": "success", "production": "skipped", "build-image": "success"}
    assert reports["test-build"].source == "gitlab"
    assert reports["test-build"].url == f"https://gitlab.example.com/{SLUG}/-/jobs/378"
    assert reports["test-build"].completed_at is not None
    assert outcomes(sha) == {1: ("present", "fails"), 2: ("likely_fixed", "passes"), 3: ("error", "uncheckable"),
                             4: ("error", "waiting"), 5: ("error", "waiting")}
    assert "1 still to run" in WebhookDelivery.objects.get(delivery_id="gitlab:p-1").outcome

    again = hook(client, django_capture_on_commit_callbacks, ours(example("pipeline"), sha), "Pipeline Hook", "p-2")
    assert again.status_code in (200, 202) and CheckReport.objects.count() == 4


def test_a_finished_job_is_recorded_with_its_retry_as_the_attempt(
    client, gitlab_repo, checked, django_capture_on_commit_callbacks
):
    sha = gitlab_repo.reviewed
    created = ours(example("job"), sha)
    response = hook(client, django_capture_on_commit_callbacks, created, "Job Hook", "j-created")
    assert response.status_code in (200, 202) and "not finished" in response.json()["detail"]
    assert not CheckReport.objects.exists()

    failed = ours(example("job"), sha)
    failed.update(build_status="failed", build_finished_at_iso="2021-02-23T02:43:00Z")
    hook(client, django_capture_on_commit_callbacks, failed, "Job Hook", "j-failed")
    report = CheckReport.objects.get()
    assert (report.check_name, report.conclusion, report.attempt) == ("test", "failure", 3)
    assert outcomes(sha)[5] == ("present", "fails")


def test_a_job_at_a_commit_the_project_does_not_have_keeps_nothing(
    client, gitlab_repo, checked, django_capture_on_commit_callbacks
):
    failed = ours(example("job"), "f" * 40)
    failed["build_status"] = "failed"
    response = hook(client, django_capture_on_commit_callbacks, failed, "Job Hook", "j-ghost")
    assert response.status_code == 400, response.json()
    assert not CheckReport.objects.exists()


def test_a_completed_pipeline_s_test_report_is_read_at_gitlab_into_its_tests_outcomes(
    client, gitlab_repo, checked, fake_gitlab, django_capture_on_commit_callbacks
):
    from findings.models import Evidence, ReportedTest

    sha = gitlab_repo.reviewed
    # Finding 1 names two tests of the job test-build: one still fails, the other passes now.
    Evidence.objects.filter(check_name="test-build").update(
        check_tests=["tests.test_calc::test_div", "tests.test_calc::test_floor"])
    pull_request_verify(pull_request=checked, commit=Commit.objects.get(sha=sha))
    fake_gitlab.add_test_report(PROJECT_ID, 31, {"test-build": [
        ("tests.test_calc", "test_div", "failed"), ("tests.test_calc", "test_floor", "success"),
        ("tests.test_calc", "test_neg", "error")]})

    response = hook(client, django_capture_on_commit_callbacks, ours(example("pipeline"), sha), "Pipeline Hook", "p-t")
    assert response.status_code in (200, 202) and "test report is read" in response.json()["detail"]
    assert fake_gitlab.calls("GET", r"/pipelines/31/test_report$")
    assert sorted(ReportedTest.objects.values_list("name", "outcome")) == [
        ("test_div", "failed"), ("test_floor", "passed"), ("test_neg", "failed")]
    verdict, outcome = outcomes(sha)[1]
    assert (verdict, outcome) == ("partly_fixed", "partly")


def test_a_test_report_gitlab_cannot_give_keeps_the_jobs_conclusions(
    client, gitlab_repo, checked, fake_gitlab, django_capture_on_commit_callbacks
):
    sha = gitlab_repo.reviewed
    fake_gitlab.fail("GET", r"/pipelines/31/test_report$", 500, {"message": "500 Internal Server Error"})
    response = hook(client, django_capture_on_commit_callbacks, ours(example("pipeline"), sha), "Pipeline Hook", "p-f")
    assert response.status_code in (200, 202)
    assert CheckReport.objects.count() == 4 and outcomes(sha)[1] == ("present", "fails")
