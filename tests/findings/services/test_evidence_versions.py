"""Evidence has versions: a verification records the version it checked, a change to the evidence
drops the verdicts of the old version (they count nowhere), and a run that a re-import overtakes
ends cleanly without keeping results computed from the old evidence."""
import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from rest_framework.test import APIClient

from findings.services.verification import run as verifying
from findings.services.review_import import review_import
from findings.models import EvidenceResult, Finding, Verification, VerificationRun
from findings.tasks import run_verification
from tests.findings.services.test_verification import LOADER, import_review, verify
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.reviewed = builder.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n").commit("reviewed")
    return builder


def moved_evidence(repo):
    """The same review with finding 1's snippet moved to other lines (a reviewer's correction)."""
    return [
        {"number": 1, "kind": "blocker", "title": "Tolerance 0 never stops",
         "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 3, "end_line": 4}]},
        {"number": 2, "kind": "blocker", "title": "Debug flag left on",
         "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"}]},
        {"number": 3, "kind": "cleanup", "title": "Talk it over", "evidence": [{"kind": "note", "text": "Ask."}]},
    ]


def test_a_verification_records_the_evidence_version_it_checked(repo):
    pull_request = import_review(repo)
    verify(pull_request, repo.reviewed)
    assert set(Verification.objects.values_list("evidence_version", flat=True)) == {1}


def test_a_reimport_that_changes_evidence_drops_the_old_verdicts_everywhere(repo, settings):
    settings.RECHECK_PUBLIC_READ = True
    pull_request = import_review(repo)
    verify(pull_request, repo.reviewed)
    one = Finding.objects.get(number=1)

    import_review(repo, findings=moved_evidence(repo))

    one.refresh_from_db()
    assert one.evidence_version == 2 and one.evidence_changed_at
    assert not Verification.objects.filter(finding=one).exists()
    assert not EvidenceResult.objects.filter(evidence__finding=one).exists()
    assert Verification.objects.filter(finding__number=2).exists()  # unchanged evidence keeps its verdict
    gate = APIClient().get(f"/api/repos/acme/loader/pulls/7/gate?commit={repo.reviewed}").json()
    assert gate["verified"] is False and gate["mergeable"] is False
    page = Client().get("/acme/loader/pull/7/findings/1/").content.decode()
    assert "Evidence changed since the last check; re-verify" in page

    verify(pull_request, repo.reviewed)
    assert Verification.objects.get(finding=one).evidence_version == 2


def test_the_same_bundle_again_changes_no_version(repo):
    pull_request = import_review(repo)
    verify(pull_request, repo.reviewed)
    import_review(repo)
    assert set(Finding.objects.values_list("evidence_version", flat=True)) == {1}
    assert Verification.objects.count() == 3


def test_a_reimport_during_a_run_leaves_no_stale_verdict_and_the_run_ends_cleanly(repo, monkeypatch):
    pull_request = import_review(repo)
    run = VerificationRun.objects.create(pull_request=pull_request)
    original = verifying.verification_run_advance
    reimported = []

    def advance(run_, *, by=1):
        if not reimported:
            # A re-import lands after the run read the evidence and before it stores its results.
            review_import(data=_bundle(repo, moved_evidence(repo)))
            reimported.append(True)
        original(run_, by=by)

    monkeypatch.setattr(verifying, "verification_run_advance", advance)
    run_verification.apply(args=[run.pk])

    run.refresh_from_db()
    assert run.status == "done", run.message
    assert "evidence changed since the last check; re-verify" in run.message
    one = Finding.objects.get(number=1)
    assert not Verification.objects.filter(finding=one).exists()  # computed from the old evidence: not kept
    assert Verification.objects.filter(finding__number__in=[2, 3]).count() == 2


def test_editing_evidence_in_the_admin_drops_its_verdicts(repo, staff_maintainer):
    pull_request = import_review(repo)
    verify(pull_request, repo.reviewed)
    evidence = Finding.objects.get(number=2).evidence.get()
    staff_maintainer.user_permissions.add(*Permission.objects.filter(codename__in=["change_evidence", "view_evidence"]))
    browser = Client()
    browser.force_login(staff_maintainer)
    form = {"finding": evidence.finding_id, "position": 0, "kind": "path", "commit": evidence.commit_id,
            "path": "config.json", "expect": "exists", "caption": ""}
    response = browser.post(f"/admin/findings/evidence/{evidence.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert not Verification.objects.filter(finding__number=2).exists()
    assert Finding.objects.get(number=2).evidence_version == 2


def _bundle(repo, findings):
    return {
        "repository": {"slug": "acme/loader", "clone_url": str(repo.path), "web_url": "https://github.com/acme/loader"},
        "pull_request": {"number": 7, "title": "Loader"},
        "commits": [{"sha": repo.reviewed[:8], "role": "reviewed"}],
        "findings": findings,
    }
