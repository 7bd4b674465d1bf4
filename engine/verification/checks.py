"""What a check item names, and the rules its names meet: a CI check by the name its CI gives it,
the test cases and the scanner results inside it. Plain Python: the bundle, the API, the editor and
the reports' arrival all read names through these."""

from __future__ import annotations

import unicodedata

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
