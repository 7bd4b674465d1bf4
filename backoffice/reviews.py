from django import forms
from django.contrib import admin

from backoffice.audited import AuditedModelAdmin
from access.permissions import Action, user_may
from core.errors import RecheckError
from core.forges import DEFAULT_FORGE
from findings.models import RepositoryPolicy
from forge.models import FollowUpIssueSetting, ThreadSettings
from reviews.models import Commit, PinnedCommit, PullRequest, Repository
from reviews.services import repository_clone_url_check, repository_slug_check


class RepositoryForm(forms.ModelForm):
    """The same slug and clone URL rules as an imported bundle."""

    class Meta:
        model = Repository
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Omitted, as in a bundle: GitHub for a new repository, and an existing one keeps its forge.
        if "forge" in self.fields:  # a reader's view of the form has no fields
            self.fields["forge"].required = False

    def clean_forge(self):
        return self.cleaned_data.get("forge") or (self.instance.forge if self.instance.pk else DEFAULT_FORGE)

    def clean_slug(self):
        try:
            return repository_slug_check(self.cleaned_data["slug"])
        except RecheckError as error:
            raise forms.ValidationError(f"{error}.") from None

    def clean_clone_url(self):
        try:
            return repository_clone_url_check(self.cleaned_data["clone_url"])
        except RecheckError as error:
            raise forms.ValidationError(f"{error}.") from None


class RepositorySettingInline(admin.StackedInline):
    """One row of a repository's reporting settings kept beside it (review threads, follow-up
    issues), edited on the repository's page. It goes with the repository: whoever may change the
    repository's settings may change it; the repository's admin records the change in the log."""

    extra = 1
    max_num = 1
    min_num = 0
    can_delete = False

    def _settings_held(self, request, repository) -> bool:
        return repository is not None and user_may(request.user, Action.SETTINGS, repository)

    def has_view_permission(self, request, obj=None) -> bool:
        return obj is None or user_may(request.user, Action.READ, obj)

    def has_add_permission(self, request, obj=None) -> bool:
        return self._settings_held(request, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return obj is None or self._settings_held(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ThreadSettingsInline(RepositorySettingInline):
    model = ThreadSettings
    verbose_name = verbose_name_plural = "Review threads"


class FollowUpIssueSettingInline(RepositorySettingInline):
    model = FollowUpIssueSetting
    fields = ["open_issues"]
    verbose_name = verbose_name_plural = "Follow-up issues"


class RepositoryPolicyInline(RepositorySettingInline):
    """The merge policy: saved here, recorded in the log as `repositorypolicy.edit` with each
    setting before and after; its receiver moves every pull request's generation, as the service's
    save does."""

    model = RepositoryPolicy
    exclude = ["updated_at"]
    verbose_name = verbose_name_plural = "Merge policy"


@admin.register(Repository)
class RepositoryAdmin(AuditedModelAdmin):
    audit_repository_path = "self"
    change_action = Action.SETTINGS
    form = RepositoryForm
    inlines = [RepositoryPolicyInline, ThreadSettingsInline, FollowUpIssueSettingInline]

    def get_inlines(self, request, obj):
        # A repository's reporting settings once it exists: adding one stays the one form.
        return self.inlines if obj is not None else []
    list_display = ["slug", "forge", "visibility", "clone_url", "default_branch", "fetched_at", "has_fetch_error",
                    "publish_checks", "publish_comment"]
    list_filter = ["forge", "visibility", "publish_checks", "publish_comment"]
    search_fields = ["slug", "clone_url"]
    readonly_fields = ["fetched_at", "fetch_error", "created_at"]

    @admin.display(boolean=True, description="Fetch error")
    def has_fetch_error(self, repository: Repository) -> bool:
        return bool(repository.fetch_error)


class PinnedCommitInline(admin.TabularInline):
    model = PinnedCommit
    extra = 0
    autocomplete_fields = ["commit"]
    readonly_fields = ["pinned_at"]


@admin.register(PullRequest)
class PullRequestAdmin(AuditedModelAdmin):
    audit_repository_path = "repository"
    list_display = ["__str__", "title", "state", "updated_at"]
    list_filter = ["state", ("repository", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["title", "repository__slug", "=number"]
    list_select_related = ["repository"]
    autocomplete_fields = ["attested_commit"]
    inlines = [PinnedCommitInline]


@admin.register(Commit)
class CommitAdmin(AuditedModelAdmin):
    audit_repository_path = "repository"
    list_display = ["short_sha", "repository", "resolved", "subject", "author", "committed_at"]
    list_filter = ["resolved", ("repository", admin.RelatedOnlyFieldListFilter)]
    search_fields = ["sha", "message", "author"]
    list_select_related = ["repository"]


@admin.register(PinnedCommit)
class PinnedCommitAdmin(AuditedModelAdmin):
    audit_repository_path = "pull_request.repository"
    list_display = ["pull_request", "commit", "role", "pinned_at"]
    list_filter = ["role"]
    search_fields = ["commit__sha", "pull_request__title"]
    list_select_related = ["pull_request__repository", "commit"]
    autocomplete_fields = ["commit"]
