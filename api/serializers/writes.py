"""What the write endpoints accept and answer: verification requests, resolving, tagging and linking
a finding, describing a tag, imports and their background jobs, and the webhook's answer. They check
the shape of a write before a service sees it; the service still owns the rules."""
from rest_framework import serializers
from rest_framework.reverse import reverse

from api.serializers.findings import FindingDetailSerializer, FindingEventSerializer
from findings.exchange.schema import ShaField
from findings.forms import NOTE_MAX_LENGTH
from findings.models import Finding, FindingLink


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
        required=False, allow_blank=True, default="", max_length=NOTE_MAX_LENGTH,
        error_messages={"max_length": "A note is at most {max_length} characters."},
        help_text=f"Why (needed to dismiss, and to mark fixed anyway); at most {NOTE_MAX_LENGTH:,} characters, "
        "as on the site and in the admin.",
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
    repository = serializers.CharField(
        max_length=200, help_text="owner/name: the repository whose description of the tag this is."
    )
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
    changes = serializers.DictField(
        child=serializers.DictField(child=serializers.ListField(allow_null=True)),
        help_text="Each object that existed and changed (by its label, as in `updated`): each changed field as "
        "[before, after].",
    )
    dry_run = serializers.BooleanField(help_text="Whether this is a dry run: what importing would do, nothing written.")


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
