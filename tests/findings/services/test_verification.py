"""Verification end to end: a real git repository, a review imported through the bundle format,
verified and stored through the service the tasks and commands use."""
import pytest
from django.utils import timezone

from findings.services.review_import import review_import
from findings.models import EvidenceResult, Finding, Verification
from findings.services.resolution import finding_resolve
from findings.state.stored import finding_state
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_pin_commit
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db

LOADER = "".join(f"line {n}\n" for n in range(1, 21))
LOADER = LOADER.replace("line 10\n", "    tolerance = 0\n")


@pytest.fixture
def repo(tmp_path):
    builder = GitRepoBuilder(tmp_path)
    builder.write("src/loader.py", LOADER).write("config.yaml", "debug: true\n")
    builder.reviewed = builder.commit("reviewed")
    return builder


def import_review(repo, *, findings=None, commits=None):
    review_import(
        data={
            "repository": {"slug": "acme/loader", "clone_url": str(repo.path), "web_url": "https://github.com/acme/loader"},
            "pull_request": {"number": 7, "title": "Loader"},
            "commits": commits or [{"sha": repo.reviewed[:8], "role": "reviewed"}],
            "findings": findings
            or [
                {
                    "number": 1,
                    "kind": "blocker",
                    "title": "Tolerance 0 never stops",
                    "evidence": [
                        {"kind": "snippet", "path": "src/loader.py", "start_line": 10, "end_line": 10},
                        {"kind": "pattern", "path": "src/*.py", "regex": r"tolerance = 0", "expect": "present"},
                    ],
                },
                {
                    "number": 2,
                    "kind": "blocker",
                    "title": "Debug flag left on",
                    "evidence": [{"kind": "path", "path": "config.yaml", "expect": "exists"}],
                },
                {"number": 3, "kind": "cleanup", "title": "Talk it over", "evidence": [{"kind": "note", "text": "Ask."}]},
            ],
        }
    )
    return PullRequest.objects.get(number=7)


def verify(pull_request, sha):
    commit = Commit.objects.filter(repository=pull_request.repository, sha__startswith=sha[:8]).first()
    if commit is None:
        commit = Commit.objects.create(repository=pull_request.repository, sha=sha, resolved=True)
    pull_request_pin_commit(pull_request=pull_request, commit=commit, role="rebased")
    return {v.finding.number: v for v in pull_request_verify(pull_request=pull_request, commit=commit)}


def test_everything_holds_at_the_reviewed_commit_and_the_abbreviated_sha_is_resolved(repo):
    pull_request = import_review(repo)
    verdicts = verify(pull_request, repo.reviewed)
    assert {n: v.verdict for n, v in verdicts.items()} == {1: "present", 2: "present", 3: "unverifiable"}
    commit = Commit.objects.get()
    assert (commit.sha, commit.resolved, commit.message) == (repo.reviewed, True, "reviewed")


def test_the_snippet_text_is_filled_in_from_the_repository(repo):
    pull_request = import_review(repo)
    verify(pull_request, repo.reviewed)
    assert pull_request.findings.get(number=1).evidence.get(kind="snippet").text.strip() == "tolerance = 0"


def test_after_a_rebase_the_results_say_where_the_code_moved(repo):
    pull_request = import_review(repo)
    rebased = repo.write("src/loader.py", "import os\nimport sys\n" + LOADER).commit("rebased")
    verdicts = verify(pull_request, rebased)
    assert verdicts[1].verdict == "present"
    snippet = verdicts[1].results.get(evidence__kind="snippet")
    assert (snippet.state, snippet.path, snippet.start_line, snippet.end_line) == ("holds", "src/loader.py", 12, 12)
    assert snippet.moved


def test_a_real_fix_is_likely_fixed_and_stays_open_for_a_person(repo):
    pull_request = import_review(repo)
    fixed = repo.write("src/loader.py", LOADER.replace("tolerance = 0", "tolerance = 100")).commit("fix")
    verdicts = verify(pull_request, fixed)
    assert verdicts[1].verdict == "likely_fixed"
    assert {r.state for r in verdicts[1].results.all()} == {"gone"}
    assert pull_request.findings.get(number=1).status == "open"


def test_a_partial_fix_is_partly_fixed(repo):
    pull_request = import_review(repo)
    moved = repo.write("src/loader.py", LOADER.replace("    tolerance = 0\n", "")).write(
        "src/other.py", "tolerance = 0\n").commit("half")
    assert verify(pull_request, moved)[1].verdict in ("partly_fixed", "present")


