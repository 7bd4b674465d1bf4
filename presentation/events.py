"""One sentence for each event of a timeline: what the site's timeline, the feeds, the email and
the chat message all say of it."""
from core import vocabulary as v
from core.vocabulary import events as ev


def _verdict(value, reason=None) -> str:
    """A verdict as its badge says it, with its reason (an event's `from_reason`, `to_reason`):
    "Flaky" for an error whose check items say so."""
    return v.finding_verdict_label(value, reason or "") if value else "not verified"


def event_summary(kind: str, payload: dict, *, finding_number: int | None = None, sha: str = "",
                  actor: str = "") -> str:
    """What happened, in one sentence: "Finding 3: Still present → Likely fixed at 1a2b3c4d."."""
    at = f" at {sha[:8]}" if sha else ""
    who = f"Finding {finding_number}" if finding_number is not None else "The review"
    if kind == ev.FINDING_RECORDED:
        finding = payload.get("finding", {})
        return f"{who} recorded: a {finding.get('kind', 'finding')}, {v.status_label(finding.get('status', ''))}."
    if kind == ev.FINDING_REMOVED:
        return f"{who} removed from the review."
    if kind == ev.FINDING_VERDICT_CHANGED:
        before = _verdict(payload.get("from"), payload.get("from_reason"))
        return f"{who}: {before} → {_verdict(payload.get('to'), payload.get('to_reason'))}{at}."
    if kind == ev.FINDING_REGRESSED:
        after = _verdict(payload.get("to"), payload.get("to_reason"))
        return f"{who} was marked fixed, and its evidence holds again{at} ({after}): possibly regressed."
    if kind == ev.FINDING_REGRESSION_CLEARED:
        # Its verdict is the one it looked regressed with (a new one is a verdict change): never
        # an error, so there is no reason to say.
        return f"{who} no longer looks regressed{at}."
    if kind == ev.FINDING_STATUS_CHANGED:
        before = v.resolution_label(payload.get("from", {}).get("resolution", ""))
        after = v.resolution_label(payload.get("to", {}).get("resolution", ""))
        by = f" by {actor}" if actor else ""
        note = f" “{payload['note']}”" if payload.get("note") else ""
        return f"{who}: {before} → {after}{by}{at}.{note}"
    if kind == ev.GATE_CHANGED:
        to = payload.get("to") or {}
        answer = "mergeable" if to.get("mergeable") else ("not mergeable" if to.get("verified") else "not verified")
        return f"The merge gate{at}: {answer}. {payload.get('reason', '')}".strip()
    if kind == ev.GATE_OVERRIDDEN and payload.get("override"):
        return f"The merge gate: {v.override_sentence(payload['override'])}"
    if kind == ev.GATE_OVERRIDE_REVOKED and payload.get("override"):
        override = payload["override"]
        by = payload.get("revoked_by") or actor
        return (f"The override of the merge gate at {(override.get('commit') or '')[:8]} was revoked"
                f"{f' by {by}' if by else ''}: {v.override_sentence(override)}")
    if kind in (ev.RUN_FAILED, ev.RUN_REAPED):
        what = "failed" if kind == ev.RUN_FAILED else "was reaped"
        return f"Verification run {payload.get('run')} {what}{at}: {payload.get('message', '')}".strip()
    if kind in (ev.FOLLOW_UP_DUE_SOON, ev.FOLLOW_UP_OVERDUE) and payload.get("due_at"):
        when = payload["due_at"][:10]
        if kind == ev.FOLLOW_UP_OVERDUE:
            return f"{who}'s follow-up is overdue: it was due on {when}."
        return f"{who}'s follow-up is due soon: on {when}."
    if kind.startswith("follow_up."):
        state = v.follow_up_label(payload.get("state", ""))
        return f"{who}'s follow-up: {ev.event_kind_label(kind).lower()} ({state}){at}."
    return f"{ev.event_kind_label(kind)}{at}."


def summarised(events):
    """`events` (ReviewEvent rows) each given its `summary`; returns them as a list."""
    events = list(events)
    for event in events:
        event.summary = event_summary(event.kind, event.payload, finding_number=event.finding_number, sha=event.sha,
                                      actor=event.actor.get_username() if event.actor_id and event.actor else "")
    return events


def event_data(event, *, site_url: str = "") -> dict:
    """An event as every outgoing channel gives it (a webhook's `data.events`, the email's table):
    the fields the API's events list gives (api.serializers.events), and a link to it on the site."""
    path = (f"{event.pull_request.get_absolute_url()}timeline/#event-{event.pk}" if event.pull_request_id
            else f"{event.repository.get_absolute_url()}timeline/#event-{event.pk}")
    return {
        "id": event.pk,
        "kind": event.kind,
        "kind_label": ev.event_kind_label(event.kind),
        "cause": event.cause,
        "actor": event.actor.get_username() if event.actor_id and event.actor else None,
        "at": event.at.isoformat().replace("+00:00", "Z"),
        "repository": event.repository.slug,
        "pull_request": event.pull_request.number if event.pull_request_id else None,
        "generation": event.generation,
        "finding_number": event.finding_number,
        "sha": event.sha,
        "payload": event.payload,
        "summary": getattr(event, "summary", None) or summarised([event])[0].summary,
        "url": f"{site_url}{path}",
    }
