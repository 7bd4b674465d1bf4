"""A pull request's timeline and a repository's, as pages and as Atom feeds.

The pages follow every other page's doors (a repository the reader may not read is a 404). A feed
reader sends no session and, mostly, no header: a feed of a repository that anonymous readers may
not read takes an API token with the `read` scope as `?token=` (or `Authorization: Token`), and
answers 404 without one, as for a repository that does not exist."""
from django.contrib.syndication.views import Feed
from django.http import Http404
from django.http import JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.views.decorators.http import require_GET, require_POST

from access.permissions import Action, user_may
from access.tokens import api_token_reader
from core.vocabulary import events as ev
from findings.selectors.timeline import pull_request_events, repository_events
from notify.models import PullRequestVisit
from notify.visits import changes_since_visit, pull_request_mark_all_seen, pull_request_visit
from presentation.events import summarised
from reviews.models import PullRequest, Repository
from reviews.selectors import readable_repositories
from web.doors import pull_request_for, readable

FEED_LENGTH = 50


@require_GET
@readable
def pull_request_timeline_page(request, owner: str, name: str, number: int):
    pull_request = pull_request_for(request, owner, name, number)
    visit = PullRequestVisit.objects.filter(user=request.user, pull_request=pull_request).first() \
        if request.user.is_authenticated else None
    since = request.GET.get("since") == "last-visit" and visit is not None
    events = summarised(pull_request_events(pull_request, since_generation=visit.since if since else None))
    unseen = {event.pk for event in events if visit is not None and event.generation > visit.since}
    return render(request, "findings/timeline.html", {
        "pull_request": pull_request, "events": events, "unseen": unseen, "since": since,
        "since_link": visit is not None,
        "feed_url": reverse("findings:pull_request_feed", args=[owner, name, number]),
    })


@require_GET
@readable
def since_last_visit(request, owner: str, name: str, number: int):
    """What changed since this person's visit before this one, for the pages to mark (per person:
    asked for by the page, never kept in it). Records this visit."""
    pull_request = pull_request_for(request, owner, name, number)
    visit = pull_request_visit(user=request.user, pull_request=pull_request)
    if visit is None:
        return JsonResponse({"signed_in": False, "count": 0, "findings": {}})
    changes = changes_since_visit(visit, pull_request)
    findings: dict[str, list[str]] = {}
    for event in changes:
        if event.finding_number is not None:
            findings.setdefault(str(event.finding_number), []).append(event.summary)
    base = reverse("findings:timeline", args=[owner, name, number])
    response = JsonResponse({
        "signed_in": True, "since": visit.since, "generation": visit.generation, "count": len(changes),
        "findings": findings, "other": [event.summary for event in changes if event.finding_number is None],
        "timeline": f"{base}?since=last-visit", "seen_url": reverse("findings:mark_seen", args=[owner, name, number]),
        "csrf": get_token(request),
    })
    response["Cache-Control"] = "private, no-store"
    return response


@require_POST
@readable
def mark_all_seen(request, owner: str, name: str, number: int):
    pull_request = pull_request_for(request, owner, name, number)
    pull_request_mark_all_seen(user=request.user, pull_request=pull_request)
    if request.headers.get("Accept", "").startswith("application/json"):
        return JsonResponse({"count": 0})
    return redirect(pull_request.get_absolute_url())


@require_GET
@readable
def repository_timeline_page(request, owner: str, name: str):
    repository = get_object_or_404(readable_repositories(request.user), slug=f"{owner}/{name}")
    events = summarised(list(repository_events(repository).reverse()[:200]))[::-1]
    return render(request, "findings/repository_timeline.html", {
        "repository": repository, "events": events, "unseen": set(), "show_pull_request": True,
        "feed_url": reverse("findings:repository_feed", args=[owner, name]),
    })


def _feed_reader(request, repository):
    """Who reads the feed of `repository`: the session's user, else a token's; 404 otherwise."""
    if user_may(request.user, Action.READ, repository):
        return request.user
    header = request.headers.get("Authorization", "")
    secret = request.GET.get("token", "") or (header[6:] if header.startswith("Token ") else "")
    if secret and (user := api_token_reader(secret=secret, repository=repository)) is not None:
        return user
    raise Http404("No such repository.")


class EventFeed(Feed):
    feed_type = Atom1Feed

    def item_title(self, event):
        return f"{ev.event_kind_label(event.kind)}: {event.summary}"

    def item_description(self, event):
        return event.summary

    def item_link(self, event):
        return f"{event.pull_request.get_absolute_url()}timeline/#event-{event.pk}" if event.pull_request_id \
            else f"{event.repository.get_absolute_url()}timeline/#event-{event.pk}"

    def item_guid(self, event):
        return f"recheck-event-{event.pk}"

    item_guid_is_permalink = False

    def item_pubdate(self, event):
        return event.at

    def item_updateddate(self, event):
        return event.at

    def item_author_name(self, event):
        return event.actor.get_username() if event.actor_id and event.actor else "Recheck"


class PullRequestFeed(EventFeed):
    def get_object(self, request, owner: str, name: str, number: int):
        pull_request = get_object_or_404(PullRequest.objects.select_related("repository")
                                         .by_reference(f"{owner}/{name}", number))
        _feed_reader(request, pull_request.repository)
        return pull_request

    def title(self, pull_request):
        return f"{pull_request.reference}: review timeline"

    def link(self, pull_request):
        return f"{pull_request.get_absolute_url()}timeline/"

    def subtitle(self, pull_request):
        return f"What changed in the review of {pull_request.reference} ({pull_request.title})."

    def items(self, pull_request):
        events = pull_request_events(pull_request).select_related("repository")
        return summarised(list(events.reverse()[:FEED_LENGTH]))


class RepositoryFeed(EventFeed):
    def get_object(self, request, owner: str, name: str):
        repository = get_object_or_404(Repository, slug=f"{owner}/{name}")
        _feed_reader(request, repository)
        return repository

    def title(self, repository):
        return f"{repository.slug}: review timeline"

    def link(self, repository):
        return f"{repository.get_absolute_url()}timeline/"

    def subtitle(self, repository):
        return f"What changed in the reviews of {repository.slug}."

    def items(self, repository):
        events = repository_events(repository).select_related("repository")
        return summarised(list(events.reverse()[:FEED_LENGTH]))


# Function views, as every other route of the site (the URL classification names views by function).
def pull_request_feed(request, owner: str, name: str, number: int):
    return PullRequestFeed()(request, owner=owner, name=name, number=number)


def repository_feed(request, owner: str, name: str):
    return RepositoryFeed()(request, owner=owner, name=name)
