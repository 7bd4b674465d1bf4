"""What a check item names, and the rules its names meet: a CI check by the name its CI gives it,
the test cases and the scanner results inside it. Plain Python: the bundle, the API, the editor and
the reports' arrival all read names through these."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from core import vocabulary
from core.errors import RecheckError
from engine.git.safety import validate_repo_path

# A check's name as GitHub (a check run's name, a status's context), GitLab (a job's name) or an
# upload gives it: GitHub allows 100 characters for a context and GitLab 255 for a job's name.
MAX_CHECK_NAME = 255
# A test id as a runner writes it can be long (pytest parameters, Surefire's nested classes).
MAX_TEST_ID = 1000
MAX_RULE = 255
MAX_APP = 255
# What one item may name: a lane of a few hundred tests is common, thousands are a report.
MAX_NAMED = 1000

# Characters that reorder the text around them: a name carrying one reads differently from what it is.
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")


def name_problem(value, *, what: str, limit: int) -> str:
    """What is wrong with a name (a check's, a test's, a rule's, an app's), '' when nothing: a
    string, not blank, within ``limit`` characters, with no control or direction characters."""
    if not isinstance(value, str):
        return f"A {what} is text."
    if not value.strip():
        return f"A {what} cannot be blank."
    if value != value.strip():
        return f"The {what} {value!r} starts or ends with a space; remove it."
    if len(value) > limit:
        return f"A {what} is at most {limit} characters; this one has {len(value)}."
    for character in value:
        if unicodedata.category(character) == "Cc" or character in _BIDI_CONTROLS:
            return f"The {what} {value!r} contains control characters ({character!r}); remove them."
    return ""


def check_name_checked(value) -> str:
    """``value`` as a check's name, or RecheckError saying what is wrong with it."""
    problem = name_problem(value, what="check name", limit=MAX_CHECK_NAME)
    if problem:
        raise RecheckError(problem)
    return value


def tests_problem(tests) -> str:
    """What is wrong with a check item's ``tests`` (a list of test ids), '' when nothing."""
    if not isinstance(tests, (list, tuple)):
        return "tests is a list of test ids."
    if len(tests) > MAX_NAMED:
        return f"An item names at most {MAX_NAMED} tests; this one names {len(tests)}."
    seen = set()
    for index, test in enumerate(tests):
        problem = name_problem(test, what="test id", limit=MAX_TEST_ID)
        if problem:
            return f"tests[{index}]: {problem}"
        if test in seen:
            return f"tests[{index}]: {test!r} is named twice."
        seen.add(test)
    return ""


def results_problem(results) -> tuple[str, list[dict]]:
    """What is wrong with a check item's ``results`` ({rule, path, start_line} each), '' when
    nothing, and the results with their paths normalised."""
    if not isinstance(results, (list, tuple)):
        return "results is a list of {rule, path, start_line}.", []
    if len(results) > MAX_NAMED:
        return f"An item names at most {MAX_NAMED} results; this one names {len(results)}.", []
    cleaned, seen = [], set()
    for index, result in enumerate(results):
        where = f"results[{index}]"
        if not isinstance(result, dict):
            return f"{where}: a result is {{rule, path, start_line}}.", []
        unknown = sorted(str(key) for key in result if key not in ("rule", "path", "start_line"))
        if unknown:
            return f"{where}: unknown field {unknown[0]!r}; a result takes rule, path and start_line.", []
        problem = name_problem(result.get("rule"), what="rule id", limit=MAX_RULE)
        if problem:
            return f"{where}.rule: {problem}", []
        try:
            path = validate_repo_path(result.get("path") or "")
        except RecheckError as error:
            return f"{where}.path: {str(error)[:1].upper()}{str(error)[1:]}.", []
        line = result.get("start_line")
        if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 1):
            return f"{where}.start_line: a line number, 1 or more.", []
        key = (result["rule"], path, line)
        if key in seen:
            return f"{where}: {result['rule']} at {path}:{line} is named twice.", []
        seen.add(key)
        cleaned.append({"rule": result["rule"], "path": path, "start_line": line})
    return "", cleaned


# --- What a check item's reports say at a commit ------------------------------------------------


