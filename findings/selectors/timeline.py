"""Reading a timeline: a pull request's events or a repository's, brought up to date first (the
state of the PR's current generation is derived and stored if it is not, which writes its events),
so every interface (the site, the API, the feeds) shows the same events up to the same state."""
from django.db.models import F, Q

from findings.models import ReviewEvent
from findings.state.stored import pull_request_state, pull_request_states
from reviews.models import PullRequest


def pull_request_events(pull_request, *, since_generation: int | None = None):
    """The PR's events, oldest first, after its current state is stored; with `since_generation`,
    only those of later states (and the runs and follow-ups since)."""
    pull_request_state(pull_request_id=pull_request.pk)
    events = ReviewEvent.objects.filter(pull_request_id=pull_request.pk).select_related("actor", "pull_request__repository")
    if since_generation is not None:
        events = events.since_generation(since_generation)
    return events.order_by("id")


def repository_events(repository):
    """The repository's events, oldest first, after the states of its open pull requests that moved
    since their last events are stored (at most a page's worth of them per read)."""
    moved = (PullRequest.objects.filter(repository_id=repository.pk)
             .filter(Q(timeline_mark__isnull=True) | Q(generation__gt=F("timeline_mark__generation")))
             .values_list("pk", flat=True)[:50])
    pull_request_states(list(moved))
    return ReviewEvent.objects.filter(repository_id=repository.pk).select_related(
        "actor", "pull_request__repository").order_by("id")


def timelines_catch_up(*, limit: int = 200) -> int:
    """Store the states of the pull requests whose generation moved past their timeline's mark
    (which writes their events), at most `limit` of them, the longest waiting first. Returns how
    many were derived. Beat runs it every RECHECK_NOTIFY_BATCH_SECONDS, so a change nobody reads
    still reaches the timeline, the webhooks and the mail within about one batch window."""
    moved = list(PullRequest.objects.filter(Q(timeline_mark__isnull=True)
                                            | Q(generation__gt=F("timeline_mark__generation")))
                 .order_by(F("timeline_mark__generation").asc(nulls_first=True), "pk")
                 .values_list("pk", flat=True)[:limit])
    for pk in moved:
        pull_request_state(pull_request_id=pk)
    return len(moved)
