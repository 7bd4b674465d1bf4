"""Recheck's words for what verification found, in one place.

The verdicts, evidence states and finding statuses, their labels (a badge, a table cell, the
admin: `label(kind, value)`, the templates' one `label` filter) and phrases (the
middle of a sentence: "six still present"), what "moved" means, how a location is written, the
groups the blockers page and its exports use, and which verdicts make a fixed finding look
regressed. Models take their choices from here, the site, the API, the admin and the exports
their wording; the engine (`engine.verification`) keeps its own constants, which a test ties to
these. Plain Python, so it imports without Django.
"""
from core.vocabulary.checks import *  # noqa: F401,F403
from core.vocabulary.events import cause_label, event_kind_label
from core.vocabulary.checks import check_outcome_label, conclusion_label, named_outcome_label, test_outcome_label
from core.vocabulary.places import *  # noqa: F401,F403
from core.vocabulary.policy import *  # noqa: F401,F403
from core.vocabulary.policy import due_label, override_reason_label
from core.vocabulary.runs import *  # noqa: F401,F403
from core.vocabulary.runs import follow_up_label, follow_up_origin_label, run_status_label
from core.vocabulary.threads import *  # noqa: F401,F403
from core.vocabulary.threads import thread_problem_label, thread_state_label
from core.vocabulary.verdicts import *  # noqa: F401,F403
from core.vocabulary.verdicts import (
    change_origin_label, resolution_label, state_label, status_label, successor_label, verdict_label,
)

# --- One way to name any of them ---------------------------------------------------------------

LABELS = {"verdict": verdict_label, "state": state_label, "status": status_label, "resolution": resolution_label,
          "run": run_status_label, "follow_up": follow_up_label, "origin": follow_up_origin_label,
          "thread": thread_state_label, "thread_problem": thread_problem_label, "successor": successor_label,
          "change": change_origin_label, "conclusion": conclusion_label, "test": test_outcome_label,
          "check": check_outcome_label, "named": named_outcome_label, "event": event_kind_label,
          "cause": cause_label, "due": due_label, "override_reason": override_reason_label}


def label(kind: str, value: str | None) -> str:
    """`value` of the vocabulary `kind` (verdict, state, status, resolution, run, follow_up, origin) as a badge or a
    cell
    says it."""
    try:
        return LABELS[kind](value)
    except KeyError:
        raise ValueError(f"No label for {kind} {value!r}: the kinds are {', '.join(LABELS)}.") from None


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
