"""Checking a repository's follow-ups at the head of its default branch, with the verification
engine and the relocation a review uses (`findings.services.verification.checking`), and what
each check changes: a verdict, where the evidence is now, and the follow-up's state.

What a check may change is narrow (decision record 0010): evidence gone moves an open follow-up
to "verified fixed", waiting for a person to mark it; evidence back moves it to open again, or
flags one a person marked fixed as regressed. A check that could not run (an unreachable
repository, a head or merge commit the mirror cannot fetch, a default branch that is not there)
is an error and changes no state."""
import logging
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from access.audit import audit_record, writes
from core import vocabulary as v
from core.errors import RecheckError
from engine.git.history import is_ancestor
from engine.verification import EvidenceChecks
from findings.selectors.policy import follow_up_due_at, repository_policy
from findings.models import Evidence, FollowUp, FollowUpEvent
from findings.services.follow_ups.sweeps import SWEEP
from findings.services.submodules import SubmoduleMirrors
from findings.services.verification.checking import _check, _Context
from findings.services.verification.rows import EvidenceRow, FindingRow, Outcome, _error_outcome, _outcome
from findings.signals import follow_up_changed
from reviews.mirrors import FETCH_FAILED_PUBLIC, commits_resolve, repository_fetch, repository_reader
from reviews.models import Commit, Repository
from reviews.services import commit_get_or_create

logger = logging.getLogger(__name__)


@dataclass
class HeadCheck:
    """What one check of a repository's follow-ups did."""

    repository: Repository
    commit: Commit | None
    branch: str
    problem: str = ""
    changed: dict[int, str] = field(default_factory=dict)  # follow-up id -> its new state
    checked: int = 0

    def describe(self) -> str:
        at = self.commit.short_sha if self.commit else "the default branch"
        if self.problem:
            return f"{self.checked} follow-up(s) of {self.repository.slug} could not be checked at {at}: {self.problem}"
        return f"{self.checked} follow-up(s) of {self.repository.slug} checked at {at}; {len(self.changed)} changed state."


@writes("follow_up.verify", system=SWEEP)
def follow_ups_verify(*, repository: Repository, sha: str = "", fetch: bool = True) -> HeadCheck:
    """Check every follow-up of `repository` that is not closed at `sha` (a push's head, a merge
    commit) or, without one, at the head of the default branch, and record what changed. The
    mirror is fetched first (unless not `fetch`); a commit it cannot show is an error for every
    follow-up, never a fix."""
    follow_ups = list(
        FollowUp.objects.for_repository(repository).checked_on_the_default_branch()
        .select_related("finding__pull_request__repository", "checked_commit").order_by("pk")
    )
    branch = repository.default_branch
    fetch_problem = ""
    if fetch:
        try:
            repository_fetch(repository=repository)
        except RecheckError as error:
            logger.warning("Fetching %s failed: %s", repository.slug, error)
            fetch_problem = FETCH_FAILED_PUBLIC
    commit, outcomes, problem, note = _check_all(repository, follow_ups, sha, branch, fetch_problem)
    result = HeadCheck(repository, commit, branch, problem=problem, checked=len(follow_ups))
    _apply(result, follow_ups, outcomes, note)
    return result


def _head(reader, repository: Repository, sha: str, branch: str) -> str:
    if sha:
        try:
            return reader.resolve(sha)
        except RecheckError as error:
            raise RecheckError(f"commit {sha[:12]} is not in the mirror of {repository.slug}: {error}") from None
    try:
        return reader.resolve(f"refs/heads/{branch}")
    except RecheckError:
        raise RecheckError(
            f"the default branch {branch!r} is not in {repository.slug} (renamed or deleted?): set the repository's "
            "default branch to the one it uses now"
        ) from None


