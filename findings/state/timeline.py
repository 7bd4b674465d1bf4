"""A pull request's timeline from its stored states: what changed between the state its events go
up to and the one being stored becomes events, in the transaction that stores it.

`snapshot` keeps what an event speaks of (each finding's number, kind, status and how it got it,
verdict and why it is an error, possibly regressed; the gate at the head; the overrides of the gate
at the PR's pinned commits, so that one made or revoked is an event of its own); `diff` turns two
snapshots into events, plain Python over plain values; `replay` applies events to a snapshot, so
that a test can show that the events since the first state, replayed over it, give the current
one. `timeline_record` does it under a lock on the pull request's `TimelineMark`: two readers
storing states of one PR take turns, and a state at or before the mark writes nothing, so one
change gives one event however often it is derived."""
import copy

from django.db.models import Max

from core.vocabulary import events as ev
from findings.models import FindingEvent, GateOverride, ReviewEvent, TimelineMark
from findings.signals import events_recorded
from reviews.models import PullRequest

EMPTY = {"findings": {}, "latest_sha": None, "head_sha": None, "gate": None, "overrides": {}}
OVERRIDE_FIELDS = ("by", "reason", "note", "commit", "at")
FINDING_FIELDS = ("number", "kind", "status", "resolution", "verdict", "verdict_reason", "possibly_regressed")


def snapshot(state: dict) -> dict:
    """The part of a stored state (`findings.state.derivation.derive`) that events speak of."""
    head = state.get("head_sha")
    gate = state.get("gates", {}).get(head) if head else None
    return {
        # A stored state that gives no reason for a finding gives none: '', as the derivation writes it.
        "findings": {pk: {**{name: finding.get(name) for name in FINDING_FIELDS},
                          "verdict_reason": finding.get("verdict_reason") or ""}
                     for pk, finding in state.get("findings", {}).items()},
        "latest_sha": state.get("latest_sha"),
        "head_sha": head,
        "gate": {"mergeable": gate["mergeable"], "verified": gate["verified"]} if gate else None,
        # Each override of the gate in force, by its id: the gates of the pinned commits say them.
        "overrides": {str(answer["overridden"]["id"]): {name: answer["overridden"][name] for name in OVERRIDE_FIELDS}
                      for answer in state.get("gates", {}).values() if answer.get("overridden")},
    }


def diff(old: dict, new: dict, *, gate_reason: str = "") -> list[dict]:
    """The events that take snapshot `old` to `new`: each a dict of kind, finding_id,
    finding_number, sha, payload and the key that makes it one (before the generation is added).
    A finding's events carry its state after them (`payload["finding"]`), the gate's its answer; a
    verdict's its reason before and after (`from_reason`, `to_reason`) beside `from` and `to`."""
    changes = []
    sha = new.get("latest_sha") or ""
    old_findings, new_findings = old.get("findings", {}), new.get("findings", {})
    for pk in sorted(new_findings, key=lambda key: new_findings[key]["number"]):
        after = new_findings[pk]
        before = old_findings.get(pk)

        def change(kind, payload, *, at=sha, pk=pk, after=after):
            changes.append({"kind": kind, "finding_id": int(pk), "finding_number": after["number"], "sha": at or "",
                            "payload": {**payload, "finding": {"id": int(pk), **after}}, "key": f"{kind}:{pk}"})

        if before is None:
            change(ev.FINDING_RECORDED, {})
            continue
        if (before["status"], before["resolution"]) != (after["status"], after["resolution"]):
            change(ev.FINDING_STATUS_CHANGED,
                   {"from": {"status": before["status"], "resolution": before["resolution"]},
                    "to": {"status": after["status"], "resolution": after["resolution"]}}, at="")
        # Why an error verdict is one (waiting for CI, not run, flaky) beside each verdict. A mark stored
        # before reasons were on the timeline has none for its findings: unknown (null), and the
        # reason the new state gives is their baseline, as `_override_changes` takes the overrides
        # in force, so an upgrade is no burst of events.
        known = "verdict_reason" in before
        verdict = {"from": before["verdict"], "to": after["verdict"],
                   "from_reason": before["verdict_reason"] if known else None, "to_reason": after["verdict_reason"]}
        if after["possibly_regressed"] and not before["possibly_regressed"]:
            # A fixed finding's evidence holds again: its own kind, with the verdict that says so.
            change(ev.FINDING_REGRESSED, verdict)
        elif before["verdict"] != after["verdict"] or (known and before["verdict_reason"] != after["verdict_reason"]):
            # A new reason alone is news too: the check now has a report, or another one.
            change(ev.FINDING_VERDICT_CHANGED, verdict)
        elif before["possibly_regressed"] and not after["possibly_regressed"]:
            change(ev.FINDING_REGRESSION_CLEARED, verdict)
        if (before["number"], before["kind"]) != (after["number"], after["kind"]) and not any(
            item["finding_id"] == int(pk) for item in changes
        ):
            # Renumbered or made a blocker by an import: no kind of its own, but the replay needs it.
            change(ev.FINDING_STATUS_CHANGED,
                   {"from": {"status": before["status"], "resolution": before["resolution"]},
                    "to": {"status": after["status"], "resolution": after["resolution"]}}, at="")
    for pk in sorted(set(old_findings) - set(new_findings), key=int):
        gone = old_findings[pk]
        changes.append({"kind": ev.FINDING_REMOVED, "finding_id": int(pk), "finding_number": gone["number"], "sha": "",
                        "payload": {"finding": {"id": int(pk), **gone}}, "key": f"{ev.FINDING_REMOVED}:{pk}"})
    if old.get("gate") != new.get("gate"):
        changes.append({"kind": ev.GATE_CHANGED, "finding_id": None, "finding_number": None,
                        "sha": new.get("head_sha") or "",
                        "payload": {"from": old.get("gate"), "to": new["gate"], "reason": gate_reason,
                                    "head_sha": new.get("head_sha"), "latest_sha": new.get("latest_sha")},
                        "key": ev.GATE_CHANGED})
    changes += _override_changes(old, new)
    return changes


