"""A pull request's review state, derived from its stored facts: plain Python over plain values,
so the one rule for each answer (a verdict, a status and how it got there, possibly regressed,
needs a decision, the counts, the gate at each pinned commit) is written once and tested without
a database. `findings.state.stored` loads the facts, stores what this returns with the PR's
generation, and every interface reads that.

The rules, as docs/using/verify.md states them:
- A finding's verdict is its verdict at the latest verified pin (the last pin in pin order at which
  any of the PR's findings has a verdict of its current evidence version); None when it has none.
- Fixed anyway: marked fixed while its verdict at the commit it was marked fixed at said the
  evidence still held (present, partly fixed).
- Possibly regressed: marked fixed, and its evidence holds (present, partly fixed) at a pinned
  commit that was pinned after it was marked fixed. Per finding that pin is the latest verified
  one; in the gate it is the commit asked about. A commit pinned before the decision (fixing it
  anyway at the head, say) is what the person decided about, so it flags nothing.
- Needs a decision: open and its verdict looks fixed (likely or partly fixed), or possibly regressed.
- The gate at a commit is verified when the commit is known to the mirror (its full SHA resolved),
  its latest finished run did not fail, something was verified there (a verdict, or a finished
  run), and every open blocker has a verdict there of its current evidence that is not an error.
  Mergeable is verified with no open blocker, unless the repository's policy says more blocks
  (possibly regressed blockers; cleanup follow-ups past their due date), or unless a person
  overrode the gate at that commit: then it is mergeable, and says who, why and when.
- Stacked: while a pull request below this one (the one its base branch is the head of, and so
  on down) is not mergeable at its head, this one is not either, and says it is blocked by the
  lowest such PR below. A PR below whose gate is overridden at its head is mergeable, so what lies
  under it blocks nothing above it; an override of this PR's gate overrides the stack too.
- The answer changes with time alone only when an overdue follow-up blocks: the state says until
  when it holds (`valid_until`), and is derived again after."""
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from core import vocabulary as v

BLOCKER, CLEANUP = "blocker", "cleanup"
OPEN, FIXED, DISMISSED = "open", "fixed", "dismissed"
KINDS, STATUSES = (BLOCKER, CLEANUP), (OPEN, FIXED, DISMISSED)
FIXED_ANYWAY = v.FIXED_ANYWAY
UNVERIFIED = "unverified"
RUN_DONE, RUN_FAILED = "done", "failed"
# Version of the stored shape: a row of another version is derived again, never read.
SHAPE = 4


@dataclass(frozen=True)
class PolicyFacts:
    """What the repository's merge policy says the gate counts (the defaults: the gate as it was
    before policies). An unverified commit always blocks; that is not a setting."""

    possibly_regressed_block: bool = False
    overdue_cleanups_block: bool = False
    override_role: str = "maintainer"

    def as_dict(self) -> dict:
        return {"possibly_regressed_block": self.possibly_regressed_block,
                "overdue_cleanups_block": self.overdue_cleanups_block, "override_role": self.override_role}


@dataclass(frozen=True)
class OverrideFacts:
    """An override of the gate at one pinned commit, not revoked."""

    pk: int
    commit_id: int
    sha: str
    reason: str
    note: str
    by: str
    at: datetime


@dataclass(frozen=True)
class DueFacts:
    """A cleanup follow-up of the repository still to do, with its due date (read only when the
    policy lets overdue cleanups block)."""

    reference: str
    title: str
    due_at: datetime


@dataclass(frozen=True)
class BelowFacts:
    """A pull request below this one in its stack: its own gate at its head (its findings and
    policy, not its stack) and whether that gate is overridden there."""

    number: int
    own_mergeable: bool
    overridden: bool


@dataclass(frozen=True)
class FindingFacts:
    pk: int
    number: int
    kind: str
    status: str
    title: str
    evidence_version: int
    resolved_at: datetime | None = None
    resolved_commit_id: int | None = None


@dataclass(frozen=True)
class PinFacts:
    commit_id: int
    sha: str
    role: str
    pinned_at: datetime
    resolved: bool = True
    # The shortest abbreviation of `sha` that names no other commit recorded in the repository.
    unique_from: int = 7


@dataclass(frozen=True)
class VerificationFacts:
    finding_id: int
    commit_id: int
    verdict: str
    evidence_version: int
    # Why an error verdict is one at that commit (`Verification.verdict_reason`, by the one rule
    # `vocabulary.verdict_reason`); '' otherwise.
    reason: str = ""


