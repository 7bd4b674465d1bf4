"""A review thread's state in a pull request's inbox, and what Recheck replies on one."""
from core.vocabulary.words import labelled
from core.vocabulary.checks import finding_verdict_label
from core.vocabulary.verdicts import LIKELY_FIXED, PARTLY_FIXED, PRESENT, verdict_label


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


thread_state_label = labelled(THREAD_STATE_LABELS)


thread_problem_label = labelled(THREAD_PROBLEM_LABELS)


# What Recheck replies on a thread after a verification: the verdict's label, where the code is.
VERIFIED_FIXED_LABEL = "Verified fixed"


def thread_verdict_sentence(*, verdict: str | None, short_sha: str, where: str = "", gone: int = 0,
                            total: int = 0, reason: str = "") -> str:
    """The one line a thread's reply starts with: "Still present at abc1234, now at path:3–4",
    "Verified fixed at abc1234", "Partly fixed: 2 of 3 items gone", "Waiting for CI at abc1234"
    (an error's `reason`, `verdict_reason`)."""
    if reason:
        return f"{finding_verdict_label(verdict, reason)} at {short_sha}"
    if verdict == PRESENT:
        return f"{verdict_label(verdict)} at {short_sha}" + (f", now at {where}" if where else "")
    if verdict == LIKELY_FIXED:
        return f"{VERIFIED_FIXED_LABEL} at {short_sha}"
    if verdict == PARTLY_FIXED:
        return f"{verdict_label(verdict)}: {gone} of {total} items gone at {short_sha}"
    return f"{verdict_label(verdict)} at {short_sha}"
