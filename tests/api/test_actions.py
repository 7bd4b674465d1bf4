import json

import pytest
import yaml
from django.urls import reverse

from findings.models import Finding, FindingEvent, VerificationRun
from reviews.models import Commit, PullRequest
from tests.findings.decision_data import fetched_review

pytestmark = pytest.mark.django_db

VERIFY = "/api/repos/acme/loader/pulls/4108/verify"


@pytest.fixture
def pushed(review, tmp_path) -> str:
    """A commit of acme/loader's real repository (a SHA must name a commit to be verified)."""
    from tests.gitrepo import GitRepoBuilder

    repo = GitRepoBuilder(tmp_path)
    sha = repo.write("src/check.py", "tolerance = 10\n").commit("push")
    review.repository.clone_url = repo.url
    review.repository.save()
    return sha


# --- Verify ---------------------------------------------------------------------------------------


def test_verify_queues_a_run_at_the_commit_and_answers_with_its_status_url(
    token_with_permission, review, pushed, queued_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = token_with_permission.post(VERIFY, {"commit": pushed[:10]}, format="json")
    assert response.status_code == 202
    run = VerificationRun.objects.get()
    # Resolved in the repository to the full SHA it names.
    assert (run.pull_request, run.commit.sha, run.requested_by) == (
        review.pull_request, pushed, token_with_permission.user
    )
    body = response.json()
    assert body["run"] == run.pk and body["status"] == "queued"
    assert body["status_url"] == f"http://testserver/api/runs/{run.pk}/" == response["Location"]
    assert queued_tasks == [run.pk]
    assert token_with_permission.get(body["status_url"]).json()["task_id"] == f"task-{run.pk}"


def test_verify_without_a_commit_queues_a_run_over_every_pin(token_with_permission, review):
    response = token_with_permission.post(VERIFY, format="json")
    assert response.status_code == 202
    assert VerificationRun.objects.get().commit is None


@pytest.mark.django_db(transaction=True)
def test_the_task_id_is_in_the_answer_once_the_run_is_committed(review, pushed, queued_tasks):
    from tests.api.conftest import API_PERMISSIONS, token_client
    from tests.factories import UserFactory

    client = token_client(UserFactory(permissions=API_PERMISSIONS))
    body = client.post(VERIFY, {"commit": pushed}, format="json").json()
    assert body["task_id"] == f"task-{body['run']}" and queued_tasks == [body["run"]]


def test_verify_with_a_bad_sha_is_a_400_and_queues_nothing(token_with_permission, review, queued_tasks):
    response = token_with_permission.post(VERIFY, {"commit": "not-a-sha"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "commit"
    assert not VerificationRun.objects.exists() and queued_tasks == []


def test_verify_of_a_sha_that_names_no_commit_is_a_400_and_records_nothing(
    token_with_permission, review, pushed, queued_tasks
):
    commits = Commit.objects.count()
    response = token_with_permission.post(VERIFY, {"commit": "0" * 40}, format="json")
    assert response.status_code == 400
    assert f"Commit {'0' * 40} cannot be verified in acme/loader" in response.json()["detail"]
    assert not VerificationRun.objects.exists() and queued_tasks == []
    assert Commit.objects.count() == commits


def test_verify_of_an_unknown_pull_request_is_a_404(token_with_permission, review):
    assert token_with_permission.post("/api/repos/acme/loader/pulls/1/verify", format="json").status_code == 404


# --- Resolve --------------------------------------------------------------------------------------


def resolve_url(finding) -> str:
    return f"/api/findings/{finding.pk}/resolve"


def test_resolve_marks_a_finding_fixed_at_an_abbreviated_commit_and_returns_the_history_row(
    token_with_permission, tmp_path
):
    review = fetched_review(tmp_path)
    finding = review.fixed_one
    response = token_with_permission.post(
        resolve_url(finding), {"status": "fixed", "commit": review.fix[:8], "note": "Tolerance back to 100."},
        format="json",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["finding"]["status"], body["finding"]["resolved_commit"], body["finding"]["resolved_by"]) == (
        "fixed", review.fix, "ci-bot"
    )
    event = FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).get(finding=finding)
    assert body["event"]["id"] == event.pk
    assert (body["event"]["from_status"], body["event"]["to_status"], body["event"]["source"]) == (
        "open", "fixed", "api"
    )


def test_resolve_through_the_api_writes_the_same_history_as_the_admin(token_with_permission, client, tmp_path,
                                                                      staff_maintainer):
    """Both call finding_resolve; only the actor and the source differ."""
    review = fetched_review(tmp_path)
    first, second = review.fixed_one, review.pull_request.findings.get(number=3)
    fields = ["from_status", "to_status", "commit", "note"]
    token_with_permission.post(
        resolve_url(first), {"status": "fixed", "commit": review.fix, "note": "Restored."}, format="json",
    )
    client.force_login(staff_maintainer)
    client.post(
        reverse("admin:findings_finding_resolve", args=["fixed"]),
        {"ids": str(second.pk), "status": "fixed", "commit": review.fix, "note": "Restored."},
    )
    api_event = FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).get(finding=first)
    admin_event = FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).get(finding=second)
    assert [getattr(api_event, name) for name in fields] == [getattr(admin_event, name) for name in fields]
    assert (api_event.source, api_event.actor.username) == ("api", "ci-bot")
    assert (admin_event.source, admin_event.actor) == ("admin", staff_maintainer)
    for finding in (first, second):
        finding.refresh_from_db()
    assert (first.status, first.resolved_commit, first.resolution_note) == (
        second.status, second.resolved_commit, second.resolution_note
    )


