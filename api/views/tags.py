"""Tags: kinds of mistake, shared by every repository. The list and one tag, each counted over the
findings the request may read, and describing a tag."""
import re

from django.db.models import Count
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from access.permissions import Action
from api import docs
from api.permissions import request_reads_everything, request_repositories
from api.serializers.findings import TagSerializer
from api.serializers.writes import TagDescriptionRequestSerializer
from api.views.reading import ReadMixin
from api.views.writing import ActionView
from core.names import TAG_SLUG_RE
from findings.models import Tag
from findings.selectors.findings import tags_with_counts
from findings.services.tags_and_links import tag_describe


class TagReadMixin(ReadMixin):
    """Tags are shared by every repository; a limited token sees those its repositories' findings
    carry, counted over its own findings."""

    def get_queryset(self):
        if request_reads_everything(self.request):
            return tags_with_counts()
        return tags_with_counts(request_repositories(self.request))

    def filter_queryset(self, queryset):
        return super(ReadMixin, self).filter_queryset(queryset)


@extend_schema(tags=["tags"], responses={200: TagSerializer(many=True), **docs.LIST_ERRORS})
class TagList(TagReadMixin, generics.ListAPIView):
    """Tags: kinds of mistake, shared by every repository, with how many findings carry each."""

    serializer_class = TagSerializer
    ordering_fields = ["slug", "findings_count"]
    queryset = Tag.objects.none()  # for the schema: get_queryset answers


@extend_schema(
    tags=["tags"],
    parameters=[OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The tag's slug.")],
    responses={200: TagSerializer, **docs.DETAIL_ERRORS},
)
class TagDetail(TagReadMixin, generics.RetrieveAPIView):
    """A tag: its description, and where to list its findings (newest first)."""

    serializer_class = TagSerializer
    queryset = Tag.objects.none()  # for the schema: get_queryset answers
    lookup_field = "slug"


@extend_schema_view(
    put=extend_schema(
        tags=["tags"],
        operation_id="tag_describe",
        summary="Describe a tag",
        description=(
            "Sets what findings with this tag have in common, creating the tag when it is new (tags are "
            "shared by every repository). Needs the Reviewer role (writing findings) on a repository."
        ),
        parameters=[OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The tag's slug.")],
        request=TagDescriptionRequestSerializer,
        responses={200: TagSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class TagDescription(ActionView):
    required_action = Action.WRITE

    def put(self, request, slug: str):
        # Tags are shared; one used only in repositories the request may not read is not shown to
        # it (tags_with_counts), so it is not described by it either. A new slug makes a new tag.
        if not request_reads_everything(request) and re.fullmatch(TAG_SLUG_RE, slug) and (
            Tag.objects.filter(slug=slug).exists()
        ) and not (
            tags_with_counts(request_repositories(request)).filter(slug=slug).exists()
        ):
            raise NotFound(f"No tag {slug} is used here.")
        body = TagDescriptionRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        tag = tag_describe(slug=slug, description=body.validated_data["description"])
        tag = Tag.objects.annotate(findings_count=Count("findings")).get(pk=tag.pk)
        return Response(TagSerializer(tag, context={"request": request}).data)
