"""A bundle changes only what it names: an omitted field is left as it is and null clears it, on
every interface that imports (the API, the command, the browser's bundle page)."""
import io
import json

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from access.tokens import api_token_create
from findings.services.review_import import parse_bundle, review_import
from findings.models import Finding
from reviews.models import PullRequest, Repository
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

FULL = {
    "repository": {"slug": "acme/rl", "clone_url": "https://github.com/acme/rl.git",
                   "web_url": "https://github.com/acme/rl", "default_branch": "trunk"},
    "pull_request": {
        "number": 4108, "title": "Nemotron multimodal SFT", "url": "https://github.com/acme/rl/pull/4108",
        "state": "open", "before": "What was there.", "change": "What it adds.", "status": "Nine blockers.",
        "opening": "Nine things to fix.", "closing": "What to do with this.", "comments_left": 14,
        "cleanups_not_recorded": 5,
        "attestation": {"text": "Re-checked by hand.", "by": "Ada", "at": "2026-11-30T10:00:00Z", "commit": "d044f40"},
    },
    "commits": [{"sha": "d044f40", "role": "reviewed"}],
    "findings": [{
        "number": 1, "kind": "blocker", "caught_by": "ci", "title": "Tolerance 0 never stops",
        "summary": "One line.", "body": "The body.", "fix": "The fix.",
        "review_comment_url": "https://github.com/acme/rl/pull/4108#discussion_r1",
        "location": {"path": "src/loader.py", "line": 7},
        "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 7, "end_line": 8, "text": "x = 0"}],
    }],
}

PARTIAL = {
    "repository": {"slug": "acme/rl", "clone_url": "https://github.com/acme/rl.git"},
    "pull_request": {"number": 4108, "title": "Nemotron multimodal SFT"},
    "findings": [{"number": 2, "kind": "cleanup", "title": "Rename the loader"}],
}

PULL_REQUEST_FIELDS = ["url", "state", "before", "change", "status_note", "opening", "closing", "comments_left",
                       "cleanups_not_recorded", "attestation", "attested_by", "attested_at", "attested_commit_id"]
FINDING_FIELDS = ["caught_by", "summary", "body", "fix", "review_comment_url", "path", "line"]


def _state() -> dict:
    repository = Repository.objects.get(slug="acme/rl")
    pull_request = PullRequest.objects.get(repository=repository, number=4108)
    finding = pull_request.findings.get(number=1)
    return {
        "repository": {name: getattr(repository, name) for name in ("clone_url", "web_url", "default_branch")},
        "pull_request": {name: getattr(pull_request, name) for name in PULL_REQUEST_FIELDS},
        "finding": {name: getattr(finding, name) for name in FINDING_FIELDS},
        "evidence": list(finding.evidence.values_list("kind", "path", "start_line", "end_line", "text")),
    }


def _api(data: dict) -> None:
    user = UserFactory(username="ivy", groups=["Reviewer"])
    _, secret = api_token_create(user=user, name="CI", scopes=["read", "import"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    response = client.post("/api/reviews/import", data, format="json")
    assert response.status_code in (200, 201), response.content


def _command(data: dict, tmp_path) -> None:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(data))
    call_command("import_review", str(path), stdout=io.StringIO())


def _browser(data: dict) -> None:
    client = Client()
    client.force_login(UserFactory(username="rae", groups=["Reviewer"]))
    response = client.post(reverse("findings:bundle_import"), {"text": json.dumps(data), "confirm": "1"})
    assert response.status_code == 200, response.content


@pytest.mark.parametrize("interface", ["api", "command", "browser"])
def test_a_partial_bundle_leaves_every_field_it_does_not_name_unchanged(interface, tmp_path):
    review_import(data=parse_bundle(json.dumps(FULL)))
    before = _state()
    {"api": _api, "command": lambda data: _command(data, tmp_path), "browser": _browser}[interface](PARTIAL)
    assert _state() == before
    assert Finding.objects.get(number=2).kind == "cleanup"


def test_null_clears_a_field_and_a_new_pull_request_takes_the_defaults():
    review_import(data=parse_bundle(json.dumps(FULL)))
    cleared = json.loads(json.dumps(PARTIAL))
    cleared["pull_request"].update(before=None, comments_left=None, attestation=None)
    cleared["findings"] = [{"number": 1, "kind": "blocker", "title": "Tolerance 0 never stops", "body": None,
                            "location": None}]
    review_import(data=parse_bundle(json.dumps(cleared)))
    state = _state()
    assert state["pull_request"]["before"] == "" and state["pull_request"]["comments_left"] is None
    assert state["pull_request"]["attestation"] == "" and state["pull_request"]["attested_commit_id"] is None
    assert state["pull_request"]["change"] == "What it adds."
    assert state["finding"]["body"] == "" and state["finding"]["path"] == "" and state["finding"]["line"] is None
    assert state["finding"]["fix"] == "The fix." and len(state["evidence"]) == 1

    review_import(data=parse_bundle(json.dumps({**PARTIAL, "pull_request": {"number": 9, "title": "New"}})))
    fresh = PullRequest.objects.get(number=9)
    assert (fresh.state, fresh.before, fresh.comments_left) == ("open", "", None)
