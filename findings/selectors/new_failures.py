"""New failures since the review: at a pull request's head, what its CI reports fail on that no
finding names, as GitLab's merge request widget lists newly failed tests. Each one is what a check
item would name (a check, a test in it, a scanner result in it), so the pages offer to record it
as a finding with that evidence, and the API lists the same.

What counts:
- a test case that failed in a report of a check at the head and passed in none there (one that
  failed and passed is flaky: not listed), unless a check item of the PR names it (its check, and
  its app when the item names one, and a test id that names the case: `engine.reports.testids`);
- a scanner result at a failing level (error, warning) unless a check item names it: the same
  result by the tool's fingerprint, or where Recheck's line tracking puts the named line
  (`engine.verification.checks.result_place_now`, the rule the verification uses);
- a failed check that no item names at all, that passed in no report there, and whose reports
  give no failing test or result.

A check item that names only the whole check names no test or result inside it: the tests that
fail there are still listed, one by one. The list is read from the stored reports and findings
whenever a page is built; a report's arrival moves the generation of the pull requests pinned at
its commit (`findings.receivers`), so a page kept by generation never shows an older list."""
from __future__ import annotations

from dataclasses import dataclass, field

from core import vocabulary
from core.errors import RecheckError
from engine.reports.testids import is_bare_name, named_key
from engine.verification.checks import result_place_now
from engine.verification.specs import CheckResultRef
from findings.models import CheckReport, Evidence, ReportedResult, ReportedTest
from reviews.mirrors import repository_reader
from reviews.models import PinnedCommit, PullRequest

# How many new failures are listed by name; `count` says how many there are in all.
LISTED = 50
KIND_TEST, KIND_RESULT, KIND_CHECK = "test", "result", "check"
# SARIF levels that fail a scanner's check (note and none do not).
FAILING_LEVELS = ("error", "warning")
# Keys asked for in one IN (...) when looking for the runs that passed.
_CHUNK = 500


@dataclass(frozen=True)
class NewFailure:
    """One failure no finding names: a test (``test`` the id to name it by), a scanner result
    (``rule``, ``path``, ``start_line``) or a whole failed check, with the run that reported it."""

    kind: str
    check: str
    app: str = ""
    test: str = ""
    rule: str = ""
    path: str = ""
    start_line: int | None = None
    message: str = ""
    url: str = ""

    @property
    def label(self) -> str:
        if self.kind == KIND_TEST:
            return self.test
        if self.kind == KIND_RESULT:
            return f"{self.rule} {self.place}"
        return f"{self.check} failed"

    @property
    def place(self) -> str:
        return f"{self.path}:{self.start_line}" if self.start_line else self.path

    def evidence(self, sha: str) -> dict:
        """The check item that names it, recorded at ``sha``, in the bundle's shape."""
        item = {"kind": "check", "commit": sha, "check": self.check}
        if self.app:
            item["app"] = self.app
        if self.kind == KIND_TEST:
            item["tests"] = [self.test]
        elif self.kind == KIND_RESULT:
            item["results"] = [{"rule": self.rule, "path": self.path, "start_line": self.start_line}]
        return item


@dataclass
class NewFailures:
    """The new failures at ``sha`` (the head's full SHA, '' with nothing pinned): the first
    `LISTED` of them, and how many there are in all."""

    sha: str = ""
    listed: list[NewFailure] = field(default_factory=list)
    count: int = 0
    # The checks reported at the head (whatever their conclusion): none means CI has said nothing yet.
    reported: int = 0

    def __bool__(self) -> bool:
        return bool(self.count)


def head_pin(pull_request: PullRequest, pins=None) -> PinnedCommit | None:
    """The PR's head as its changes and its new failures read it: its latest head pin, else its
    latest pin that is not its base. ``pins``: the PR's pins in pin order, when already loaded."""
    if pins is None:
        pins = PinnedCommit.objects.filter(pull_request=pull_request).select_related("commit").in_order()
    pins = [pin for pin in pins if pin.role != PinnedCommit.Role.BASE]
    heads = [pin for pin in pins if pin.role == PinnedCommit.Role.HEAD]
    return (heads or pins or [None])[-1]


