"""The merge gate's answer: may a pull request merge at a commit, its open blockers with their
verdicts, and a verification under way. The view builds it as plain data; this describes its shape
in the schema."""
from rest_framework import serializers


class GateBlockerSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    title = serializers.CharField()
    verdict = serializers.CharField(
        allow_null=True, help_text="Its verdict at the commit (present, likely_fixed, ...); null while unverified."
    )
    verdict_reason = serializers.CharField(
        allow_blank=True, help_text="Why a verdict of error is one, when its check items say: waiting (for CI), "
        "not_run or flaky; empty otherwise."
    )
    url = serializers.URLField(help_text="The finding's page on the site.")


class GateRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    status_url = serializers.URLField()


class GateOverriddenSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    by = serializers.CharField(help_text="Who overrode the gate.")
    reason = serializers.ChoiceField(choices=["urgent_fix", "accepted_risk", "false_positive", "other"])
    note = serializers.CharField(allow_blank=True)
    commit = serializers.CharField(help_text="The one commit the override holds at.")
    at = serializers.DateTimeField()


class GateOverdueSerializer(serializers.Serializer):
    finding = serializers.CharField(help_text="owner/name#number/finding")
    title = serializers.CharField()
    due_at = serializers.DateTimeField()


class GatePolicySerializer(serializers.Serializer):
    possibly_regressed_block = serializers.BooleanField()
    overdue_cleanups_block = serializers.BooleanField()
    override_role = serializers.CharField()


class GateSerializer(serializers.Serializer):
    pull_request = serializers.CharField(help_text="owner/name#number")
    commit = serializers.CharField(help_text="The commit as recorded: the full SHA once known.")
    mergeable = serializers.BooleanField(help_text="Verified at this commit, with no open blocker.")
    verified = serializers.BooleanField(help_text="Every open blocker has a verdict at this commit.")
    reason = serializers.CharField(help_text="One sentence for a CI log.")
    overridden = GateOverriddenSerializer(
        allow_null=True, help_text="A person overrode the gate at this commit: it is mergeable whatever blocks."
    )
    open_blockers = GateBlockerSerializer(
        many=True, help_text="The open blockers, lowest numbers first: at most 50 (open_blockers_count has them all)."
    )
    open_blockers_count = serializers.IntegerField(help_text="How many blockers are open.")
    possibly_regressed = GateBlockerSerializer(
        many=True, help_text="Blockers marked fixed whose evidence holds again at this commit; they block only where "
        "the repository's policy says so. At most 50."
    )
    possibly_regressed_count = serializers.IntegerField(help_text="How many blockers look regressed.")
    overdue_cleanups = GateOverdueSerializer(
        many=True, help_text="Cleanup follow-ups of the repository past their due date, when the policy lets them "
        "block. At most 50."
    )
    overdue_cleanups_count = serializers.IntegerField()
    blocked_below = serializers.IntegerField(
        allow_null=True, required=False,
        help_text="In a stack: the number of the lowest pull request below this one that may not merge, which "
        "keeps this one from merging; null when none does.")
    policy = GatePolicySerializer(help_text="The repository's merge policy this answer was derived with.")
    open_blockers_url = serializers.URLField(
        help_text="The findings list of every open blocker of the pull request, in cursor pages."
    )
    how_to_verify = serializers.CharField(allow_null=True, help_text="The request that verifies this commit.")
    verification_run = GateRunSerializer(allow_null=True, help_text="A queued or running verification, if any.")
