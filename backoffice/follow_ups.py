"""Follow-ups in the admin: read-only, for staff looking into a repository's follow-ups and their
history. Marking one fixed or closing it is a maintainer's decision, made on the site's Follow-ups
page through the services that check the role and audit it."""
from django.contrib import admin

from backoffice.audited import RecordAdmin, RepositoryScopedAdmin
from findings.models import FollowUp, FollowUpEvent


class FollowUpEventInline(admin.TabularInline):
    model = FollowUpEvent
    fields = ["at", "kind", "from_state", "to_state", "verdict", "commit", "actor", "note"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(FollowUp)
class FollowUpAdmin(RecordAdmin, RepositoryScopedAdmin):
    list_display = ["__str__", "repository", "origin", "state", "verdict", "checked_commit", "fixed_commit",
                    "decided_by", "opened_at"]
    list_filter = ["state", "origin", ("repository", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["finding__title", "repository__slug"]
    list_select_related = ["repository", "finding__pull_request__repository", "checked_commit", "fixed_commit",
                           "decided_by"]
    readonly_fields = [field.name for field in FollowUp._meta.fields]
    inlines = [FollowUpEventInline]
    audit_repository_path = "repository"
