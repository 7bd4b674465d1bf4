"""Recheck's words for what verification found, in one place.

The verdicts, evidence states and finding statuses, their labels (a badge, a table cell, the
admin: `label(kind, value)`, the templates' one `label` filter) and phrases (the
middle of a sentence: "six still present"), what "moved" means, how a location is written, the
groups the blockers page and its exports use, and which verdicts make a fixed finding look
regressed. Models take their choices from here, the site, the API, the admin and the exports
their wording; the engine (`engine.verification`) keeps its own constants, which a test ties to
these. Plain Python, so it imports without Django.
"""

# --- A finding's verdict at a commit ------------------------------------------------------------

PRESENT = "present"
LIKELY_FIXED = "likely_fixed"
PARTLY_FIXED = "partly_fixed"
UNVERIFIABLE = "unverifiable"
ERROR = "error"

# The order of every list and tally of verdicts: what still blocks first.
VERDICTS = (PRESENT, LIKELY_FIXED, PARTLY_FIXED, UNVERIFIABLE, ERROR)

VERDICT_LABELS = {
    PRESENT: "Still present",
    PARTLY_FIXED: "Partly fixed",
    LIKELY_FIXED: "Likely fixed",
    # The check could not run: an unreachable repository, an unknown commit, a binary file.
    ERROR: "Check failed",
    # Nothing a machine can check: the finding has only notes, or no evidence.
    UNVERIFIABLE: "Not checkable",
}
VERDICT_PHRASES = {
    PRESENT: "still present",
    PARTLY_FIXED: "partly fixed",
    LIKELY_FIXED: "likely fixed",
    ERROR: "could not be checked",
    UNVERIFIABLE: "not checkable by machine",
}
NOT_VERIFIED_LABEL = "Not verified"
NOT_VERIFIED_PHRASE = "not verified"

# Verdicts that say some of the evidence is still there: marking the finding fixed at such a
# commit needs an explicit "mark fixed anyway" and a note.
STILL_HOLDS_VERDICTS = (PRESENT, PARTLY_FIXED)
# A finding marked fixed whose evidence holds again at a later commit has possibly regressed.
REGRESSED_VERDICTS = STILL_HOLDS_VERDICTS
# An open finding with one of these needs a maintainer to decide whether it is fixed.
LOOKS_FIXED_VERDICTS = (LIKELY_FIXED, PARTLY_FIXED)


def verdict_label(verdict: str | None) -> str:
    return VERDICT_LABELS.get(verdict or "", NOT_VERIFIED_LABEL)


def verdict_phrase(verdict: str | None) -> str:
    return VERDICT_PHRASES.get(verdict or "", NOT_VERIFIED_PHRASE)


# --- One evidence item's state at a commit ------------------------------------------------------

HOLDS = "holds"
GONE = "gone"
STATE_ERROR = "error"
UNCHECKED = "unchecked"
STATES = (HOLDS, GONE, STATE_ERROR, UNCHECKED)
# Not stored: a result that holds somewhere other than where the evidence was recorded.
MOVED = "moved"

# The words, as they read inside a sentence or a matrix cell; `state_label` starts them with a
# capital for a badge (and the model's choices are the same).
STATE_LABELS = {
    HOLDS: "holds",
    MOVED: "moved",
    GONE: "gone",
    STATE_ERROR: "error",
    UNCHECKED: "not checkable",
    "": "not verified",
}


def state_label(state: str | None) -> str:
    """An evidence item's state as a badge says it; '' (no result) reads as not verified."""
    return STATE_LABELS.get(state or "", STATE_LABELS[""]).capitalize()


def evidence_state(*, checkable: bool, state: str) -> str:
    """The state a reader is shown for an item: a note is not checkable by machine wherever it is
    shown, whether or not a verification stored a result for it, so it never reads "not verified"
    on one pull request and "not checkable" on another."""
    return state if checkable else UNCHECKED


def is_moved(*, kind: str, state: str, path: str, start_line: int | None,
             recorded_path: str, recorded_start_line: int | None) -> bool:
    """Whether evidence that holds is somewhere else than where it was recorded. A pattern has no
    one place (its glob matching in some file is not a move), nor has a note."""
    if state != HOLDS or not path or kind in ("pattern", "note"):
        return False
    return (path, start_line) != (recorded_path, recorded_start_line)


# What happened to evidence that still holds, as the verification pictures mark it.
MARK_MOVED, MARK_RENAMED, MARK_REINDENTED = "moved", "renamed", "reindented"
# mark -> (the letter drawn in a cell, its meaning in words), in the order they are drawn.
MARKS = {MARK_MOVED: ("M", "moved"), MARK_RENAMED: ("R", "file renamed"), MARK_REINDENTED: ("I", "re-indented")}


