"""The kinds of event on a pull request's timeline (and a repository's), with their labels, and
who caused one. An event is one difference between two stored states of a pull request
(`findings.state.timeline`), or a run or follow-up that changed (`findings.timeline_receivers`).

A new kind is added here, with its label, and nowhere else: the model's choices, the API's schema,
the subscription and webhook forms and the feeds all read `EVENT_KINDS`. A kind that a later
change brings is one more line in each table below."""
from core.vocabulary.words import humanised, labelled

FINDING_RECORDED = "finding.recorded"
FINDING_REMOVED = "finding.removed"
FINDING_VERDICT_CHANGED = "finding.verdict_changed"
FINDING_STATUS_CHANGED = "finding.status_changed"
FINDING_REGRESSED = "finding.regressed"
FINDING_REGRESSION_CLEARED = "finding.regression_cleared"
GATE_CHANGED = "gate.changed"
GATE_OVERRIDDEN = "gate.overridden"
GATE_OVERRIDE_REVOKED = "gate.override_revoked"
RUN_FAILED = "run.failed"
RUN_REAPED = "run.reaped"
FOLLOW_UP_OPENED = "follow_up.opened"
FOLLOW_UP_VERIFIED_FIXED = "follow_up.verified_fixed"
FOLLOW_UP_REGRESSED = "follow_up.regressed"
FOLLOW_UP_CHANGED = "follow_up.changed"
FOLLOW_UP_DUE_SOON = "follow_up.due_soon"
FOLLOW_UP_OVERDUE = "follow_up.overdue"

EVENT_KIND_LABELS = {
    FINDING_RECORDED: "Finding recorded",
    FINDING_REMOVED: "Finding removed",
    FINDING_VERDICT_CHANGED: "Verdict changed",
    FINDING_STATUS_CHANGED: "Status changed",
    FINDING_REGRESSED: "Possibly regressed",
    FINDING_REGRESSION_CLEARED: "No longer looks regressed",
    GATE_CHANGED: "Merge gate changed",
    GATE_OVERRIDDEN: "Merge gate overridden",
    GATE_OVERRIDE_REVOKED: "Gate override revoked",
    RUN_FAILED: "Verification failed",
    RUN_REAPED: "Verification reaped",
    FOLLOW_UP_OPENED: "Follow-up opened",
    FOLLOW_UP_VERIFIED_FIXED: "Follow-up verified fixed",
    FOLLOW_UP_REGRESSED: "Follow-up regressed",
    FOLLOW_UP_CHANGED: "Follow-up changed",
    FOLLOW_UP_DUE_SOON: "Follow-up due soon",
    FOLLOW_UP_OVERDUE: "Follow-up overdue",
}
EVENT_KINDS = tuple(EVENT_KIND_LABELS)
# The kinds a pull request's stored state is rebuilt from (`findings.state.timeline.replay`).
STATE_EVENT_KINDS = (FINDING_RECORDED, FINDING_REMOVED, FINDING_VERDICT_CHANGED, FINDING_STATUS_CHANGED,
                     FINDING_REGRESSED, FINDING_REGRESSION_CLEARED, GATE_CHANGED, GATE_OVERRIDDEN,
                     GATE_OVERRIDE_REVOKED)

# Who caused an event: a person (a status they set, a finding they recorded) or Recheck itself (a
# verification's verdicts, the gate that follows from them, a run that failed).
CAUSE_PERSON = "person"
CAUSE_RECHECK = "recheck"
CAUSE_LABELS = {CAUSE_PERSON: "A person", CAUSE_RECHECK: "Recheck"}


event_kind_label = labelled(EVENT_KIND_LABELS, otherwise=lambda kind: humanised(kind.replace(".", ": ")))


cause_label = labelled(CAUSE_LABELS)
