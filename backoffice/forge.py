from django.contrib import admin, messages

from backoffice.audited import RepositoryScopedAdmin
from forge.models import ForgeCall, ReviewThread
from core.errors import RecheckError
from forge.outbox.services import forge_call_resend


@admin.register(ForgeCall)
class ForgeCallAdmin(RepositoryScopedAdmin):
    """What was sent to each forge, with the forge's answer and what to fix. Rows are written by the
    reporting service only; the one change allowed here is sending a failed call again."""

    list_display = ["__str__", "repository", "pull_request", "status", "attempts", "response_status",
                    "response_message", "due_at", "sent_at"]
    list_filter = ["status", "forge", "kind", ("repository", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["sha", "repository__slug", "response_message"]
    list_select_related = ["repository", "pull_request__repository"]
    readonly_fields = [field.name for field in ForgeCall._meta.fields]
    audit_repository_path = "repository"
    actions = ["send_again"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Send the selected failed calls again", permissions=["resend"])
    def send_again(self, request, queryset):
        # The queryset holds only the calls of repositories the user may read (RepositoryScopedAdmin).
        queued = 0
        for call in queryset.select_related("repository"):
            try:
                queued += forge_call_resend(call=call, actor=request.user)
            except RecheckError as error:
                self.message_user(request, str(error), messages.ERROR)
        self.message_user(request, f"{queued} call(s) queued again; the others had not failed.", messages.SUCCESS)

    def has_resend_permission(self, request):
        return request.user.has_perm("reporting.resend_forgecall")


@admin.register(ReviewThread)
class ReviewThreadAdmin(RepositoryScopedAdmin):
    """A pull request's review threads as read from GitHub, for staff to look into: written by the
    sync and the triage services only (the inbox page and the API triage)."""

    list_display = ["__str__", "state", "problem", "path", "finding", "resolved", "updated_at"]
    list_filter = ["state", "problem", "resolved"]
    search_fields = ["=root_comment_id", "path", "pull_request__repository__slug"]
    list_select_related = ["pull_request__repository", "finding"]
    readonly_fields = [field.name for field in ReviewThread._meta.fields]
    audit_repository_path = "pull_request.repository"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
