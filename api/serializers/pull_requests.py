"""Pull requests: a row of the list, and the detail with its pinned commits and the links to its
findings, gate and verify action."""
from rest_framework import serializers
from rest_framework.reverse import reverse

from api.serializers.fields import AbsoluteSiteUrlField, ApiUrlField
from reviews.models import PinnedCommit, PullRequest


def _pull_request_kwargs(pull_request: PullRequest) -> dict:
    repository = pull_request.repository
    return {"owner": repository.owner, "name": repository.name, "number": pull_request.number}


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
    committed_at = serializers.DateTimeField(
        source="commit.committed_at", read_only=True, allow_null=True,
        help_text="When it was committed; null until the repository's mirror has the commit.",
    )
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