def _check_all(repository, follow_ups, sha, branch, fetch_problem):
    """(commit checked, {follow-up id: Outcome}, why nothing could be checked, a note on history)."""
    commit = commit_get_or_create(repository=repository, sha=sha) if sha else None
    by_pull_request: dict[int, list[FollowUp]] = {}
    for follow_up in follow_ups:
        by_pull_request.setdefault(follow_up.finding.pull_request_id, []).append(follow_up)
    evidence = _evidence(follow_ups)
    try:
        with repository_reader(repository) as reader:
            commits_resolve(repository=repository, reader=reader)
            target = _head(reader, repository, sha, branch)
            if commit is None or commit.sha != target:
                commit = commit_get_or_create(repository=repository, sha=target)
            note = _history_note(reader, follow_ups, target)
            checks = EvidenceChecks(reader, target)
            submodules = SubmoduleMirrors(fetch=False)
            numbered = []
            for group in by_pull_request.values():
                context = _Context(reader, target, group[0].finding.pull_request, submodules, checks,
                                   fetch_problem=fetch_problem)
                for follow_up in group:
                    items = evidence.get(follow_up.finding_id, [])
                    numbered.append((follow_up, [(item, _check(context, item)) for item in items]))
            results = checks.results()
            outcomes = {
                follow_up.pk: _outcome(_row(follow_up), [(item, results[number]) for item, number in items])
                for follow_up, items in numbered
            }
            return commit, outcomes, "", note
    except RecheckError as error:
        problem = f"repository unreachable: {fetch_problem}" if fetch_problem else str(error)
        outcomes = {
            follow_up.pk: _error_outcome(_row(follow_up), evidence.get(follow_up.finding_id, []), problem)
            for follow_up in follow_ups
        }
        return commit, outcomes, problem, ""


def _history_note(reader, follow_ups, target: str) -> str:
    """A default branch that was force-pushed: the head last checked is no longer in its history."""
    previous = {follow_up.checked_commit.sha for follow_up in follow_ups if follow_up.checked_commit}
    for sha in previous:
        try:
            if sha != target and not is_ancestor(reader, sha, target):
                return f"the default branch was rewritten: {sha[:8]} is no longer in its history"
        except RecheckError:
            return f"the default branch was rewritten: {sha[:8]} is gone from the repository"
    return ""


def _row(follow_up: FollowUp) -> FindingRow:
    finding = follow_up.finding
    return FindingRow(finding.pk, finding.pull_request_id, finding.status, finding.resolved_at, finding.evidence_version)


def _evidence(follow_ups) -> dict[int, list[EvidenceRow]]:
    rows = (
        Evidence.objects.filter(finding__in=[follow_up.finding_id for follow_up in follow_ups])
        .order_by("finding_id", "position")
        .values_list("pk", "finding_id", "kind", "commit__sha", "path", "start_line", "end_line", "text", "regex",
                     "expect", "sha", "submodule_repository_id", "reference_branch")
    )
    evidence: dict[int, list[EvidenceRow]] = {}
    for row in rows:
        item = EvidenceRow(*row)
        evidence.setdefault(item.finding_id, []).append(item)
    return evidence


def _places(follow_up: FollowUp, outcome: Outcome) -> list[dict]:
    """Where each evidence item is at the head; one that is gone says where it was last seen."""
    before = {place.get("evidence"): place for place in follow_up.places or []}
    places = []
    for item, result in outcome.results:
        if item.kind == Evidence.Kind.NOTE:
            state = v.UNCHECKED
        else:
            moved = v.is_moved(kind=item.kind, state=result.state, path=result.path or "", start_line=result.start_line,
                               recorded_path=item.path, recorded_start_line=item.start_line)
            state = v.shown_state(state=result.state, moved=moved)
        location = v.location(result.path or "", result.start_line, result.end_line) if result.state == v.HOLDS else ""
        last_seen = ""
        if result.state == v.GONE:
            earlier = before.get(item.pk, {})
            last_seen = earlier.get("location") or earlier.get("last_seen") or v.location(item.path, item.start_line)
        elif result.state == v.STATE_ERROR:
            # A check that could not run says nothing of where the evidence is: keep what was known.
            earlier = before.get(item.pk, {})
            last_seen = earlier.get("location") or earlier.get("last_seen", "")
        places.append({"evidence": item.pk, "kind": item.kind, "state": state, "location": location,
                       "last_seen": last_seen, "detail": result.detail or ""})
    return places


