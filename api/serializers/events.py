"""Events of a timeline as the API gives them, with their payload's schema: the same JSON a
webhook's `data` carries for each event (`notify.payloads.event_data`)."""
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.vocabulary import events as ev


class EventFindingSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    kind = serializers.CharField(help_text="blocker or cleanup.")
    status = serializers.CharField(help_text="open, fixed or dismissed.")
    resolution = serializers.CharField(help_text="The status and how it got there (fixed_anyway).")
    verdict = serializers.CharField(allow_null=True, help_text="At the latest verified pin; null before any.")
    verdict_reason = serializers.CharField(
        required=False, help_text="Why the verdict is an error there, where its check items say: waiting, not_run or "
        "flaky; empty otherwise. Absent from an event written before reasons were on the timeline.")
    possibly_regressed = serializers.BooleanField()


class EventOverrideSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    by = serializers.CharField(help_text="Who overrode the gate (their user name); empty for an operator.")
    reason = serializers.CharField(help_text="urgent_fix, accepted_risk, false_positive or other.")
    note = serializers.CharField(help_text="Why, as the person wrote it.")
    commit = serializers.CharField(help_text="The pinned commit it holds at (full SHA).")
    at = serializers.DateTimeField()


class EventPayloadSerializer(serializers.Serializer):
    """What changed. Every field is optional: each kind carries the ones that concern it."""

    finding = EventFindingSerializer(required=False, help_text="The finding after the event (finding.* kinds).")
    # `from` and `to` are Python keywords: declared by name below.
    note = serializers.CharField(required=False, help_text="Why, as the person wrote it (finding.status_changed).")
    source = serializers.CharField(required=False, help_text="Where the person set it: site, api, admin, import.")
    reason = serializers.CharField(required=False, help_text="The gate's own sentence (gate.changed).")
    head_sha = serializers.CharField(required=False, allow_null=True)
    latest_sha = serializers.CharField(required=False, allow_null=True)
    run = serializers.IntegerField(required=False, help_text="The verification run (run.*).")
    retry = serializers.IntegerField(required=False, allow_null=True, help_text="The run queued again (run.reaped).")
    message = serializers.CharField(required=False, help_text="What went wrong (run.*).")
    follow_up = serializers.IntegerField(required=False, help_text="The follow-up (follow_up.*).")
    change = serializers.CharField(required=False)
    state = serializers.CharField(required=False, help_text="The follow-up's state after it.")
    due_at = serializers.DateTimeField(required=False, help_text="The follow-up's due date (follow_up.due_soon, "
                                       "follow_up.overdue).")
    due_state = serializers.CharField(required=False, help_text="due_soon or overdue.")
    commit = serializers.CharField(required=False, allow_null=True)
    override = EventOverrideSerializer(required=False, help_text="The override made or revoked (gate.overridden, "
                                       "gate.override_revoked).")
    revoked_by = serializers.CharField(required=False, help_text="Who revoked it (gate.override_revoked).")
    from_reason = serializers.CharField(
        required=False, allow_null=True,
        help_text="Why the verdict in `from` was an error: waiting, not_run or flaky; empty when it was not one or "
        "its check items did not say; null when the timeline did not yet keep reasons then (finding.verdict_changed, "
        "finding.regressed, finding.regression_cleared). A change of reason alone is a finding.verdict_changed.")
    to_reason = serializers.CharField(
        required=False, help_text="Why the verdict in `to` is an error, in the same words as `from_reason` "
        "(never null).")

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.JSONField(
            required=False, help_text="Before: a verdict (finding.verdict_changed, finding.regressed), "
            "{status, resolution} (finding.status_changed) or {mergeable, verified} (gate.changed).")
        fields["to"] = serializers.JSONField(required=False, help_text="After, in the same shape as `from`.")
        return fields


@extend_schema_field(EventPayloadSerializer)
class PayloadField(serializers.JSONField):
    pass


class ReviewEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ev.EVENT_KINDS)
    kind_label = serializers.SerializerMethodField()
    cause = serializers.ChoiceField(choices=tuple(ev.CAUSE_LABELS), help_text="person or recheck.")
    actor = serializers.SerializerMethodField(help_text="Who, when a person caused it (their user name).")
    at = serializers.DateTimeField()
    repository = serializers.SerializerMethodField(help_text="owner/name")
    pull_request = serializers.IntegerField(source="pull_request.number", allow_null=True,
                                            help_text="Its number; null for a follow-up's event without one.")
    generation = serializers.IntegerField(help_text="The PR's generation the event was derived into.")
    finding_number = serializers.IntegerField(allow_null=True)
    sha = serializers.CharField(help_text="The commit it happened at; empty when none.")
    payload = PayloadField()

    def get_kind_label(self, event) -> str:
        return ev.event_kind_label(event.kind)

    def get_actor(self, event) -> str | None:
        return event.actor.get_username() if event.actor_id and event.actor else None

    def get_repository(self, event) -> str:
        return self.context["repository_slug"]
