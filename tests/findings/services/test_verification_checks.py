"""Check evidence verified end to end from real reports: a real repository whose own tests (run
with pytest --junitxml) and linter (ruff's SARIF) report at each of its commits, a review imported
through the bundle format, verified through the service the tasks and commands use. Still failing,
partly fixed, a named test renamed away, fixed, no report yet; a result moved down by new lines;
reports arriving before or after the verification."""
import pytest
from django.test import TestCase

from findings.models import EvidenceResult, Verification
from findings.services.reports import check_report_record
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from reviews.models import Commit, PullRequest
from tests.gitrepo import GitRepoBuilder
from tests.reports import pytest_junit, ruff_sarif

# A report's re-derivation runs in-process even where a broker is configured (CI).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

TESTS = """from calc import div


def test_zero_div():
    assert div(1, 0) == 0


def test_negative():
    assert div(-6, 3) == -2


def test_floor():
    assert div(7, 2) == 3
"""
ZERO, FLOOR = "tests/test_calc.py::test_zero_div", "tests/test_calc.py::test_floor"
SOAK = 'password = "hunter2"\n'


class History:
    """acme/calc's commits, each with the reports its CI made there (pytest's JUnit, ruff's SARIF)."""

    def __init__(self, tmp_path):
        self.repo = repo = GitRepoBuilder(tmp_path, "calc")
        self.reports = {}
        repo.write("tests/__init__.py", "").write("tests/test_calc.py", TESTS).write("config/soak.py", SOAK)
        # Reviewed: both named tests fail, the password is on line 1.
        self.reviewed = self._commit("def div(a, b):\n    return a / b\n", "reviewed")
        # One named test fixed; two lines added above the password.
        repo.write("config/soak.py", "# soak settings\nretries = 3\n" + SOAK)
        self.partly = self._commit("def div(a, b):\n    return a / b if b else 0\n", "zero fixed")
        # The other one renamed away (and fixed under its new name); the password gone.
        repo.write("tests/test_calc.py", TESTS.replace("def test_floor", "def test_floor_division"))
        repo.write("config/soak.py", "# soak settings\nretries = 3\n")
        self.renamed = self._commit("def div(a, b):\n    return a // b if b else 0\n", "floor renamed")
        repo.write("tests/test_calc.py", TESTS)
        self.fixed = self._commit("def div(a, b):\n    return a // b if b else 0\n", "floor back")

    def _commit(self, calc: str, message: str) -> str:
        sha = self.repo.write("calc.py", calc).commit(message)
        self.reports[sha] = {
            "unit-tests": pytest_junit(self.repo.path, self.repo.path.parent / f"{sha}.xml"),
            "lint": ruff_sarif(self.repo.path, "config/soak.py"),
        }
        return sha


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    # Made once: the tests only read the repository and its reports.
    return History(tmp_path_factory.mktemp("history"))


@pytest.fixture
def pull_request(history):
    review_import(data={
        "repository": {"slug": "acme/calc", "clone_url": history.repo.url},
        "pull_request": {"number": 1, "title": "Calc"},
        "commits": [{"sha": history.reviewed, "role": "reviewed"}, {"sha": history.partly, "role": "rebased"},
                    {"sha": history.renamed, "role": "rebased"}, {"sha": history.fixed, "role": "head"}],
        "findings": [
            {"number": 1, "kind": "blocker", "title": "Division is wrong", "caught_by": "ci", "evidence": [
                {"kind": "check", "check": "unit-tests", "tests": [ZERO, FLOOR]}]},
            {"number": 2, "kind": "blocker", "title": "A password in the soak config", "caught_by": "ci", "evidence": [
                {"kind": "check", "check": "lint", "results": [{"rule": "S105", "path": "config/soak.py",
                                                                 "start_line": 1}]}]},
            {"number": 3, "kind": "blocker", "title": "The pin does not fast-forward", "caught_by": "ci", "evidence": [
                {"kind": "check", "check": "fast-forward"}]},
        ],
    })
    return PullRequest.objects.get()