def _override_changes(old: dict, new: dict) -> list[dict]:
    """An override made or no longer in force (revoked) between `old` and `new`, with its who,
    reason, note and commit. A snapshot stored before overrides were on the timeline has none to
    compare with: it is their baseline, as an older review's first state is its findings'."""
    if "overrides" not in old:
        return []
    before, after = old["overrides"], new.get("overrides", {})
    changes = []
    for kind, ids, side in ((ev.GATE_OVERRIDDEN, set(after) - set(before), after),
                            (ev.GATE_OVERRIDE_REVOKED, set(before) - set(after), before)):
        for pk in sorted(ids, key=int):
            override = {"id": int(pk), **side[pk]}
            changes.append({"kind": kind, "finding_id": None, "finding_number": None, "sha": override["commit"] or "",
                            "payload": {"override": override, "commit": override["commit"]},
                            "key": f"{kind}:{pk}"})
    return changes


def replay(start: dict, events) -> dict:
    """`start` with `events` (dicts of kind and payload, in order) applied: what they lead to
    (`replayed`). Events of kinds that are not about the state (a run, a follow-up) change nothing."""
    current = copy.deepcopy(start)
    for event in events:
        kind, payload = event["kind"], event["payload"]
        if kind == ev.FINDING_REMOVED:
            current["findings"].pop(str(payload["finding"]["id"]), None)
        elif kind in ev.STATE_EVENT_KINDS and "finding" in payload:
            finding = dict(payload["finding"])
            current["findings"][str(finding.pop("id"))] = finding
        elif kind == ev.GATE_CHANGED:
            current["gate"] = payload["to"]
        elif kind == ev.GATE_OVERRIDDEN:
            override = dict(payload["override"])
            current.setdefault("overrides", {})[str(override.pop("id"))] = override
        elif kind == ev.GATE_OVERRIDE_REVOKED:
            current.setdefault("overrides", {}).pop(str(payload["override"]["id"]), None)
    return replayed(current)


def replayed(snapshot_: dict) -> dict:
    """What events carry of a snapshot (each finding, the gate's answer at the head, the overrides
    in force): which commit is the head is said by the events' `sha`, not replayed."""
    return {"findings": snapshot_["findings"], "gate": snapshot_["gate"], "overrides": snapshot_.get("overrides", {})}


