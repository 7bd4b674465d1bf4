"""Reading follow-ups: a repository's list, one follow-up as every interface shows it (the site's
Follow-ups page, the API and `recheck-gate` read `follow_up_summary`, so they give one answer),
its whole history, and how many were open over time."""
from datetime import date, datetime, time, timedelta

from django.db.models import Prefetch
from django.utils import timezone

from core import vocabulary as v
from findings.models import FindingEvent, FollowUp, FollowUpEvent
from reviews.models import Repository

STATE_FILTERS = {"open": FollowUp.State.OPEN, "verified_fixed": FollowUp.State.VERIFIED_FIXED,
                 "fixed": FollowUp.State.FIXED, "closed": FollowUp.State.CLOSED}


def repository_follow_ups(repository: Repository, *, state: str = "", unclosed: bool = False,
                          overdue_at: datetime | None = None, by_due_date: bool = False):
    """The repository's follow-ups, newest first (or the soonest due first), with what a row shows
    (a fixed number of queries whatever their number). `state` keeps one state; `unclosed`, those
    still to do; `overdue_at`, those overdue at that moment."""
    follow_ups = FollowUp.objects.for_repository(repository).with_origin()
    if unclosed:
        follow_ups = follow_ups.unclosed()
    if state:
        follow_ups = follow_ups.filter(state=STATE_FILTERS[state])
    if overdue_at is not None:
        follow_ups = follow_ups.overdue(overdue_at)
    return follow_ups.by_due_date() if by_due_date else follow_ups.order_by("-opened_at", "-id")


def _sha(commit) -> str | None:
    return commit.sha if commit is not None else None


def _where(place: dict) -> str:
    """Where one evidence item is now, in words: 'src/a.py:3–4', 'gone, last seen at src/a.py:3'."""
    state = place.get("state", "")
    if state == v.GONE:
        return f"gone, last seen at {place['last_seen']}" if place.get("last_seen") else "gone"
    if state == v.STATE_ERROR:
        return "could not be checked" + (f", last seen at {place['last_seen']}" if place.get("last_seen") else "")
    if state == v.UNCHECKED:
        return "not checkable by machine"
    return place.get("location") or v.state_label(state).lower()


def follow_up_due_state(follow_up: FollowUp, now: datetime) -> str:
    """overdue, due_soon, due or '' (no due date, or nothing left to do): the one answer the
    page, the API and `recheck-gate` give, as `FollowUpQuerySet.overdue` counts it."""
    done = follow_up.state == FollowUp.State.CLOSED or (follow_up.state == FollowUp.State.FIXED
                                                        and not follow_up.regressed)
    return v.due_state(follow_up.due_at, now, done=done)


def follow_up_summary(follow_up: FollowUp, *, now: datetime | None = None) -> dict:
    """One follow-up as the site, the API and the CI client show it: its origin (finding and pull
    request), its age, its verdict at the default branch's head and where its evidence is now, and
    who decided what. Plain values only."""
    now = now or timezone.now()
    finding, pull_request = follow_up.finding, follow_up.pull_request
    return {
        "id": follow_up.pk,
        "finding": finding.reference,
        "finding_number": finding.number,
        "title": finding.title,
        "kind": finding.kind,
        "origin": follow_up.origin,
        "origin_label": v.follow_up_origin_label(follow_up.origin),
        "pull_request": pull_request.reference,
        "pull_request_number": pull_request.number,
        "merge_commit": _sha(follow_up.merge_commit),
        "opened_at": follow_up.opened_at.isoformat(),
        "age_days": max(0, (now - follow_up.opened_at).days),
        "state": follow_up.state,
        "state_label": v.follow_up_label(follow_up.state),
        "due_at": follow_up.due_at.isoformat() if follow_up.due_at else None,
        "due_state": (due := follow_up_due_state(follow_up, now)),
        "due_label": v.due_label(due),
        "regressed": follow_up.regressed,
        "verdict": follow_up.verdict or None,
        "verdict_label": v.verdict_label(follow_up.verdict or None),
        "verdict_detail": follow_up.verdict_detail,
        "checked_commit": _sha(follow_up.checked_commit),
        "checked_branch": follow_up.checked_branch,
        "checked_at": follow_up.checked_at.isoformat() if follow_up.checked_at else None,
        "evidence": [
            {"state": place.get("state", ""), "where": _where(place), "location": place.get("location", ""),
             "last_seen": place.get("last_seen", ""), "detail": place.get("detail", "")}
            for place in follow_up.places or []
        ],
        "fixed_commit": _sha(follow_up.fixed_commit),
        "decided_by": follow_up.decided_by.get_username() if follow_up.decided_by else None,
        "decided_at": follow_up.decided_at.isoformat() if follow_up.decided_at else None,
        "reason": follow_up.reason,
    }


