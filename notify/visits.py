"""Since you last looked: each person's latest visit to a pull request, and what changed since the
visit before it. Per person, so never part of a page kept for everyone (web.pagecache): the pages
ask for it on their own (`since.json`) and mark what it names."""
from django.db import transaction

from findings.selectors.timeline import pull_request_events
from notify.models import PullRequestVisit
from presentation.events import summarised


def pull_request_visit(*, user, pull_request) -> PullRequestVisit | None:
    """Record that `user` looks at the PR now (its events brought up to date first): the changes
    marked are those since the generation they had seen before this visit. None for anonymous."""
    if not user.is_authenticated:
        return None
    pull_request_events(pull_request)  # the current state, and so its events, stored first
    pull_request.refresh_from_db(fields=["generation"])
    current = pull_request.generation
    with transaction.atomic():
        visit = PullRequestVisit.objects.select_for_update().filter(user=user, pull_request=pull_request).first()
        if visit is None:
            return PullRequestVisit.objects.create(user=user, pull_request=pull_request, generation=current,
                                                   since=current)
        if current > visit.generation:
            visit.since, visit.generation = visit.generation, current
            visit.save()
    return visit


def pull_request_mark_all_seen(*, user, pull_request) -> None:
    """Clear the marks: everything up to now is seen."""
    if not user.is_authenticated:
        return
    pull_request.refresh_from_db(fields=["generation"])
    current = pull_request.generation
    PullRequestVisit.objects.update_or_create(user=user, pull_request=pull_request,
                                              defaults={"generation": current, "since": current})


def changes_since_visit(visit: PullRequestVisit | None, pull_request) -> list:
    """The PR's events after the generation the visit marks changes since, with their sentences."""
    if visit is None:
        return []
    return summarised(pull_request_events(pull_request, since_generation=visit.since))