@dataclass(frozen=True)
class ReportSeen:
    """One report of an item's check at the commit checked, as the item reads it: its conclusion,
    its run's URL, whether it carries test cases or scanner results, and the tool that made them."""

    conclusion: str
    url: str = ""
    has_tests: bool = False
    has_results: bool = False
    tool: str = ""


@dataclass(frozen=True)
class CheckReading:
    """What the reports of an item's check at the commit checked say of what it names.

    ``tests`` maps each named test id to the outcomes of the test cases it names in those
    reports (every run of it; none when it is in none); ``results`` gives each named result's
    place now when a report at the commit still has it (matched by the tool's fingerprint, or
    where Recheck's line tracking puts it), else None."""

    reports: tuple[ReportSeen, ...] = ()
    tests: dict = field(default_factory=dict)
    results: tuple = ()


def check_item_result(spec, reading: CheckReading, short_sha: str):
    """The state of a check item at a commit, from its reading there (see `CheckReading`): it holds
    while the check fails, or the named tests still fail, or the named results are still reported
    (`partly` in its facts when only some are); it is gone when the check passed, every named test
    passed, or an analysis has none of the named results; anything else (no report yet, a named
    test not run or flaky, a cancelled, skipped or timed-out check) is an error, never fixed."""
    from engine.verification.results import CheckResult, error, gone, holds

    name = spec.check
    decisive = [report for report in reading.reports if report.conclusion in (vocabulary.CONCLUSION_SUCCESS,
                                                                              vocabulary.CONCLUSION_FAILURE)]
    facts = {"check": name, "reports": [{"conclusion": report.conclusion, "url": report.url}
                                        for report in reading.reports]}
    if not reading.reports:
        facts["outcome"] = vocabulary.CHECK_WAITING
        return error(f"Waiting for CI: no report of {name} at {short_sha} yet", facts=facts)
    if not decisive:
        said = ", ".join(sorted({vocabulary.conclusion_label(report.conclusion).lower() for report in reading.reports}))
        facts["outcome"] = vocabulary.CHECK_UNCHECKABLE
        return error(f"{name} was {said} at {short_sha}: it says nothing of the problem", facts=facts)
    failed = any(report.conclusion == vocabulary.CONCLUSION_FAILURE for report in decisive)
    passed = any(report.conclusion == vocabulary.CONCLUSION_SUCCESS for report in decisive)

    def result(outcome: str, make, detail: str, **more) -> CheckResult:
        facts.update(outcome=outcome, **more)
        return make(None, detail, facts=facts) if make is not error else error(detail, facts=facts)

    if spec.tests and any(report.has_tests for report in decisive):
        return _tests_result(spec, reading, short_sha, facts, result)
    if spec.results and any(report.has_results for report in decisive):
        return _results_result(spec, reading, short_sha, facts, result)
    # The whole check's conclusion (or, without a report that names tests or results, all it says).
    if failed and passed:
        return result(vocabulary.CHECK_FLAKY, error, f"{name} both failed and passed at {short_sha}: flaky, not fixed")
    if failed:
        return result(vocabulary.CHECK_FAILS, holds, f"{name} failed at {short_sha}")
    return result(vocabulary.CHECK_PASSES, gone, f"{name} passed at {short_sha}")


