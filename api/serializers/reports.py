"""CI reports sent to a commit: the request's parameters and what was kept."""
from rest_framework import serializers

from core import vocabulary
from findings.models import CheckReport


class ReportParametersSerializer(serializers.Serializer):
    """The query parameters of a report's upload (the body is the report itself)."""

    check = serializers.CharField(max_length=255, trim_whitespace=False,
                                  help_text="The check's name, as the CI gives it (the job's or the lane's).")
    conclusion = serializers.ChoiceField(
        choices=vocabulary.CONCLUSIONS, required=False, default="",
        help_text="The check's conclusion; read from the report when left out (a failed test or an error or "
        "warning result fails it). Needed when no report is sent.",
    )
    url = serializers.CharField(required=False, default="", allow_blank=True, max_length=500,
                                help_text="The run on the CI.")
    attempt = serializers.IntegerField(required=False, default=1, min_value=1, max_value=2_147_483_647,
                                       help_text="The run's attempt (a re-run is another report).")
    app = serializers.CharField(required=False, default="", allow_blank=True, max_length=255,
                                help_text="The app or CI that made the report.")
    checkout_root = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=1000,
        help_text="SARIF: the CI's checkout directory, taken off paths the tool wrote absolute to it.",
    )
    completed_at = serializers.DateTimeField(required=False, default=None, allow_null=True,
                                             help_text="When the check finished.")


class CheckReportSerializer(serializers.ModelSerializer):
    commit = serializers.SlugRelatedField(slug_field="sha", read_only=True)
    repository = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    check = serializers.CharField(source="check_name", read_only=True)
    created = serializers.BooleanField(read_only=True, help_text="False when this report had been sent before.")

    class Meta:
        model = CheckReport
        fields = [
            "id", "repository", "commit", "check", "app", "source", "conclusion", "format", "tool", "url", "attempt",
            "completed_at", "received_at", "size", "tests", "tests_failed", "tests_skipped", "results", "created",
        ]


class NewFailureSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["test", "result", "check"],
                                   help_text="A failed test, a scanner's result, or a whole failed check.")
    check = serializers.CharField(help_text="The check's name, as its CI gives it.")
    app = serializers.CharField(help_text="The app that reported it; empty when not given.")
    test = serializers.CharField(help_text="kind test: the test id that names it (a pytest node id, or classname.name).")
    rule = serializers.CharField(help_text="kind result: the scanner's rule.")
    path = serializers.CharField(help_text="kind result: the file, relative to the repository.")
    start_line = serializers.IntegerField(allow_null=True, help_text="kind result: its line; null for a whole file.")
    message = serializers.CharField(help_text="kind result: what the scanner said.")
    url = serializers.CharField(help_text="The run on the CI; empty when not given.")
    evidence = serializers.DictField(help_text="The check item that names it, recorded at the head: send it in a "
                                     "finding's evidence (the bundle format) to record it.")


class NewFailuresSerializer(serializers.Serializer):
    pull_request = serializers.CharField(help_text="owner/name#number")
    head = serializers.CharField(allow_null=True, help_text="The head's full SHA: its latest head pin, else its "
                                 "latest pin; null with nothing pinned.")
    reported = serializers.IntegerField(help_text="How many reports of checks are kept at the head (0: CI has "
                                        "said nothing yet).")
    count = serializers.IntegerField(help_text="How many failures no finding names.")
    failures = NewFailureSerializer(many=True, help_text="The first 50 of them, in the order of their checks' names.")
