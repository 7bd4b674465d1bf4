"""New failures since the review, from real reports: acme/calc's own pytest (--junitxml) and ruff's
SARIF at the pull request's head, a review whose findings name some of what fails, and the list of
what no finding names read through the selector, the API and the pages, which agree."""
import pytest
from django.test import TestCase

from engine.reports import JUnitCase
from engine.reports.testids import named_key
from findings.selectors.new_failures import pull_request_new_failures, reported_test_id
from findings.services.reports import check_report_record
from findings.services.review_import import review_import
from reviews.models import PullRequest
from tests.gitrepo import GitRepoBuilder
from tests.reports import CALC, TESTS, pytest_junit, ruff_sarif

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

BY_ZERO = "tests/test_calc.py::TestDiv::test_by_zero"
DIV_BY_ZERO = "tests/test_calc.py::test_div[1-0-0]"
SOAK = 'password = "hunter2"\n'


class Calc:
    """acme/calc reviewed at one commit and pushed again: two lines added above the password."""

    def __init__(self, tmp_path):
        self.repo = repo = GitRepoBuilder(tmp_path, "calc")
        repo.write("calc.py", CALC).write("tests/__init__.py", "").write("tests/test_calc.py", TESTS)
        self.reviewed = repo.write("config/soak.py", SOAK).commit("calc")
        self.head = repo.write("config/soak.py", "# soak\nretries = 3\n" + SOAK).commit("more soak")
        self.junit = pytest_junit(repo.path, tmp_path / "head.xml")
        self.sarif = ruff_sarif(repo.path, "config/soak.py")


@pytest.fixture(scope="module")
def calc(tmp_path_factory):
    return Calc(tmp_path_factory.mktemp("calc"))


def imported(calc, findings) -> PullRequest:
    review_import(data={
        "repository": {"slug": "acme/calc", "clone_url": calc.repo.url},
        "pull_request": {"number": 1, "title": "Calc"},
        "commits": [{"sha": calc.reviewed, "role": "reviewed"}, {"sha": calc.head, "role": "head"}],
        "findings": findings,
    })
    return PullRequest.objects.get()


def arrive(pull_request, sha, check, **fields):
    with TestCase.captureOnCommitCallbacks(execute=True):
        return check_report_record(repository=pull_request.repository, sha=sha, check=check, source="upload",
                                   **fields)


DIVISION = {"number": 1, "kind": "blocker", "title": "Division by zero", "caught_by": "ci", "evidence": [
    {"kind": "check", "check": "unit-tests", "tests": [DIV_BY_ZERO]}]}


def test_nothing_is_new_until_ci_reports_at_the_head(calc):
    pull_request = imported(calc, [DIVISION])
    arrive(pull_request, calc.reviewed, "unit-tests", file=calc.junit)  # at the reviewed commit, not the head

    found = pull_request_new_failures(pull_request)

    assert (found.sha, found.count, found.reported, found.listed) == (calc.head, 0, 0, [])


def test_the_failing_tests_and_results_no_finding_names_are_listed_with_the_item_that_names_each(calc):
    pull_request = imported(calc, [DIVISION])
    arrive(pull_request, calc.head, "unit-tests", file=calc.junit)
    arrive(pull_request, calc.head, "lint", file=calc.sarif)
    arrive(pull_request, calc.head, "fast-forward", conclusion="failure", url="https://ci.example/ff/1")
    arrive(pull_request, calc.head, "docs", conclusion="success")

    found = pull_request_new_failures(pull_request)

    assert found.count == 3 and found.reported == 4
    ff, lint, test = found.listed  # in the order of the checks' names
    assert (ff.kind, ff.check, ff.url, ff.label) == ("check", "fast-forward", "https://ci.example/ff/1",
                                                      "fast-forward failed")
    assert (lint.kind, lint.rule, lint.path, lint.start_line) == ("result", "S105", "config/soak.py", 3)
    assert (test.kind, test.check) == ("test", "unit-tests")
    # Named by an id that names this very test case (the one finding 1 names is not listed).
    assert named_key(test.test) == named_key(BY_ZERO)
    assert test.evidence(calc.head) == {"kind": "check", "commit": calc.head, "check": "unit-tests",
                                        "tests": [test.test]}
    assert lint.evidence(calc.head)["results"] == [{"rule": "S105", "path": "config/soak.py", "start_line": 3}]


def test_a_result_a_finding_named_where_it_was_is_the_same_result_pushed_down_at_the_head(calc):
    password = {"number": 2, "kind": "blocker", "title": "A password", "caught_by": "ci", "evidence": [
        {"kind": "check", "check": "lint", "commit": calc.reviewed,
         "results": [{"rule": "S105", "path": "config/soak.py", "start_line": 1}]}]}
    ff = {"number": 3, "kind": "blocker", "title": "Pin", "caught_by": "ci", "evidence": [
        {"kind": "check", "check": "fast-forward"}]}
    pull_request = imported(calc, [DIVISION, password, ff])
    arrive(pull_request, calc.head, "lint", file=calc.sarif)
    arrive(pull_request, calc.head, "fast-forward", conclusion="failure")
    arrive(pull_request, calc.head, "unit-tests", file=calc.junit)

    found = pull_request_new_failures(pull_request)

    # The password is finding 2's (line 1 then, line 3 now); the failed fast-forward finding 3's.
    assert [(failure.kind, failure.check) for failure in found.listed] == [("test", "unit-tests")]


