"""Tokens and the audit log in the admin. A token is made through api_token_create (its secret is
shown once, on the page that answers the form) and revoked through api_token_revoke; it is never edited
or deleted, so the admin keeps what each could do. The audit log is read-only; a field change it recorded can be reverted from its entry
(`audit_entry_revert`), which records the revert."""
from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.cache import add_never_cache_headers

from backoffice.audited import AuditedModelAdmin, RecordAdmin
from findings.services.revert import ACTIONS, audit_entry_revert, audit_entry_revertible
from access.models import ApiToken, AuditEntry, Membership
from access.selectors import readable_audit_entries
from access.permissions import Action, reads_everything, user_may
from reviews.selectors import repositories_where
from core.scopes import SCOPES
from access.tokens import api_token_create, api_token_revoke
from core.errors import RecheckError
from reviews.models import Repository


class ApiTokenCreateForm(forms.ModelForm):
    user = forms.ModelChoiceField(queryset=get_user_model().objects.filter(is_active=True))
    scopes = forms.MultipleChoiceField(choices=list(SCOPES.items()), widget=forms.CheckboxSelectMultiple)
    days = forms.IntegerField(min_value=1, help_text="Days until it expires.")
    repositories = forms.ModelMultipleChoiceField(queryset=Repository.objects.order_by("slug"), required=False,
                                                  help_text="None means every repository.")

    class Meta:
        model = ApiToken
        fields = ["user", "name", "scopes", "days", "repositories"]

    def __init__(self, *args, request=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.request = request
        self.fields["days"].initial = settings.RECHECK_API_TOKEN_DAYS
        self.fields["days"].max_value = settings.RECHECK_API_TOKEN_MAX_DAYS
        self.secret = ""

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        # The service's rules (scopes the user may hold, days) decide; its message is the form's error.
        try:
            self.instance, self.secret = api_token_create(
                user=data["user"], name=data["name"], scopes=data["scopes"], days=data["days"],
                repositories=list(data.get("repositories") or []), created_by=self.request.user,
            )
        except RecheckError as error:
            raise forms.ValidationError(str(error)) from None
        return data

    def save(self, commit=True):
        return self.instance

    def save_m2m(self):
        pass


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "token_key", "scope_list", "created", "expiry", "last_used_at", "state"]
    list_filter = ["revoked_at"]
    search_fields = ["name", "token_key", "user__username"]
    list_select_related = ["user"]
    actions = ["revoke"]
    readonly_fields = ["name", "user", "token_key", "scopes", "repository_list", "created", "created_by", "expiry",
                       "last_used_at", "last_used_ip", "revoked_at", "revoked_by"]
    exclude = ["digest", "repositories"]

    def get_form(self, request, obj=None, **kwargs):
        if obj is not None:
            return super().get_form(request, obj, **kwargs)
        form = ApiTokenCreateForm

        class RequestForm(form):
            def __init__(self, *args, **inner):
                super().__init__(*args, request=request, **inner)

        return RequestForm

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else []

    def get_exclude(self, request, obj=None):
        return self.exclude if obj is not None else []

    def get_fields(self, request, obj=None):
        return self.readonly_fields if obj is not None else ["user", "name", "scopes", "days", "repositories"]

    def save_model(self, request, obj, form, change):
        # api_token_create saved it while the form was validated; the secret waits on the form.
        request._recheck_token_secret = form.secret

    def response_add(self, request, obj, post_url_continue=None):
        # The secret goes in this answer only: a message would keep it in a cookie or the session.
        response = TemplateResponse(request, "admin/access/apitoken/created.html", {
            **self.admin_site.each_context(request), "token": obj, "secret": request._recheck_token_secret,
            "opts": self.model._meta,
        })
        add_never_cache_headers(response)
        return response

    def save_related(self, request, form, formsets, change):
        pass

    def has_change_permission(self, request, obj=None) -> bool:
        # Shown read-only: a token's scopes are fixed when it is made; revoke and make another.
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="Scopes")
    def scope_list(self, token: ApiToken) -> str:
        return ", ".join(token.scopes)

    @admin.display(description="Repositories")
    def repository_list(self, token: ApiToken) -> str:
        if not token.limited:
            return "All"
        return ", ".join(token.repositories.order_by("slug").values_list("slug", flat=True)) or "None (deleted)"

    @admin.display(description="State")
    def state(self, token: ApiToken) -> str:
        return "revoked" if token.is_revoked else "expired" if token.is_expired else "active"

    @admin.action(description="Revoke the selected tokens", permissions=["revoke"])
    def revoke(self, request, queryset):
        revoked = 0
        for token in queryset.select_related("user"):
            try:
                api_token_revoke(token=token, revoked_by=request.user)
                revoked += 1
            except RecheckError as error:
                self.message_user(request, str(error), messages.WARNING)
        if revoked:
            self.message_user(request, f"Revoked {revoked} token{'s' if revoked != 1 else ''}.", messages.SUCCESS)

    def has_revoke_permission(self, request) -> bool:
        return request.user.has_perm("access.delete_apitoken")