def test_re_running_replaces_the_verification_and_keeps_when_it_first_ran(repo):
    pull_request = import_review(repo)
    first = verify(pull_request, repo.reviewed)[1]
    second = verify(pull_request, repo.reviewed)[1]
    assert Verification.objects.filter(finding__number=1).count() == 1
    assert second.pk == first.pk and second.first_checked_at == first.first_checked_at
    assert second.checked_at >= first.checked_at
    assert EvidenceResult.objects.filter(verification=second).count() == 2


def test_an_unreachable_repository_is_an_error_and_never_fixed(repo, tmp_path):
    pull_request = import_review(repo)
    pull_request.repository.clone_url = str(tmp_path / "gone")
    pull_request.repository.save()
    commit = Commit.objects.get()
    verifications = pull_request_verify(pull_request=pull_request, commit=commit)
    assert {v.verdict for v in verifications} == {"error"}
    assert all(v.detail.startswith("Repository unreachable") for v in verifications)
    assert not Finding.objects.exclude(status="open").exists()
    pull_request.repository.refresh_from_db()
    # Readers see that it failed; why (here a path on the server's disk) is for staff.
    assert "does not exist" in pull_request.repository.fetch_error
    assert not any(str(tmp_path) in v.detail for v in verifications)


def test_a_commit_the_repository_does_not_have_is_an_error(repo):
    pull_request = import_review(repo)
    verify(pull_request, repo.reviewed)
    missing = Commit.objects.create(repository=pull_request.repository, sha="abcdef1234567")
    verifications = pull_request_verify(pull_request=pull_request, commit=missing)
    assert {v.verdict for v in verifications} == {"error"}
    assert "abcdef1234567" in verifications[0].detail


def test_a_dismissed_finding_stays_dismissed(repo):
    pull_request = import_review(repo)
    finding = pull_request.findings.get(number=1)
    finding_resolve(finding=finding, status="dismissed", actor=None, source="admin", note="Not ours.")
    verify(pull_request, repo.reviewed)
    finding.refresh_from_db()
    assert finding.status == "dismissed" and not finding_state(finding)["possibly_regressed"]


def test_a_fixed_finding_whose_evidence_returns_is_flagged_not_reopened(repo):
    pull_request = import_review(repo)
    fix = repo.write("src/loader.py", LOADER.replace("tolerance = 0", "tolerance = 100")).commit("fix")
    verify(pull_request, fix)
    finding = pull_request.findings.get(number=1)
    finding_resolve(
        finding=finding, status="fixed", actor=None, source="admin",
        commit=Commit.objects.get(sha=fix), note="fixed",
    )
    regressed = repo.write("src/loader.py", LOADER).commit("revert the fix")
    assert verify(pull_request, regressed)[1].verdict == "present"
    finding.refresh_from_db()
    assert finding.status == "fixed" and finding_state(finding)["possibly_regressed"]


def test_the_number_of_queries_does_not_grow_with_the_findings(repo, django_assert_max_num_queries):
    many = [
        {"number": n, "kind": "blocker", "title": f"F{n}",
         "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 10, "end_line": 10,
                       "text": "    tolerance = 0\n"}]}
        for n in range(1, 41)
    ]
    pull_request = import_review(repo, findings=many)
    commit = Commit.objects.get()
    pull_request_verify(pull_request=pull_request, commit=commit)  # resolves the SHA once
    with django_assert_max_num_queries(25):
        pull_request_verify(pull_request=pull_request, commit=commit, fetch=False)
    assert Verification.objects.count() == 40 and timezone.now()


def test_the_upsert_both_databases_speak_updates_rows_in_place():
    from findings.services.verification.store import _upsert
    from tests.factories import EvidenceFactory, VerificationFactory

    verification = VerificationFactory()
    evidence = EvidenceFactory(finding=verification.finding)
    columns = ("verification_id", "evidence_id", "state", "path", "start_line", "end_line", "detail", "facts")

    def store(state, line):
        _upsert(EvidenceResult, columns, conflict=("verification_id", "evidence_id"),
                update=("state", "start_line", "end_line", "detail", "facts"),
                rows=[(verification.pk, evidence.pk, state, "a.py", line, line, f"at {line}", f'{{"line": {line}}}')])

    store("holds", 3)
    store("gone", 9)
    assert list(EvidenceResult.objects.values_list("state", "start_line", "detail", "facts")) == [
        ("gone", 9, "at 9", {"line": 9})
    ]
