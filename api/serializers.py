"""What the API shows and accepts. Read serializers present rows; request serializers check the
shape of a write before a service sees it (the service still owns the rules). URLs follow GitHub's
convention: `url` is the API resource, `html_url` the page on the site."""
from django.db.models import F
from django.utils import timezone
from django.utils.encoding import iri_to_uri
from django.utils.functional import cached_property
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from findings.exchange.schema import ShaField
from findings.models import (
    Evidence,
    EvidenceResult,
    Finding,
    FindingEvent,
    FindingLink,
    Tag,
    Verification,
    VerificationRun,
)
from reviews.models import PinnedCommit, PullRequest, Repository


def _absolute(request, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else path


@extend_schema_field(OpenApiTypes.URI)
class AbsoluteSiteUrlField(serializers.ReadOnlyField):
    """The object's page on the site (its get_absolute_url), as an absolute URL."""

    def __init__(self, **kwargs):
        super().__init__(source="*", **kwargs)

    def to_representation(self, instance):
        return _absolute(self.context.get("request"), instance.get_absolute_url())


@extend_schema_field(OpenApiTypes.URI)
class ApiUrlField(serializers.ReadOnlyField):
    """An absolute API URL for the object, from a view name and the object's attributes."""

    def __init__(self, view_name: str, kwargs_from, **kwargs):
        self.view_name = view_name
        self.kwargs_from = kwargs_from
        super().__init__(source="*", **kwargs)

    def to_representation(self, instance):
        return reverse(self.view_name, kwargs=self.kwargs_from(instance), request=self.context.get("request"))


def _pull_request_kwargs(pull_request: PullRequest) -> dict:
    repository = pull_request.repository
    return {"owner": repository.owner, "name": repository.name, "number": pull_request.number}



class RepositorySerializer(serializers.ModelSerializer):
    web_url = serializers.CharField(read_only=True, help_text="The repository on its forge; may be empty.")
    url = ApiUrlField("api:repository-detail", lambda repo: {"owner": repo.owner, "name": repo.name})
    pulls_url = ApiUrlField("api:repository-pulls", lambda repo: {"owner": repo.owner, "name": repo.name})
    figures_url = ApiUrlField("api:repository-figures", lambda repo: {"owner": repo.owner, "name": repo.name})
    html_url = AbsoluteSiteUrlField()

    class Meta:
        model = Repository
        # The clone URL and fetch errors stay out: either may carry credentials or server paths.
        fields = [
            "url", "html_url", "slug", "owner", "name", "web_url", "default_branch", "fetched_at", "pulls_url",
            "figures_url", "visibility", "publish_checks", "publish_comment",
        ]
        read_only_fields = ["visibility", "publish_checks", "publish_comment"]


class PublishingSerializer(serializers.Serializer):
    publish_checks = serializers.BooleanField(
        required=False,
        help_text="A \"Recheck\" check run on each verified head (GitHub App), or a \"recheck\" commit status "
        "when only RECHECK_GITHUB_TOKEN is set: tokens cannot create check runs.",
    )
    publish_comment = serializers.BooleanField(
        required=False, help_text="One comment on the pull request, edited after each verification."
    )

    def validate(self, data):
        if not data:
            raise serializers.ValidationError("Send publish_checks, publish_comment or both.")
        return data


class PullRequestSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:pull-request-by-number", _pull_request_kwargs)
    html_url = AbsoluteSiteUrlField()
    repository = serializers.CharField(source="repository.slug", read_only=True)
    reference = serializers.CharField(read_only=True)
    # Blank URLs are stored as "", which is no `uri`: these are plain strings in the schema.
    forge_url = serializers.CharField(
        source="url", read_only=True, help_text="The pull request on GitHub (or another forge); may be empty."
    )
    open_blockers = serializers.IntegerField(read_only=True, help_text="Blockers still open.")
    findings_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = PullRequest
        fields = [
            "id", "url", "html_url", "repository", "number", "reference", "title", "forge_url", "state",
            "open_blockers", "findings_count", "created_at", "updated_at",
        ]


class PinSerializer(serializers.ModelSerializer):
    sha = serializers.CharField(source="commit.sha", read_only=True)
    resolved = serializers.BooleanField(
        source="commit.resolved", read_only=True, help_text="False while the SHA is a recorded abbreviation."
    )
    subject = serializers.CharField(source="commit.subject", read_only=True)
    committed_at = serializers.DateTimeField(source="commit.committed_at", read_only=True)
    has_verifications = serializers.BooleanField(read_only=True, help_text="Findings have been verified at it.")

    class Meta:
        model = PinnedCommit
        fields = ["sha", "resolved", "role", "subject", "committed_at", "pinned_at", "note", "has_verifications"]


class PullRequestDetailSerializer(PullRequestSerializer):
    pins = PinSerializer(many=True, read_only=True, help_text="Pinned commits, oldest first.")
    attested_commit = serializers.SlugRelatedField(
        slug_field="sha", read_only=True, allow_null=True, help_text="The commit the reviewer's own check was made at."
    )
    findings_url = serializers.SerializerMethodField()
    gate_url = ApiUrlField("api:pull-request-gate", _pull_request_kwargs)
    verify_url = ApiUrlField("api:pull-request-verify", _pull_request_kwargs)

    class Meta(PullRequestSerializer.Meta):
        fields = PullRequestSerializer.Meta.fields + [
            "before", "change", "status_note", "opening", "closing", "comments_left", "cleanups_not_recorded",
            "attestation", "attested_by", "attested_at", "attested_commit", "pins", "findings_url", "gate_url",
            "verify_url",
        ]

    def get_findings_url(self, pull_request) -> str:
        return reverse("api:finding-list", request=self.context.get("request")) + f"?pull_request={pull_request.pk}"


class SearchMatchSerializer(serializers.Serializer):
    rank = serializers.FloatField(help_text="Higher is a better match; comparable within one search only.")
    reasons = serializers.ListField(
        child=serializers.CharField(), help_text='Where the words were found, e.g. "title: tolerance".'
    )
    excerpt = serializers.CharField(
        help_text="A passage of the summary, body or fix, HTML-escaped, the matched words in <mark>; may be empty."
    )


# An id no finding has, for URLs reversed once and filled in per row.
_PK_PLACEHOLDER = "9223372036854775807"


_DATETIME = serializers.DateTimeField()


def _datetime(value, zone):
    """What DRF's DateTimeField makes of an aware datetime (ISO 8601 in the current time zone, UTC
    as Z), without its per-value lookups."""
    if value is None:
        return None
    if timezone.is_naive(value):
        return _DATETIME.to_representation(value)
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


class FindingSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:finding-detail", lambda finding: {"pk": finding.pk})
    html_url = AbsoluteSiteUrlField()
    repository = serializers.CharField(source="pull_request.repository.slug", read_only=True)
    pull_request_reference = serializers.CharField(source="pull_request.reference", read_only=True)
    resolved_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    resolved_commit = serializers.SlugRelatedField(slug_field="sha", read_only=True, allow_null=True)
    search = serializers.SerializerMethodField(help_text="Why it matched `q`; null when the list was not searched.")

    class Meta:
        model = Finding
        fields = [
            "id", "url", "html_url", "repository", "pull_request", "pull_request_reference", "number", "kind",
            "caught_by", "title", "summary", "path", "line", "status", "possibly_regressed", "resolved_by",
            "resolved_at", "resolved_commit", "created_at", "updated_at", "search",
        ]

    # What a list reads beside the finding's own columns, as values of the row rather than as
    # related objects: the list's queryset annotates them (FindingList), and a row is then one
    # object, not four.
    LIST_ANNOTATIONS = {
        "list_repository": F("pull_request__repository__slug"),
        "list_pull_request_number": F("pull_request__number"),
        "list_resolved_by": F("resolved_by__username"),
        "list_resolved_commit": F("resolved_commit__sha"),
    }

    def to_representation(self, finding):
        # A list page holds up to 200 of these: written out, the row costs a fifth of what the
        # fields' generic machinery makes of it. The same output (a test compares the two);
        # subclasses that add fields, and findings without the list's annotations, take the
        # generic path.
        if type(self) is not FindingSerializer or not hasattr(finding, "list_repository"):
            return super().to_representation(finding)
        slug, pull_request_number = finding.list_repository, finding.list_pull_request_number
        api_url, origin, zone = self._per_page
        return {
            "id": finding.pk,
            "url": api_url.replace(_PK_PLACEHOLDER, str(finding.pk)),
            # PullRequest.get_absolute_url, then Finding.get_absolute_url, from the row's values.
            "html_url": iri_to_uri(f"{origin}/{slug}/pull/{pull_request_number}/findings/{finding.number}/"),
            "repository": slug,
            "pull_request": finding.pull_request_id,
            "pull_request_reference": f"{slug}#{pull_request_number}",
            "number": finding.number,
            "kind": str(finding.kind),
            "caught_by": str(finding.caught_by),
            "title": finding.title,
            "summary": finding.summary,
            "path": finding.path,
            "line": finding.line,
            "status": str(finding.status),
            "possibly_regressed": bool(finding.possibly_regressed),
            "resolved_by": finding.list_resolved_by,
            "resolved_at": _datetime(finding.resolved_at, zone),
            "resolved_commit": finding.list_resolved_commit,
            "created_at": _datetime(finding.created_at, zone),
            "updated_at": _datetime(finding.updated_at, zone),
            "search": self.get_search(finding),
        }

    @cached_property
    def _per_page(self):
        """The API URL of a finding with a placeholder for its id, the site's origin (what
        build_absolute_uri puts before a path) and the time zone: once a page, not once a row."""
        request = self.context.get("request")
        api_url = reverse("api:finding-detail", kwargs={"pk": _PK_PLACEHOLDER}, request=request)
        origin = request.build_absolute_uri("/")[:-1] if request is not None else ""
        return api_url, origin, timezone.get_current_timezone()

    @extend_schema_field(SearchMatchSerializer(allow_null=True))
    def get_search(self, finding):
        if not hasattr(finding, "search_reasons"):
            return None
        return {
            "rank": getattr(finding, "search_rank", None) or 0.0,
            "reasons": finding.search_reasons,
            "excerpt": str(finding.search_excerpt),
        }


class EvidenceSerializer(serializers.ModelSerializer):
    commit = serializers.SlugRelatedField(
        slug_field="sha", read_only=True, allow_null=True, help_text="Recorded at this commit (none for a note)."
    )
    permalink = serializers.CharField(read_only=True, help_text="The evidence on the forge, where one can be built.")
    submodule_repository = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True,
        help_text="Gitlink evidence: the submodule's repository, when the evidence names it.",
    )

    class Meta:
        model = Evidence
        fields = [
            "id", "finding", "position", "kind", "commit", "path", "start_line", "end_line", "text", "regex",
            "expect", "sha", "submodule_repository", "reference_branch", "caption", "permalink",
        ]


