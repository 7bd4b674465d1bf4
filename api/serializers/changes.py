"""What a pull request changes, as git knows it: the shape of the answer in the schema (the view
builds it as plain data from `findings.selectors.changes`)."""
from rest_framework import serializers


class ChangedFileSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="Where the file is at the head (the old path of a deleted file).")
    added = serializers.IntegerField(allow_null=True, help_text="Lines added, as git diff --numstat counts them; "
                                     "null for a binary file (git prints -).")
    removed = serializers.IntegerField(allow_null=True, help_text="Lines removed; null for a binary file.")
    old_path = serializers.CharField(allow_null=True, help_text="The path before a rename; null otherwise.")
    status = serializers.ChoiceField(
        choices=["added", "deleted", "modified", "renamed", "type_changed"], help_text="What git says happened to it."
    )
    binary = serializers.BooleanField()
    findings = serializers.ListField(
        child=serializers.IntegerField(), help_text="The numbers of the PR's findings whose evidence names it."
    )


class ChangedDirectorySerializer(serializers.Serializer):
    directory = serializers.CharField(help_text="The directory's path; empty for the top level.")
    files = serializers.IntegerField(help_text="Its own files changed (not its subdirectories').")
    added = serializers.IntegerField()
    removed = serializers.IntegerField()


class PullRequestChangesSerializer(serializers.Serializer):
    pull_request = serializers.CharField(help_text="owner/name#number")
    base = serializers.CharField(help_text="The full SHA compared from.")
    base_source = serializers.ChoiceField(
        choices=["base pin", "merge-base"],
        help_text="The PR's base pin, or else where its head forks from the repository's default branch.",
    )
    head = serializers.CharField(help_text="The full SHA compared to: the latest head pin, or else the latest pin.")
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    files = ChangedFileSerializer(many=True)
    directories = ChangedDirectorySerializer(many=True, help_text="The files summed per directory, most lines first.")
