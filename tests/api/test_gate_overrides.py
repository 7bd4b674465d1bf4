"""Overriding the gate at one pinned commit: a Maintainer (or the role the policy names) with a
reason and a note; the gate then answers mergeable with who, why and when, at that commit only (a
push closes it again), on the API, the blockers page, GitHub's check content and `recheck-gate`;
revoking it opens nothing and closes the gate again; both are audited; bad input is refused."""
import pytest

from access.models import AuditEntry
from access.permissions import ActionRefused
from core.errors import PolicyError
from findings.models import GateOverride
from findings.services.policy import gate_override_create, gate_override_revoke, repository_policy_update
from forge.content import FAILURE, SUCCESS, commit_report
from recheck_gate.cli import text_report
from reviews.models import PinnedCommit
from tests import personas
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

GATE = "/api/repos/acme/loader/pulls/4108/gate"
OVERRIDES = "/api/repos/acme/loader/pulls/4108/overrides/"


@pytest.fixture
def maintainer(review):
    return personas.member_of(review.repository, UserFactory(username="keeper"), "maintainer")


def override_by_api(user, body, *, name="override token"):
    return personas.api_client(user, scopes=("read", "resolve"), name=name).post(OVERRIDES, body, format="json")


def test_a_maintainer_overrides_the_gate_at_the_head_and_a_push_closes_it_again(review, maintainer, anonymous_reader):
    assert anonymous_reader.get(GATE).json()["mergeable"] is False
    response = override_by_api(maintainer, {"commit": review.head.sha[:10], "reason": "urgent_fix",
                                            "note": "Production is down; B1 follows in #4110."})
    assert response.status_code == 201, response.json()
    made = response.json()
    assert (made["commit"], made["by"], made["active"]) == (review.head.sha, "keeper", True)

    answer = anonymous_reader.get(GATE).json()
    assert answer["mergeable"] is True and answer["verified"] is True
    overridden = answer["overridden"]
    assert {key: overridden[key] for key in ("by", "reason", "note", "commit")} == {
        "by": "keeper", "reason": "urgent_fix", "note": "Production is down; B1 follows in #4110.",
        "commit": review.head.sha}
    assert overridden["at"] and overridden["id"] == made["id"]
    assert answer["reason"].startswith(f"Overridden by keeper at {review.head.sha[:8]} (urgent fix): Production is down")
    assert answer["open_blockers_count"] == 2  # still listed: the override does not hide them
    # recheck-gate, the check's content and the page say it too.
    text = text_report(answer)
    assert text.splitlines()[0] == answer["reason"] and "reason urgent_fix: Production is down" in text
    report = commit_report(pull_request=review.pull_request, commit=review.head)
    assert report.conclusion == SUCCESS
    assert report.title == f"Gate overridden at {review.head.sha[:8]} by keeper (urgent fix)"
    assert report.summary.splitlines()[0] == answer["reason"]
    page = personas.site_client().get(f"{review.pull_request.get_absolute_url()}blockers/").content.decode()
    assert "overridden</h2>" in page and "Production is down" in page

    # A push: the new head is not overridden.
    new_head = review.new_commit()
    PinnedCommit.objects.create(pull_request=review.pull_request, commit=new_head, role="head")
    again = anonymous_reader.get(GATE).json()
    assert (again["commit"], again["mergeable"], again["overridden"]) == (new_head.sha, False, None)
    # At the older commit, still overridden.
    assert anonymous_reader.get(GATE, {"commit": review.head.sha}).json()["overridden"]["by"] == "keeper"

    entry = AuditEntry.objects.get(action="pull_request.gate_override", outcome=AuditEntry.Outcome.DONE)
    assert (entry.actor, entry.source, entry.repository) == (maintainer, "api", review.repository)
    assert "urgent fix" in entry.message


def test_revoking_an_override_closes_the_gate_and_is_audited(review, maintainer, anonymous_reader):
    override = gate_override_create(pull_request=review.pull_request, sha=review.head.sha, reason="accepted_risk",
                                    note="", actor=maintainer)
    assert anonymous_reader.get(GATE).json()["mergeable"] is True
    client = personas.api_client(maintainer, scopes=("read", "resolve"))
    response = client.post(f"{OVERRIDES}{override.pk}/revoke")
    assert response.status_code == 200 and response.json()["active"] is False
    assert response.json()["revoked_by"] == "keeper"
    answer = anonymous_reader.get(GATE).json()
    assert (answer["mergeable"], answer["overridden"]) == (False, None)
    assert commit_report(pull_request=review.pull_request, commit=review.head).conclusion == FAILURE
    assert AuditEntry.objects.filter(action="pull_request.gate_override_revoke",
                                     outcome=AuditEntry.Outcome.DONE).count() == 1
    # Revoked twice: refused, and said why.
    again = client.post(f"{OVERRIDES}{override.pk}/revoke")
    assert again.status_code == 400 and "revoked already" in again.json()["detail"]
    # Both are listed, newest first.
    listed = anonymous_reader.get(OVERRIDES).json()
    assert [(item["id"], item["active"]) for item in listed] == [(override.pk, False)]
    # A new override at the same commit is allowed once the first is revoked.
    gate_override_create(pull_request=review.pull_request, sha=review.head.sha, reason="false_positive",
                         actor=maintainer)
    assert anonymous_reader.get(GATE).json()["overridden"]["reason"] == "false_positive"


