"""What the API shows and accepts. Read serializers present rows; request serializers check the
shape of a write before a service sees it (the service still owns the rules). URLs follow GitHub's
convention: `url` is the API resource, `html_url` the page on the site."""
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from findings.exchange.bundle_schema import ShaField
from findings.models import Evidence, EvidenceResult, Finding, FindingEvent, Verification, VerificationRun
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

    class Meta:
        model = Repository
        # The clone URL and fetch errors stay out: either may carry credentials or server paths.
        fields = ["url", "slug", "owner", "name", "web_url", "default_branch", "fetched_at", "pulls_url",
                  "publish_checks", "publish_comment"]
        read_only_fields = ["publish_checks", "publish_comment"]


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


class FindingSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:finding-detail", lambda finding: {"pk": finding.pk})
    html_url = AbsoluteSiteUrlField()
    repository = serializers.CharField(source="pull_request.repository.slug", read_only=True)
    pull_request_reference = serializers.CharField(source="pull_request.reference", read_only=True)
    resolved_by = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True)
    resolved_commit = serializers.SlugRelatedField(slug_field="sha", read_only=True, allow_null=True)

    class Meta:
        model = Finding
        fields = [
            "id", "url", "html_url", "repository", "pull_request", "pull_request_reference", "number", "kind",
            "caught_by", "title", "summary", "path", "line", "status", "possibly_regressed", "resolved_by",
            "resolved_at", "resolved_commit", "created_at", "updated_at",
        ]


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


class FindingDetailSerializer(FindingSerializer):
    evidence = EvidenceSerializer(many=True, read_only=True)
    review_comment_url = serializers.CharField(read_only=True, help_text="The review comment; may be empty.")
    history_url = ApiUrlField("api:finding-history", lambda finding: {"pk": finding.pk})
    resolve_url = ApiUrlField("api:finding-resolve", lambda finding: {"pk": finding.pk})
    verifications_url = serializers.SerializerMethodField()

    class Meta(FindingSerializer.Meta):
        fields = FindingSerializer.Meta.fields + [
            "body", "fix", "review_comment_url", "resolution_note", "evidence", "history_url", "resolve_url",
            "verifications_url",
        ]

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
        fields = ["id", "from_status", "to_status", "actor", "at", "commit", "note", "source"]


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
    note = serializers.CharField(required=False, allow_blank=True, default="", help_text="Why (needed to dismiss).")


class ResolveResponseSerializer(serializers.Serializer):
    finding = FindingDetailSerializer()
    event = FindingEventSerializer()


class ImportReportSerializer(serializers.Serializer):
    pull_request = serializers.CharField(help_text="owner/name#number")
    url = serializers.URLField(help_text="The pull request in the API.")
    created = serializers.ListField(child=serializers.CharField())
    updated = serializers.ListField(child=serializers.CharField())
    unchanged = serializers.ListField(child=serializers.CharField())


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
