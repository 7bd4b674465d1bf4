"""A repository's follow-ups: what its merged pull requests left to do, with their verdict at the
default branch's head. Read-only here; the site marks and closes them."""
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.exceptions import ValidationError

from api import docs
from api.permissions import visible_to
from api.serializers.follow_ups import FollowUpSerializer
from api.views.reading import ReadMixin
from findings.models import FollowUp
from findings.selectors.follow_ups import STATE_FILTERS, repository_follow_ups
from reviews.models import Repository

STATE_PARAMETER = OpenApiParameter(
    "state", OpenApiTypes.STR, OpenApiParameter.QUERY,
    description="Keep one state: open, verified_fixed, fixed, closed; or unclosed (open and verified_fixed, what a "
    "CI job warns about).", enum=[*STATE_FILTERS, "unclosed"],
)


OVERDUE_PARAMETER = OpenApiParameter(
    "overdue", OpenApiTypes.BOOL, OpenApiParameter.QUERY,
    description="true: only the follow-ups past their due date and still to do, the soonest due first.",
)


@extend_schema(
    tags=["repositories"], parameters=[*docs.REPOSITORY_PATH, STATE_PARAMETER, OVERDUE_PARAMETER],
    responses={200: FollowUpSerializer(many=True), **docs.LIST_ERRORS},
)
class RepositoryFollowUpList(ReadMixin, generics.ListAPIView):
    """The follow-ups of a repository, newest first: each with its origin pull request, its age, its
    verdict at the default branch's head, where its evidence is now and who decided what."""

    serializer_class = FollowUpSerializer
    repository_field = "repository"
    filter_backends = []

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator has no URL kwargs
            return FollowUp.objects.none()
        repositories = visible_to(Repository.objects.all(), self.request, "pk")
        repository = get_object_or_404(repositories, slug=f"{self.kwargs['owner']}/{self.kwargs['name']}")
        state = self.request.query_params.get("state", "")
        if state and state != "unclosed" and state not in STATE_FILTERS:
            raise ValidationError({"state": f"Use one of {', '.join([*STATE_FILTERS, 'unclosed'])}."})
        overdue = self.request.query_params.get("overdue", "")
        if overdue not in ("", "true", "false"):
            raise ValidationError({"overdue": "Use true or false."})
        if overdue == "true":
            return repository_follow_ups(repository, unclosed=state == "unclosed",
                                         state="" if state == "unclosed" else state,
                                         overdue_at=timezone.now(), by_due_date=True)
        if state == "unclosed":
            return repository_follow_ups(repository, unclosed=True)
        return repository_follow_ups(repository, state=state)
