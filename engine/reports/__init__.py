"""CI reports read as plain data: a JUnit XML file's test cases, a SARIF 2.1.0 log's results, and
how test ids people copy from a runner's output name a report's test cases. Plain Python, with
well-kept parsers (the standard library's expat through defusedxml's reader, jsonschema with the
OASIS schema), so a report is read the same from an upload, a command or a forge."""

from __future__ import annotations

from dataclasses import dataclass

# The largest report read, in bytes: GitLab keeps a JUnit artifact to 30 MB a file, and a report
# that size parses in seconds. Larger is refused with its size named.
MAX_REPORT_BYTES = 30 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class JUnitCase:
    """One test case as a JUnit report names it, with its outcome (core.vocabulary TEST_*)."""

    classname: str
    name: str
    file: str
    outcome: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    """One scanner result: its rule, where it is (relative to the repository), and the tool's
    partial fingerprints as `key=value` pairs joined by newlines ('' when it gives none)."""

    rule: str
    path: str
    start_line: int | None
    level: str
    message: str
    fingerprint: str = ""


@dataclass
class Tally:
    """What a report held, counted while it is read (the test cases are streamed, not kept)."""

    tests: int = 0
    failed: int = 0
    skipped: int = 0
    results: int = 0
    tool: str = ""