def evidence_marks(*, kind: str, state: str, path: str, start_line: int | None, recorded_path: str,
                   recorded_start_line: int | None, detail: str) -> tuple[str, ...]:
    """Moved (other lines, or another file), renamed (its file was) and re-indented, for a snippet
    that holds. The engine's detail names a rename and a re-indent: only it saw the diff."""
    if state != HOLDS or kind != "snippet":
        return ()
    renamed = "file renamed" in detail
    moved = start_line != recorded_start_line or (path != recorded_path and not renamed)
    marks = ((MARK_MOVED,) if moved else ()) + ((MARK_RENAMED,) if renamed else ())
    return marks + ((MARK_REINDENTED,) if "re-indented" in detail else ())


def shown_state(*, state: str, moved: bool) -> str:
    """The state a reader is shown: `moved` for evidence that holds elsewhere."""
    return MOVED if moved else state


# --- What replaced evidence that is gone (its successor) ----------------------------------------

SUCCESSOR_REWRITTEN = "rewritten"
SUCCESSOR_REMOVED = "removed"
SUCCESSOR_MOVED_AND_CHANGED = "moved_and_changed"
SUCCESSOR_FILE_DELETED = "file_deleted"
SUCCESSOR_KINDS = (SUCCESSOR_REWRITTEN, SUCCESSOR_REMOVED, SUCCESSOR_MOVED_AND_CHANGED, SUCCESSOR_FILE_DELETED)
SUCCESSOR_LABELS = {
    SUCCESSOR_REWRITTEN: "Rewritten",
    SUCCESSOR_REMOVED: "Removed",
    SUCCESSOR_MOVED_AND_CHANGED: "Moved and changed",
    SUCCESSOR_FILE_DELETED: "File deleted",
}


def successor_sentence(*, kind: str, short_sha: str, where: str, larger: bool = False,
                       similarity: float | None = None) -> str:
    """What became of gone evidence, in one line: "Rewritten at abc1234: now src/x.py:40–44",
    "Removed at abc1234, at src/x.py:40", "Moved and changed at abc1234: now src/y.py:3–7 (83%
    alike)", "File deleted at abc1234: src/x.py"."""
    label = SUCCESSOR_LABELS.get(kind, kind)
    if kind == SUCCESSOR_REWRITTEN:
        return f"{label} at {short_sha}: now {where}" + (", more than a rewrite of those lines" if larger else "")
    if kind == SUCCESSOR_REMOVED:
        return f"{label} at {short_sha}, at {where}"
    if kind == SUCCESSOR_MOVED_AND_CHANGED:
        alike = f" ({round(similarity * 100)}% alike)" if similarity is not None else ""
        return f"{label} at {short_sha}: now {where}{alike}"
    return f"{label} at {short_sha}: {where}"


def successor_label(kind: str) -> str:
    return SUCCESSOR_LABELS.get(kind or "", str(kind).replace("_", " ").capitalize())


# --- Where a change to evidence that holds came from, between two pins -------------------------

CHANGE_FROM_REBASE = "rebase"
CHANGE_BY_AUTHOR = "author"
CHANGE_ORIGINS = (CHANGE_FROM_REBASE, CHANGE_BY_AUTHOR)
CHANGE_ORIGIN_LABELS = {CHANGE_FROM_REBASE: "From the rebase", CHANGE_BY_AUTHOR: "By the author"}


def change_origin_label(origin: str) -> str:
    return CHANGE_ORIGIN_LABELS.get(origin or "", str(origin).capitalize())


# --- A finding's status -----------------------------------------------------------------------

OPEN = "open"
FIXED = "fixed"
DISMISSED = "dismissed"
STATUSES = (OPEN, FIXED, DISMISSED)
STATUS_LABELS = {OPEN: "Open", FIXED: "Fixed", DISMISSED: "Dismissed"}


def status_label(status: str) -> str:
    # A page never fails over a word: a status the vocabulary does not know reads as itself.
    return STATUS_LABELS.get(status, str(status or "").capitalize())


# --- How a finding got its status ---------------------------------------------------------------

# Marked fixed while its evidence still held at the commit it was marked fixed at (with a note).
FIXED_ANYWAY = "fixed_anyway"
RESOLUTION_LABELS = {OPEN: STATUS_LABELS[OPEN], FIXED: STATUS_LABELS[FIXED], FIXED_ANYWAY: "Fixed anyway",
                     DISMISSED: STATUS_LABELS[DISMISSED]}