def test_a_test_that_failed_and_passed_at_the_head_is_flaky_and_not_listed(calc):
    pull_request = imported(calc, [DIVISION])
    arrive(pull_request, calc.head, "unit-tests", file=calc.junit)
    # The second attempt, as a forge's parsed test report gives it: the test passed this time.
    arrive(pull_request, calc.head, "unit-tests", attempt=2, conclusion="success",
           cases=[JUnitCase("tests.test_calc.TestDiv", "test_by_zero", "", "passed")])

    assert pull_request_new_failures(pull_request).count == 0


def test_a_report_arriving_at_the_head_moves_the_pull_request_s_generation(calc):
    pull_request = imported(calc, [DIVISION])
    before = PullRequest.objects.get().generation

    arrive(pull_request, calc.head, "lint", file=calc.sarif)

    assert PullRequest.objects.get().generation > before


@pytest.mark.parametrize(("classname", "name", "file"), [
    ("tests.test_calc.TestDiv", "test_zero", "tests/test_calc.py"),
    ("tests.test_calc", "test_div[1.5-0-0]", "tests/test_calc.py"),
    ("com.acme.CalcTest", "divides()", ""),
    ("Calc divides by zero", "Calc divides by zero", ""),
    ("", "TestDiv/by_zero", ""),
])
def test_the_id_a_reported_test_is_named_by_names_it_again(classname, name, file):
    from engine.reports.testids import case_key

    key = case_key(classname, name)
    test = reported_test_id(classname, name, file, key)

    assert named_key(test) == key
    if file:
        assert test.startswith("tests/test_calc.py::")


def _page_failures(html: str) -> list[str]:
    import re

    return re.findall(r'<code class="new-failure-label">([^<]*)</code>', html)


def test_the_pages_and_the_api_list_what_the_selector_lists_and_a_report_s_arrival_shows_at_once(calc, reviewer_user):
    from html import unescape

    from tests.personas import api_client, site_client

    pull_request = imported(calc, [DIVISION])
    arrive(pull_request, calc.head, "unit-tests", file=calc.junit)
    anonymous, reviewer = site_client(), site_client(reviewer_user)
    blockers, overview = "/acme/calc/pull/1/blockers/", "/acme/calc/pull/1/"
    first = anonymous.get(blockers).content.decode()
    assert [unescape(label) for label in _page_failures(first)] == [
        failure.label for failure in pull_request_new_failures(pull_request).listed]
    assert "Record as a finding" not in first  # a reader who may not write gets no button

    arrive(pull_request, calc.head, "lint", file=calc.sarif)  # the kept page must not be what is served

    expected = [failure.label for failure in pull_request_new_failures(pull_request).listed]
    assert len(expected) == 2
    for url in (blockers, overview):
        assert [unescape(label) for label in _page_failures(anonymous.get(url).content.decode())] == expected
    page = reviewer.get(blockers).content.decode()
    assert page.count("Record as a finding") == 2
    body = api_client(reviewer_user).get("/api/repos/acme/calc/pulls/1/new-failures/").json()
    assert (body["head"], body["count"], body["reported"]) == (calc.head, 2, 2)
    assert [(item["kind"], item["check"]) for item in body["failures"]] == [("result", "lint"), ("test", "unit-tests")]
    assert body["failures"][0]["evidence"] == {"kind": "check", "commit": calc.head, "check": "lint", "results": [
        {"rule": "S105", "path": "config/soak.py", "start_line": 3}]}


def test_the_record_link_opens_the_editor_prefilled_with_the_check_item_and_saving_it_names_the_failure(
    calc, reviewer_user
):
    import re
    from html import unescape

    from tests.personas import site_client

    pull_request = imported(calc, [DIVISION])
    arrive(pull_request, calc.head, "unit-tests", file=calc.junit)
    reviewer = site_client(reviewer_user)
    page = reviewer.get("/acme/calc/pull/1/blockers/").content.decode()
    [link] = re.findall(r'href="([^"]+)">Record as a finding', page)

    editor = reviewer.get(unescape(link)).content.decode()

    [failure] = pull_request_new_failures(pull_request).listed
    assert 'name="evidence-0-check" value="unit-tests"' in editor
    assert f">{failure.test}</textarea>" in unescape(editor)
    assert f'value="{failure.test} fails in unit-tests"' in unescape(editor)
    form = {"number": "2", "kind": "blocker", "caught_by": "ci", "title": f"{failure.test} fails",
            "evidence-0-kind": "check", "evidence-0-commit": calc.head, "evidence-0-check": "unit-tests",
            "evidence-0-tests": failure.test}
    saved = reviewer.post("/acme/calc/pull/1/findings/new/", form)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert pull_request_new_failures(pull_request).count == 0


def test_a_check_that_failed_and_passed_again_at_the_head_is_not_listed_whole(calc):
    pull_request = imported(calc, [DIVISION])
    arrive(pull_request, calc.head, "fast-forward", conclusion="failure")
    arrive(pull_request, calc.head, "fast-forward", conclusion="success", attempt=2)

    assert pull_request_new_failures(pull_request).count == 0
