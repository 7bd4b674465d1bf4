"""Tags: kinds of mistake. A slug is shared by every repository; what it means is each
repository's own description. The list and one tag, each counted over the findings the request
may read and described only by the repositories it may read, and describing a tag in one
repository."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from access.permissions import Action
from api import docs
from api.permissions import object_action_check, request_reads_everything, request_repositories
from api.serializers.findings import TagSerializer
from api.serializers.writes import TagDescriptionRequestSerializer
from api.views.reading import ReadMixin
from api.views.writing import ActionView
from core.names import tag_slug_validate
from findings.models import Tag
from findings.selectors.findings import tags_with_counts
from findings.services.tags_and_links import tag_describe


def _request_tags(request):
    """The tags the request sees, counted and described over the repositories it may read."""
    if request_reads_everything(request):
        return tags_with_counts()
    return tags_with_counts(request_repositories(request))


class TagReadMixin(ReadMixin):
    """A limited token sees the tags its repositories' findings carry or its repositories
    describe, counted over its own findings."""

    def get_queryset(self):
        return _request_tags(self.request)

    def filter_queryset(self, queryset):
        return super(ReadMixin, self).filter_queryset(queryset)


@extend_schema(tags=["tags"], responses={200: TagSerializer(many=True), **docs.LIST_ERRORS})
class TagList(TagReadMixin, generics.ListAPIView):
    """Tags: kinds of mistake, shared by every repository, with how many findings carry each and
    what each repository you may read says they mean."""

    serializer_class = TagSerializer
    ordering_fields = ["slug", "findings_count"]
    queryset = Tag.objects.none()  # for the schema: get_queryset answers


@extend_schema(
    tags=["tags"],
    parameters=[OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The tag's slug.")],
    responses={200: TagSerializer, **docs.DETAIL_ERRORS},
)
class TagDetail(TagReadMixin, generics.RetrieveAPIView):
    """A tag: what it means in the repositories you may read, and where to list its findings
    (newest first)."""

    serializer_class = TagSerializer
    queryset = Tag.objects.none()  # for the schema: get_queryset answers
    lookup_field = "slug"


@extend_schema_view(
    put=extend_schema(
        tags=["tags"],
        operation_id="tag_describe",
        summary="Describe a tag in a repository",
        description=(
            "Sets what findings with this tag have in common in `repository`, creating the slug when it is "
            "new. Each repository describes a tag for itself: no other repository's description is read or "
            "changed, and a tag only another repository uses answers exactly as a new slug does. Needs the "
            "Reviewer role (writing findings) on that repository; one you may not read is a 404, as one that "
            "does not exist. Audited."
        ),
        parameters=[OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="The tag's slug.")],
        request=TagDescriptionRequestSerializer,
        responses={200: TagSerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class TagDescription(ActionView):
    required_action = Action.WRITE
    audit_action = "tag.describe"

    def put(self, request, slug: str):
        body = TagDescriptionRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        slug = tag_slug_validate(slug)
        name = body.validated_data["repository"]
        repository = request_repositories(request).filter(slug=name).first()
        if repository is None:
            # A repository the request may not read is answered as one that does not exist.
            raise NotFound(f"No repository {name} is recorded here.")
        object_action_check(request, self, repository)
        tag_describe(slug=slug, repository=repository, description=body.validated_data["description"],
                     actor=request.user)
        tag = _request_tags(request).filter(slug=slug).first()
        if tag is None:
            # Its description cleared, carried by nothing the request reads: as it sees the tag now.
            tag = Tag(slug=slug)
            tag.findings_count, tag.readable_descriptions = 0, []
        return Response(TagSerializer(tag, context={"request": request}).data)