FIXED_ANYWAY_LABEL = RESOLUTION_LABELS[FIXED_ANYWAY]


def resolution_label(resolution: str) -> str:
    """A status and how it got there ('Fixed anyway'), as the stored review state names it."""
    return RESOLUTION_LABELS.get(resolution) or status_label(resolution)


# --- A review thread in a pull request's inbox --------------------------------------------------

THREAD_NEW = "new"
THREAD_FINDING = "finding"
THREAD_ATTACHED = "attached"
THREAD_NOT_A_FINDING = "not_a_finding"
THREAD_STATES = (THREAD_NEW, THREAD_FINDING, THREAD_ATTACHED, THREAD_NOT_A_FINDING)
THREAD_STATE_LABELS = {
    THREAD_NEW: "New",
    THREAD_FINDING: "Triaged as a finding",
    THREAD_ATTACHED: "Attached to a finding",
    THREAD_NOT_A_FINDING: "Not a finding",
}
# What could not be done with a thread: shown beside its state.
THREAD_FIRST_DELETED = "first_deleted"
THREAD_COMMIT_MISSING = "commit_missing"
THREAD_FILE_MISSING = "file_missing"
THREAD_LINE_BEYOND = "line_beyond"
THREAD_BINARY = "binary"
THREAD_PROBLEM_LABELS = {
    "": "",
    THREAD_FIRST_DELETED: "First comment deleted",
    THREAD_COMMIT_MISSING: "Commit not in the mirror",
    THREAD_FILE_MISSING: "File not in the mirror",
    THREAD_LINE_BEYOND: "Line beyond the file",
    THREAD_BINARY: "Binary file",
}


def thread_state_label(state: str) -> str:
    return THREAD_STATE_LABELS.get(state, str(state or "").capitalize())


def thread_problem_label(problem: str) -> str:
    return THREAD_PROBLEM_LABELS.get(problem or "", str(problem).replace("_", " ").capitalize())


# What Recheck replies on a thread after a verification: the verdict's label, where the code is.
VERIFIED_FIXED_LABEL = "Verified fixed"


def thread_verdict_sentence(*, verdict: str | None, short_sha: str, where: str = "", gone: int = 0,
                            total: int = 0) -> str:
    """The one line a thread's reply starts with: "Still present at abc1234, now at path:3–4",
    "Verified fixed at abc1234", "Partly fixed: 2 of 3 items gone"."""
    if verdict == PRESENT:
        return f"{verdict_label(verdict)} at {short_sha}" + (f", now at {where}" if where else "")
    if verdict == LIKELY_FIXED:
        return f"{VERIFIED_FIXED_LABEL} at {short_sha}"
    if verdict == PARTLY_FIXED:
        return f"{verdict_label(verdict)}: {gone} of {total} items gone at {short_sha}"
    return f"{verdict_label(verdict)} at {short_sha}"

# --- A verification run's status ----------------------------------------------------------------

RUN_QUEUED = "queued"
RUN_RUNNING = "running"
RUN_DONE = "done"
RUN_FAILED = "failed"
# Queued for a head that a newer push to the pull request replaced before a worker took it: never
# run, kept with the run that took its place.
RUN_SUPERSEDED = "superseded"
RUN_STATUS_LABELS = {RUN_QUEUED: "Queued", RUN_RUNNING: "Running", RUN_DONE: "Done", RUN_FAILED: "Failed",
                     RUN_SUPERSEDED: "Superseded"}
# What a request to verify says it led to, by the run's status when the answer is written: with the
# tasks run in-process the run has already ended, and its results are on the page the answer
# shows, so it must not say "queued" then.
RUN_REQUEST_PHRASES = {
    RUN_QUEUED: "queued: the page shows its progress",
    RUN_RUNNING: "under way: the page shows its progress",
    RUN_DONE: "done: the results below are new",
    RUN_FAILED: "failed",
    RUN_SUPERSEDED: "superseded by a newer push",
}


def run_status_label(status: str) -> str:
    return RUN_STATUS_LABELS.get(status, str(status or "").capitalize())


def run_request_phrase(status: str) -> str:
    return RUN_REQUEST_PHRASES.get(status, run_status_label(status).lower())


# --- A follow-up: what a merged pull request left to do on the default branch -------------------

