"""A verification run's status, and a follow-up's state and origin."""
from core.vocabulary.words import labelled
from core.vocabulary.verdicts import FIXED, OPEN


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


run_status_label = labelled(RUN_STATUS_LABELS)


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


follow_up_label = labelled(FOLLOW_UP_LABELS)


follow_up_origin_label = labelled(FOLLOW_UP_ORIGIN_LABELS)
