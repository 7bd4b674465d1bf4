"""A field change the audit log recorded can be set back from the log (the API) or the admin, by
someone with the role that changes that field; the revert is itself audited and never overwrites
a later change."""
import json

import pytest
from django.test import Client
from django.urls import reverse

from access.models import AuditEntry
from access.permissions import ActionRefused
from findings.models import Finding, TagDescription
from findings.services.authoring import finding_write
from findings.services.review_import import review_import
from findings.services.revert import RevertRefused, audit_entry_revert
from reviews.models import PullRequest, Repository
from tests.factories import UserFactory
from tests.personas import api_client, member_of

pytestmark = pytest.mark.django_db

BUNDLE = {
    "repository": {"slug": "acme/rl", "clone_url": "https://github.com/acme/rl.git", "default_branch": "main"},
    "pull_request": {"number": 4108, "title": "Nemotron multimodal SFT", "before": "What was there."},
    "tags": [{"slug": "loops", "description": "Never stops."}],
    "findings": [{"number": 1, "kind": "blocker", "title": "Tolerance 0 never stops", "summary": "One line."}],
}


def _import(**pull_request) -> AuditEntry:
    data = json.loads(json.dumps(BUNDLE))
    data["pull_request"].update(pull_request)
    review_import(data=data)
    return AuditEntry.objects.filter(action="review.import").latest("id")


def auditor(role: str | None, username: str = "ada"):
    """Someone who reads the audit log and holds `role` on acme/rl."""
    user = UserFactory(username=username, is_staff=True, permissions=["access.view_auditentry"])
    return member_of(Repository.objects.get(slug="acme/rl"), user, role) if role else user


def test_an_imports_field_change_is_reverted_from_the_api_and_the_revert_is_audited():
    _import()
    entry = _import(before="Overwritten.")
    assert entry.changes["pull request acme/rl#4108.before"] == ["What was there.", "Overwritten."]
    client = api_client(auditor("reviewer"), scopes=["read", "import"])
    response = client.post(f"/api/audit/{entry.pk}/revert", {"change": "pull request acme/rl#4108.before"},
                           format="json")
    assert response.status_code == 201, response.content
    assert PullRequest.objects.get().before == "What was there."
    revert = AuditEntry.objects.get(action="audit.revert")
    assert response.json()["id"] == revert.pk
    assert (revert.actor.username, revert.source, revert.changes) == (
        "ada", "api", {"pull request acme/rl#4108.before": ["Overwritten.", "What was there."]}
    )
    assert f"audit entry {entry.pk}" in revert.message
    # Done once: the field is what it was, so the same revert again is refused and recorded.
    again = client.post(f"/api/audit/{entry.pk}/revert", {"change": "pull request acme/rl#4108.before"},
                        format="json")
    assert again.status_code == 400 and "changed again since" in again.json()["detail"]
    assert AuditEntry.objects.filter(action="audit.revert", outcome="refused").count() == 1


def test_an_editors_field_change_is_reverted_from_the_admin():
    _import()
    pull_request = PullRequest.objects.get()
    finding = Finding.objects.get()
    editor = member_of(pull_request.repository, UserFactory(username="rae"), "reviewer")
    finding_write(pull_request=pull_request, finding=finding, actor=editor, source="site",
                  item={"number": 1, "kind": "blocker", "title": "A new title", "summary": "One line."})
    entry = AuditEntry.objects.get(action="finding.edit")
    assert entry.changes == {"title": ["Tolerance 0 never stops", "A new title"]}
    site = Client()
    site.force_login(auditor("reviewer"))
    page = site.get(reverse("admin:access_auditentry_change", args=[entry.pk]))
    assert page.status_code == 200 and "Set back to before" in page.content.decode()
    done = site.post(reverse("admin:access_auditentry_revert", args=[entry.pk]), {"key": "title"})
    assert done.status_code == 302
    assert Finding.objects.get().title == "Tolerance 0 never stops"
    revert = AuditEntry.objects.get(action="audit.revert")
    assert (revert.source, revert.changes) == ("admin", {"title": ["A new title", "Tolerance 0 never stops"]})
    event = Finding.objects.get().history.latest("id")
    assert (event.kind, event.source, event.note) == ("edited", "admin", f"Reverted title (audit entry {entry.pk}).")


def test_a_revert_needs_the_role_that_changes_the_field_and_changes_nothing_without_it():
    _import()
    entry = _import(before="Overwritten.")
    reader = auditor("reader", username="rita")
    with pytest.raises(ActionRefused):
        audit_entry_revert(entry=entry, key="pull request acme/rl#4108.before", actor=reader)
    # A repository's clone URL is its Admin's to set back, not a Reviewer's.
    moved = json.loads(json.dumps(BUNDLE))
    moved["repository"]["clone_url"] = "https://github.com/acme/moved.git"
    del moved["pull_request"]["before"]  # left as it is
    review_import(data=moved)
    moved_entry = AuditEntry.objects.filter(action="review.import").latest("id")
    reviewer = auditor("reviewer", username="rae")
    with pytest.raises(ActionRefused, match="Admin"):
        audit_entry_revert(entry=moved_entry, key="repository acme/rl.clone_url", actor=reviewer)
    assert PullRequest.objects.get().before == "Overwritten."
    assert Repository.objects.get().clone_url == "https://github.com/acme/moved.git"
    assert AuditEntry.objects.filter(action="audit.revert", outcome="refused").count() == 2
    admin = auditor("admin", username="adam")
    audit_entry_revert(entry=moved_entry, key="repository acme/rl.clone_url", actor=admin)
    assert Repository.objects.get().clone_url == "https://github.com/acme/rl.git"


def test_a_revert_never_overwrites_a_later_change_and_reverts_a_tag_description():
    _import()
    first = _import(before="Second.")
    _import(before="Third.")
    with pytest.raises(RevertRefused, match="changed again since"):
        audit_entry_revert(entry=first, key="pull request acme/rl#4108.before", actor=None)
    assert PullRequest.objects.get().before == "Third."
    described = json.loads(json.dumps(BUNDLE))
    described["tags"][0]["description"] = "Loops forever."
    review_import(data=described)
    entry = AuditEntry.objects.filter(action="review.import").latest("id")
    audit_entry_revert(entry=entry, key="tag loops.description", actor=auditor("reviewer"))
    assert TagDescription.objects.get().description == "Never stops."
    with pytest.raises(RevertRefused, match="can be reverted"):
        audit_entry_revert(entry=entry, key="created", actor=None)


def test_a_repositorys_publishing_setting_is_reverted_by_its_admin():
    from reviews.services import repository_publishing_update

    _import()
    repository = Repository.objects.get()
    repository_publishing_update(repository=repository, publish_checks=True)
    entry = AuditEntry.objects.get(action="repository.settings")
    audit_entry_revert(entry=entry, key="publish_checks", actor=auditor("admin"))
    repository.refresh_from_db()
    assert repository.publish_checks is False
    assert AuditEntry.objects.get(action="audit.revert").changes == {"publish_checks": [True, False]}
