"""A CI report arrives (findings.services.reports.check_report_record): real reports made in the
test over a real repository, kept once however often they are sent, and refused with nothing kept
when they cannot be read, are too large, name a commit the repository does not have, or come from
someone who may not send them."""
import pytest

from access.models import AuditEntry
from access.permissions import ActionRefused
from core.errors import ReportError
from findings.models import CheckReport, ReportedResult, ReportedTest
from findings.services import reports
from findings.services.reports import check_report_record
from tests.personas import member_of, user_with_role
from tests.reports import calc_repository, pytest_junit, ruff_sarif

pytestmark = pytest.mark.django_db


@pytest.fixture
def calc(tmp_path):
    """acme/calc: a tiny package with its tests, two of which fail; fetched into its mirror."""
    return calc_repository(tmp_path)


def record(repository, **fields):
    fields.setdefault("sha", repository.repo.sha)
    fields.setdefault("check", "unit-tests")
    fields.setdefault("source", "upload")
    return check_report_record(repository=repository, **fields)


def test_pytest_s_junit_report_is_kept_with_each_test_s_outcome_and_the_conclusion_read_from_it(calc, tmp_path):
    body = pytest_junit(calc.repo.path, tmp_path / "junit.xml")
    recorded = record(calc, file=body, url="https://ci.example.com/runs/7", attempt=2)
    report = recorded.report
    assert recorded.created
    assert (report.commit.sha, report.check_name, report.format, report.conclusion) == (
        calc.repo.sha, "unit-tests", "junit", "failure",
    )
    assert (report.tests, report.tests_failed, report.tests_skipped, report.size) == (4, 2, 0, len(body))
    assert (report.url, report.attempt, report.source) == ("https://ci.example.com/runs/7", 2, "upload")
    assert dict(ReportedTest.objects.values_list("key", "outcome")) == {
        "tests.test_calc.test_div[6-3-2]": "passed",
        "tests.test_calc.test_div[1-0-0]": "failed",
        "tests.test_calc.TestDiv.test_zero": "passed",
        "tests.test_calc.TestDiv.test_by_zero": "failed",
    }
    assert AuditEntry.objects.get(action="report.record").message == (
        "unit-tests: failed, 4 tests, 2 failed, 0 skipped"
    )


def test_the_same_report_sent_again_is_the_one_kept_and_another_attempt_is_another(calc, tmp_path):
    body = pytest_junit(calc.repo.path, tmp_path / "junit.xml")
    first = record(calc, file=body)
    again = record(calc, file=body, sha=calc.repo.sha[:10])
    assert not again.created and again.report.pk == first.report.pk
    assert CheckReport.objects.count() == 1 and ReportedTest.objects.count() == 4
    assert record(calc, file=body, attempt=2).created
    assert CheckReport.objects.count() == 2 and ReportedTest.objects.count() == 8


def test_names_with_what_copy_escapes_in_them_are_kept_as_they_were_written(calc):
    # A backslash, a tab, a new line and a carriage return, as character references (XML turns
    # the characters themselves into spaces inside an attribute).
    body = (b'<testsuite name="s"><testcase classname="a\\b&#9;c" name="t[x&#10;y&#13;z]" file="d\\e.py">'
            b'<failure/></testcase><testcase classname="plain" name="t2"/></testsuite>')
    record(calc, file=body)
    assert sorted(ReportedTest.objects.values_list("classname", "name", "file", "key", "bare_name", "outcome")) == [
        ("a\\b\tc", "t[x\ny\rz]", "d\\e.py", "a\\b\tc.t[x\ny\rz]", "t[x\ny\rz]", "failed"),
        ("plain", "t2", "", "plain.t2", "t2", "passed"),
    ]


def test_a_report_s_test_cases_go_with_it_when_its_repository_is_removed(calc, tmp_path):
    record(calc, file=pytest_junit(calc.repo.path, tmp_path / "junit.xml"))
    assert ReportedTest.objects.count() == 4
    calc.delete()
    assert not CheckReport.objects.exists() and not ReportedTest.objects.exists()