def test_resolve_refuses_an_unknown_sha_naming_the_commit_field(token_with_permission, tmp_path):
    review = fetched_review(tmp_path)
    response = token_with_permission.post(
        resolve_url(review.fixed_one), {"status": "fixed", "commit": "deadbeef"}, format="json"
    )
    assert response.status_code == 400
    body = response.json()
    assert "No commit deadbeef in acme/loader" in body["detail"]
    assert body["errors"] == [{"field": "commit", "message": body["detail"]}]
    assert review.fixed_one.status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()


def test_resolve_where_the_evidence_still_holds_asks_for_anyway_and_a_note(token_with_permission, tmp_path):
    review = fetched_review(tmp_path)
    url = resolve_url(review.still_there)
    refused = token_with_permission.post(url, {"status": "fixed", "commit": review.fix[:10]}, format="json")
    assert refused.status_code == 400
    body = refused.json()
    assert body["still_holds"] == {"commit": review.fix, "verdict": "present", "verdict_label": "Still present"}
    assert "The evidence still holds at" in body["detail"] and '"anyway": true' in body["detail"]
    without_note = token_with_permission.post(url, {"status": "fixed", "commit": review.fix, "anyway": True},
                                              format="json")
    assert without_note.status_code == 400 and "needs a note" in without_note.json()["detail"]
    assert not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()

    done = token_with_permission.post(
        url, {"status": "fixed", "commit": review.fix, "anyway": True, "note": "The flag is read nowhere now."},
        format="json",
    )
    assert done.status_code == 200, done.json()
    assert done.json()["event"]["note"] == "The flag is read nowhere now."


def test_the_schema_documents_the_anyway_confirmation(client):
    schema = client.get("/api/schema/", {"format": "json"}).json()
    request = schema["components"]["schemas"]["ResolveRequest"]["properties"]
    assert request["anyway"]["type"] == "boolean" and "still holds" in request["anyway"]["description"]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"status": "fixed"}, "Say which commit fixed it"),
        ({"status": "dismissed", "note": " "}, "Say why"),
        ({"status": "open"}, "already open"),
    ],
)
def test_a_refused_change_is_a_400_with_the_service_s_message(token_with_permission, review, payload, message):
    response = token_with_permission.post(resolve_url(review.findings[1]), payload, format="json")
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()
    assert Finding.objects.get(pk=review.findings[1].pk).status == "open"


def test_a_refused_change_leaves_no_commit_behind(token_with_permission, review):
    before = Commit.objects.count()
    response = token_with_permission.post(
        resolve_url(review.findings[1]), {"status": "open", "commit": "abcdef12345"}, format="json"
    )
    assert response.status_code == 400 and Commit.objects.count() == before


def test_resolve_validates_the_status_and_the_sha_before_calling_the_service(token_with_permission, review):
    response = token_with_permission.post(
        resolve_url(review.findings[1]), {"status": "closed", "commit": "zz"}, format="json"
    )
    assert response.status_code == 400
    assert {error["field"] for error in response.json()["errors"]} == {"status", "commit"}


def test_resolve_of_an_unknown_finding_is_a_404(token_with_permission, db):
    assert token_with_permission.post("/api/findings/999/resolve", {"status": "open"}, format="json").status_code == 404


# --- Import ---------------------------------------------------------------------------------------


def bundle(**overrides) -> dict:
    data = {
        "repository": {"slug": "acme/importer", "clone_url": "https://github.com/acme/importer.git",
                       "web_url": "https://github.com/acme/importer"},
        "pull_request": {"number": 12, "title": "Import things"},
        "commits": [{"sha": "a" * 40, "role": "reviewed"}],
        "findings": [
            {
                "number": 1,
                "kind": "blocker",
                "title": "The importer drops rows",
                "evidence": [
                    {"kind": "snippet", "path": "src/importer.py", "start_line": 3, "end_line": 4},
                    {"kind": "pattern", "path": "src/*.py", "regex": "drop\\(", "expect": "present"},
                ],
            }
        ],
    }
    data.update(overrides)
    return data