class FindingBriefSerializer(serializers.ModelSerializer):
    """Another finding, as a link or a related finding names it."""

    url = ApiUrlField("api:finding-detail", lambda finding: {"pk": finding.pk})
    html_url = AbsoluteSiteUrlField()
    reference = serializers.CharField(read_only=True, help_text="owner/name#pull request/finding")

    class Meta:
        model = Finding
        fields = ["id", "url", "html_url", "reference", "kind", "status", "title"]


class FindingLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The link's id: DELETE /api/findings/<id>/links/<link id> removes it.")
    kind = serializers.ChoiceField(choices=FindingLink.Kind.choices, help_text="As recorded, from source to target.")
    direction = serializers.ChoiceField(
        choices=["outgoing", "incoming"], help_text="outgoing: this finding made the link; incoming: the other did."
    )
    label = serializers.CharField(help_text="How it reads from this finding, e.g. 'Duplicated by'.")
    note = serializers.CharField()
    finding = FindingBriefSerializer(help_text="The finding at the other end.")


class RelatedFindingSerializer(serializers.Serializer):
    finding = FindingBriefSerializer()
    reasons = serializers.ListField(
        child=serializers.CharField(),
        help_text='Why it is related, e.g. "Same file: src/loader.py", "Shared tag: silent-failure", '
        '"Similar title (64% alike)", or the link ("Duplicated by this finding").',
    )
    link = serializers.SerializerMethodField(help_text="The explicit link, when it is one; null otherwise.")

    @extend_schema_field(
        {"type": "object", "nullable": True,
         "properties": {"id": {"type": "integer"}, "kind": {"type": "string"}, "label": {"type": "string"}}}
    )
    def get_link(self, item):
        if item.link is None:
            return None
        return {"id": item.link.link.pk, "kind": item.link.link.kind, "label": item.link.label}