def arrive(**fields):
    """A report recorded as a request records it: its re-derivation runs once it is committed (in
    this process, as with no broker configured)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        return check_report_record(**fields)


def send(history, pull_request, sha, *checks):
    for check in checks:
        if check == "fast-forward":
            conclusion = "failure" if sha == history.reviewed else "success"
            arrive(repository=pull_request.repository, sha=sha, check=check, source="upload", conclusion=conclusion)
        else:
            arrive(repository=pull_request.repository, sha=sha, check=check, source="upload",
                   file=history.reports[sha][check])


def verify(pull_request, sha):
    return {verification.finding.number: verification
            for verification in pull_request_verify(pull_request=pull_request, commit=Commit.objects.get(sha=sha))}


def stored(pull_request, sha) -> dict:
    """Each finding's verdict and its check item's facts at `sha`, as stored."""
    found = {}
    for verification in Verification.objects.filter(finding__pull_request=pull_request, commit__sha=sha):
        result = EvidenceResult.objects.get(verification=verification)
        found[verification.finding.number] = (verification.verdict, result.state, result.detail, result.facts)
    return found


def test_each_commit_s_reports_give_each_verdict(history, pull_request):
    for sha in (history.reviewed, history.partly, history.renamed, history.fixed):
        send(history, pull_request, sha, "unit-tests", "lint", "fast-forward")

    at = verify(pull_request, history.reviewed)
    assert {number: v.verdict for number, v in at.items()} == {1: "present", 2: "present", 3: "present"}
    tests = EvidenceResult.objects.get(verification=at[1])
    assert tests.detail == f"2 of 2 named tests still fail at {history.reviewed[:7]}"
    assert [(test["id"], test["outcome"]) for test in tests.facts["tests"]] == [(ZERO, "failed"), (FLOOR, "failed")]

    at = verify(pull_request, history.partly)
    assert {number: v.verdict for number, v in at.items()} == {1: "partly_fixed", 2: "present", 3: "likely_fixed"}
    tests = EvidenceResult.objects.get(verification=at[1])
    assert tests.detail == f"1 of 2 named tests still fail at {history.partly[:7]}"
    assert tests.facts["outcome"] == "partly"
    moved = EvidenceResult.objects.get(verification=at[2]).facts["results"]
    assert moved == [{"rule": "S105", "path": "config/soak.py", "start_line": 1, "outcome": "reported",
                      "now_path": "config/soak.py", "now_line": 3}]

    at = verify(pull_request, history.renamed)
    assert {number: v.verdict for number, v in at.items()} == {1: "error", 2: "likely_fixed", 3: "likely_fixed"}
    renamed = EvidenceResult.objects.get(verification=at[1])
    assert renamed.facts["outcome"] == "not_run" and "not run, not fixed" in renamed.detail
    assert [test["outcome"] for test in renamed.facts["tests"]] == ["passed", "not_run"]

    at = verify(pull_request, history.fixed)
    assert {number: v.verdict for number, v in at.items()} == {1: "likely_fixed", 2: "likely_fixed", 3: "likely_fixed"}


def test_with_no_report_yet_the_item_waits_for_ci_and_is_never_fixed(history, pull_request):
    at = verify(pull_request, history.fixed)
    for number in (1, 2, 3):
        result = EvidenceResult.objects.get(verification=at[number])
        assert at[number].verdict == "error" and result.facts["outcome"] == "waiting"
        assert result.detail.startswith("Waiting for CI: no report of")


def test_a_report_arriving_after_the_verification_gives_the_state_one_arriving_before_gives(history, pull_request):
    verify(pull_request, history.partly)
    assert {number: verdict for number, (verdict, *_) in stored(pull_request, history.partly).items()} == {
        1: "error", 2: "error", 3: "error"}
    send(history, pull_request, history.partly, "unit-tests", "lint", "fast-forward")
    after = stored(pull_request, history.partly)
    assert {number: verdict for number, (verdict, *_) in after.items()} == {
        1: "partly_fixed", 2: "present", 3: "likely_fixed"}

    Verification.objects.all().delete()
    verify(pull_request, history.partly)
    assert stored(pull_request, history.partly) == after


def test_a_check_from_another_app_than_the_item_names_is_not_read(history, pull_request):
    from findings.models import Evidence

    Evidence.objects.filter(check_name="fast-forward").update(check_app="github-actions")
    check_report_record(repository=pull_request.repository, sha=history.fixed, check="fast-forward",
                        source="upload", conclusion="success", app="someone-else")
    result = EvidenceResult.objects.get(verification=verify(pull_request, history.fixed)[3])
    assert result.facts["outcome"] == "waiting"
    arrive(repository=pull_request.repository, sha=history.fixed, check="fast-forward", source="upload",
           conclusion="success", app="github-actions")
    assert stored(pull_request, history.fixed)[3][0] == "likely_fixed"


@pytest.mark.parametrize("conclusion", ["cancelled", "skipped", "neutral", "timed_out"])
def test_a_check_that_did_not_conclude_could_not_be_checked(history, pull_request, conclusion):
    check_report_record(repository=pull_request.repository, sha=history.fixed, check="fast-forward",
                        source="upload", conclusion=conclusion)
    at = verify(pull_request, history.fixed)
    result = EvidenceResult.objects.get(verification=at[3])
    assert at[3].verdict == "error" and result.facts["outcome"] == "uncheckable"


def test_a_test_that_failed_and_passed_at_one_commit_is_flaky_never_fixed(history, pull_request):
    first = history.reports[history.partly]["unit-tests"]
    check_report_record(repository=pull_request.repository, sha=history.fixed, check="unit-tests",
                        source="upload", file=first)  # test_floor fails here...
    check_report_record(repository=pull_request.repository, sha=history.fixed, check="unit-tests",
                        source="upload", file=history.reports[history.fixed]["unit-tests"], attempt=2)  # ...passes
    at = verify(pull_request, history.fixed)
    result = EvidenceResult.objects.get(verification=at[1])
    assert at[1].verdict == "error" and result.facts["outcome"] == "flaky"
    assert [test["outcome"] for test in result.facts["tests"]] == ["passed", "flaky"]


def test_verifying_a_thousand_check_items_takes_a_bounded_number_of_queries(history, pull_request,
                                                                              django_assert_max_num_queries):
    from findings.models import Evidence, Finding

    findings = Finding.objects.bulk_create(
        [Finding(pull_request=pull_request, number=100 + n, kind="blocker", title=f"Lane {n}") for n in range(1000)]
    )
    reviewed = Commit.objects.get(sha=history.reviewed)
    Evidence.objects.bulk_create(
        [Evidence(finding=finding, position=0, kind="check", commit=reviewed, check_name="unit-tests",
                  check_tests=[ZERO, FLOOR]) for finding in findings]
    )
    send(history, pull_request, history.partly, "unit-tests")
    commit = Commit.objects.get(sha=history.partly)
    with django_assert_max_num_queries(60):
        pull_request_verify(pull_request=pull_request, commit=commit, fetch=False)
    assert Verification.objects.filter(commit=commit, verdict="partly_fixed").count() == 1001
