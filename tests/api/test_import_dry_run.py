"""The API's import dry run (`?dry_run=1`) is the real import rolled back: it says what would be
created and changed, each changed field's before and after, and writes nothing. A real import's
answer and its audit entry carry the same field changes."""
import json

import pytest

from access.models import AuditEntry
from findings.models import Finding
from findings.services.review_import import parse_bundle, review_import
from reviews.models import PullRequest
from tests.factories import UserFactory
from tests.personas import api_client

pytestmark = pytest.mark.django_db

BUNDLE = {
    "repository": {"slug": "acme/rl", "clone_url": "https://github.com/acme/rl.git"},
    "pull_request": {"number": 4108, "title": "Nemotron multimodal SFT", "before": "What was there.",
                     "comments_left": 14},
    "commits": [{"sha": "d044f40", "role": "reviewed"}],
    "tags": [{"slug": "silent-failure", "description": "Nothing says so."}],
    "findings": [{"number": 1, "kind": "blocker", "title": "Tolerance 0 never stops", "tags": ["silent-failure"],
                  "evidence": [{"kind": "note", "text": "Seen in CI."}]}],
}


def changed() -> dict:
    data = json.loads(json.dumps(BUNDLE))
    data["pull_request"]["before"] = "What is there now."
    data["tags"][0]["description"] = "Something fails and nothing says so."
    data["findings"][0].update(title="Tolerance 0 loops forever", tags=["silent-failure", "loops"],
                               evidence=[{"kind": "note", "text": "Seen in CI twice."}])
    return data


@pytest.fixture
def client():
    return api_client(UserFactory(username="ivy", groups=["Reviewer"]), scopes=["read", "import"])


EXPECTED = {
    "pull request acme/rl#4108": {"before": ["What was there.", "What is there now."]},
    "tag silent-failure": {"description": ["Nothing says so.", "Something fails and nothing says so."]},
    "finding 1": {
        "title": ["Tolerance 0 never stops", "Tolerance 0 loops forever"],
        "evidence": [["Note: Seen in CI."], ["Note: Seen in CI twice."]],
        "tags": [["silent-failure"], ["loops", "silent-failure"]],
    },
}


def test_a_dry_run_lists_each_changed_field_before_and_after_and_writes_nothing(client):
    review_import(data=parse_bundle(json.dumps(BUNDLE)))
    entries = AuditEntry.objects.count()
    response = client.post("/api/reviews/import?dry_run=1", changed(), format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["dry_run"] is True and "Location" not in response
    assert body["updated"] == ["pull request acme/rl#4108", "finding 1"]
    assert body["changes"] == EXPECTED
    pull_request = PullRequest.objects.get()
    assert (pull_request.before, pull_request.comments_left) == ("What was there.", 14)
    assert Finding.objects.get().title == "Tolerance 0 never stops"
    assert AuditEntry.objects.count() == entries


def test_a_dry_run_of_a_new_review_creates_nothing(client):
    response = client.post("/api/reviews/import?dry_run=1", BUNDLE, format="json")
    assert response.status_code == 200 and response.json()["dry_run"] is True
    assert "pull request acme/rl#4108" in response.json()["created"]
    assert not PullRequest.objects.exists()


def test_the_import_and_its_audit_entry_keep_each_field_before_and_after(client):
    review_import(data=parse_bundle(json.dumps(BUNDLE)))
    response = client.post("/api/reviews/import", changed(), format="json")
    assert response.status_code == 200 and response.json()["changes"] == EXPECTED
    assert response.json()["dry_run"] is False
    entry = AuditEntry.objects.filter(action="review.import", outcome="done").latest("id")
    assert entry.changes["pull request acme/rl#4108.before"] == ["What was there.", "What is there now."]
    assert entry.changes["finding 1.title"] == ["Tolerance 0 never stops", "Tolerance 0 loops forever"]
    assert entry.changes["tag silent-failure.description"] == ["Nothing says so.", "Something fails and nothing says so."]
