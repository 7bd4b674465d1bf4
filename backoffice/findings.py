from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html_join

from backoffice.audited import AuditedModelAdmin
from access.permissions import Action, readable_rows, reads_everything, refusal, user_may
from core import vocabulary
from findings.forms import DECISION_LABELS, ResolveForm
from findings.models import (
    Evidence,
    EvidenceResult,
    Finding,
    FindingEvent,
    FindingLink,
    Tag,
    TagDescription,
    Verdict,
    Verification,
)
from findings.services.tags_and_links import finding_link_check
from findings.state.derivation import FIXED_ANYWAY
from findings.state.stored import finding_state, finding_states, findings_where
from findings.services.resolution import finding_evidence_changed, finding_evidence_lock, finding_resolve
from core.errors import EvidenceStillHolds, RecheckError
from reviews.selectors import repositories_where

# The decisions as the site's buttons say them (findings.forms): the admin's actions say the same.
RESOLVE_LABELS = DECISION_LABELS


def result_state_label(result: EvidenceResult) -> str:
    """A result's state in the site's word for it (moved included), not the stored choice's."""
    return vocabulary.state_label(
        vocabulary.evidence_state(checkable=result.evidence.is_checkable, state=result.shown_state)
    )


class EvidenceInline(admin.StackedInline):
    model = Evidence
    extra = 0
    autocomplete_fields = ["commit", "submodule_repository"]
    fields = [
        ("position", "kind", "commit"),
        ("path", "start_line", "end_line"),
        "text",
        ("regex", "expect", "sha"),
        ("submodule_repository", "reference_branch"),
        ("check_name", "check_app"),
        ("check_tests", "check_results"),
        "caption",
    ]


class VerificationInline(admin.TabularInline):
    model = Verification
    extra = 0
    can_delete = False
    fields = ["commit", "verdict", "checked_at", "evidence_results"]
    readonly_fields = fields
    ordering = ["-checked_at"]

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("commit").prefetch_related("results__evidence")

    @admin.display(description="Evidence results")
    def evidence_results(self, verification: Verification) -> str:
        return format_html_join(
            "",
            "<div>#{}: <strong>{}</strong> {} {}</div>",
            (
                (
                    result.evidence.position,
                    result_state_label(result),
                    f"{result.path}:{result.start_line}" if result.start_line else result.path,
                    result.detail,
                )
                for result in verification.results.all()
            ),
        )


class HistoryInline(admin.TabularInline):
    model = FindingEvent
    extra = 0
    can_delete = False
    fields = ["at", "from_status", "to_status", "actor", "commit", "note", "source"]
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False


class FindingLinkForm(forms.ModelForm):
    class Meta:
        model = FindingLink
        fields = ["kind", "target", "note"]

    def clean(self):
        data = super().clean()
        source = self.instance.source if self.instance.source_id else getattr(self, "parent_finding", None)
        if source is not None and data.get("target") and data.get("kind"):
            try:
                finding_link_check(source=source, target=data["target"], kind=data["kind"], link=self.instance)
            except RecheckError as error:
                raise forms.ValidationError(str(error)) from None
        return data


class FindingLinkInline(admin.TabularInline):
    """Links this finding makes; the ones other findings make to it show on theirs (and on the site)."""

    model = FindingLink
    fk_name = "source"
    form = FindingLinkForm
    extra = 0
    autocomplete_fields = ["target"]
    verbose_name = "link to another finding"

    def get_queryset(self, request):
        # A link to a finding the user may not read is not shown (nor that it exists).
        return readable_rows(super().get_queryset(request), request.user, "target__pull_request__repository")

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)

        class WithParent(formset):
            def _construct_form(self, i, **form_kwargs):
                form = super()._construct_form(i, **form_kwargs)
                form.parent_finding = obj
                return form

        return WithParent


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    """A slug, shared by every repository; what it means is each repository's own
    (`TagDescriptionAdmin`)."""

    list_display = ["slug", "finding_count"]
    search_fields = ["slug"]

    def get_queryset(self, request):
        # Tags are shared; a staff user who reads some repositories only sees the tags that are
        # unused or carried by findings they may read, counted over those findings.
        queryset = super().get_queryset(request)
        if reads_everything(request.user):
            return queryset.annotate(finding_count=Count("findings"))
        readable = Finding.objects.readable_by(request.user)
        return queryset.filter(Q(findings__isnull=True) | Q(findings__in=readable)).distinct().annotate(
            finding_count=Count("findings", filter=Q(findings__in=readable), distinct=True)
        )

    @admin.display(description="Findings", ordering="finding_count")
    def finding_count(self, tag: Tag) -> int:
        return tag.finding_count


