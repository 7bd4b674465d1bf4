"""A CI check's reports at a commit, what a check item's reports say, and how a check item is
described in a line."""
from core.vocabulary.words import labelled
from core.vocabulary.places import location
from core.vocabulary.verdicts import ERROR, NOT_VERIFIED_LABEL, verdict_label, verdict_phrase


# --- A CI check's report at a commit ------------------------------------------------------------

# A check's conclusion, in GitHub's words (GitLab's and a status's are mapped onto them).
CONCLUSION_SUCCESS = "success"
CONCLUSION_FAILURE = "failure"
CONCLUSION_CANCELLED = "cancelled"
CONCLUSION_SKIPPED = "skipped"
CONCLUSION_NEUTRAL = "neutral"
CONCLUSION_TIMED_OUT = "timed_out"
CONCLUSION_ACTION_REQUIRED = "action_required"
CONCLUSION_STALE = "stale"
CONCLUSIONS = (
    CONCLUSION_SUCCESS, CONCLUSION_FAILURE, CONCLUSION_CANCELLED, CONCLUSION_SKIPPED, CONCLUSION_NEUTRAL,
    CONCLUSION_TIMED_OUT, CONCLUSION_ACTION_REQUIRED, CONCLUSION_STALE,
)
CONCLUSION_LABELS = {
    CONCLUSION_SUCCESS: "Passed",
    CONCLUSION_FAILURE: "Failed",
    CONCLUSION_CANCELLED: "Cancelled",
    CONCLUSION_SKIPPED: "Skipped",
    CONCLUSION_NEUTRAL: "Neutral",
    CONCLUSION_TIMED_OUT: "Timed out",
    CONCLUSION_ACTION_REQUIRED: "Action required",
    CONCLUSION_STALE: "Stale",
}

# One test case's outcome in a report (JUnit's <failure> and <error> are both a failure: the test
# did not pass).
TEST_PASSED = "passed"
TEST_FAILED = "failed"
TEST_SKIPPED = "skipped"
TEST_OUTCOMES = (TEST_PASSED, TEST_FAILED, TEST_SKIPPED)
TEST_OUTCOME_LABELS = {TEST_PASSED: "Passed", TEST_FAILED: "Failed", TEST_SKIPPED: "Skipped"}

# How a report arrived.
REPORT_UPLOAD = "upload"
REPORT_COMMAND = "command"
REPORT_GITHUB = "github"
REPORT_GITLAB = "gitlab"
REPORT_SOURCES = (REPORT_UPLOAD, REPORT_COMMAND, REPORT_GITHUB, REPORT_GITLAB)
REPORT_SOURCE_LABELS = {
    REPORT_UPLOAD: "Uploaded", REPORT_COMMAND: "Imported by command", REPORT_GITHUB: "GitHub", REPORT_GITLAB: "GitLab",
}

# What a report carries beside its conclusion.
REPORT_JUNIT = "junit"
REPORT_SARIF = "sarif"
REPORT_FORMATS = (REPORT_JUNIT, REPORT_SARIF)
REPORT_FORMAT_LABELS = {REPORT_JUNIT: "JUnit XML", REPORT_SARIF: "SARIF 2.1.0"}


# What a check item's reports say at a commit (shown beside the item; the evidence state and the
# finding's verdict follow from it: fails and partly hold, passes is gone, the rest are errors,
# never fixed).
CHECK_FAILS = "fails"
CHECK_PARTLY = "partly"
CHECK_PASSES = "passes"
CHECK_WAITING = "waiting"
CHECK_NOT_RUN = "not_run"
CHECK_FLAKY = "flaky"
CHECK_UNCHECKABLE = "uncheckable"
CHECK_OUTCOMES = (CHECK_FAILS, CHECK_PARTLY, CHECK_PASSES, CHECK_WAITING, CHECK_NOT_RUN, CHECK_FLAKY,
                  CHECK_UNCHECKABLE)
