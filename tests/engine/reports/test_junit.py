"""JUnit XML read by expat through defusedxml's reader, streamed: real pytest output, the dialects
of other runners, and what a hostile or broken file gets."""
import io

import pytest

from core.errors import ReportError
from engine.reports import JUnitCase, Tally
from engine.reports.junit import junit_cases
from engine.reports.testids import bare_name, case_key, is_bare_name, named_key
from tests.reports import TESTS, pytest_junit, pytest_node_ids


def read(xml: bytes) -> tuple[list[JUnitCase], Tally]:
    tally = Tally()
    return list(junit_cases(io.BytesIO(xml), tally)), tally


def test_pytest_s_own_report_is_read_and_each_node_id_it_prints_names_its_case(tmp_path):
    (tmp_path / "calc.py").write_text("def div(a, b):\n    return a / b\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "test_calc.py").write_text(TESTS)
    cases, tally = read(pytest_junit(tmp_path, tmp_path / "junit.xml"))

    assert (tally.tests, tally.failed, tally.skipped) == (4, 2, 0)
    outcomes = {case_key(case.classname, case.name): case.outcome for case in cases}
    node_ids = pytest_node_ids(tmp_path)
    assert sorted(outcomes) == sorted(named_key(node_id) for node_id in node_ids)
    assert {node_id: outcomes[named_key(node_id)] for node_id in node_ids} == {
        "tests/test_calc.py::test_div[6-3-2]": "passed",
        "tests/test_calc.py::test_div[1-0-0]": "failed",
        "tests/test_calc.py::TestDiv::test_zero": "passed",
        "tests/test_calc.py::TestDiv::test_by_zero": "failed",
    }


@pytest.mark.parametrize(
    ("xml", "test_id"),
    [
        # Maven Surefire (JUnit 5 adds the parentheses), named as Maven's -Dtest does or with a dot.
        (b'<testsuite name="com.acme.CalcTest"><testcase classname="com.acme.CalcTest" name="divides()">'
         b'<failure message="x"/></testcase></testsuite>', "com.acme.CalcTest#divides"),
        (b'<testsuite name="com.acme.CalcTest"><testcase classname="com.acme.CalcTest" name="divides">'
         b'<failure/></testcase></testsuite>', "com.acme.CalcTest.divides"),
        # go-junit-report: the package is the classname, the subtest the name.
        (b'<testsuites><testsuite name="github.com/acme/calc"><testcase classname="github.com/acme/calc" '
         b'name="TestDiv/by_zero"><failure/></testcase></testsuite></testsuites>', "github.com/acme/calc::TestDiv/by_zero"),
        # GitLab's parsed test report keeps JUnit's classname and name.
        (b'<testsuite><testcase classname="spec.calc_spec" name="divides by zero"><error/></testcase></testsuite>',
         "spec.calc_spec::divides by zero"),
    ],
)
def test_each_runner_s_form_of_a_test_id_names_its_case(xml, test_id):
    [case], _ = read(xml)
    assert case.outcome == "failed" and case_key(case.classname, case.name) == named_key(test_id)


def test_a_name_alone_is_matched_by_name_as_go_and_jest_print_them():
    cases, _ = read(
        b'<testsuites name="jest tests"><testsuite name="calc.test.js">'
        b'<testcase classname="Calc divides by zero" name="Calc divides by zero"><failure/></testcase>'
        b'</testsuite><testsuite name="github.com/acme/calc"><testcase name="TestDiv/by_zero"/></testsuite></testsuites>'
    )
    jest, go = cases
    assert is_bare_name("Calc \u203a divides by zero") and bare_name(jest.name) == named_key("Calc \u203a divides by zero")
    assert is_bare_name("TestDiv/by_zero") and bare_name(go.name) == "TestDiv/by_zero"


def test_a_dialect_without_classname_names_its_cases_under_their_suite():
    [case], _ = read(b'<testsuite name="github.com/acme/calc"><testcase name="TestDiv"><skipped/></testcase></testsuite>')
    assert (case.classname, case.name, case.outcome) == ("github.com/acme/calc", "TestDiv", "skipped")


@pytest.mark.parametrize(
    ("xml", "message"),
    [
        (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
         b'<testsuite><testcase classname="c" name="&b;"/></testsuite>', "document type or entities"),
        (b'<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
         b'<testsuite><testcase classname="c" name="&x;"/></testsuite>', "document type or entities"),
        (b'<?xml version="1.0"?><!DOCTYPE testsuite SYSTEM "http://127.0.0.1:9/junit.dtd"><testsuite/>',
         "document type or entities"),
        (b"<testsuite><testcase classname='c' name='n'>", "Not well-formed XML"),
        (b"<html><body/></html>", "its root element is <html>"),
        (b"<testsuite><testcase classname='c'/></testsuite>", "Test case 1 has no name"),
    ],
)
def test_a_hostile_or_broken_report_is_refused_saying_why(xml, message):
    with pytest.raises(ReportError) as error:
        read(xml)
    assert error.value.field == "file" and message in error.value.message


def test_cases_are_handed_on_one_at_a_time_and_dropped_from_the_tree():
    xml = b"<testsuites><testsuite name='s'>" + b"".join(
        b"<testcase classname='c' name='t%d'><system-out>%s</system-out></testcase>" % (n, b"x" * 1000)
        for n in range(2000)
    ) + b"</testsuite></testsuites>"
    tally = Tally()
    cases = junit_cases(io.BytesIO(xml), tally)
    first = next(cases)
    assert first.name == "t0" and tally.tests == 1
    assert sum(1 for _ in cases) == 1999 and tally.tests == 2000
