"""A finding's verdicts, its evidence's states and marks, what replaced evidence that is gone,
where a change came from, and a finding's status and resolution, with their labels and phrases."""
from core.vocabulary.words import labelled


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


verdict_label = labelled(VERDICT_LABELS, otherwise=NOT_VERIFIED_LABEL)


verdict_phrase = labelled(VERDICT_PHRASES, otherwise=NOT_VERIFIED_PHRASE)


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


successor_label = labelled(SUCCESSOR_LABELS)


# --- Where a change to evidence that holds came from, between two pins -------------------------

CHANGE_FROM_REBASE = "rebase"
CHANGE_BY_AUTHOR = "author"
CHANGE_ORIGINS = (CHANGE_FROM_REBASE, CHANGE_BY_AUTHOR)
CHANGE_ORIGIN_LABELS = {CHANGE_FROM_REBASE: "From the rebase", CHANGE_BY_AUTHOR: "By the author"}


change_origin_label = labelled(CHANGE_ORIGIN_LABELS)


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
