"""A repository's merge policy: the defaults are the gate as it was, each setting changes the
gate's answer on every interface that shows it (the API's gate, the blockers page, GitHub's check
content, `recheck-gate`'s text), only the repository's Admin changes it (the site, the admin and
the API, each audited), bad values are refused and change nothing, and a policy changed while the
gate is derived gives that answer one policy or the other."""
import html
from datetime import timedelta

import pytest
from django.utils import timezone

from access.models import AuditEntry
from core.errors import PolicyError
from findings.models import Finding, RepositoryPolicy
from findings.services.policy import repository_policy_update
from findings.state import stored
from findings.state.stored import pull_request_state
from forge.content import FAILURE, SUCCESS, commit_report
from recheck_gate.cli import text_report
from reviews.models import PinnedCommit
from reviews.services import pull_request_changed
from tests import personas
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

GATE = "/api/repos/acme/loader/pulls/4108/gate"
POLICY = "/api/repos/acme/loader/policy"


def only_a_regressed_blocker(review):
    """Blockers 1 and 2 dismissed; blocker 3, marked fixed an hour ago, holds again at a head pinned
    after that: no open blocker, one possibly regressed."""
    now = timezone.now()
    Finding.objects.filter(pk__in=[review.findings[1].pk, review.findings[2].pk]).update(
        status=Finding.Status.DISMISSED, resolved_at=now - timedelta(days=1))
    Finding.objects.filter(pk=review.findings[3].pk).update(resolved_at=now - timedelta(hours=1))
    PinnedCommit.objects.filter(pull_request=review.pull_request, commit=review.head).update(pinned_at=now)
    pull_request_changed(pull_request_id=review.pull_request.pk)


def admin_of(repository, username="policy-admin"):
    return personas.member_of(repository, UserFactory(username=username), "admin")


def everything_says(review, client) -> dict:
    """The gate at the head as the API, the blockers page, GitHub's check and recheck-gate say it."""
    answer = client.get(GATE, {"commit": review.head.sha}).json()
    page = personas.site_client().get(f"{review.pull_request.get_absolute_url()}blockers/").content.decode()
    report = commit_report(pull_request=review.pull_request, commit=review.head)
    return {"api": answer["mergeable"], "reason": answer["reason"], "text": text_report(answer).splitlines()[0],
            "page": "may merge</h2>" in page or "overridden</h2>" in page, "page_reason": html.escape(answer["reason"]) in page,
            "check": report.conclusion, "summary": report.summary.splitlines()[0], "policy": answer["policy"]}


def test_a_repository_without_a_policy_reads_the_defaults(review, anonymous_reader):
    assert anonymous_reader.get(POLICY).json() == {
        "possibly_regressed_block": False, "overdue_cleanups_block": False, "cleanup_due_days": 30,
        "blocker_due_days": 14, "regression_restarts_clock": True, "override_role": "maintainer",
        "unverified_blocks": True,
    }


def test_possibly_regressed_blockers_block_only_where_the_policy_says_so_on_every_interface(review, anonymous_reader):
    only_a_regressed_blocker(review)
    before = everything_says(review, anonymous_reader)
    assert (before["api"], before["page"], before["check"]) == (True, True, SUCCESS)
    assert before["reason"] == before["text"] == before["summary"] and before["page_reason"]
    assert "look regressed" in before["reason"] and not before["policy"]["possibly_regressed_block"]

    admin = personas.api_client(admin_of(review.repository), scopes=("read", "settings"))
    assert admin.patch(POLICY, {"possibly_regressed_block": True}, format="json").status_code == 200

    after = everything_says(review, anonymous_reader)
    assert (after["api"], after["page"], after["check"]) == (False, False, FAILURE)
    assert after["reason"] == after["text"] == after["summary"] and after["page_reason"]
    assert "the repository's policy lets them block" in after["reason"]
    assert after["policy"]["possibly_regressed_block"] is True
    # The stored state is the one source: what it says is what a fresh derivation says.
    state = pull_request_state(pull_request_id=review.pull_request.pk)
    assert state["gates"][review.head.sha]["mergeable"] is False
    assert state["policy"]["possibly_regressed_block"] is True


def test_only_the_repositorys_admin_changes_the_policy_and_each_change_is_audited(review):
    maintainer = personas.member_of(review.repository, UserFactory(username="keeper"), "maintainer")
    refused = personas.api_client(maintainer, scopes=("read", "settings"))
    response = refused.patch(POLICY, {"cleanup_due_days": 7}, format="json")
    assert response.status_code == 403 and "Admin" in response.json()["detail"]
    assert not RepositoryPolicy.objects.exists()
    assert AuditEntry.objects.filter(action="repository.policy", outcome=AuditEntry.Outcome.REFUSED).exists()
    # An Admin's token without the settings scope is refused too.
    admin = admin_of(review.repository)
    assert personas.api_client(admin, scopes=("read",), name="read only").patch(POLICY, {"cleanup_due_days": 7},
                                                               format="json").status_code == 403

    generation = type(review.pull_request).objects.get(pk=review.pull_request.pk).generation
    answer = personas.api_client(admin, scopes=("read", "settings")).patch(
        POLICY, {"cleanup_due_days": 7, "override_role": "admin"}, format="json")
    assert answer.status_code == 200 and answer.json()["cleanup_due_days"] == 7
    entry = AuditEntry.objects.get(action="repository.policy", outcome=AuditEntry.Outcome.DONE)
    assert (entry.actor, entry.source, entry.changes) == (
        admin, "api", {"cleanup_due_days": [30, 7], "override_role": ["maintainer", "admin"]})
    # Every pull request of the repository is derived again with it.
    assert type(review.pull_request).objects.get(pk=review.pull_request.pk).generation > generation