@dataclass(frozen=True)
class RunFacts:
    commit_id: int | None  # None: a run over every pin
    status: str
    order: tuple  # newest last


@dataclass
class Facts:
    findings: list[FindingFacts]
    pins: list[PinFacts]  # in pin order
    verifications: list[VerificationFacts]
    runs: list[RunFacts] = field(default_factory=list)
    # evidence id -> (finding id, its state at the latest verified pin, or "" when not verified)
    evidence_states: dict[int, tuple[int, str]] = field(default_factory=dict)
    evidence_of: dict[int, list[int]] = field(default_factory=dict)  # finding id -> evidence ids
    policy: PolicyFacts = field(default_factory=PolicyFacts)
    overrides: list[OverrideFacts] = field(default_factory=list)
    due_cleanups: list[DueFacts] = field(default_factory=list)
    # The stack below, nearest first, and why its reading stopped short of the bottom ("cycle",
    # "depth"; "" when it did not): `reviews.stack`.
    below: list[BelowFacts] = field(default_factory=list)
    stack_cut: str = ""
    # The moment the facts were read: what is overdue is overdue at it.
    now: datetime | None = None


def current_verdicts(facts: Facts) -> dict[tuple[int, int], str]:
    """(finding id, commit id) -> verdict, only for verdicts of the finding's current evidence."""
    versions = {finding.pk: finding.evidence_version for finding in facts.findings}
    return {
        (row.finding_id, row.commit_id): row.verdict
        for row in facts.verifications
        if versions.get(row.finding_id) == row.evidence_version
    }


def current_reasons(facts: Facts) -> dict[tuple[int, int], str]:
    """(finding id, commit id) -> why its verdict there is an error, where one says (current
    evidence only, as `current_verdicts`)."""
    versions = {finding.pk: finding.evidence_version for finding in facts.findings}
    return {
        (row.finding_id, row.commit_id): row.reason
        for row in facts.verifications
        if row.reason and row.verdict == v.ERROR and versions.get(row.finding_id) == row.evidence_version
    }


def latest_verified_pin(facts: Facts, verdicts: dict[tuple[int, int], str] | None = None) -> PinFacts | None:
    """The last pin, in pin order, at which any finding of the PR has a verdict of its current evidence."""
    verdicts = current_verdicts(facts) if verdicts is None else verdicts
    verified = {commit_id for _, commit_id in verdicts}
    for pin in reversed(facts.pins):
        if pin.commit_id in verified:
            return pin
    return None


def is_fixed_anyway(finding: FindingFacts, verdicts: dict[tuple[int, int], str]) -> bool:
    return (
        finding.status == FIXED
        and finding.resolved_commit_id is not None
        and verdicts.get((finding.pk, finding.resolved_commit_id)) in v.STILL_HOLDS_VERDICTS
    )


def regressed_at(finding: FindingFacts, pin: PinFacts | None, verdict: str | None) -> bool:
    """The one rule for possibly regressed: fixed, and holding again at a pin pinned after that."""
    return (
        finding.status == FIXED
        and pin is not None
        and verdict in v.REGRESSED_VERDICTS
        and finding.resolved_at is not None
        and pin.pinned_at > finding.resolved_at
    )


