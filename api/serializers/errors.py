"""Error bodies: what went wrong and what to do, with the fields at fault for a validation error."""
from rest_framework import serializers


class FieldErrorSerializer(serializers.Serializer):
    field = serializers.CharField(
        help_text="Dotted path of the field, e.g. findings[0].evidence[1].regex; empty for the whole."
    )
    message = serializers.CharField()


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong and what to do.")


class ValidationErrorSerializer(ErrorSerializer):
    errors = FieldErrorSerializer(many=True, required=False)