def _tests_result(spec, reading: CheckReading, short_sha: str, facts: dict, result):
    from engine.verification.results import error, gone, holds

    named = []
    for test in spec.tests:
        outcomes = set(reading.tests.get(test, ())) - {vocabulary.TEST_SKIPPED}
        if not outcomes:
            outcome = vocabulary.NAMED_NOT_RUN
        elif outcomes == {vocabulary.TEST_FAILED}:
            outcome = vocabulary.NAMED_FAILS
        elif outcomes == {vocabulary.TEST_PASSED}:
            outcome = vocabulary.NAMED_PASSES
        else:
            outcome = vocabulary.NAMED_FLAKY
        named.append({"id": test, "outcome": outcome})
    counts = {outcome: sum(item["outcome"] == outcome for item in named) for outcome in vocabulary.NAMED_OUTCOME_LABELS}
    total, failing = len(named), counts[vocabulary.NAMED_FAILS]
    more = {"tests": named, "still": failing, "named": total}
    if failing == total:
        return result(vocabulary.CHECK_FAILS, holds, f"{_of(failing, total)} still fail at {short_sha}", **more)
    if failing:
        return result(vocabulary.CHECK_PARTLY, holds, f"{_of(failing, total)} still fail at {short_sha}",
                      partly=True, **more)
    if counts[vocabulary.NAMED_FLAKY]:
        return result(vocabulary.CHECK_FLAKY, error, f"{_of(counts[vocabulary.NAMED_FLAKY], total)} failed and "
                      f"passed at {short_sha}: flaky, not fixed", **more)
    if counts[vocabulary.NAMED_NOT_RUN]:
        return result(vocabulary.CHECK_NOT_RUN, error, f"{_of(counts[vocabulary.NAMED_NOT_RUN], total)} not in "
                      f"the reports at {short_sha}: not run, not fixed", **more)
    return result(vocabulary.CHECK_PASSES, gone, f"{_of(total, total)} passed at {short_sha}", **more)


def _results_result(spec, reading: CheckReading, short_sha: str, facts: dict, result):
    from engine.verification.results import gone, holds

    named = []
    for ref, now in zip(spec.results, reading.results, strict=True):
        item = {"rule": ref.rule, "path": ref.path, "start_line": ref.start_line,
                "outcome": vocabulary.NAMED_REPORTED if now else vocabulary.NAMED_GONE}
        if now:
            item["now_path"], item["now_line"] = now
        named.append(item)
    total = len(named)
    still = sum(item["outcome"] == vocabulary.NAMED_REPORTED for item in named)
    more = {"results": named, "still": still, "named": total}
    if still == total:
        return result(vocabulary.CHECK_FAILS, holds, f"{_of(still, total, 'result')} still reported at {short_sha}",
                      **more)
    if still:
        return result(vocabulary.CHECK_PARTLY, holds, f"{_of(still, total, 'result')} still reported at {short_sha}",
                      partly=True, **more)
    return result(vocabulary.CHECK_PASSES, gone, f"{_of(0, total, 'result')} reported at {short_sha}", **more)


def _of(count: int, total: int, noun: str = "test") -> str:
    """"11 of 29 named tests", "1 of 1 named result"."""
    return f"{count} of {total} named {noun}{'' if total == 1 else 's'}"


def result_place_now(reader, *, recorded_at: str, target: str, ref, reported, fingerprint: str = ""):
    """Where the result ``ref`` (a `CheckResultRef` named at ``recorded_at``) is reported at
    ``target``, or None: ``reported`` are the (path, line, fingerprint) of the results of its rule
    in the reports there. By the tool's ``fingerprint`` when the report at ``recorded_at`` gave
    one; else where Recheck's line tracking puts the named line, at the same path. The one rule
    for "the same result", read by the verification and by the list of new failures."""
    if not reported:
        return None  # nothing of its rule is reported there: no git to read
    if fingerprint:
        return next(((path, line) for path, line, found in reported if found == fingerprint), None)
    line = line_now(reader, recorded_at, target, ref.path, ref.start_line)
    if line is False:
        return None
    return next(((path, at) for path, at, _ in reported if path == ref.path and at == line), None)


def line_now(reader, recorded_at: str, target: str, path: str, line: int | None) -> int | None | bool:
    """Where line ``line`` of ``path`` at ``recorded_at`` is at ``target``, by git's diff of the
    file between them (Recheck's own line tracking): a result pushed down by lines added above it
    is the same result. False when the file is not at ``target``; ``line`` None stays None."""
    from engine.verification.linemaps import LineMap

    new = reader.tree_entry(target, path)
    if new is None or new.type != "blob":
        return False
    if line is None or recorded_at == target:
        return line
    old = reader.tree_entry(recorded_at, path)
    if old is None or old.type != "blob" or old.sha == new.sha:
        return line
    blob = reader.read_blob(recorded_at, path)
    if blob is None or blob.data is None:
        return line
    mapping = LineMap(reader.blob_line_changes(old.sha, new.sha), blob.data.count(b"\n") + 1)
    return mapping.map(line - 1) + 1
