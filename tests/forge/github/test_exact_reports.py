"""What GitHub shows is exactly Recheck's current report: a re-run leaves the current annotations
and no others (GitHub appends the annotations of every update, and the fake does too), a large
pull request gets its comment within GitHub's limits, a SHA that names no commit gets nothing,
and a report that could not be prepared is prepared again rather than lost."""
import pytest
from django.db import OperationalError

from findings.models import Finding, VerificationRun
from findings.services.resolution import finding_resolve
from forge import content
from forge.models import ForgeCall
from reviews.models import Commit
from tests.api.conftest import API_PERMISSIONS, token_client
from tests.factories import UserFactory
from tests.findings.services.test_verification import import_review
from tests.forge.scenario import deliver, verify

pytestmark = pytest.mark.django_db


def annotated(run: dict) -> set[tuple]:
    return {(a["path"], a["start_line"], a["annotation_level"], a["title"]) for a in run["annotations"]}


def test_a_re_run_leaves_exactly_the_current_annotations(
    pull_request, repo, fake_github, staff_maintainer, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    first = fake_github.latest_run(repo.reviewed)
    assert annotated(first) == {("src/loader.py", 10, "failure", "Blocker 1: Tolerance 0 never stops"),
                                ("config.yaml", 1, "failure", "Blocker 2: Debug flag left on")}

    # The same report again: the run is updated, and no annotation is sent twice.
    sent_before = len(fake_github.calls("PATCH", r"/check-runs/"))
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    assert fake_github.runs_of(repo.reviewed) == [first] and len(first["annotations"]) == 2
    again = fake_github.calls("PATCH", r"/check-runs/")[sent_before:]
    assert [body["status"] for body in again] == ["in_progress", "completed"]
    assert all("annotations" not in body["output"] for body in again)

    # Blocker 2 is closed since: GitHub cannot take its annotation back, so a new run shows the report.
    finding_resolve(finding=Finding.objects.get(pull_request=pull_request, number=2),
                    status=Finding.Status.DISMISSED, actor=staff_maintainer, source="admin",
                    note="The flag is wanted in this branch.")
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    shown = fake_github.latest_run(repo.reviewed)
    assert shown["id"] != first["id"]
    assert annotated(shown) == {("src/loader.py", 10, "failure", "Blocker 1: Tolerance 0 never stops")}
    assert (shown["status"], shown["conclusion"]) == ("completed", "failure")
    # The replaced run can never pass a required check.
    assert (first["conclusion"], first["output"]["title"]) == ("cancelled", "Replaced by a newer Recheck run")
    assert len(fake_github.runs_of(repo.reviewed)) == 2


def test_a_pull_request_with_200_blockers_gets_a_comment_within_githubs_limit(
    repo, fake_github, django_capture_on_commit_callbacks
):
    long_title = ("A title that goes on and on about what is wrong with this line " * 6)[:280]
    findings = [
        {"number": number, "kind": "blocker", "title": f"{number}: {long_title}",
         "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": number % 20 + 1,
                       "end_line": number % 20 + 1}]}
        for number in range(1, 201)
    ]
    pull_request = import_review(repo, findings=findings, commits=[{"sha": repo.reviewed, "role": "reviewed"}])
    pull_request.repository.publish_checks = True
    pull_request.repository.publish_comment = True
    pull_request.repository.save()
    fake_github.install("acme/loader")

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    [comment] = fake_github.comments.values()
    body = comment["body"]
    assert content.COMMENT_MARKER in body
    assert len(body) <= 65536
    listed = body.count("\n- ")
    assert 0 < listed < 200
    assert f"… and {200 - listed} more blockers on Recheck: https://recheck.example.com/acme/loader/pull/7/blockers/" \
        in body
    run = fake_github.latest_run(repo.reviewed)
    summary = run["output"]["summary"]
    assert len(summary) <= 65535
    assert "more blockers on Recheck: https://recheck.example.com/acme/loader/pull/7/blockers/" in summary
    assert len(run["annotations"]) == 200
    assert all(len(a["title"]) <= 255 for a in run["annotations"])
    assert not ForgeCall.objects.exclude(status="sent").exists()


def test_a_sha_that_names_no_commit_is_never_mergeable_and_nothing_is_posted(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    reviewer = token_client(UserFactory(username="ci-bot", permissions=API_PERMISSIONS))
    nothing = "0" * 40

    with django_capture_on_commit_callbacks(execute=True):
        response = reviewer.post("/api/repos/acme/loader/pulls/7/verify", {"commit": nothing}, format="json")
    deliver()

    assert response.status_code == 400
    assert f"Commit {nothing} cannot be verified in acme/loader" in response.json()["detail"]
    assert not VerificationRun.objects.exists() and not ForgeCall.objects.exists()
    assert not Commit.objects.filter(sha=nothing).exists()
    assert fake_github.requests == []
    gate = reviewer.get("/api/repos/acme/loader/pulls/7/gate", {"commit": nothing})
    assert gate.status_code == 400 and "is not recorded for acme/loader" in gate.json()["detail"]


def test_a_report_that_could_not_be_prepared_is_recorded_and_prepared_again(
    pull_request, repo, fake_github, monkeypatch, django_capture_on_commit_callbacks
):
    real_report = content.commit_report
    failures = {"left": 1}

    def locked_once(**kwargs):
        if failures["left"]:
            failures["left"] -= 1
            raise OperationalError("database is locked")
        return real_report(**kwargs)

    # The database fails once while the completed report is built.
    monkeypatch.setattr(content, "commit_report", locked_once)
    with django_capture_on_commit_callbacks(execute=True):
        from findings.services.runs import verification_run_request

        run = verification_run_request(pull_request=pull_request, commit_sha=repo.reviewed)
    run.refresh_from_db()
    assert run.status == VerificationRun.Status.DONE
    preparing = ForgeCall.objects.get(kind=ForgeCall.Kind.REPORT)
    assert (preparing.status, preparing.state) == ("pending", "preparing")
    assert "database is locked" in preparing.response_message

    deliver()

    preparing.refresh_from_db()
    assert preparing.status == "sent"
    run_on_github = fake_github.latest_run(repo.reviewed)
    assert (run_on_github["status"], run_on_github["conclusion"]) == ("completed", "failure")


def test_an_annotation_stays_within_githubs_field_limits():
    annotation = content.Annotation(
        number=1, kind="blocker", verdict="present", url="", path="src/loader.py", start_line=1, end_line=1,
        level="failure", title="T" * 400, message="é" * 70_000,
    )
    sent = annotation.as_github()
    assert len(sent["title"]) == 255 and sent["title"].endswith("…")
    assert len(sent["message"].encode()) <= 64 * 1024 and sent["message"].startswith("é")