class BarSerializer(serializers.Serializer):
    label = serializers.CharField()
    value = serializers.IntegerField()


class OpenBlockerSerializer(FindingBriefSerializer):
    age_days = serializers.SerializerMethodField(help_text="Days since it was recorded.")

    class Meta(FindingBriefSerializer.Meta):
        fields = FindingBriefSerializer.Meta.fields + ["path", "created_at", "age_days"]

    def get_age_days(self, finding) -> int:
        return finding.age.days


class RepositoryFiguresSerializer(serializers.Serializer):
    repository = serializers.CharField(source="repository.slug", help_text="owner/name")
    findings_total = serializers.IntegerField()
    median_days_to_fix = serializers.FloatField(
        allow_null=True, help_text="Median days from recording a finding to marking it fixed; null before any fix."
    )
    open_blockers = OpenBlockerSerializer(many=True, help_text="Open blockers, oldest first.")
    open_blockers_by_age = BarSerializer(many=True, help_text="Open blockers counted by how long they have been open.")
    fix_times = BarSerializer(many=True, help_text="Fixed findings counted by how long the fix took.")
    endings = BarSerializer(
        many=True,
        help_text="How findings ended: fixed after a verification said likely fixed, fixed by hand, dismissed; "
        "and how many are still open.",
    )
    top_files = BarSerializer(many=True, help_text="The files with the most findings (label is the path).")
    recurring_tags = BarSerializer(many=True, help_text="Tags on two or more of the repository's findings.")


