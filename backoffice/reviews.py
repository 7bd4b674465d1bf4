from django import forms
from django.contrib import admin

from backoffice.audited import AuditedModelAdmin
from access.permissions import Action
from core.errors import RecheckError
from core.forges import DEFAULT_FORGE
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


@admin.register(Repository)
class RepositoryAdmin(AuditedModelAdmin):
    audit_repository_path = "self"
    change_action = Action.SETTINGS
    form = RepositoryForm
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
