"""Pull requests: a row of the list, and the detail with its pinned commits and the links to its
findings, gate and verify action."""
from rest_framework import serializers
from rest_framework.reverse import reverse

from api.serializers.fields import AbsoluteSiteUrlField, ApiUrlField
from findings.selectors.stack import pull_request_stack
from findings.state.stored import pull_request_state
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
    open_blockers = serializers.SerializerMethodField(help_text="Blockers still open.")
    findings_count = serializers.SerializerMethodField()
    counts = serializers.SerializerMethodField(
        help_text="Per kind (blocker, cleanup): total, open, fixed, dismissed, fixed_anyway, possibly_regressed, "
        "and verdict:<verdict> / open:<verdict> at the latest verified pin (unverified where none), from the "
        "pull request's stored state; a count of zero is left out."
    )
    latest_verified_commit = serializers.SerializerMethodField(
        help_text="The latest verified pin's commit, whose verdicts the findings report; null before any."
    )

    class Meta:
        model = PullRequest
        fields = [
            "id", "url", "html_url", "repository", "number", "reference", "title", "forge_url", "state",
            "open_blockers", "findings_count", "counts", "latest_verified_commit", "created_at", "updated_at",
        ]

    # From the PR's stored state (`findings.state`), as the pages and the gate read it.
    @staticmethod
    def _state(pull_request) -> dict:
        state = getattr(pull_request, "review_state", None)
        if state is None:
            state = pull_request.review_state = pull_request_state(pull_request_id=pull_request.pk)
        return state

    def get_counts(self, pull_request) -> dict:
        return self._state(pull_request)["counts"]

    def get_open_blockers(self, pull_request) -> int:
        return self._state(pull_request)["counts"].get("blocker", {}).get("open", 0)

    def get_findings_count(self, pull_request) -> int:
        counts = self._state(pull_request)["counts"]
        return sum(tally.get("total", 0) for tally in counts.values())

    def get_latest_verified_commit(self, pull_request) -> str | None:
        return self._state(pull_request)["latest_sha"]


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
    stack = serializers.SerializerMethodField(
        help_text="The stack it is part of: the open pull requests below it (the one its base branch is the head "
        "branch of, and so on down) and above it, nearest first, each with its gate at its head (`gate`: may merge, "
        "may not merge, overridden; `blocked_below`: the number of the lowest PR below holding it up); `cut` says "
        "why the reading stopped short (cycle, depth). Empty lists outside a stack."
    )

    class Meta(PullRequestSerializer.Meta):
        fields = PullRequestSerializer.Meta.fields + [
            "before", "change", "status_note", "opening", "closing", "comments_left", "cleanups_not_recorded",
            "attestation", "attested_by", "attested_at", "attested_commit", "pins", "findings_url", "gate_url",
            "verify_url", "base_branch", "head_branch", "stack",
        ]

    def get_stack(self, pull_request) -> dict:
        return pull_request_stack(pull_request)

    def get_findings_url(self, pull_request) -> str:
        return reverse("api:finding-list", request=self.context.get("request")) + f"?pull_request={pull_request.pk}"
