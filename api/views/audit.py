"""The audit log, for instance admins: every write and every refused write, newest first, and
reverting one field change it recorded."""
import django_filters
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from django.shortcuts import get_object_or_404
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from access.models import AuditEntry
from access.selectors import readable_audit_entries
from api import docs
from api.filters import UtcIsoDateTimeFilter
from api.pagination import RecheckPagination
from api.permissions import (
    CanReadAuditLog,
    TokenScope,
    token_repository_ids,
)
from api.serializers.errors import ErrorSerializer
from api.throttles import WriteThrottle
from findings.services.revert import audit_entry_revert


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
    since = UtcIsoDateTimeFilter(field_name="at", lookup_expr="gte", help_text="At or after (ISO 8601).")
    until = UtcIsoDateTimeFilter(field_name="at", lookup_expr="lt", help_text="Before (ISO 8601).")
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
        return visible_entries(self.request, super().filter_queryset(queryset))


def visible_entries(request, queryset):
    """The entries the request reads (`readable_audit_entries`, as the site and the admin read
    them), narrowed to its token's repositories when the token names some."""
    return readable_audit_entries(request.user, entries=queryset, repository_ids=token_repository_ids(request))


class AuditRevertRequestSerializer(serializers.Serializer):
    change = serializers.CharField(
        max_length=300, help_text="The change to revert, as the entry's `changes` names it (e.g. `title`, or "
        "`pull request acme/loader#4108.before` for an import).",
    )


@extend_schema_view(
    post=extend_schema(
        tags=["audit"],
        operation_id="audit_entry_revert",
        summary="Revert a field change the audit log recorded",
        description=(
            "Sets one field that an audited write changed (a finding's, a pull request's, a repository's "
            "settings, a tag's description in a repository) back to its value before. Needs what reading the "
            "audit log needs, and the role that changes that field on its repository (Reviewer for findings "
            "and tag descriptions, Reviewer with import for a pull request, Admin for a repository's settings); "
            "a token needs the `import` scope. Refused (400) when the field changed again since. The revert is "
            "itself an audit entry (`audit.revert`), which this answers."
        ),
        request=AuditRevertRequestSerializer,
        responses={201: AuditEntrySerializer, **docs.WRITE_ERRORS, 404: docs.NOT_FOUND},
    )
)
class AuditEntryRevert(APIView):
    # The token's scope first: a read token is told which scope a revert needs.
    permission_classes = [TokenScope, CanReadAuditLog]
    throttle_classes = [WriteThrottle]
    required_scope = "import"
    audit_action = "audit.revert"

    def post(self, request, pk: int):
        # An entry the reader may not see (another's private repository, outside a token's) is a 404.
        entry = get_object_or_404(visible_entries(request, AuditLog.queryset.all()), pk=pk)
        body = AuditRevertRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        revert = audit_entry_revert(entry=entry, key=body.validated_data["change"], actor=request.user)
        return Response(AuditEntrySerializer(revert).data, status=status.HTTP_201_CREATED)