@admin.register(TagDescription)
class TagDescriptionAdmin(AuditedModelAdmin):
    """What a tag means in one repository: listed and changed only where the staff user may read
    and write findings, like every row of a repository."""

    list_display = ["tag", "repository", "description"]
    search_fields = ["tag__slug", "repository__slug", "description"]
    list_select_related = ["tag", "repository"]
    audit_repository_path = "repository"

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "repository" and not reads_everything(request.user):
            kwargs["queryset"] = repositories_where(request.user, Action.WRITE)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class LatestVerdictFilter(admin.SimpleListFilter):
    """Findings by their verdict at their PR's latest verified pin (as the site shows it): likely
    fixed ones are those a maintainer should look at and mark fixed."""

    title = "latest verdict"
    parameter_name = "latest_verdict"

    def lookups(self, request, model_admin):
        return Verdict.choices

    def queryset(self, request, queryset):
        if self.value() in Verdict.values:
            return queryset.filter(pk__in=findings_where(queryset, "verdict", self.value()))
        return queryset


class PossiblyRegressedFilter(admin.SimpleListFilter):
    """Fixed findings whose evidence holds again at a commit pinned after they were fixed, as the
    PR's state says (`findings.state`)."""

    title = "possibly regressed"
    parameter_name = "possibly_regressed"

    def lookups(self, request, model_admin):
        return [("1", "Yes"), ("0", "No")]

    def queryset(self, request, queryset):
        if self.value() not in ("0", "1"):
            return queryset
        flagged = findings_where(queryset, "possibly_regressed")
        return queryset.filter(pk__in=flagged) if self.value() == "1" else queryset.exclude(pk__in=flagged)


class FindingChangeList(ChangeList):
    """The findings listed, each with its state (`finding.state`) read once for the page."""

    def get_results(self, request):
        super().get_results(request)
        findings = list(self.result_list)
        states = finding_states(findings)
        for finding in findings:
            finding.state = states[finding.pk]