def follow_up_history(follow_up: FollowUp) -> list[dict]:
    """The follow-up's whole life in order: its finding recorded and decided in review, merged with
    the pull request, each check on the default branch that changed its state, the mark or the
    close. Each entry: at, what, commit (a SHA or None), who, note."""
    entries = []
    finding_events = (FindingEvent.objects.filter(finding_id=follow_up.finding_id)
                      .select_related("actor", "commit").order_by("at", "id"))
    for event in finding_events:
        if event.kind == FindingEvent.Kind.CREATED:
            what = "Recorded in review"
        elif event.kind == FindingEvent.Kind.EDITED:
            what = "Edited"
        else:
            what = f"{v.status_label(event.to_status)} (was {v.status_label(event.from_status).lower()})"
        entries.append({"at": event.at, "what": what, "commit": _sha(event.commit),
                        "who": event.actor.get_username() if event.actor else "", "note": event.note})
    events = follow_up.events.select_related("actor", "commit").order_by("at", "id")
    for event in events:
        what = event.get_kind_display()
        if event.kind in (FollowUpEvent.Kind.VERIFIED, FollowUpEvent.Kind.REGRESSED):
            what += f": {v.verdict_phrase(event.verdict)}, {v.follow_up_label(event.to_state).lower()}"
        entries.append({"at": event.at, "what": what, "commit": _sha(event.commit),
                        "who": event.actor.get_username() if event.actor else "", "note": event.note})
    entries.sort(key=lambda entry: entry["at"])
    return entries


def follow_up_of_finding(finding) -> FollowUp | None:
    return (FollowUp.objects.with_origin().filter(finding=finding)
            .prefetch_related(Prefetch("events", queryset=FollowUpEvent.objects.order_by("at", "id"))).first())


def open_follow_ups_over_time(repository: Repository, *, today: date | None = None, days: int = 90) -> list[tuple[date, int]]:
    """How many follow-ups of the repository were still to do (open or verified, not yet marked or
    closed) at the end of each day, over the last `days` days: from the day each opened to the day
    a person decided it."""
    today = today or timezone.localdate()
    start = today - timedelta(days=days - 1)
    # Each follow-up adds one from the day it opened and takes it away from the day it was decided
    # (a change a day, summed as it goes): time linear in the follow-ups, not their number times the
    # days, which at thousands of follow-ups was seconds.
    changes = [0] * (days + 1)
    spans = FollowUp.objects.for_repository(repository).values_list("opened_at", "decided_at")
    for opened_at, decided_at in spans.iterator(chunk_size=2000):
        opened = max((timezone.localdate(opened_at) - start).days, 0)
        decided = days if decided_at is None else (timezone.localdate(decided_at) - start).days
        if opened < days and decided > opened:
            changes[opened] += 1
            changes[min(decided, days)] -= 1
    points, count = [], 0
    for offset in range(days):
        count += changes[offset]
        points.append((start + timedelta(days=offset), count))
    return points


def overdue_follow_ups_over_time(repository: Repository, *, now: datetime | None = None,
                                 days: int = 90) -> list[tuple[date, int]]:
    """How many follow-ups of the repository were overdue at the end of each day (today: now),
    over the last `days` days: past their due date and not yet decided by a person (one marked
    fixed whose evidence came back counts again). A due date moved by a regression counts from its
    new date: the history keeps no older one."""
    now = now or timezone.now()
    today = timezone.localdate(now)
    spans = list(FollowUp.objects.for_repository(repository).filter(due_at__isnull=False)
                 .values_list("due_at", "decided_at", "state", "regressed"))
    points = []
    for offset in range(days - 1, -1, -1):
        day = today - timedelta(days=offset)
        end = now if offset == 0 else timezone.make_aware(datetime.combine(day + timedelta(days=1), time.min))
        count = sum(
            1 for due_at, decided_at, state, regressed in spans
            if due_at <= end and (decided_at is None or decided_at > end or (state == "fixed" and regressed))
        )
        points.append((day, count))
    return points