def gate_at(
    facts: Facts, verdicts: dict[tuple[int, int], str], *, commit_id: int, sha: str, resolved: bool,
    pin: PinFacts | None, reasons: dict[tuple[int, int], str] | None = None,
) -> dict:
    """The gate's answer at one commit (pinned, `pin`, or not): plain data, as it is stored.
    `reasons`: `current_reasons(facts)` when the caller has them."""
    reasons_there = current_reasons(facts) if reasons is None else reasons
    blockers = sorted((f for f in facts.findings if f.kind == BLOCKER), key=lambda f: f.number)
    open_blockers = [(f, verdicts.get((f.pk, commit_id))) for f in blockers if f.status == OPEN]
    regressed = [
        (f, verdicts.get((f.pk, commit_id)))
        for f in blockers
        if regressed_at(f, pin, verdicts.get((f.pk, commit_id)))
    ]
    finished = [run for run in facts.runs if run.status in (RUN_DONE, RUN_FAILED)
                and run.commit_id in (None, commit_id)]
    last_run = max(finished, key=lambda run: run.order, default=None)
    checked_there = any(key[1] == commit_id for key in verdicts) or (
        last_run is not None and last_run.status == RUN_DONE
    )
    reasons = {f.pk: reasons_there.get((f.pk, commit_id), "") if verdict == v.ERROR else ""
               for f, verdict in open_blockers}
    unverified = sum(1 for _, verdict in open_blockers if verdict is None)
    errors = sum(1 for _, verdict in open_blockers if verdict == v.ERROR)
    run_failed = last_run is not None and last_run.status == RUN_FAILED
    verified = resolved and not run_failed and checked_there and not unverified and not errors
    policy = facts.policy
    overdue = overdue_cleanups(facts)
    blocked_by_policy = bool((policy.possibly_regressed_block and regressed) or overdue)
    override = next((o for o in facts.overrides if o.commit_id == commit_id), None)
    own = verified and not open_blockers and not blocked_by_policy
    below = blocked_below(facts)
    answer = {
        "commit_id": commit_id,
        "sha": sha,
        "verified": verified,
        "mergeable": (own and below is None) or override is not None,
        # Mergeable by its own findings and policy, the stack aside (override aside too): what the
        # PRs stacked on this one read of it.
        "own_mergeable": own,
        "blocked_below": below,
        "open_blockers": [[f.pk, f.number, f.title, verdict, reasons[f.pk]] for f, verdict in open_blockers],
        "possibly_regressed": [[f.pk, f.number, f.title, verdict] for f, verdict in regressed],
        "overdue_cleanups": [[due.reference, due.title, due.due_at.isoformat()] for due in overdue],
        "overridden": None if override is None else {
            "id": override.pk, "by": override.by, "reason": override.reason, "note": override.note,
            "commit": override.sha, "at": override.at.isoformat(),
        },
        "policy": policy.as_dict(),
    }
    reason = gate_reason(
        sha=sha, verified=verified, resolved=resolved, run_failed=run_failed, checked=checked_there,
        open_verdicts=[verdict for _, verdict in open_blockers], regressed=len(regressed),
        waiting=sum(1 for reason in reasons.values() if reason == v.CHECK_WAITING),
        regressed_block=policy.possibly_regressed_block, overdue=len(overdue),
    )
    if below is not None:
        reason = f"Stacked: blocked by #{below} below, which is not mergeable. {reason}"
    reason += stack_cut_note(facts)
    if override is not None:
        reason = f"{v.override_sentence(answer['overridden'])} Without the override: {reason}"
    answer["reason"] = reason
    return answer


def blocked_below(facts: Facts) -> int | None:
    """The number of the lowest PR below this one whose gate keeps it from merging, or None. Read
    from the bottom up: an overridden PR is mergeable whatever lies under it."""
    blocker = None
    for lower in reversed(facts.below):
        if lower.overridden:
            blocker = None
        elif blocker is None and not lower.own_mergeable:
            blocker = lower.number
    return blocker


def stack_cut_note(facts: Facts) -> str:
    if facts.stack_cut == "cycle" and not facts.below:
        return " This pull request's base branch is its own head branch: it is read as stacked on nothing."
    if facts.stack_cut == "cycle":
        return (f" The pull requests below form a cycle (based on one another): the stack is read up to "
                f"#{facts.below[-1].number}, the last before one seen again.")
    if facts.stack_cut == "depth":
        return (f" The stack below is deeper than {len(facts.below)}: only the {len(facts.below)} nearest "
                "pull requests below are counted.")
    return ""


def overdue_cleanups(facts: Facts) -> list[DueFacts]:
    """The cleanup follow-ups past their due date at `facts.now`, when the policy counts them."""
    if not facts.policy.overdue_cleanups_block or facts.now is None:
        return []
    return [due for due in facts.due_cleanups if due.due_at <= facts.now]


def valid_until(facts: Facts) -> datetime | None:
    """The first moment the gate's answers change with time alone: the next due date of a
    follow-up the policy counts. None when none will."""
    if not facts.policy.overdue_cleanups_block or facts.now is None:
        return None
    return min((due.due_at for due in facts.due_cleanups if due.due_at > facts.now), default=None)