def test_import_of_a_json_bundle_creates_the_review_and_answers_201(token_with_permission, db):
    response = token_with_permission.post("/api/reviews/import", bundle(), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["pull_request"] == "acme/importer#12"
    assert "finding 1" in body["created"]
    assert body["url"] == "http://testserver/api/repos/acme/importer/pulls/12/" == response["Location"]
    assert PullRequest.objects.get().findings.get().evidence.count() == 2


def test_importing_the_same_bundle_again_is_a_200_that_changes_nothing(token_with_permission, db):
    token_with_permission.post("/api/reviews/import", bundle(), format="json")
    response = token_with_permission.post("/api/reviews/import", bundle(), format="json")
    assert response.status_code == 200
    assert response.json()["created"] == [] and response.json()["updated"] == []


@pytest.mark.parametrize("content_type", ["application/yaml", "application/x-yaml", "text/yaml", "text/plain"])
def test_import_takes_yaml(token_with_permission, db, content_type):
    response = token_with_permission.post(
        "/api/reviews/import", yaml.safe_dump(bundle()), content_type=content_type
    )
    assert response.status_code == 201, response.json()


def test_an_invalid_bundle_names_every_field_at_fault_and_imports_nothing(token_with_permission, db):
    broken = bundle()
    broken["findings"][0]["evidence"][1]["regex"] = "drop("
    broken["findings"][0]["kind"] = "nit"
    response = token_with_permission.post("/api/reviews/import", broken, format="json")
    assert response.status_code == 400
    body = response.json()
    fields = [error["field"] for error in body["errors"]]
    assert fields == ["findings[0].kind", "findings[0].evidence[1].regex"]
    assert body["detail"].startswith("Nothing was imported. Fix the bundle and send it again:")
    assert not PullRequest.objects.exists()


def test_a_bundle_that_fails_while_importing_changes_nothing(token_with_permission, db):
    # Valid in shape, but the evidence has no commit to be recorded at: found only while importing.
    response = token_with_permission.post("/api/reviews/import", bundle(commits=[]), format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "findings[0].evidence[0].commit"
    assert not PullRequest.objects.exists()


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        ("{not json", "application/json", "Not valid JSON"),
        ("- just\n- a list\n", "application/yaml", "A bundle is a mapping"),
        (b"\xff\xfe", "application/yaml", "not UTF-8"),
    ],
)
def test_an_unreadable_bundle_is_a_400_saying_why(token_with_permission, db, body, content_type, message):
    response = token_with_permission.post("/api/reviews/import", body, content_type=content_type)
    assert response.status_code == 400
    assert message in response.json()["detail"]
    assert response.json()["errors"][0]["field"] == ""


def test_an_oversized_bundle_is_refused(token_with_permission, db, monkeypatch):
    from findings.services import review_import as bundle_import

    monkeypatch.setattr(bundle_import, "MAX_BUNDLE_BYTES", 100)
    monkeypatch.setattr("api.views.review_imports.MAX_BUNDLE_BYTES", 100)
    response = token_with_permission.post("/api/reviews/import", json.dumps(bundle()), content_type="application/json")
    assert response.status_code == 400 and "larger than" in response.json()["detail"]


def test_an_unsupported_content_type_is_a_415_naming_what_to_send(token_with_permission, db):
    response = token_with_permission.post("/api/reviews/import", {"repository": "x"})  # multipart form
    assert response.status_code == 415
    assert "application/json" in response.json()["detail"]


def test_a_number_too_large_for_the_database_is_refused_with_its_field(token_with_permission, db):
    too_large = bundle()
    too_large["findings"][0]["evidence"][0]["end_line"] = 10**20
    response = token_with_permission.post("/api/reviews/import", too_large, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "findings[0].evidence[0].end_line"


def test_a_ci_check_is_imported_through_the_api_and_read_back_as_the_evidence_it_is(token_with_permission, db):
    data = bundle()
    data["findings"][0]["evidence"] = [
        {"kind": "check", "check": "unit-tests", "app": "github-actions",
         "tests": ["tests/test_importer.py::test_drops[2]", "tests.test_importer::test_keeps"]},
        {"kind": "check", "check": "secrets", "results": [{"rule": "S105", "path": "./config/soak.yaml", "start_line": 104}]},
    ]
    response = token_with_permission.post("/api/reviews/import", data, format="json")
    assert response.status_code == 201, response.json()
    listed = token_with_permission.get("/api/evidence/").json()["results"]
    assert [(item["kind"], item["check_name"], item["check_app"], item["check_tests"], item["check_results"],
             item["commit"], item["permalink"]) for item in listed] == [
        ("check", "unit-tests", "github-actions", ["tests/test_importer.py::test_drops[2]", "tests.test_importer::test_keeps"],
         [], "a" * 40, ""),
        ("check", "secrets", "", [], [{"rule": "S105", "path": "config/soak.yaml", "start_line": 104}], "a" * 40, ""),
    ]


def test_a_check_item_with_a_control_character_in_its_name_is_a_400_naming_the_field(token_with_permission, db):
    data = bundle()
    data["findings"][0]["evidence"] = [{"kind": "check", "check": "unit-tests\u001b[31m"}]
    response = token_with_permission.post("/api/reviews/import", data, format="json")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == "findings[0].evidence[0].check" and "control characters" in error["message"]
    assert not PullRequest.objects.exists()
