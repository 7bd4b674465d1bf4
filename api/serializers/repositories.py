"""Repositories: a repository, its publishing settings, the figures its page shows across its pull
requests, and every finding recorded on one of its files."""
from rest_framework import serializers

from api.serializers.fields import AbsoluteSiteUrlField, ApiUrlField
from api.serializers.related import FindingBriefSerializer
from reviews.models import Repository


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
            "url", "html_url", "slug", "owner", "name", "forge", "web_url", "default_branch", "fetched_at",
            "pulls_url", "figures_url", "visibility", "publish_checks", "publish_comment",
        ]
        read_only_fields = ["forge", "visibility", "publish_checks", "publish_comment"]


class PublishingSerializer(serializers.Serializer):
    publish_checks = serializers.BooleanField(
        required=False,
        help_text="A \"Recheck\" check run on each verified head (GitHub App), or a \"recheck\" commit status "
        "when only RECHECK_GITHUB_TOKEN is set: tokens cannot create check runs.",
    )
    publish_comment = serializers.BooleanField(
        required=False, help_text="One comment on the pull request, edited after each verification."
    )

    follow_up_issues = serializers.BooleanField(
        required=False, help_text="A GitHub issue for each follow-up: opened when the pull request merges, closed "
        "with a comment naming the commit when the follow-up is marked fixed, reopened when its evidence comes back.",
    )

    def validate(self, data):
        if not data:
            raise serializers.ValidationError("Send publish_checks, publish_comment, follow_up_issues or some of them.")
        return data


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
