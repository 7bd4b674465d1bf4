"""Tags: kinds of mistake, shared by every repository. The list and one tag, each counted over the
findings the request may read."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics

from api import docs
from api.permissions import request_reads_everything, request_repositories
from api.serializers.findings import TagSerializer
from api.views.reading import ReadMixin
from findings.models import Tag
from findings.selectors.findings import tags_with_counts


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