# Open: still to do. Verified fixed: the default branch's head no longer has its evidence, and a
# person has yet to mark it fixed (a machine never decides that). Fixed: marked so by a person.
# Closed: closed by a person with a reason, and no longer checked.
FOLLOW_UP_OPEN = OPEN
FOLLOW_UP_VERIFIED_FIXED = "verified_fixed"
FOLLOW_UP_FIXED = FIXED
FOLLOW_UP_CLOSED = "closed"
FOLLOW_UP_STATES = (FOLLOW_UP_OPEN, FOLLOW_UP_VERIFIED_FIXED, FOLLOW_UP_FIXED, FOLLOW_UP_CLOSED)
FOLLOW_UP_LABELS = {
    FOLLOW_UP_OPEN: "Open",
    FOLLOW_UP_VERIFIED_FIXED: "Verified fixed, to be marked",
    FOLLOW_UP_FIXED: "Fixed",
    FOLLOW_UP_CLOSED: "Closed",
}
# Why a finding became a follow-up when its pull request merged.
ORIGIN_OPEN_CLEANUP = "open_cleanup"
ORIGIN_OPEN_BLOCKER = "open_blocker"
ORIGIN_DISMISSED_BLOCKER = "dismissed_blocker"
ORIGIN_FIXED_ANYWAY = "fixed_anyway"
FOLLOW_UP_ORIGIN_LABELS = {
    ORIGIN_OPEN_CLEANUP: "Open cleanup",
    ORIGIN_OPEN_BLOCKER: "Blocker still open",
    ORIGIN_DISMISSED_BLOCKER: "Blocker dismissed",
    ORIGIN_FIXED_ANYWAY: "Blocker fixed anyway",
}


def follow_up_label(state: str) -> str:
    return FOLLOW_UP_LABELS.get(state, str(state or "").capitalize())


def follow_up_origin_label(origin: str) -> str:
    return FOLLOW_UP_ORIGIN_LABELS.get(origin, str(origin or "").replace("_", " ").capitalize())


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


def check_outcome_label(outcome: str | None) -> str:
    return CHECK_OUTCOME_LABELS.get(outcome or "", NOT_VERIFIED_LABEL)


def named_outcome_label(outcome: str | None) -> str:
    return NAMED_OUTCOME_LABELS.get(outcome or "", str(outcome or "").replace("_", " ").capitalize())


def conclusion_label(conclusion: str | None) -> str:
    return CONCLUSION_LABELS.get(conclusion or "", str(conclusion or "").replace("_", " ").capitalize())


def test_outcome_label(outcome: str | None) -> str:
    return TEST_OUTCOME_LABELS.get(outcome or "", str(outcome or "").capitalize())


# --- One way to name any of them ---------------------------------------------------------------

LABELS = {"verdict": verdict_label, "state": state_label, "status": status_label, "resolution": resolution_label,
          "run": run_status_label, "follow_up": follow_up_label, "origin": follow_up_origin_label,
          "thread": thread_state_label, "thread_problem": thread_problem_label, "successor": successor_label,
          "change": change_origin_label, "conclusion": conclusion_label, "test": test_outcome_label,
          "check": check_outcome_label, "named": named_outcome_label}


def label(kind: str, value: str | None) -> str:
    """`value` of the vocabulary `kind` (verdict, state, status, resolution, run, follow_up, origin) as a badge or a
    cell
    says it."""
    try:
        return LABELS[kind](value)
    except KeyError:
        raise ValueError(f"No label for {kind} {value!r}: the kinds are {', '.join(LABELS)}.") from None


# --- Places -------------------------------------------------------------------------------------


def location(path: str, start_line: int | None = None, end_line: int | None = None) -> str:
    """`path:40–42`, `path:40`, or the path alone."""
    if not path:
        return ""
    if start_line and end_line and end_line != start_line:
        return f"{path}:{start_line}–{end_line}"
    if start_line:
        return f"{path}:{start_line}"
    return path


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


# --- What the review counts but Recheck does not record ----------------------------------------


def cleanups_not_recorded_sentence(cleanups_not_recorded: int | None) -> str:
    """'The review counts 5 cleanups that are not recorded here.': the reviewer's own figure, for
    cleanups the review counts without describing (so there is no finding, and nothing to check)."""
    if not cleanups_not_recorded:
        return ""
    if cleanups_not_recorded == 1:
        return "The review counts 1 cleanup that is not recorded here."
    return f"The review counts {cleanups_not_recorded} cleanups that are not recorded here."


# --- How the blockers are grouped ---------------------------------------------------------------

CAUGHT_BY_CI = "ci"
CAUGHT_BY_NONE = "none"
# (caught_by, heading, subtitle), in the order the review reads them: what CI catches first.
BLOCKER_GROUPS = (
    (CAUGHT_BY_CI, "Caught by CI", "red now, or red the first time the tests run"),
    (CAUGHT_BY_NONE, "Nothing checks these", "they appear during a real run"),
)


