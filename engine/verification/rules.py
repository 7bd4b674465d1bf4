"""What an evidence item must carry to be recorded: the one statement of these rules, used by the
bundle format, the API and the forms. Plain Python, like the engine whose checks they protect."""

from __future__ import annotations

from engine.verification.patterns import compile_pattern
from engine.verification.checks import (
    MAX_APP,
    check_name_checked,
    name_problem,
    results_problem,
    tests_problem,
)
from engine.verification.specs import (
    ABSENT,
    CHECK,
    CHECK_EXPECTATIONS,
    EXISTS,
    FAILED,
    GITLINK,
    GITLINK_EXPECTATIONS,
    KINDS,
    MISSING,
    NOTE,
    PATH,
    PATTERN,
    PINNED_AT,
    PRESENT,
    SNIPPET,
)
from core.errors import RecheckError
from engine.git.globs import is_glob
from engine.git.safety import validate_glob, validate_repo_path

REQUIRED_FIELDS = {
    SNIPPET: ("path", "start_line", "end_line"),
    PATTERN: ("path", "regex", "expect"),
    PATH: ("path", "expect"),
    GITLINK: ("path", "sha"),
    NOTE: ("text",),
    CHECK: ("check",),
}
EXPECTATIONS = {
    PATTERN: (PRESENT, ABSENT), PATH: (EXISTS, MISSING), GITLINK: GITLINK_EXPECTATIONS, CHECK: CHECK_EXPECTATIONS,
}
# A kind whose expectation may be left out, and what it then means.
DEFAULT_EXPECTATIONS = {GITLINK: PINNED_AT, CHECK: FAILED}
# What only a check item names, and what a check item never carries (it points at no file).
CHECK_FIELDS = ("check", "tests", "results", "app")
NOT_CHECK_FIELDS = ("path", "start_line", "end_line", "text", "regex", "sha")


def evidence_problems(fields: dict) -> tuple[dict[str, str], dict]:
    """Check an evidence item given as a dict of its fields (`kind`, `path`, ...).

    Returns (problems, cleaned): problems maps a field to what is wrong with it (empty when the
    item is sound); cleaned is `fields` with its path normalised. Paths go through the git layer's
    rules (relative, no `..`, no option-like or control characters); only a pattern takes a glob;
    a pattern's regex must compile under the engine's own rules."""
    kind = fields.get("kind")
    if kind not in KINDS:
        return {"kind": f"Unknown kind {kind!r}: use one of {', '.join(KINDS)}."}, fields
    problems = {
        field: f"{kind} evidence needs {field}."
        for field in REQUIRED_FIELDS[kind]
        if fields.get(field) in (None, "")
    }
    if problems:
        return problems, fields
    cleaned = dict(fields)
    if kind in EXPECTATIONS and (fields.get("expect") or DEFAULT_EXPECTATIONS.get(kind)) not in EXPECTATIONS[kind]:
        problems["expect"] = f"{kind} evidence expects one of: {', '.join(EXPECTATIONS[kind])}."
    if kind == SNIPPET and fields["end_line"] < fields["start_line"]:
        problems["end_line"] = "end_line comes before start_line."
    if kind == CHECK:
        problems.update(_check_problems(fields, cleaned))
        return problems, cleaned
    for name in CHECK_FIELDS:
        if fields.get(name) not in (None, "", [], ()):
            problems[name] = f"Only check evidence names {'a check' if name == 'check' else name}."
    if kind != NOTE:
        try:
            if kind == PATTERN:
                cleaned["path"] = validate_glob(fields["path"])
            elif is_glob(fields["path"]):
                problems["path"] = "Only pattern evidence takes a glob."
            else:
                cleaned["path"] = validate_repo_path(fields["path"])
        except RecheckError as error:
            problems["path"] = _sentence(str(error))
    if kind == PATTERN:
        try:
            compile_pattern(fields["regex"])
        except RecheckError as error:
            problems["regex"] = _sentence(str(error))
    return problems, cleaned


def _check_problems(fields: dict, cleaned: dict) -> dict[str, str]:
    problems = {
        name: f"check evidence points at no file: leave {name} out."
        for name in NOT_CHECK_FIELDS
        if fields.get(name) not in (None, "")
    }
    try:
        check_name_checked(fields["check"])
    except RecheckError as error:
        problems["check"] = str(error)
    problem = tests_problem(fields.get("tests") or [])
    if problem:
        problems["tests"] = problem
    problem, results = results_problem(fields.get("results") or [])
    if problem:
        problems["results"] = problem
    elif "results" in fields:
        cleaned["results"] = results
    if fields.get("tests") and fields.get("results"):
        problems["results"] = "A check item names tests or results, not both: record them as two items."
    if fields.get("app") not in (None, ""):
        problem = name_problem(fields["app"], what="app", limit=MAX_APP)
        if problem:
            problems["app"] = problem
    return problems


def _sentence(message: str) -> str:
    message = message[:1].upper() + message[1:]
    return message if message.endswith(".") else message + "."
