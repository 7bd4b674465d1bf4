"""A repository's merge policy: who may override the gate, the reasons an override gives, and
when something that can wait is due (due soon, overdue). Plain values, read by the models'
choices, the derivation of a pull request's state, the site, the API and `recheck-gate`'s server."""
from core.vocabulary.words import STRICT, labelled
from datetime import datetime, timedelta

# --- Overrides ---------------------------------------------------------------------------------

OVERRIDE_URGENT_FIX = "urgent_fix"
OVERRIDE_ACCEPTED_RISK = "accepted_risk"
OVERRIDE_FALSE_POSITIVE = "false_positive"
OVERRIDE_OTHER = "other"
OVERRIDE_REASON_LABELS = {
    OVERRIDE_URGENT_FIX: "Urgent fix",
    OVERRIDE_ACCEPTED_RISK: "Accepted risk",
    OVERRIDE_FALSE_POSITIVE: "False positive",
    OVERRIDE_OTHER: "Other",
}
OVERRIDE_REASONS = tuple(OVERRIDE_REASON_LABELS)
# The reason that says nothing by itself: its note must.
OVERRIDE_REASONS_NEEDING_A_NOTE = frozenset({OVERRIDE_OTHER})

# Who may override a repository's gate: a membership role (its actions are `ROLE_ACTIONS`).
OVERRIDE_ROLE_LABELS = {"maintainer": "Maintainer", "admin": "Admin"}
OVERRIDE_ROLES = tuple(OVERRIDE_ROLE_LABELS)


override_reason_label = labelled(OVERRIDE_REASON_LABELS, otherwise=STRICT, name="override reason")


def override_sentence(overridden: dict) -> str:
    """What a CI log, a check run and a page say of an override: who, why, at which commit."""
    note = overridden.get("note", "").strip()
    reason = override_reason_label(overridden["reason"]).lower()
    sentence = (f"Overridden by {overridden['by'] or 'an operator'} at {overridden['commit'][:8]} ({reason})"
                + (f": {note}" if note else ""))
    return sentence if sentence[-1] in ".!?" else sentence + "."


# --- Due dates ---------------------------------------------------------------------------------

DUE_NONE = ""  # no due date (opened before the policy dated follow-ups, or done)
DUE_LATER = "due"
DUE_SOON = "due_soon"
OVERDUE = "overdue"
DUE_LABELS = {DUE_NONE: "No due date", DUE_LATER: "Due", DUE_SOON: "Due soon", OVERDUE: "Overdue"}
DUE_STATES = tuple(DUE_LABELS)
# Due soon: this close to its due date, or closer.
DUE_SOON_DAYS = 7

# The defaults of a repository's policy: the gate as it was before policies (possibly regressed
# blockers are reported, not counted; overdue cleanups never block), due dates by kind.
DEFAULT_CLEANUP_DUE_DAYS = 30
DEFAULT_BLOCKER_DUE_DAYS = 14
# A bound on a due period: a longer one is a mistake in the number, not a policy.
LONGEST_DUE_DAYS = 3650


def due_state(due_at: datetime | None, now: datetime, *, done: bool = False) -> str:
    """Whether something due at `due_at` is overdue at `now`, due within DUE_SOON_DAYS, due later,
    or has no due date (none set, or `done`: marked fixed or closed)."""
    if due_at is None or done:
        return DUE_NONE
    if now >= due_at:
        return OVERDUE
    if due_at - now <= timedelta(days=DUE_SOON_DAYS):
        return DUE_SOON
    return DUE_LATER


due_label = labelled(DUE_LABELS, otherwise=STRICT, name="due state")


# --- The gate's word -----------------------------------------------------------------------------

GATE_MAY_MERGE, GATE_MAY_NOT_MERGE, GATE_OVERRIDDEN = "may merge", "may not merge", "overridden"


def gate_word(gate: dict | None) -> str:
    """The gate's answer in two or three words (a page's heading, a stack's entry): overridden, may
    merge or may not merge; may not merge where there is no answer (no head pinned)."""
    if gate and gate.get("overridden"):
        return GATE_OVERRIDDEN
    return GATE_MAY_MERGE if gate and gate.get("mergeable") else GATE_MAY_NOT_MERGE
