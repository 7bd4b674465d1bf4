"""The audit log, read-only, for instance admins: every write and every refused write, newest first."""
import django_filters
from django.db.models import Q
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import generics, serializers

from access.models import AuditEntry
from api import docs
from api.pagination import RecheckPagination
from api.permissions import (
    CanReadAuditLog,
    TokenScope,
    request_reads_everything,
    request_repositories,
    token_repository_ids,
    visible_to,
)
from api.serializers.errors import ErrorSerializer


class AuditEntrySerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_label", help_text="Username of who wrote; empty for the system.")
    token = serializers.CharField(source="token_label", help_text="The API token used, if any.")
    repository = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    changes = serializers.DictField(
        child=serializers.ListField(), help_text="Each changed field as [before, after]."
    )

    class Meta:
        model = AuditEntry
        fields = ["id", "at", "action", "outcome", "actor", "token", "source", "ip", "target", "repository",
                  "changes", "message"]
        read_only_fields = fields


class AuditEntryFilter(django_filters.FilterSet):
    since = django_filters.IsoDateTimeFilter(field_name="at", lookup_expr="gte", help_text="At or after (ISO 8601).")
    until = django_filters.IsoDateTimeFilter(field_name="at", lookup_expr="lt", help_text="Before (ISO 8601).")
    actor = django_filters.CharFilter(field_name="actor_label", help_text="Username.")
    repository = django_filters.CharFilter(field_name="repository__slug", help_text="owner/name.")

    class Meta:
        model = AuditEntry
        fields = ["action", "outcome", "source", "actor", "repository", "since", "until"]


@extend_schema_view(
    get=extend_schema(
        tags=["audit"],
        summary="The audit log",
        description=(
            "Every write (imports, decisions, verification requests, edits in the admin, tokens made and "
            "revoked), and every write that was refused, with who (user and token), when, from which address "
            "and what changed. Newest first. Read-only; for instance admins (the `access.view_auditentry` "
            "permission), and a token needs the `read` scope."
        ),
        responses={
            200: AuditEntrySerializer(many=True),
            **docs.LIST_ERRORS,
            403: OpenApiResponse(
                ErrorSerializer, description="Not an instance admin, or a token without the `read` scope."
            ),
        },
    )
)
class AuditLog(generics.ListAPIView):
    serializer_class = AuditEntrySerializer
    permission_classes = [CanReadAuditLog, TokenScope]
    pagination_class = RecheckPagination
    filterset_class = AuditEntryFilter
    queryset = AuditEntry.objects.select_related("repository").order_by("-at", "-id")

    def filter_queryset(self, queryset):
        # An entry of a repository the reader may not read (a private one without a role, or outside
        # a token's repositories) is left out, like everything else it reads; entries of no
        # repository (sign-ins, tokens) stay, for instance admins only.
        queryset = super().filter_queryset(queryset)
        if request_reads_everything(self.request):
            return queryset
        if token_repository_ids(self.request) is not None:
            return visible_to(queryset, self.request, "repository")
        return queryset.filter(Q(repository__isnull=True) | Q(repository__in=request_repositories(self.request)))