@admin.register(Finding)
class FindingAdmin(AuditedModelAdmin):
    audit_repository_path = "pull_request.repository"
    list_display = [
        "number", "title", "pull_request", "kind", "caught_by", "status_display", "latest_verdict_display",
        "possibly_regressed",
    ]
    list_display_links = ["number", "title"]
    list_filter = [
        "kind", "status", LatestVerdictFilter, "caught_by", PossiblyRegressedFilter,
        # Only the repositories and tags of the findings listed: the others may be hidden from the user.
        ("pull_request__repository", admin.RelatedOnlyFieldListFilter), ("tags", admin.RelatedOnlyFieldListFilter),
    ]
    search_fields = ["title", "summary", "body", "path", "pull_request__repository__slug"]
    list_select_related = ["pull_request__repository"]
    readonly_fields = ["status", "possibly_regressed", "resolved_by", "resolved_at", "resolved_commit", "resolution_note", "resolve_buttons"]
    autocomplete_fields = ["pull_request", "tags"]
    inlines = [EvidenceInline, FindingLinkInline, VerificationInline, HistoryInline]
    actions = ["mark_fixed", "dismiss", "reopen"]
    object_history_template = "admin/findings/finding/object_history.html"

    def history_view(self, request, object_id, extra_context=None):
        """The History button shows the finding's status changes (who, when, from and to, at which
        commit, why), which finding_resolve records; the admin's own log only has its edits."""
        events = FindingEvent.objects.filter(finding_id=object_id if str(object_id).isdigit() else None)
        extra_context = {
            **(extra_context or {}),
            "finding_events": events.select_related("actor", "commit").order_by("at", "id"),
        }
        return super().history_view(request, object_id, extra_context=extra_context)

    def save_formset(self, request, form, formset, change):
        evidence = formset.model is Evidence and change
        with transaction.atomic():
            if evidence:
                finding_evidence_lock(finding=form.instance)
            super().save_formset(request, form, formset, change)
            if evidence and (formset.new_objects or formset.changed_objects or formset.deleted_objects):
                finding_evidence_changed(finding=form.instance)
    fieldsets = [
        (None, {"fields": ["pull_request", "number", "kind", "caught_by", "title", "summary", "tags"]}),
        ("Write-up", {"fields": ["body", "fix", "review_comment_url", "path", "line"]}),
        (
            "Status",
            {
                "fields": [
                    "resolve_buttons",
                    "status",
                    "possibly_regressed",
                    "resolved_by",
                    "resolved_at",
                    "resolved_commit",
                    "resolution_note",
                ]
            },
        ),
    ]

    def get_queryset(self, request):
        # Annotated for sorting by verdict only; what a row shows comes from the state.
        return super().get_queryset(request).with_latest_verdict()

    def get_changelist(self, request, **kwargs):
        return FindingChangeList

    @staticmethod
    def _state(finding: Finding) -> dict:
        return finding_state(finding) if finding.pk else {}  # attached for a list, else read now

    @admin.display(description="Status", ordering="status")
    def status_display(self, finding: Finding) -> str:
        if self._state(finding).get("resolution") == FIXED_ANYWAY:
            return vocabulary.FIXED_ANYWAY_LABEL
        return finding.get_status_display()

    @admin.display(description="Latest verdict", ordering="latest_verdict")
    def latest_verdict_display(self, finding: Finding) -> str:
        state = self._state(finding)
        if not state.get("verdict"):
            return vocabulary.NOT_VERIFIED_PHRASE
        return f"{vocabulary.verdict_label(state['verdict'])} at {state['latest_sha'][:8]}"

    @admin.display(description="Possibly regressed", boolean=True)
    def possibly_regressed(self, finding: Finding) -> bool:
        return bool(self._state(finding).get("possibly_regressed"))

    def get_urls(self):
        return [
            path(
                "resolve/<str:status>/",
                self.admin_site.admin_view(self.resolve_view),
                name="findings_finding_resolve",
            ),
        ] + super().get_urls()

    @admin.display(description="Change status")
    def resolve_buttons(self, finding: Finding) -> str:
        if not finding.pk:
            return "-"
        return format_html_join(
            " ",
            '<a class="button" href="{}?ids={}">{}</a>',
            (
                (reverse("admin:findings_finding_resolve", args=[status]), finding.pk, label)
                for status, label in RESOLVE_LABELS.items()
                if status != finding.status
            ),
        )

    def has_resolve_permission(self, request) -> bool:
        """Whether the list offers Mark fixed, Dismiss and Reopen: the one permission function's answer."""
        return user_may(request.user, Action.RESOLVE)

    def _redirect_to_form(self, queryset, status: str):
        ids = ",".join(str(pk) for pk in queryset.values_list("pk", flat=True))
        return HttpResponseRedirect(f"{reverse('admin:findings_finding_resolve', args=[status])}?ids={ids}")

    @admin.action(description="Mark fixed…", permissions=["resolve"])
    def mark_fixed(self, request, queryset):
        return self._redirect_to_form(queryset, Finding.Status.FIXED)

    @admin.action(description="Dismiss…", permissions=["resolve"])
    def dismiss(self, request, queryset):
        return self._redirect_to_form(queryset, Finding.Status.DISMISSED)

    @admin.action(description="Reopen…", permissions=["resolve"])
    def reopen(self, request, queryset):
        return self._redirect_to_form(queryset, Finding.Status.OPEN)

    def resolve_view(self, request: HttpRequest, status: str):
        """Asks for the commit and a note, then changes the status of the chosen findings through
        finding_resolve, the site's and the API's service: the same rules and the same messages.
        Where the evidence still holds at the commit, the form asks to mark fixed anyway."""
        if not user_may(request.user, Action.RESOLVE):
            raise PermissionDenied(refusal(request.user, Action.RESOLVE))
        if status not in RESOLVE_LABELS:
            raise PermissionDenied
        raw_ids = request.POST.get("ids") or request.GET.get("ids", "")
        ids = [int(pk) for pk in raw_ids.split(",") if pk.strip().isdigit()]
        findings = list(
            Finding.objects.readable_by(request.user).filter(pk__in=ids).select_related("pull_request__repository")
            .order_by("pk")
        )
        if not findings:
            get_object_or_404(Finding, pk=0)
        for finding in findings:
            if not user_may(request.user, Action.RESOLVE, finding.pull_request.repository):
                raise PermissionDenied(refusal(request.user, Action.RESOLVE, finding.pull_request.repository))
        form = ResolveForm(request.POST or None, initial={"status": status})
        still_holds: list[tuple[Finding, EvidenceStillHolds]] = []
        if request.method == "POST" and form.is_valid() and form.cleaned_data["status"] == status:
            done = self._resolve_all(request, findings, status, form.cleaned_data, still_holds)
            if done:
                changelist = reverse("admin:findings_finding_changelist")
                if len(findings) == 1:
                    return HttpResponseRedirect(reverse("admin:findings_finding_change", args=[findings[0].pk]))
                return HttpResponseRedirect(changelist)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": f"{RESOLVE_LABELS[status]}: {len(findings)} finding{'s' if len(findings) != 1 else ''}",
            "findings": findings,
            "form": form,
            "ids": ",".join(str(finding.pk) for finding in findings),
            "status": status,
            "label": RESOLVE_LABELS[status],
            "still_holds": still_holds,
            "ask_anyway": bool(still_holds) or (form.is_bound and form.data.get("anyway")),
        }
        return TemplateResponse(request, "admin/findings/finding/resolve.html", context)

    def _resolve_all(self, request, findings, status: str, data: dict, still_holds: list) -> bool:
        resolved = 0
        for finding in findings:
            if not user_may(request.user, Action.RESOLVE, finding.pull_request.repository):
                self.message_user(request, f"Finding {finding.number} of {finding.pull_request}: "
                                  f"{refusal(request.user, Action.RESOLVE, finding.pull_request.repository)}",
                                  messages.ERROR)
                continue
            try:
                finding_resolve(
                    finding=finding,
                    status=status,
                    actor=request.user,
                    source=FindingEvent.Source.ADMIN,
                    commit_sha=data.get("commit") or "",
                    note=data.get("note", ""),
                    still_holds_confirmed=bool(data.get("anyway")),
                )
                resolved += 1
            except RecheckError as error:
                if isinstance(error, EvidenceStillHolds):
                    still_holds.append((finding, error))
                self.message_user(request, f"Finding {finding.number} of {finding.pull_request}: {error}", messages.ERROR)
        if resolved:
            self.message_user(
                request,
                f"{RESOLVE_LABELS[status]}: {resolved} finding{'s' if resolved != 1 else ''} changed.",
                messages.SUCCESS,
            )
        return resolved == len(findings)
