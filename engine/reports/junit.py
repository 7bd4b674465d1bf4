"""A JUnit XML report's test cases, streamed.

Read with the standard library's incremental parser through defusedxml: a document type
declaration (and with it any entity, internal or external) is refused before anything is
expanded, so nothing is read from disk or the network and a few bytes cannot grow into gigabytes.
Test cases are handed on one at a time and dropped from the tree once read, so a report of a
hundred thousand of them is read in bounded memory."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO
from xml.etree.ElementTree import ParseError

import defusedxml.ElementTree as safe_etree
from defusedxml import DefusedXmlException

from core.errors import ReportError
from core.vocabulary import TEST_FAILED, TEST_PASSED, TEST_SKIPPED
from engine.reports import Tally, JUnitCase

# Longer names are cut: a test id is at most this long wherever Recheck keeps one.
MAX_NAME = 1000
_FAILED_TAGS = ("failure", "error")


def junit_cases(source: BinaryIO, tally: Tally) -> Iterator[JUnitCase]:
    """The test cases of the JUnit XML in ``source``, counted in ``tally`` as they go.

    A test case's outcome is failed with a ``<failure>`` or ``<error>`` child, skipped with a
    ``<skipped>`` one, passed otherwise. A dialect that gives no ``classname`` has its test cases
    named under their ``<testsuite>``'s name (as go-junit-report's and jest-junit's suites name
    the package or file). Raises ReportError (field ``file``) for anything that is not a JUnit
    report: malformed XML, a DTD or an entity, another root element, a test case with no name."""
    stack: list = []
    suites: list[str] = []
    try:
        for event, element in safe_etree.iterparse(source, events=("start", "end"), forbid_dtd=True):
            tag = element.tag
            if event == "start":
                if not stack and tag not in ("testsuites", "testsuite"):
                    raise ReportError("file", f"Not a JUnit report: its root element is <{tag}>, not <testsuites> "
                                      "or <testsuite>.")
                stack.append(element)
                if tag == "testsuite":
                    suites.append(element.get("name", ""))
                continue
            stack.pop()
            if tag == "testsuite":
                suites.pop()
            elif tag == "testcase":
                yield _case(element, suites, tally)
                # Dropped from its parent once read: the tree never holds more than one test case.
                if stack:
                    stack[-1].remove(element)
    except ParseError as error:
        raise ReportError("file", f"Not well-formed XML: {error}.") from None
    except DefusedXmlException as error:
        raise ReportError(
            "file", f"The XML declares a document type or entities ({type(error).__name__}); a JUnit report "
            "needs neither, and they are refused so that nothing is read from elsewhere or expanded.",
        ) from None


def _case(element, suites: list[str], tally: Tally) -> JUnitCase:
    name = (element.get("name") or "").strip()
    if not name:
        raise ReportError("file", f"Test case {tally.tests + 1} has no name; every <testcase> needs one.")
    classname = (element.get("classname") or (suites[-1] if suites else "")).strip()
    outcome = TEST_PASSED
    for child in element:
        if child.tag in _FAILED_TAGS:
            outcome = TEST_FAILED
            break
        if child.tag == "skipped":
            outcome = TEST_SKIPPED
    tally.tests += 1
    if outcome == TEST_FAILED:
        tally.failed += 1
    elif outcome == TEST_SKIPPED:
        tally.skipped += 1
    return JUnitCase(classname[:MAX_NAME], name[:MAX_NAME], (element.get("file") or "")[:500], outcome)