def gate_reason(
    *, sha: str, verified: bool, resolved: bool, run_failed: bool, checked: bool, open_verdicts: list,
    regressed: int, waiting: int = 0, regressed_block: bool = False, overdue: int = 0,
) -> str:
    """One sentence for a CI log, from the gate's own figures."""
    at = sha[:8]
    count = len(open_verdicts)
    regressed_note = f" {regressed} fixed blocker(s) look regressed at {at}: a human should look." if regressed else ""
    if regressed and regressed_block:
        regressed_note = (f" {regressed} fixed blocker(s) look regressed at {at}, and the repository's policy "
                          "lets them block: a human should look.")
    if overdue:
        regressed_note += (f" {overdue} cleanup follow-up(s) of the repository are overdue, and the repository's "
                           "policy lets them block.")
    if not resolved:
        return (
            f"Commit {at} is not known to the mirror of the repository, so nothing was verified there: "
            "check the SHA, or request a verification once the mirror has it (how_to_verify)."
        )
    if run_failed:
        return f"The last verification at {at} failed: request a verification again (how_to_verify)."
    unverified = sum(1 for verdict in open_verdicts if verdict is None)
    errors = sum(1 for verdict in open_verdicts if verdict == v.ERROR)
    if not checked or unverified:
        if not count:
            return f"Nothing verified at {at} yet: request a verification (how_to_verify)."
        return (
            f"{count} open blocker(s); {unverified} not yet verified at {at}: "
            "request a verification (how_to_verify)."
        )
    if errors and waiting == errors:
        return (
            f"{count} open blocker(s); {errors} waiting for CI at {at}: their verdicts follow when CI reports "
            "there (how_to_verify)."
        )
    if errors:
        return (
            f"{count} open blocker(s); {errors} could not be checked at {at}: "
            "request a verification again (how_to_verify)."
        )
    if verified and not count:
        if (regressed and regressed_block) or overdue:
            return f"No open blocker at {at}, but the merge is blocked.{regressed_note}"
        return f"No open blocker at {at}.{regressed_note}"
    likely_fixed = sum(1 for verdict in open_verdicts if verdict == v.LIKELY_FIXED)
    fixed_note = f" ({likely_fixed} look likely fixed: a human marks them fixed)" if likely_fixed else ""
    return f"{count} open blocker(s) at {at}{fixed_note}.{regressed_note}"


def derive(facts: Facts) -> dict:
    """The PR's whole review state, as it is stored (JSON-ready: keys are strings)."""
    verdicts = current_verdicts(facts)
    reasons = current_reasons(facts)
    latest = latest_verified_pin(facts, verdicts)
    findings = {}
    counts = {kind: Counter() for kind in KINDS}
    for finding in facts.findings:
        verdict = verdicts.get((finding.pk, latest.commit_id)) if latest else None
        regressed = regressed_at(finding, latest, verdict)
        anyway = is_fixed_anyway(finding, verdicts)
        findings[str(finding.pk)] = {
            "number": finding.number,
            "kind": finding.kind,
            "status": finding.status,
            "resolution": FIXED_ANYWAY if anyway else finding.status,
            "verdict": verdict,
            "verdict_reason": reasons.get((finding.pk, latest.commit_id), "")
            if latest and verdict == v.ERROR else "",
            "evidence": {
                str(evidence_id): facts.evidence_states.get(evidence_id, (finding.pk, ""))[1]
                for evidence_id in facts.evidence_of.get(finding.pk, [])
            },
            "possibly_regressed": regressed,
            "needs_decision": regressed or (finding.status == OPEN and verdict in v.LOOKS_FIXED_VERDICTS),
        }
        tally = counts[finding.kind]
        tally["total"] += 1
        tally[finding.status] += 1
        tally[f"verdict:{verdict or UNVERIFIED}"] += 1
        if finding.status == OPEN:
            tally[f"open:{verdict or UNVERIFIED}"] += 1
        if anyway:
            tally[FIXED_ANYWAY] += 1
        if regressed:
            tally["possibly_regressed"] += 1
    gates = {
        pin.sha: gate_at(facts, verdicts, commit_id=pin.commit_id, sha=pin.sha, resolved=pin.resolved, pin=pin,
                         reasons=reasons)
        for pin in facts.pins
    }
    per_pin: dict[int, Counter] = {}
    for (_, commit_id), verdict in verdicts.items():
        per_pin.setdefault(commit_id, Counter())[verdict] += 1
    heads = [pin for pin in facts.pins if pin.role == "head"]
    return {
        "shape": SHAPE,
        "latest_commit_id": latest.commit_id if latest else None,
        "latest_sha": latest.sha if latest else None,
        "head_sha": heads[-1].sha if heads else None,
        "unique_from": {pin.sha: pin.unique_from for pin in facts.pins},
        "findings": findings,
        "counts": {kind: dict(tally) for kind, tally in counts.items()},
        # Commit id -> verdict -> how many findings got it there (current evidence only).
        "pin_verdicts": {
            str(pin.commit_id): {verdict: per_pin[pin.commit_id][verdict] for verdict in v.VERDICTS
                                 if per_pin.get(pin.commit_id, {}).get(verdict)}
            for pin in facts.pins
        },
        "gates": gates,
        "policy": facts.policy.as_dict(),
        "valid_until": until.isoformat() if (until := valid_until(facts)) else None,
    }
