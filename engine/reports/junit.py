"""A JUnit XML report's test cases, streamed.

Read by expat, the standard library's C parser, through defusedxml's SAX reader (its
`DefusedExpatParser`, refusing a document type declaration): a DTD, and with it any entity,
internal or external, is refused the moment it starts, before anything is expanded, so nothing is
read from disk or the network and a few bytes cannot grow into gigabytes. No tree is built: each
test case becomes a row of four strings as its end tag is read, and the file is fed in chunks whose
rows are handed on before the next is read, so a report of a hundred thousand cases is read in
bounded memory, at about the cost of a bare `ElementTree.iterparse` pass (bench/reports_bench.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO
from xml.sax import SAXParseException
from xml.sax.handler import ContentHandler

from defusedxml import DefusedXmlException
from defusedxml.expatreader import create_parser

from core.errors import ReportError
from core.vocabulary import TEST_FAILED, TEST_PASSED, TEST_SKIPPED
from engine.reports import JUnitCase, Tally

# Longer names are cut: a test id is at most this long wherever Recheck keeps one.
MAX_NAME = 1000
MAX_FILE = 500
_FAILED_TAGS = frozenset(("failure", "error"))
_CHUNK = 1 << 16

# A test case as the reader hands it on: (classname, name, file, outcome).
JUnitRow = tuple[str, str, str, str]


def junit_rows(source: BinaryIO, tally: Tally) -> Iterator[JUnitRow]:
    """The test cases of the JUnit XML in ``source`` as (classname, name, file, outcome) rows,
    counted in ``tally`` as they are handed on.

    A test case's outcome is failed with a ``<failure>`` or ``<error>`` child, skipped with a
    ``<skipped>`` one, passed otherwise. A dialect that gives no ``classname`` has its test cases
    named under their ``<testsuite>``'s name (as go-junit-report's and jest-junit's suites name
    the package or file). Raises ReportError (field ``file``) for anything that is not a JUnit
    report: malformed XML, a DTD or an entity, another root element, a test case with no name."""
    reader = _Cases()
    parser = create_parser(forbid_dtd=True)
    parser.setContentHandler(reader)
    rows = reader.rows
    try:
        while chunk := source.read(_CHUNK):
            parser.feed(chunk)
            if rows:
                yield from _counted(rows, tally)
                rows.clear()
        parser.close()
    except SAXParseException as error:
        raise ReportError("file", f"Not well-formed XML: {error.getMessage()}: line {error.getLineNumber()}, "
                          f"column {error.getColumnNumber()}.") from None
    except DefusedXmlException as error:
        raise ReportError(
            "file", f"The XML declares a document type or entities ({type(error).__name__}); a JUnit report "
            "needs neither, and they are refused so that nothing is read from elsewhere or expanded.",
        ) from None
    yield from _counted(rows, tally)


def junit_cases(source: BinaryIO, tally: Tally) -> Iterator[JUnitCase]:
    """`junit_rows` as JUnitCase objects, for readers that want names to the fields."""
    for row in junit_rows(source, tally):
        yield JUnitCase(*row)


def _counted(rows: list[JUnitRow], tally: Tally) -> Iterator[JUnitRow]:
    for row in rows:
        tally.tests += 1
        outcome = row[3]
        if outcome == TEST_FAILED:
            tally.failed += 1
        elif outcome == TEST_SKIPPED:
            tally.skipped += 1
        yield row


class _Cases(ContentHandler):
    """What the parser tells of the document, kept as rows: the open test cases (a stack, so a
    case's own children are told from a nested one's), the suites' names, and the rows read."""

    # Text is never read: with no handler, expat hands none on (the captured output and the
    # tracebacks of a large suite are most of its report).
    characters = None

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[JUnitRow] = []
        self.read = 0  # test cases read so far, for the message naming one without a name
        self._depth = 0
        self._suites: list[str] = []
        # Each open test case: [its depth, classname, name, file, outcome].
        self._cases: list[list] = []

    def startElement(self, tag, attrs):  # noqa: N802 (SAX's name)
        self._depth += 1
        if self._depth == 1 and tag not in ("testsuites", "testsuite"):
            raise ReportError("file", f"Not a JUnit report: its root element is <{tag}>, not <testsuites> "
                              "or <testsuite>.")
        if tag == "testcase":
            self.read += 1
            name = (attrs.get("name") or "").strip()
            if not name:
                raise ReportError("file", f"Test case {self.read} has no name; every <testcase> needs one.")
            classname = (attrs.get("classname") or (self._suites[-1] if self._suites else "")).strip()
            self._cases.append([self._depth, classname[:MAX_NAME], name[:MAX_NAME],
                                (attrs.get("file") or "")[:MAX_FILE], TEST_PASSED])
        elif tag == "testsuite":
            self._suites.append(attrs.get("name") or "")
        elif self._cases and self._cases[-1][0] == self._depth - 1:
            case = self._cases[-1]
            if tag in _FAILED_TAGS:
                case[4] = TEST_FAILED
            elif tag == "skipped" and case[4] != TEST_FAILED:
                case[4] = TEST_SKIPPED

    def endElement(self, tag):  # noqa: N802
        if tag == "testcase" and self._cases and self._cases[-1][0] == self._depth:
            _, classname, name, file, outcome = self._cases.pop()
            self.rows.append((classname, name, file, outcome))
        elif tag == "testsuite" and self._suites:
            self._suites.pop()
        self._depth -= 1