def _next_state(follow_up: FollowUp, verdict: str) -> tuple[str, bool]:
    """(state, regressed) after a check with `verdict`: only a verdict (never an error) moves it."""
    state, regressed = follow_up.state, follow_up.regressed
    if verdict == v.LIKELY_FIXED:
        if state == FollowUp.State.OPEN:
            state = FollowUp.State.VERIFIED_FIXED
        regressed = False
    elif verdict in v.STILL_HOLDS_VERDICTS:
        if state == FollowUp.State.VERIFIED_FIXED:
            state = FollowUp.State.OPEN
        if state == FollowUp.State.FIXED:
            regressed = True
    return state, regressed


@transaction.atomic
def _apply(result: HeadCheck, follow_ups: list[FollowUp], outcomes: dict[int, Outcome], note: str) -> None:
    now = timezone.now()
    commit = result.commit
    changes = []
    policy = repository_policy(result.repository)
    for follow_up in follow_ups:
        outcome = outcomes.get(follow_up.pk)
        if outcome is None:
            continue
        # Locked and read again: a person's mark or close in the meantime wins over this check.
        current = FollowUp.objects.select_for_update().get(pk=follow_up.pk)
        if current.state == FollowUp.State.CLOSED:
            continue
        state, regressed = _next_state(current, outcome.verdict)
        before_state, before_regressed = current.state, current.regressed
        current.places = _places(current, outcome)
        current.verdict, current.verdict_detail = outcome.verdict, outcome.detail
        current.checked_commit, current.checked_branch, current.checked_at = commit, result.branch, now
        current.state, current.regressed = state, regressed
        if state == FollowUp.State.VERIFIED_FIXED and before_state != state:
            current.fixed_commit = commit
        elif state == FollowUp.State.OPEN:
            current.fixed_commit = None
        came_back = (state == FollowUp.State.OPEN and before_state == FollowUp.State.VERIFIED_FIXED) or (
            regressed and not before_regressed)
        if came_back and policy.regression_restarts_clock:
            # Its evidence is back on the default branch: a whole period from now, as the policy says.
            current.due_at = follow_up_due_at(policy, current.origin, now)
        current.save()
        change = ""
        if state != before_state:
            change = "verified_fixed" if state == FollowUp.State.VERIFIED_FIXED else "reopened"
            FollowUpEvent.objects.create(
                follow_up=current, kind=FollowUpEvent.Kind.VERIFIED, from_state=before_state, to_state=state,
                verdict=outcome.verdict, commit=commit, note="; ".join(filter(None, [_summary(current), note])),
            )
        elif regressed and not before_regressed:
            change = "regressed"
            FollowUpEvent.objects.create(
                follow_up=current, kind=FollowUpEvent.Kind.REGRESSED, from_state=state, to_state=state,
                verdict=outcome.verdict, commit=commit, note="; ".join(filter(None, [_summary(current), note])),
            )
        if change:
            result.changed[current.pk] = state
            changes.append((current, change))
    if changes:
        audit_record(
            action="follow_up.verify", target=f"{result.repository.slug} at {commit.sha if commit else '?'}",
            repository=result.repository,
            changes={"state": [None, {str(follow_up.finding.reference): change for follow_up, change in changes}]},
        )
    for follow_up, change in changes:
        follow_up_changed.send(sender=FollowUp, follow_up=follow_up, change=change)


def _summary(follow_up: FollowUp) -> str:
    """Where the evidence is, in one phrase: 'moved to a.py:12', 'gone, last seen at a.py:3'."""
    parts = []
    for place in follow_up.places:
        if place["state"] == v.GONE:
            parts.append(f"gone, last seen at {place['last_seen']}" if place["last_seen"] else "gone")
        elif place["state"] in (v.HOLDS, v.MOVED) and place["location"]:
            parts.append(f"{v.state_label(place['state']).lower()} at {place['location']}")
    return ", ".join(parts)
