"""A repository's outgoing webhooks as the API gives and takes them (the secret only once, when it
is made or rotated)."""
from rest_framework import serializers

from core.vocabulary import events as ev
from notify.models import WebhookEndpoint


class WebhookEndpointSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    url = serializers.CharField(max_length=2000)
    description = serializers.CharField(max_length=200, required=False, allow_blank=True)
    preset = serializers.ChoiceField(choices=WebhookEndpoint.Preset.choices, required=False)
    kinds = serializers.ListField(child=serializers.ChoiceField(choices=ev.EVENT_KINDS), allow_empty=False)
    active = serializers.BooleanField(required=False)
    disabled_reason = serializers.CharField(read_only=True)
    secrets = serializers.SerializerMethodField(help_text="How many secrets sign (more than one during a rotation).")
    created_at = serializers.DateTimeField(read_only=True)

    def get_secrets(self, endpoint) -> int:
        return len(endpoint.secrets)


class WebhookEndpointCreatedSerializer(WebhookEndpointSerializer):
    secret = serializers.CharField(read_only=True, help_text="whsec_…: shown this once; the receiver verifies with it.")


class WebhookAttemptSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    response_status = serializers.IntegerField(allow_null=True)
    error = serializers.CharField()
    response_body = serializers.CharField(help_text="The start of the receiver's answer (4 kB at most).")
    duration_ms = serializers.IntegerField()


class WebhookMessageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    message_id = serializers.CharField(help_text="The webhook-id header: the same on every attempt and resend.")
    kind = serializers.CharField()
    pull_request = serializers.IntegerField(source="pull_request.number", allow_null=True)
    status = serializers.CharField(help_text="pending, sending, sent or failed.")
    attempts = serializers.IntegerField()
    due_at = serializers.DateTimeField()
    sent_at = serializers.DateTimeField(allow_null=True)
    last_error = serializers.CharField()
    attempts_made = WebhookAttemptSerializer(many=True)
