"""Evidence and what verification says of it: evidence items, a finding's verdict at a commit with a
result per item, and requested verification runs with their progress."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.fields import ApiUrlField
from core import vocabulary
from findings.models import Evidence, EvidenceResult, Verification, VerificationRun
from findings.selectors.successors import successor_read


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
            "expect", "sha", "submodule_repository", "reference_branch", "check_name", "check_app", "check_tests",
            "check_results", "caption", "permalink",
        ]
        extra_kwargs = {
            "check_tests": {"help_text": "Check evidence: the test ids inside the check it names."},
            "check_results": {"help_text": "Check evidence: the scanner results inside the check, as "
                              "{rule, path, start_line} where each was reported at the item's commit."},
        }


class RecordedLinesSerializer(serializers.Serializer):
    path = serializers.CharField()
    start_line = serializers.IntegerField()
    end_line = serializers.IntegerField()


class SuccessorSerializer(serializers.Serializer):
    """The shape of `findings.selectors.successors.SuccessorView.as_data`, for the schema."""

    kind = serializers.ChoiceField(choices=vocabulary.SUCCESSOR_KINDS)
    path = serializers.CharField(help_text="Where the code that replaced it is (the deleted file's path).")
    start_line = serializers.IntegerField(allow_null=True, help_text="For a removal, the line now where it was.")
    end_line = serializers.IntegerField(allow_null=True)
    larger = serializers.BooleanField(help_text="The span is much larger than the lines it replaced.")
    recorded = RecordedLinesSerializer(help_text="The lines it replaced, at the commit the evidence was recorded at.")
    similarity = serializers.FloatField(required=False, help_text="moved_and_changed: how alike the near copy is.")
    summary = serializers.CharField(help_text="The sentence every interface says it with.")


class EvidenceResultSerializer(serializers.ModelSerializer):
    position = serializers.IntegerField(source="evidence.position", read_only=True)
    kind = serializers.CharField(source="evidence.kind", read_only=True)
    moved = serializers.BooleanField(read_only=True, help_text="The evidence holds, somewhere else than recorded.")
    successor = serializers.SerializerMethodField(
        help_text="For evidence that is gone: the code that replaced it, when it can be told."
    )

    class Meta:
        model = EvidenceResult
        fields = [
            "evidence", "position", "kind", "state", "path", "start_line", "end_line", "detail", "moved", "facts",
            "successor",
        ]

    @extend_schema_field(SuccessorSerializer(allow_null=True))
    def get_successor(self, result: EvidenceResult) -> dict | None:
        shown = successor_read(result.successor, sha=result.verification.commit.sha) if result.successor else None
        return shown.as_data() if shown else None


class VerificationSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:verification-detail", lambda verification: {"pk": verification.pk})
    finding_number = serializers.IntegerField(source="finding.number", read_only=True)
    commit = serializers.SlugRelatedField(slug_field="sha", read_only=True)
    results = EvidenceResultSerializer(many=True, read_only=True)
    verdict_reason = serializers.CharField(
        read_only=True,
        help_text="Why a verdict of error is one at this commit, when its check items say: waiting (for CI), "
        "not_run or flaky; empty otherwise. Each commit's own, by the rule the finding's verdict_reason follows.",
    )

    class Meta:
        model = Verification
        fields = [
            "id", "url", "finding", "finding_number", "commit", "verdict", "verdict_reason", "checked_at",
            "first_checked_at", "detail", "results",
        ]


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