@admin.register(AuditEntry)
class AuditEntryAdmin(RecordAdmin, admin.ModelAdmin):
    list_display = ["at", "action", "outcome", "actor_label", "token_label", "source", "ip", "target"]
    list_filter = ["action", "outcome", "source"]
    search_fields = ["actor_label", "token_label", "target", "message"]
    date_hierarchy = "at"

    def get_queryset(self, request):
        # The entries the site and the API show them (`readable_audit_entries`): a repository's they
        # may not read stays hidden here too.
        return readable_audit_entries(request.user, entries=super().get_queryset(request))

    # A recorded field change can be reverted from its entry's page (audit_entry_revert checks the
    # role on the object and records the revert); the entry itself is never changed.
    change_form_template = "admin/access/auditentry/change_form.html"

    def get_urls(self):
        revert = path("<int:pk>/revert/", self.admin_site.admin_view(self.revert_view), name="access_auditentry_revert")
        return [revert, *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        entry = self.get_queryset(request).filter(pk=object_id).first() if str(object_id).isdigit() else None
        revertible = [
            change for change in (audit_entry_revertible(entry=entry) if entry is not None else [])
            if change.repository is not None and user_may(request.user, ACTIONS[change.kind], change.repository)
        ]
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "revertible": revertible})

    def revert_view(self, request, pk: int):
        entry = get_object_or_404(self.get_queryset(request), pk=pk)
        if request.method != "POST" or not self.has_view_permission(request, entry):
            raise PermissionDenied
        try:
            audit_entry_revert(entry=entry, key=request.POST.get("key", ""), actor=request.user)
        except RecheckError as error:
            self.message_user(request, str(error), messages.ERROR)
        else:
            self.message_user(request, f"Reverted {request.POST.get('key')} of audit entry {entry.pk}.",
                              messages.SUCCESS)
        return redirect("admin:access_auditentry_change", entry.pk)


# Users and groups are where memberships and instance-wide roles change: their edits are audited.
User = get_user_model()
admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class AuditedUserAdmin(AuditedModelAdmin, UserAdmin):
    pass


@admin.register(Group)
class AuditedGroupAdmin(AuditedModelAdmin, GroupAdmin):
    pass


@admin.register(Membership)
class MembershipAdmin(AuditedModelAdmin):
    """Who holds which role on which repository. An instance admin manages every repository's; a
    staff user with the Admin role on a repository manages that repository's. Each change is in
    the audit log, before and after."""

    audit_repository_path = "repository"
    change_action = Action.MEMBERS
    list_display = ["repository", "user", "group", "role", "created_at"]
    list_filter = ["role", ("repository", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["repository__slug", "user__username", "group__name"]
    list_select_related = ["repository", "user", "group"]
    autocomplete_fields = ["user"]
    fields = ["repository", "user", "group", "role"]

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if reads_everything(request.user) and user_may(request.user, Action.MEMBERS):
            return queryset
        return queryset.filter(repository__in=repositories_where(request.user, Action.MEMBERS))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "repository":
            kwargs["queryset"] = repositories_where(request.user, Action.MEMBERS).order_by("slug")
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def _holds(self, request, obj=None) -> bool:
        repository = obj.repository if obj is not None else None
        return user_may(request.user, Action.MEMBERS, repository)

    def has_module_permission(self, request) -> bool:
        return super().has_module_permission(request) or self._holds(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return self._holds(request, obj)

    def has_add_permission(self, request) -> bool:
        return self._holds(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return self._holds(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return self._holds(request, obj)