def pull_request_new_failures(pull_request: PullRequest, *, pins=None) -> NewFailures:
    """What the CI reports at the PR's head fail on that none of its findings names (see the
    module's docstring), in the order of the checks' names, then as each report lists them.
    ``pins``: the PR's pins in pin order (with their commits), when the caller has them."""
    pin = head_pin(pull_request, pins)
    if pin is None:
        return NewFailures()
    sha = pin.commit.sha
    reports = list(CheckReport.objects.filter(commit_id=pin.commit_id).order_by("check_name", "received_at", "pk")
                   .values("pk", "check_name", "app", "conclusion", "format", "url"))
    found = NewFailures(sha=sha, reported=len(reports))
    if not reports:
        return found
    items = _check_items(pull_request)
    failures = [*_new_tests(reports, items), *_new_results(pull_request, reports, items, sha)]
    failing_checks = {(failure.check, failure.app) for failure in failures}
    named_checks = {item["check_name"] for item in items}
    # A check that failed and passed at the head (a re-run that passed) is flaky: not listed whole.
    seen = {(report["check_name"], report["app"]) for report in reports
            if report["conclusion"] == vocabulary.CONCLUSION_SUCCESS}
    for report in reports:
        whole = (report["check_name"], report["app"])
        if (report["conclusion"] == vocabulary.CONCLUSION_FAILURE and report["check_name"] not in named_checks
                and whole not in failing_checks and whole not in seen):
            seen.add(whole)
            failures.append(NewFailure(KIND_CHECK, report["check_name"], report["app"], url=report["url"]))
    order = {name: index for index, name in enumerate(sorted({report["check_name"] for report in reports}))}
    failures.sort(key=lambda failure: order[failure.check])  # stable: each report's own order kept
    found.listed, found.count = failures[:LISTED], len(failures)
    return found


def _check_items(pull_request: PullRequest) -> list[dict]:
    return list(
        Evidence.objects.filter(finding__pull_request=pull_request, kind=Evidence.Kind.CHECK)
        .values("check_name", "check_app", "check_tests", "check_results", "commit__sha")
    )


def _applies(item: dict, report: dict) -> bool:
    return item["check_name"] == report["check_name"] and (not item["check_app"] or item["check_app"] == report["app"])


def _new_tests(reports: list[dict], items: list[dict]) -> list[NewFailure]:
    by_id = {report["pk"]: report for report in reports if report["format"] == vocabulary.REPORT_JUNIT}
    if not by_id:
        return []
    rows = list(
        ReportedTest.objects.filter(report_id__in=by_id, outcome=vocabulary.TEST_FAILED)
        .order_by("report_id", "id").values_list("report_id", "classname", "name", "file", "key", "bare_name")
    )
    keys = sorted({row[4] for row in rows})
    passed = set()
    for start in range(0, len(keys), _CHUNK):
        for report_id, key in ReportedTest.objects.filter(
            report_id__in=by_id, outcome=vocabulary.TEST_PASSED, key__in=keys[start:start + _CHUNK]
        ).values_list("report_id", "key"):
            passed.add((by_id[report_id]["check_name"], key))
    named = _named_tests(by_id.values(), items)
    failures, seen = [], set()
    for report_id, classname, name, file, key, bare in rows:
        report = by_id[report_id]
        check = report["check_name"]
        keys_named, bare_named = named[report_id]
        if (check, key) in passed or (check, key) in seen or key in keys_named or bare in bare_named:
            continue
        seen.add((check, key))
        failures.append(NewFailure(KIND_TEST, check, report["app"], test=reported_test_id(classname, name, file, key),
                                   url=report["url"]))
    return failures


def _named_tests(reports, items: list[dict]) -> dict[int, tuple[set[str], set[str]]]:
    """Report id -> the keys and the bare names the PR's check items name in it."""
    named = {}
    for report in reports:
        keys, bare = set(), set()
        for item in items:
            if _applies(item, report):
                for test in item["check_tests"]:
                    (bare if is_bare_name(test) else keys).add(named_key(test))
        named[report["pk"]] = (keys, bare)
    return named