class FileFindingSerializer(FindingBriefSerializer):
    pull_request_reference = serializers.CharField(source="pull_request.reference", read_only=True)
    recorded_as = serializers.ListField(child=serializers.CharField(), help_text="The names it was recorded under.")

    class Meta(FindingBriefSerializer.Meta):
        fields = FindingBriefSerializer.Meta.fields + ["pull_request_reference", "created_at", "recorded_as"]


class FileFindingsSerializer(serializers.Serializer):
    path = serializers.CharField()
    names = serializers.ListField(
        child=serializers.CharField(), help_text="The path, then the other names verification saw the file have."
    )
    findings = FileFindingSerializer(many=True, help_text="Every finding recorded on the file, newest first.")


def finding_link_data(link: FindingLink, finding: Finding) -> dict:
    return {
        "id": link.pk,
        "kind": link.kind,
        "direction": "outgoing" if link.source_id == finding.pk else "incoming",
        "label": link.label_from(finding),
        "note": link.note,
        "finding": link.other_end(finding),
    }


class TagSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:tag-detail", lambda tag: {"slug": tag.slug})
    html_url = AbsoluteSiteUrlField()
    findings_count = serializers.IntegerField(read_only=True, help_text="Findings that carry it, in any repository.")
    findings_url = serializers.SerializerMethodField(help_text="Its findings, newest first.")

    class Meta:
        model = Tag
        fields = ["slug", "url", "html_url", "description", "findings_count", "findings_url"]

    def get_findings_url(self, tag) -> str:
        return reverse("api:finding-list", request=self.context.get("request")) + f"?tag={tag.slug}&ordering=-created_at"


