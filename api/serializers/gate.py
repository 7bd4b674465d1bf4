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


class GateSerializer(serializers.Serializer):
    pull_request = serializers.CharField(help_text="owner/name#number")
    commit = serializers.CharField(help_text="The commit as recorded: the full SHA once known.")
    mergeable = serializers.BooleanField(help_text="Verified at this commit, with no open blocker.")
    verified = serializers.BooleanField(help_text="Every open blocker has a verdict at this commit.")
    reason = serializers.CharField(help_text="One sentence for a CI log.")
    open_blockers = GateBlockerSerializer(
        many=True, help_text="The open blockers, lowest numbers first: at most 50 (open_blockers_count has them all)."
    )
    open_blockers_count = serializers.IntegerField(help_text="How many blockers are open.")
    possibly_regressed = GateBlockerSerializer(
        many=True, help_text="Blockers marked fixed whose evidence holds again at this commit; they do not block. "
        "At most 50."
    )
    possibly_regressed_count = serializers.IntegerField(help_text="How many blockers look regressed.")
    open_blockers_url = serializers.URLField(
        help_text="The findings list of every open blocker of the pull request, in cursor pages."
    )
    how_to_verify = serializers.CharField(allow_null=True, help_text="The request that verifies this commit.")
    verification_run = GateRunSerializer(allow_null=True, help_text="A queued or running verification, if any.")