def reported_test_id(classname: str, name: str, file: str, key: str) -> str:
    """The id to name a reported test case by, as people copy it: pytest's node id where the
    report gives the file and its classname is that file's module (`tests/test_calc.py::TestDiv::
    test_zero`), else its key (`classname.name`). Either way one that names this very case."""
    if file.endswith(".py") and classname:
        module = file[:-3].replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            classes = classname[len(module):].lstrip(".")
            node = "::".join([file, *([classes.replace(".", "::")] if classes else []), name])
            if named_key(node) == key:
                return node
    return key if named_key(key) == key or not classname else f"{classname}::{name}"


def _new_results(pull_request: PullRequest, reports: list[dict], items: list[dict], sha: str) -> list[NewFailure]:
    by_id = {report["pk"]: report for report in reports if report["format"] == vocabulary.REPORT_SARIF}
    if not by_id:
        return []
    rows = list(
        ReportedResult.objects.filter(report_id__in=by_id, level__in=FAILING_LEVELS)
        .order_by("report_id", "id").values_list("report_id", "rule", "path", "start_line", "message", "fingerprint")
    )
    if not rows:
        return []
    named = _named_results(pull_request, by_id, rows, items, sha)
    failures, seen = [], set()
    for report_id, rule, path, line, message, _ in rows:
        report = by_id[report_id]
        place = (report["check_name"], rule, path, line)
        if place in named or place in seen:
            continue
        seen.add(place)
        failures.append(NewFailure(KIND_RESULT, report["check_name"], report["app"], rule=rule, path=path,
                                   start_line=line, message=message[:500], url=report["url"]))
    return failures


def _named_results(pull_request, by_id: dict, rows: list, items: list[dict], sha: str) -> set[tuple]:
    """(check, rule, path, line) of each result at the head a check item of the PR names."""
    wanted = [(item, ref) for item in items for ref in item["check_results"]
              if any(_applies(item, report) for report in by_id.values())]
    if not wanted:
        return set()
    fingerprints = _fingerprints(pull_request, items)
    named = set()
    try:
        with repository_reader(pull_request.repository) as reader:
            for item, ref in wanted:
                reported = [(path, line, fingerprint) for report_id, rule, path, line, _, fingerprint in rows
                            if rule == ref["rule"] and _applies(item, by_id[report_id])]
                recorded_at = item["commit__sha"]
                fingerprint = fingerprints.get((recorded_at, item["check_name"], ref["rule"], ref["path"],
                                                ref.get("start_line")), "")
                try:
                    place = result_place_now(
                        reader, recorded_at=recorded_at, target=sha, fingerprint=fingerprint, reported=reported,
                        ref=CheckResultRef(ref["rule"], ref["path"], ref.get("start_line")),
                    )
                except RecheckError:
                    place = _same_place(ref, reported)
                if place is not None:
                    named.add((item["check_name"], ref["rule"], *place))
    except RecheckError:
        # No mirror to track lines in: a result is named where it was named.
        for item, ref in wanted:
            named.add((item["check_name"], ref["rule"], ref["path"], ref.get("start_line")))
    return named


def _same_place(ref: dict, reported: list) -> tuple | None:
    return next(((path, line) for path, line, _ in reported
                 if path == ref["path"] and line == ref.get("start_line")), None)


def _fingerprints(pull_request: PullRequest, items: list[dict]) -> dict[tuple, str]:
    """The tools' fingerprints of the named results, in the reports at the commits they were named at."""
    recorded = {item["commit__sha"] for item in items if item["check_results"] and item["commit__sha"]}
    rules = {ref["rule"] for item in items for ref in item["check_results"]}
    if not recorded:
        return {}
    return {
        (sha, check, rule, path, line): fingerprint
        for sha, check, rule, path, line, fingerprint in ReportedResult.objects.filter(
            report__repository=pull_request.repository, report__commit__sha__in=recorded, rule__in=rules,
        ).exclude(fingerprint="").values_list("report__commit__sha", "report__check_name", "rule", "path",
                                              "start_line", "fingerprint")
    }
