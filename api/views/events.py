"""A pull request's timeline and a repository's: their events, oldest first, cursor-paginated (a
tool that polls keeps the `next` link and follows it later for what happened since)."""
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError

from api import docs
from api.pagination import RecheckCursorPagination
from api.permissions import visible_to
from api.serializers.events import ReviewEventSerializer
from api.views.reading import ReadMixin
from core.vocabulary import events as ev
from findings.models import ReviewEvent
from findings.selectors.timeline import pull_request_events, repository_events
from notify.visits import pull_request_visit
from reviews.models import Repository

KIND_PARAMETER = OpenApiParameter(
    "kind", OpenApiTypes.STR, OpenApiParameter.QUERY, enum=list(ev.EVENT_KINDS),
    description="Keep the events of these kinds (comma-separated).",
)
SINCE_PARAMETER = OpenApiParameter(
    "since_generation", OpenApiTypes.STR, OpenApiParameter.QUERY,
    description="Keep the events of the pull request's states after this generation; `last-visit`: those since "
    "the token's user's visit before this one (on the site or here), and record this visit.",
)


class EventPagination(RecheckCursorPagination):
    ordering = "id"


class EventListMixin(ReadMixin):
    serializer_class = ReviewEventSerializer
    pagination_class = EventPagination
    filter_backends = []
    repository_field = "repository"

    def kinds_filtered(self, events):
        kinds = [kind for kind in self.request.query_params.get("kind", "").split(",") if kind]
        unknown = sorted(set(kinds) - set(ev.EVENT_KINDS))
        if unknown:
            raise ValidationError({"kind": f"Unknown kind {', '.join(unknown)}: use {', '.join(ev.EVENT_KINDS)}."})
        return events.filter(kind__in=kinds) if kinds else events

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "repository_slug": getattr(self, "repository_slug", "")}


@extend_schema(
    tags=["pull requests"], parameters=[*docs.PULL_REQUEST_PATH, KIND_PARAMETER, SINCE_PARAMETER],
    responses={200: ReviewEventSerializer(many=True), **docs.LIST_ERRORS},
)
class PullRequestEvents(EventListMixin, generics.ListAPIView):
    """The pull request's timeline: each change of its review (a finding recorded, a verdict or
    status that moved, the gate's answer, a run that failed, a follow-up), oldest first."""

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no URL kwargs
            return ReviewEvent.objects.none()
        pull_request = self.pull_request(owner=self.kwargs["owner"], name=self.kwargs["name"],
                                         number=self.kwargs["number"])
        self.repository_slug = pull_request.repository.slug
        since = self.request.query_params.get("since_generation")
        if since == "last-visit":
            visit = pull_request_visit(user=self.request.user, pull_request=pull_request)
            since = str(visit.since) if visit is not None else None
        if since is not None and not since.isdigit():
            raise ValidationError({"since_generation": "Give a generation (a whole number) or last-visit."})
        events = pull_request_events(pull_request, since_generation=int(since) if since is not None else None)
        return self.kinds_filtered(events)


@extend_schema(
    tags=["repositories"], parameters=[*docs.REPOSITORY_PATH, KIND_PARAMETER],
    responses={200: ReviewEventSerializer(many=True), **docs.LIST_ERRORS},
)
class RepositoryEvents(EventListMixin, generics.ListAPIView):
    """The repository's timeline: the events of all its pull requests and follow-ups, oldest first."""

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return ReviewEvent.objects.none()
        repositories = visible_to(Repository.objects.all(), self.request, "pk")
        repository = get_object_or_404(repositories, slug=f"{self.kwargs['owner']}/{self.kwargs['name']}")
        self.repository_slug = repository.slug
        return self.kinds_filtered(repository_events(repository))