@pytest.mark.parametrize("body, field", [
    ({"commit": "0" * 40, "reason": "urgent_fix"}, "not a commit pinned"),
    ({"commit": "not-a-sha", "reason": "urgent_fix"}, "is not a commit SHA"),
    ({"commit": "HEAD", "reason": "urgent_fix"}, "is not a commit SHA"),
    ({"commit": "{head}", "reason": "other", "note": "   "}, "needs a note"),
    ({"commit": "{head}", "reason": "because"}, "reason"),
])
def test_bad_overrides_are_refused_and_the_gate_stays_closed(review, maintainer, anonymous_reader, body, field):
    body = {**body, "commit": body["commit"].replace("{head}", review.head.sha)}
    response = override_by_api(maintainer, body)
    assert response.status_code == 400, response.json()
    assert field in str(response.json())
    assert not GateOverride.objects.exists()
    assert anonymous_reader.get(GATE).json()["mergeable"] is False


def test_a_commit_of_the_repository_not_pinned_to_this_pull_request_is_refused(review, maintainer):
    other = review.new_commit()
    with pytest.raises(PolicyError, match="not a commit pinned"):
        gate_override_create(pull_request=review.pull_request, sha=other.sha, reason="urgent_fix", actor=maintainer)
    assert AuditEntry.objects.filter(action="pull_request.gate_override", outcome=AuditEntry.Outcome.REFUSED).exists()


def test_one_override_at_a_time_per_commit(review, maintainer):
    gate_override_create(pull_request=review.pull_request, sha=review.head.sha, reason="urgent_fix", actor=maintainer)
    with pytest.raises(PolicyError, match="already"):
        gate_override_create(pull_request=review.pull_request, sha=review.head.sha, reason="other", note="again",
                             actor=maintainer)


def test_only_the_role_the_policy_names_overrides(review, maintainer, anonymous_reader):
    reviewer = personas.member_of(review.repository, UserFactory(username="rev"), "reviewer")
    assert override_by_api(reviewer, {"commit": review.head.sha, "reason": "urgent_fix"},
                           name="reviewer token").status_code == 403
    admin = personas.member_of(review.repository, UserFactory(username="boss"), "admin")
    repository_policy_update(repository=review.repository, actor=admin, override_role="admin")
    # A Maintainer no longer may; an Admin may.
    response = override_by_api(maintainer, {"commit": review.head.sha, "reason": "urgent_fix"})
    assert response.status_code == 403 and "Admin" in response.json()["detail"]
    assert AuditEntry.objects.filter(action="pull_request.gate_override", outcome=AuditEntry.Outcome.REFUSED,
                                     actor=maintainer).exists()
    override = gate_override_create(pull_request=review.pull_request, sha=review.head.sha, reason="urgent_fix",
                                    actor=admin)
    with pytest.raises(ActionRefused, match="Admin"):
        gate_override_revoke(override=override, actor=maintainer)
    assert anonymous_reader.get(GATE).json()["mergeable"] is True
    # Anonymous: refused before anything.
    assert anonymous_reader.post(OVERRIDES, {"commit": review.head.sha, "reason": "urgent_fix"},
                                 format="json").status_code in (401, 403)


def test_the_blockers_page_offers_the_override_to_whom_may_and_it_works(review, maintainer):
    url = f"{review.pull_request.get_absolute_url()}blockers/"
    reader = personas.site_client(personas.member_of(review.repository, UserFactory(username="r"), "reader"))
    assert "Override the gate" not in reader.get(url).content.decode()
    site = personas.site_client(maintainer)
    assert "Override the gate" in site.get(url).content.decode()
    post = f"{review.pull_request.get_absolute_url()}gate/override/"
    refused = site.post(post, {"commit": review.head.sha, "reason": "other", "note": ""}, follow=True)
    assert "needs a note" in refused.content.decode() and not GateOverride.objects.exists()
    done = site.post(post, {"commit": review.head.sha, "reason": "other", "note": "Flaky check, tracked in #12."},
                     follow=True)
    page = done.content.decode()
    assert "overridden</h2>" in page and "Flaky check, tracked in #12." in page and "Revoke the override" in page
    # A reader's kept page is not the maintainer's: no revoke button there.
    assert "Revoke the override" not in reader.get(url).content.decode()
    assert reader.post(post, {"commit": review.head.sha, "reason": "urgent_fix"}).status_code == 403
    override = GateOverride.objects.get()
    revoked = site.post(f"{review.pull_request.get_absolute_url()}gate/overrides/{override.pk}/revoke/", follow=True)
    assert "may not merge</h2>" in revoked.content.decode()
