"""The "Recheck" check run, end to end: a real git repository, a review imported, a verification
requested through the service every entry point uses, and what reaches the fake GitHub."""
import pytest

from findings.models import Finding, VerificationRun
from findings.services.resolution import finding_resolve
from forge.models import ForgeCall
from forge.outbox.services import verification_run_report
from reviews.models import Commit
from tests.findings.services.test_verification import LOADER, import_review
from tests.forge.scenario import the_check_run, verify

pytestmark = pytest.mark.django_db


def test_it_posts_in_progress_then_failure_while_a_blocker_still_holds(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    created = fake_github.calls("POST", r"/repos/acme/loader/check-runs$")
    assert created == [{
        "name": "Recheck",
        "head_sha": repo.reviewed,
        "details_url": "https://recheck.example.com/acme/loader/pull/7/blockers/",
        "external_id": f"recheck-call-{ForgeCall.objects.earliest('id').pk}",
        "status": "in_progress",
        "output": created[0]["output"],
    }]
    assert created[0]["output"]["title"] == f"Verifying {repo.reviewed[:8]}"
    run = the_check_run(fake_github)
    assert (run["status"], run["conclusion"]) == ("completed", "failure")
    assert run["output"]["title"] == f"Two open blockers still present at {repo.reviewed[:8]}"
    summary = run["output"]["summary"]
    assert "[B1 Tolerance 0 never stops](https://recheck.example.com/acme/loader/pull/7/blockers/#finding-1): " \
           "still present" in summary
    assert "### Nothing checks these" in summary
    assert {(a["path"], a["start_line"], a["end_line"], a["annotation_level"]) for a in run["annotations"]} == {
        ("src/loader.py", 10, 10, "failure"),
        ("config.yaml", 1, 1, "failure"),
    }
    assert ForgeCall.objects.filter(status=ForgeCall.Status.SENT).count() == 2


def test_it_concludes_action_required_when_the_open_blockers_look_fixed(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fixed = repo.write("src/loader.py", LOADER.replace("    tolerance = 0\n", "    tolerance = 1e-6\n"))
    fixed = fixed.delete("config.yaml").commit("fix both")

    verify(pull_request, fixed, django_capture_on_commit_callbacks)

    run = the_check_run(fake_github)
    assert (run["head_sha"], run["status"], run["conclusion"]) == (fixed, "completed", "action_required")
    assert "look fixed" in run["output"]["title"] and "a maintainer decides" in run["output"]["title"]


def test_it_concludes_success_once_no_blocker_is_open(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks, staff_maintainer
):
    commit = Commit.objects.get(repository=pull_request.repository, sha=repo.reviewed)
    for finding in Finding.objects.filter(pull_request=pull_request, kind=Finding.Kind.BLOCKER):
        finding_resolve(finding=finding, status=Finding.Status.FIXED, actor=staff_maintainer, source="admin",
                        commit=commit, note="done")

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    run = the_check_run(fake_github)
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    assert "~~[B1 Tolerance 0 never stops]" in run["output"]["summary"]


def test_it_concludes_action_required_when_a_check_could_not_run(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    repository = pull_request.repository
    repository.clone_url = str(repo.path / "gone")
    repository.save()
    # A fresh mirror root: the repository cannot be read at all. GitHub names the SHA (a re-run
    # asked for on GitHub), so it is verified, and the verification cannot check anything.
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks, commit_known=True)

    run = the_check_run(fake_github)
    assert run["conclusion"] == "action_required"
    assert "could not be checked" in run["output"]["title"]


def test_re_verifying_the_same_sha_updates_its_check_run(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    assert len(fake_github.calls("POST", r"/check-runs$")) == 1
    run = the_check_run(fake_github)
    assert run["conclusion"] == "failure"
    # in_progress, completed, in_progress again, completed again: each on the same run.
    assert len(fake_github.calls("PATCH", rf"/check-runs/{run['id']}$")) == 3


def test_the_same_report_for_the_same_sha_is_not_posted_twice(pull_request, repo, fake_github):
    commit = Commit.objects.get(repository=pull_request.repository, sha=repo.reviewed)
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit)
    first = verification_run_report(run=run)
    again = verification_run_report(run=run)

    assert [call.state for call in first] == ["in_progress"]
    assert again == []


def test_a_pull_request_with_120_open_findings_sends_three_annotation_batches_to_one_check_run(
    repo, fake_github, django_capture_on_commit_callbacks
):
    findings = [
        {
            "number": number,
            "kind": "cleanup" if number % 3 else "blocker",
            "title": f"Line {number % 20 + 1}",
            "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": number % 20 + 1,
                          "end_line": number % 20 + 1}],
        }
        for number in range(1, 121)
    ]
    pull_request = import_review(repo, findings=findings, commits=[{"sha": repo.reviewed, "role": "reviewed"}])
    pull_request.repository.publish_checks = True
    pull_request.repository.save()
    fake_github.install("acme/loader")

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    run = the_check_run(fake_github)
    updates = fake_github.calls("PATCH", rf"/check-runs/{run['id']}$")
    batches = [len(body["output"].get("annotations", [])) for body in updates]
    assert batches == [50, 50, 20]
    assert updates[0]["conclusion"] == "failure"
    assert len(run["annotations"]) == 120
    levels = {a["annotation_level"] for a in run["annotations"]}
    assert levels == {"failure", "notice"}
    # One call for the report: the sender splits its annotations into GitHub's batches.
    assert ForgeCall.objects.filter(state="completed: failure").count() == 1