@pytest.mark.parametrize("body, field", [
    ({"cleanup_due_days": 0}, "cleanup_due_days"),
    ({"blocker_due_days": -3}, "blocker_due_days"),
    ({"blocker_due_days": 100000}, "blocker_due_days"),
    ({"override_role": "reviewer"}, "override_role"),
    ({}, None),
])
def test_bad_policy_values_are_refused_and_change_nothing(review, body, field):
    admin = personas.api_client(admin_of(review.repository), scopes=("read", "settings"))
    response = admin.patch(POLICY, body, format="json")
    assert response.status_code == 400, response.json()
    if field:
        assert field in str(response.json())
    assert not RepositoryPolicy.objects.exists()


def test_the_service_refuses_what_the_api_would_not_send(review):
    admin = admin_of(review.repository)
    for changes in ({"cleanup_due_days": 0}, {"cleanup_due_days": True}, {"unknown": 1},
                    {"possibly_regressed_block": "yes"}):
        with pytest.raises(PolicyError):
            repository_policy_update(repository=review.repository, actor=admin, **changes)
    assert not RepositoryPolicy.objects.exists()
    assert AuditEntry.objects.filter(action="repository.policy", outcome=AuditEntry.Outcome.REFUSED).count() == 4


def test_the_admin_of_the_repository_changes_it_on_the_site_and_others_get_no_form(review):
    page = f"{review.repository.get_absolute_url()}"
    admin = personas.site_client(admin_of(review.repository))
    assert "Save the merge policy" in admin.get(page).content.decode()
    maintainer = personas.site_client(personas.member_of(review.repository, UserFactory(username="m"), "maintainer"))
    assert "Save the merge policy" not in maintainer.get(page).content.decode()
    form = {"possibly_regressed_block": "on", "cleanup_due_days": "10", "blocker_due_days": "5",
            "regression_restarts_clock": "on", "override_role": "maintainer"}
    assert maintainer.post(f"{page}policy/", form).status_code == 403
    assert not RepositoryPolicy.objects.exists()
    response = admin.post(f"{page}policy/", form, follow=True)
    assert "The merge policy is saved" in response.content.decode()
    policy = RepositoryPolicy.objects.get()
    assert (policy.possibly_regressed_block, policy.cleanup_due_days, policy.blocker_due_days,
            policy.overdue_cleanups_block) == (True, 10, 5, False)
    assert AuditEntry.objects.get(action="repository.policy", outcome=AuditEntry.Outcome.DONE).source == "site"
    # A value the service refuses is said, and nothing changes.
    response = admin.post(f"{page}policy/", {**form, "cleanup_due_days": "0"}, follow=True)
    assert "The merge policy was not changed" in response.content.decode()
    assert RepositoryPolicy.objects.get().cleanup_due_days == 10


def test_the_admin_edits_the_policy_as_an_inline_audited_and_it_moves_the_gate(review, anonymous_reader):
    only_a_regressed_blocker(review)
    root = personas.site_client(personas.superuser())
    url = f"/admin/reviews/repository/{review.repository.pk}/change/"
    page = root.get(url)
    assert "Merge policy" in page.content.decode()
    form = page.context["adminform"].form
    data = {name: value for name, value in form.initial.items() if value is not None and not isinstance(value, list)}
    data.update({
        "policy-TOTAL_FORMS": "1", "policy-INITIAL_FORMS": "0", "policy-MIN_NUM_FORMS": "0", "policy-MAX_NUM_FORMS": "1",
        "policy-0-possibly_regressed_block": "on", "policy-0-cleanup_due_days": "30",
        "policy-0-blocker_due_days": "14", "policy-0-regression_restarts_clock": "on",
        "policy-0-override_role": "maintainer",
    })
    for prefix in ("thread_settings", "follow_up_issue_setting"):
        data.update({f"{prefix}-TOTAL_FORMS": "0", f"{prefix}-INITIAL_FORMS": "0", f"{prefix}-MIN_NUM_FORMS": "0",
                     f"{prefix}-MAX_NUM_FORMS": "1"})
    response = root.post(url, data)
    assert response.status_code == 302, response.context["errors"] if response.context else response
    assert RepositoryPolicy.objects.get().possibly_regressed_block is True
    assert AuditEntry.objects.filter(action="repositorypolicy.add").exists()
    assert anonymous_reader.get(GATE, {"commit": review.head.sha}).json()["mergeable"] is False


def test_a_policy_changed_while_the_state_is_derived_gives_one_policy_or_the_other(review, monkeypatch):
    only_a_regressed_blocker(review)
    admin = admin_of(review.repository)
    loaded = stored.policy_facts_load

    def change_meanwhile(facts, pull_request_id):
        # The policy is read once, then changed (and committed) while the rest is derived.
        read = loaded(facts, pull_request_id)
        if not RepositoryPolicy.objects.exists():
            repository_policy_update(repository=review.repository, actor=admin, possibly_regressed_block=True)
        return read

    monkeypatch.setattr(stored, "policy_facts_load", change_meanwhile)
    answer = stored.pull_request_state_derive(pull_request_id=review.pull_request.pk)
    gate = answer["gates"][review.head.sha]
    # The answer was derived with the policy it read, whole: reported and not blocking.
    assert (gate["policy"]["possibly_regressed_block"], gate["mergeable"]) == (False, True)
    # It was not stored for the generation the change moved on from; the next read has the new policy.
    monkeypatch.setattr(stored, "policy_facts_load", loaded)
    gate = pull_request_state(pull_request_id=review.pull_request.pk)["gates"][review.head.sha]
    assert (gate["policy"]["possibly_regressed_block"], gate["mergeable"]) == (True, False)