def timeline_record(*, pull_request_id: int, repository_id: int, generation: int, state: dict) -> list[ReviewEvent]:
    """Write the events from the PR's last evented state to `state` (stored as `generation`), inside
    the caller's transaction. Nothing when the mark is already at or past `generation`."""
    mark = TimelineMark.objects.select_for_update().filter(pull_request_id=pull_request_id).first()
    if mark is not None and mark.generation >= generation:
        return []
    new = snapshot(state)
    head_gate = state.get("gates", {}).get(new["head_sha"]) if new["head_sha"] else None
    changes = diff(mark.snapshot if mark is not None and mark.snapshot is not None else EMPTY, new,
                   gate_reason=head_gate["reason"] if head_gate else "")
    if mark is None:
        TimelineMark.objects.create(pull_request_id=pull_request_id, generation=generation, snapshot=new)
    else:
        TimelineMark.objects.filter(pk=pull_request_id).update(generation=generation, snapshot=new)
    if not changes or (mark is not None and mark.snapshot is None):
        return []  # nothing changed, or the baseline of a review older than the timeline
    decided = _who_decided({change["finding_id"] for change in changes
                            if change["kind"] in (ev.FINDING_STATUS_CHANGED, ev.FINDING_RECORDED)})
    overriders = _who_overrode({change["payload"]["override"]["id"] for change in changes
                                if change["kind"] in OVERRIDE_KINDS})
    rows = []
    for change in changes:
        actor_id, note, source = None, "", ""
        if change["kind"] in OVERRIDE_KINDS:
            by_id, revoked_by_id, revoked_by = overriders.get(change["payload"]["override"]["id"], (None, None, ""))
            actor_id = by_id if change["kind"] == ev.GATE_OVERRIDDEN else revoked_by_id
            if change["kind"] == ev.GATE_OVERRIDE_REVOKED:
                change["payload"]["revoked_by"] = revoked_by
        if change["kind"] == ev.FINDING_STATUS_CHANGED or change["kind"] == ev.FINDING_RECORDED:
            actor_id, note, source, sha = decided.get((change["finding_id"], change["kind"]), (None, "", "", ""))
            if change["kind"] == ev.FINDING_STATUS_CHANGED:
                change["payload"].update({"note": note, "source": source})
                change["sha"] = sha or change["sha"]
        # An override is made and revoked by a person (or an operator, who has no account).
        person = actor_id is not None or source in ("site", "api", "admin", "import", "command") \
            or change["kind"] in OVERRIDE_KINDS
        # Unique in the repository: a finding is recorded on a PR once; the rest once per state.
        key = f"pr{pull_request_id}:{change['key']}" if change["kind"] in (ev.FINDING_RECORDED, ev.FINDING_REMOVED) \
            else f"pr{pull_request_id}:{generation}:{change['key']}"
        rows.append(ReviewEvent(
            repository_id=repository_id, pull_request_id=pull_request_id, generation=generation, kind=change["kind"],
            cause=ev.CAUSE_PERSON if person else ev.CAUSE_RECHECK, actor_id=actor_id,
            finding_id=change["finding_id"], finding_number=change["finding_number"], sha=change["sha"],
            payload=change["payload"], key=key,
        ))
    created = ReviewEvent.objects.bulk_create(rows)
    events_recorded.send(sender=ReviewEvent, events=created)
    return created


OVERRIDE_KINDS = (ev.GATE_OVERRIDDEN, ev.GATE_OVERRIDE_REVOKED)


def _who_overrode(override_ids: set) -> dict:
    """Override id -> (who made it, who revoked it, their name): the account each event names."""
    if not override_ids:
        return {}
    return {pk: (by_id, revoked_by_id, label) for pk, by_id, revoked_by_id, label in GateOverride.objects.filter(
        pk__in=override_ids).values_list("pk", "by_id", "revoked_by_id", "revoked_by_label")}


def _who_decided(finding_ids: set) -> dict:
    """(finding id, event kind) -> (actor id, note, source, commit SHA) of the finding's latest
    status change (and of its creation): who caused its status event."""
    finding_ids.discard(None)
    if not finding_ids:
        return {}
    latest = (FindingEvent.objects.filter(finding_id__in=finding_ids).values("finding_id", "kind")
              .annotate(last=Max("id")).values("last"))
    found = {}
    for finding_id, kind, actor_id, note, source, sha in FindingEvent.objects.filter(pk__in=latest).values_list(
        "finding_id", "kind", "actor_id", "note", "source", "commit__sha"
    ):
        event_kind = ev.FINDING_RECORDED if kind == FindingEvent.Kind.CREATED else ev.FINDING_STATUS_CHANGED
        if kind != FindingEvent.Kind.EDITED:
            found[(finding_id, event_kind)] = (actor_id, note, source, sha or "")
    return found


def timeline_event_write(*, repository_id: int, pull_request_id: int | None, kind: str, key: str, payload: dict,
                         sha: str = "", actor_id: int | None = None, finding_id: int | None = None,
                         finding_number: int | None = None) -> ReviewEvent | None:
    """One event that is not a difference of states (a run that failed, a follow-up that moved),
    written once by its key inside the caller's transaction; None when it was written already."""
    if ReviewEvent.objects.filter(repository_id=repository_id, key=key).exists():
        return None
    generation = 0
    if pull_request_id is not None:
        generation = PullRequest.objects.filter(pk=pull_request_id).values_list("generation", flat=True).first() or 0
    event = ReviewEvent.objects.create(
        repository_id=repository_id, pull_request_id=pull_request_id, generation=generation, kind=kind,
        cause=ev.CAUSE_PERSON if actor_id else ev.CAUSE_RECHECK, actor_id=actor_id, finding_id=finding_id,
        finding_number=finding_number, sha=sha, payload=payload, key=key,
    )
    events_recorded.send(sender=ReviewEvent, events=[event])
    return event