CHECK_OUTCOME_LABELS = {
    CHECK_FAILS: "Still fails",
    CHECK_PARTLY: "Partly fixed",
    CHECK_PASSES: "Passes",
    CHECK_WAITING: "Waiting for CI",
    CHECK_NOT_RUN: "Not run",
    CHECK_FLAKY: "Flaky",
    CHECK_UNCHECKABLE: "Could not be checked",
}
# The same inside a sentence or a matrix cell.
CHECK_OUTCOME_PHRASES = {
    CHECK_FAILS: "still fails",
    CHECK_PARTLY: "partly fixed",
    CHECK_PASSES: "passes",
    CHECK_WAITING: "waiting for CI",
    CHECK_NOT_RUN: "not run",
    CHECK_FLAKY: "flaky",
    CHECK_UNCHECKABLE: "could not be checked",
}
# The conclusions that say nothing of whether the problem is there.
CONCLUSIONS_UNCHECKABLE = (CONCLUSION_CANCELLED, CONCLUSION_SKIPPED, CONCLUSION_NEUTRAL, CONCLUSION_TIMED_OUT,
                           CONCLUSION_ACTION_REQUIRED, CONCLUSION_STALE)
# A named test's outcome across the reports at one commit, and a named result's.
NAMED_FAILS = "failed"
NAMED_PASSES = "passed"
NAMED_FLAKY = "flaky"
NAMED_NOT_RUN = "not_run"
NAMED_REPORTED = "reported"
NAMED_GONE = "gone"
NAMED_OUTCOME_LABELS = {
    NAMED_FAILS: "Fails", NAMED_PASSES: "Passes", NAMED_FLAKY: "Flaky", NAMED_NOT_RUN: "Not run",
    NAMED_REPORTED: "Still reported", NAMED_GONE: "Gone",
}


# --- Why a finding could not be checked, when its check items say -----------------------------

# A finding whose verdict is an error because its check items are waiting for CI, or name tests
# not run or flaky, says which: the first of these that one of them gives (what comes soonest
# first: a report still to come may settle the rest). Any other error (an unreachable
# repository, a cancelled check) leaves the plain "could not be checked".
VERDICT_REASONS = (CHECK_WAITING, CHECK_NOT_RUN, CHECK_FLAKY)
VERDICT_REASON_PHRASES = {CHECK_WAITING: "waiting for CI", CHECK_NOT_RUN: "not run", CHECK_FLAKY: "flaky"}


def verdict_reason(verdict: str | None, errors) -> str:
    """Why a finding's `verdict` is an error, in one of VERDICT_REASONS, '' when it is not one or
    its items do not say: `errors` are the check outcomes (`facts["outcome"]`) of its items in
    error there, '' for an item that is not a check item. The one rule every interface reads, from
    the stored state (`findings.state`) or from the results at a commit (`manage.py verify`)."""
    errors = list(errors)
    if verdict != ERROR or not errors or any(outcome not in VERDICT_REASONS for outcome in errors):
        return ""
    return next(reason for reason in VERDICT_REASONS if reason in errors)


def finding_verdict_label(verdict: str | None, reason: str = "") -> str:
    """A finding's verdict as a badge says it: "Waiting for CI" where its reason says so."""
    return CHECK_OUTCOME_LABELS[reason] if verdict == ERROR and reason in VERDICT_REASONS else verdict_label(verdict)


def finding_verdict_phrase(verdict: str | None, reason: str = "") -> str:
    """A finding's verdict inside a sentence: "waiting for CI" where its reason says so."""
    return VERDICT_REASON_PHRASES[reason] if verdict == ERROR and reason in VERDICT_REASONS else verdict_phrase(verdict)


check_outcome_label = labelled(CHECK_OUTCOME_LABELS, otherwise=NOT_VERIFIED_LABEL)


check_outcome_phrase = labelled(CHECK_OUTCOME_PHRASES, otherwise=NOT_VERIFIED_LABEL.lower())


named_outcome_label = labelled(NAMED_OUTCOME_LABELS)


conclusion_label = labelled(CONCLUSION_LABELS)


test_outcome_label = labelled(TEST_OUTCOME_LABELS)


# --- A CI check named by evidence --------------------------------------------------------------


def check_description(check: str, tests=(), results=()) -> str:
    """What a check item names, in a line: "unit-tests fails", "tests/a.py::test_b in unit-tests",
    "29 tests in unit-tests", "S105 at a.py:104 in secrets", "2 results in secrets"."""
    if len(tests) == 1:
        return f"{tests[0]} in {check}"
    if tests:
        return f"{len(tests)} tests in {check}"
    if len(results) == 1:
        result = results[0]
        return f"{result['rule']} at {location(result['path'], result.get('start_line'))} in {check}"
    if results:
        return f"{len(results)} results in {check}"
    return f"{check} fails"