class FindingDetailSerializer(FindingSerializer):
    evidence = EvidenceSerializer(many=True, read_only=True)
    tags = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)
    links = serializers.SerializerMethodField(help_text="Links to other findings, made from either end.")
    related_url = ApiUrlField("api:finding-related", lambda finding: {"pk": finding.pk})
    review_comment_url = serializers.CharField(read_only=True, help_text="The review comment; may be empty.")
    history_url = ApiUrlField("api:finding-history", lambda finding: {"pk": finding.pk})
    resolve_url = ApiUrlField("api:finding-resolve", lambda finding: {"pk": finding.pk})
    verifications_url = serializers.SerializerMethodField()

    class Meta(FindingSerializer.Meta):
        fields = FindingSerializer.Meta.fields + [
            "body", "fix", "review_comment_url", "resolution_note", "evidence", "tags", "links", "related_url",
            "history_url", "resolve_url", "verifications_url",
        ]

    @extend_schema_field(FindingLinkSerializer(many=True))
    def get_links(self, finding) -> list:
        links = sorted([*finding.links_out.all(), *finding.links_in.all()], key=lambda link: link.pk)
        return FindingLinkSerializer([finding_link_data(link, finding) for link in links], many=True,
                                     context=self.context).data

    def get_verifications_url(self, finding) -> str:
        return reverse("api:verification-list", request=self.context.get("request")) + f"?finding={finding.pk}"


class EvidenceResultSerializer(serializers.ModelSerializer):
    position = serializers.IntegerField(source="evidence.position", read_only=True)
    kind = serializers.CharField(source="evidence.kind", read_only=True)
    moved = serializers.BooleanField(read_only=True, help_text="The evidence holds, somewhere else than recorded.")

    class Meta:
        model = EvidenceResult
        fields = [
            "evidence", "position", "kind", "state", "path", "start_line", "end_line", "detail", "moved", "facts",
        ]


class VerificationSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:verification-detail", lambda verification: {"pk": verification.pk})
    finding_number = serializers.IntegerField(source="finding.number", read_only=True)
    commit = serializers.SlugRelatedField(slug_field="sha", read_only=True)
    results = EvidenceResultSerializer(many=True, read_only=True)

    class Meta:
        model = Verification
        fields = [
            "id", "url", "finding", "finding_number", "commit", "verdict", "checked_at", "first_checked_at", "detail",
            "results",
        ]


class FindingEventSerializer(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    commit = serializers.SlugRelatedField(slug_field="sha", read_only=True, allow_null=True)

    class Meta:
        model = FindingEvent
        fields = ["id", "kind", "from_status", "to_status", "actor", "at", "commit", "note", "source"]


class VerificationRunSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:run-detail", lambda run: {"pk": run.pk})
    pull_request_reference = serializers.CharField(source="pull_request.reference", read_only=True)
    commit = serializers.SlugRelatedField(
        slug_field="sha", read_only=True, allow_null=True,
        help_text="The commit verified; null when every pinned commit is.",
    )
    requested_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    percent = serializers.IntegerField(read_only=True)
    is_active = serializers.BooleanField(read_only=True, help_text="Queued or running.")

    class Meta:
        model = VerificationRun
        fields = [
            "id", "url", "pull_request", "pull_request_reference", "commit", "task_id", "status", "done", "total",
            "percent", "message", "is_active", "requested_by", "created_at", "started_at", "finished_at",
        ]


# --- The merge gate ------------------------------------------------------------------------------


class GateBlockerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    title = serializers.CharField()
    verdict = serializers.CharField(
        allow_null=True, help_text="Its verdict at the commit (present, likely_fixed, ...); null while unverified."
    )
    url = serializers.URLField(help_text="The finding's page on the site.")


class GateRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    status_url = serializers.URLField()


class GateSerializer(serializers.Serializer):
    pull_request = serializers.CharField(help_text="owner/name#number")
    commit = serializers.CharField(help_text="The commit as recorded: the full SHA once known.")
    mergeable = serializers.BooleanField(help_text="Verified at this commit, with no open blocker.")
    verified = serializers.BooleanField(help_text="Every open blocker has a verdict at this commit.")
    reason = serializers.CharField(help_text="One sentence for a CI log.")
    open_blockers = GateBlockerSerializer(many=True)
    possibly_regressed = GateBlockerSerializer(
        many=True, help_text="Blockers marked fixed whose evidence holds again at this commit; they do not block."
    )
    how_to_verify = serializers.CharField(allow_null=True, help_text="The request that verifies this commit.")
    verification_run = GateRunSerializer(allow_null=True, help_text="A queued or running verification, if any.")


# --- Writes --------------------------------------------------------------------------------------


class VerifyRequestSerializer(serializers.Serializer):
    commit = ShaField(
        required=False, allow_null=True, default=None,
        help_text="Full or abbreviated SHA (7-40 hex digits); omit to verify every pinned commit.",
    )


class VerifyResponseSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    task_id = serializers.CharField(help_text="The Celery task id; empty until the task is enqueued.")
    status = serializers.CharField()
    status_url = serializers.URLField(help_text="Poll this for status, done, total, percent and message.")


class ResolveRequestSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Finding.Status.choices)
    commit = ShaField(
        required=False, allow_null=True, default=None,
        help_text="The commit it was fixed in (needed for fixed): full or abbreviated SHA.",
    )
    note = serializers.CharField(
        required=False, allow_blank=True, default="",
        help_text="Why (needed to dismiss, and to mark fixed anyway).",
    )
    anyway = serializers.BooleanField(
        required=False, default=False,
        help_text=(
            "Mark it fixed although the latest verification at that commit says its evidence still holds "
            "(present or partly fixed); needs a note. Without it such a change is refused with `still_holds`."
        ),
    )


