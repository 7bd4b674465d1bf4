"""The admin of what verification reads and writes beside a finding: its evidence (an edit moves
the finding's evidence version), its verifications with their items' results, its history, the
verification runs, the stored companion pages and the webhook deliveries. The findings' own admin
is `backoffice.findings`."""
from django.contrib import admin
from django.db import transaction

from backoffice.audited import AuditedModelAdmin, RecordAdmin, RepositoryScopedAdmin
from backoffice.findings import result_state_label
from findings.models import (
    CompanionPages,
    Evidence,
    EvidenceResult,
    FindingEvent,
    Verification,
    VerificationRun,
    WebhookDelivery,
)
from findings.services.resolution import finding_evidence_changed, finding_evidence_lock


@admin.register(Evidence)
class EvidenceAdmin(AuditedModelAdmin):
    audit_repository_path = "finding.pull_request.repository"
    list_display = ["finding", "position", "kind", "describe", "commit"]
    list_filter = ["kind"]
    search_fields = ["path", "text", "regex", "finding__title"]
    list_select_related = ["finding__pull_request__repository", "commit"]
    autocomplete_fields = ["finding", "commit", "submodule_repository"]

    def save_model(self, request, obj, form, change):
        with transaction.atomic():
            if change:
                finding_evidence_lock(finding=obj.finding)
            super().save_model(request, obj, form, change)
            if change and form.has_changed():
                finding_evidence_changed(finding=obj.finding)

    def delete_model(self, request, obj):
        with transaction.atomic():
            finding_evidence_lock(finding=obj.finding)
            super().delete_model(request, obj)
            finding_evidence_changed(finding=obj.finding)


class EvidenceResultInline(admin.TabularInline):
    model = EvidenceResult
    extra = 0
    can_delete = False
    fields = ["evidence", "state_shown", "path", "start_line", "end_line", "detail"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="State")
    def state_shown(self, result: EvidenceResult) -> str:
        return result_state_label(result)


@admin.register(Verification)
class VerificationAdmin(RepositoryScopedAdmin):
    audit_repository_path = "finding.pull_request.repository"
    list_display = ["finding", "commit", "verdict", "checked_at"]
    list_filter = ["verdict", ("finding__pull_request__repository", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["commit__sha", "finding__title"]
    list_select_related = ["finding__pull_request__repository", "commit"]
    readonly_fields = ["finding", "commit", "verdict", "checked_at", "first_checked_at", "detail"]
    inlines = [EvidenceResultInline]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(FindingEvent)
class FindingEventAdmin(RecordAdmin, RepositoryScopedAdmin):
    audit_repository_path = "finding.pull_request.repository"
    list_display = ["finding", "from_status", "to_status", "actor", "commit", "source", "at"]
    list_filter = ["to_status", "source"]
    search_fields = ["finding__title", "note"]
    list_select_related = ["finding__pull_request__repository", "actor", "commit"]


@admin.register(VerificationRun)
class VerificationRunAdmin(RepositoryScopedAdmin):
    audit_repository_path = "pull_request.repository"
    list_display = ["pull_request", "commit", "status", "done", "total", "created_at", "finished_at"]
    list_filter = ["status"]
    list_select_related = ["pull_request__repository", "commit"]
    readonly_fields = [field.name for field in VerificationRun._meta.fields]


@admin.register(CompanionPages)
class CompanionPagesAdmin(RepositoryScopedAdmin):
    audit_repository_path = "pull_request.repository"
    list_display = ["pull_request", "commit", "rendered_at"]
    readonly_fields = ["pull_request", "commit", "rendered_at"]
    exclude = ["index_html", "blockers_html", "cleanups_html"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = ["delivery_id", "event", "action", "received_at", "outcome"]
    readonly_fields = [field.name for field in WebhookDelivery._meta.fields]