def test_ruff_s_sarif_is_kept_with_its_absolute_paths_made_relative_at_that_commit(calc):
    body = ruff_sarif(calc.repo.path, "config/soak.py", "calc.py")
    report = record(calc, check="lint", file=body).report
    assert (report.format, report.tool, report.results, report.conclusion) == ("sarif", "ruff", 1, "failure")
    assert list(ReportedResult.objects.values_list("rule", "path", "start_line")) == [("S105", "config/soak.py", 1)]


def test_a_checkout_root_places_paths_the_commit_s_files_could_not(calc):
    body = ruff_sarif(calc.repo.path, "config/soak.py").replace(
        str(calc.repo.path).encode(), b"/builds/acme/calc"
    )
    report = record(calc, check="lint", file=body, checkout_root="/builds/acme/calc").report
    assert list(ReportedResult.objects.filter(report=report).values_list("path", flat=True)) == ["config/soak.py"]


def test_a_bare_conclusion_is_a_report_too(calc):
    report = record(calc, check="submodule-fast-forward", conclusion="failure").report
    assert (report.format, report.conclusion, report.tests) == ("", "failure", 0)
    assert not record(calc, check="submodule-fast-forward", conclusion="failure").created


def nothing_kept():
    return not CheckReport.objects.exists() and not ReportedTest.objects.exists() and not ReportedResult.objects.exists()


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"file": b'<!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><testsuite/>'}, "file", "document type"),
        ({"file": b"<testsuite><testcase classname='c' name='n'/><testcase"}, "file", "Not well-formed XML"),
        ({"file": b"PK\x03\x04"}, "file", "Neither JUnit XML nor a SARIF log"),
        ({"file": b'{"version": "2.1.0", "runs": [{}]}'}, "file", "Not a valid SARIF 2.1.0 log"),
        ({"check": "unit\ntests", "conclusion": "failure"}, "check", "control characters"),
        ({"conclusion": "red"}, "conclusion", "Unknown conclusion 'red'"),
        ({}, "conclusion", "Give the check's conclusion"),
        ({"conclusion": "failure", "url": "javascript:alert(1)"}, "url", "http(s) address"),
        ({"conclusion": "failure", "attempt": 0}, "attempt", "1 or more"),
        ({"conclusion": "failure", "sha": "0" * 40}, "commit", "No report is kept for 0000000"),
        ({"conclusion": "failure", "sha": "HEAD~1"}, "commit", "No report is kept"),
    ],
)
def test_a_report_that_cannot_be_recorded_is_refused_naming_the_part_and_keeps_nothing(calc, fields, field, message):
    with pytest.raises(ReportError) as error:
        record(calc, **fields)
    assert error.value.field == field and message in error.value.message, error.value
    assert nothing_kept()
    assert AuditEntry.objects.get(action="report.record").outcome == "refused"


def test_a_report_over_the_limit_is_refused_with_its_size_named(calc, monkeypatch):
    monkeypatch.setattr(reports, "MAX_REPORT_BYTES", 1000)
    monkeypatch.setattr(reports, "_READ_CHUNK", 600)
    with pytest.raises(ReportError) as error:
        record(calc, file=b"<testsuite>" + b" " * 2000 + b"</testsuite>")
    assert error.value.status == 413 and "over 1,000 bytes" in error.value.message and "1,200 bytes" in error.value.message
    assert nothing_kept()


def test_someone_without_a_role_on_the_repository_is_refused_and_it_is_audited(calc):
    outsider = user_with_role("no_role")
    with pytest.raises(ActionRefused):
        record(calc, conclusion="failure", actor=outsider)
    assert nothing_kept() and AuditEntry.objects.get(action="report.record").outcome == "refused"
    member_of(calc, outsider, "reviewer")
    assert record(calc, conclusion="failure", actor=outsider).report.received_by == outsider