class TagsRequestSerializer(serializers.Serializer):
    tags = serializers.ListField(
        child=serializers.CharField(max_length=60), max_length=50,
        help_text="Every tag the finding should carry (slugs); unknown ones are created.",
    )


class TagDescriptionRequestSerializer(serializers.Serializer):
    description = serializers.CharField(
        allow_blank=True, max_length=2000, help_text="What findings with this tag have in common; empty clears it."
    )


class LinkRequestSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=FindingLink.Kind.choices)
    finding = serializers.CharField(max_length=300, help_text="The other finding: owner/name#4108/4, or its id.")
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class ResolveResponseSerializer(serializers.Serializer):
    finding = FindingDetailSerializer()
    event = FindingEventSerializer()


class ImportReportSerializer(serializers.Serializer):
    pull_request = serializers.CharField(help_text="owner/name#number")
    url = serializers.URLField(help_text="The pull request in the API.")
    created = serializers.ListField(child=serializers.CharField())
    updated = serializers.ListField(child=serializers.CharField())
    unchanged = serializers.ListField(child=serializers.CharField())
    notes = serializers.ListField(
        child=serializers.CharField(), help_text="What the bundle asked for and was left undone, and why."
    )


class ImportJobSerializer(serializers.Serializer):
    job = serializers.IntegerField(source="pk")
    status = serializers.CharField()
    findings = serializers.IntegerField(help_text="How many findings the bundle has.")
    message = serializers.CharField()
    report = serializers.JSONField(allow_null=True, help_text="Created, updated and unchanged, once done.")
    errors = serializers.JSONField(allow_null=True, help_text="(field, message) pairs, when it failed.")
    status_url = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_status_url(self, job) -> str:
        return reverse("api:import-detail", kwargs={"pk": job.pk}, request=self.context.get("request"))


class WebhookResponseSerializer(serializers.Serializer):
    detail = serializers.CharField()
    duplicate = serializers.BooleanField()
    run = serializers.IntegerField(allow_null=True)
    status_url = serializers.URLField(allow_null=True)


# --- Errors --------------------------------------------------------------------------------------


class FieldErrorSerializer(serializers.Serializer):
    field = serializers.CharField(
        help_text="Dotted path of the field, e.g. findings[0].evidence[1].regex; empty for the whole."
    )
    message = serializers.CharField()


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong and what to do.")


class ValidationErrorSerializer(ErrorSerializer):
    errors = FieldErrorSerializer(many=True, required=False)
