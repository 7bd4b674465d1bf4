"""Repositories: the list, one repository addressed as on the forge (owner/name), the figures its
page shows across its pull requests, every finding ever recorded on one of its files, and turning
reporting to GitHub on or off for it."""
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.response import Response
from rest_framework.views import APIView

from access.permissions import Action
from api import docs
from api.permissions import object_action_check, visible_to
from api.serializers.repositories import (
    FileFindingsSerializer,
    PublishingSerializer,
    RepositoryFiguresSerializer,
    RepositorySerializer,
)
from api.views.reading import ReadMixin
from api.views.writing import ActionView
from findings.selectors.figures import file_findings, repository_figures
from forge.follow_up_issues.services import follow_up_issues_enabled, follow_up_issues_update
from reviews.models import Repository
from reviews.services import repository_publishing_update


@extend_schema(tags=["repositories"], responses={200: RepositorySerializer(many=True), **docs.LIST_ERRORS})
class RepositoryList(ReadMixin, generics.ListAPIView):
    """Repositories whose pull requests were reviewed."""

    queryset = Repository.objects.order_by("slug")
    serializer_class = RepositorySerializer
    ordering_fields = ["slug", "created_at"]
    repository_field = "pk"


@extend_schema(
    tags=["repositories"], parameters=docs.REPOSITORY_PATH, responses={200: RepositorySerializer, **docs.DETAIL_ERRORS}
)
class RepositoryDetail(ReadMixin, generics.RetrieveAPIView):
    """A repository, addressed as on the forge: owner/name."""

    serializer_class = RepositorySerializer
    queryset = Repository.objects.all()
    repository_field = "pk"

    def get_object(self):
        slug = f"{self.kwargs['owner']}/{self.kwargs['name']}"
        return get_object_or_404(self.filter_queryset(self.get_queryset()), slug=slug)


@extend_schema(
    tags=["repositories"],
    parameters=docs.REPOSITORY_PATH,
    responses={200: RepositoryFiguresSerializer, **docs.DETAIL_ERRORS},
)
class RepositoryFigures(ReadMixin, APIView):
    """What the repository's page shows, across its pull requests: its open blockers by age, how
    long fixes took, how findings ended, the files with the most findings and the tags that recur."""

    def get(self, request, owner: str, name: str):
        repository = get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")
        return Response(RepositoryFiguresSerializer(repository_figures(repository), context={"request": request}).data)


@extend_schema(
    tags=["repositories"],
    parameters=docs.REPOSITORY_PATH
    + [OpenApiParameter("path", OpenApiTypes.STR, OpenApiParameter.PATH, description="A file path in the repository.")],
    responses={200: FileFindingsSerializer, **docs.DETAIL_ERRORS},
)
class RepositoryFile(ReadMixin, APIView):
    """Every finding ever recorded on a file, across pull requests, including under the names
    verification saw it have before or after a rename."""

    def get(self, request, owner: str, name: str, path: str):
        repository = get_object_or_404(visible_to(Repository.objects.all(), request, "pk"), slug=f"{owner}/{name}")
        return Response(FileFindingsSerializer(file_findings(repository, path), context={"request": request}).data)


@extend_schema_view(
    patch=extend_schema(
        tags=["repositories"],
        operation_id="repository_publishing_update",
        summary="Turn reporting to GitHub on or off for a repository",
        description=(
            "With `publish_checks`, every verified head gets a \"Recheck\" check run (with a GitHub App; with "
            "only a token, a `recheck` commit status). With `publish_comment`, the pull request gets one "
            "comment, edited after each verification. Both are off until turned on. Needs "
            "the Admin role on the repository (or `reviews.change_repository` instance-wide), and a token needs "
            "the `settings` scope."
        ),
        parameters=docs.REPOSITORY_PATH,
        request=PublishingSerializer,
        responses={200: RepositorySerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class RepositoryPublishing(ActionView):
    required_action = Action.SETTINGS
    audit_action = "repository.settings"

    def patch(self, request, owner: str, name: str):
        repositories = visible_to(Repository.objects.all(), request, "pk")
        repository = get_object_or_404(repositories, slug=f"{owner}/{name}")
        object_action_check(request, self, repository)
        body = PublishingSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        settings = dict(body.validated_data)
        follow_up_issues = settings.pop("follow_up_issues", None)
        repository = repository_publishing_update(repository=repository, **settings)
        if follow_up_issues is not None:
            follow_up_issues_update(actor=request.user, repository=repository, open_issues=follow_up_issues)
        data = RepositorySerializer(repository, context={"request": request}).data
        return Response({**data, "follow_up_issues": follow_up_issues_enabled(repository)})
