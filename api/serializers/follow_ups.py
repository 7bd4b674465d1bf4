"""Follow-ups as the API gives them: `findings.selectors.follow_ups.follow_up_summary`, the one
shape the site's Follow-ups page and `recheck-gate` read too."""
from rest_framework import serializers

from findings.selectors.follow_ups import follow_up_summary


class FollowUpEvidenceSerializer(serializers.Serializer):
    state = serializers.CharField(help_text="holds, moved, gone, error or unchecked, at the default branch's head.")
    where = serializers.CharField(help_text="Where it is now, in words; a gone item says where it was last seen.")
    location = serializers.CharField(help_text="path:lines at the head, when it holds.")
    last_seen = serializers.CharField(help_text="path:lines where it was last seen, when it is gone.")
    detail = serializers.CharField()


class FollowUpSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    finding = serializers.CharField(help_text="owner/name#number/finding")
    finding_number = serializers.IntegerField()
    title = serializers.CharField()
    kind = serializers.CharField()
    origin = serializers.CharField(help_text="open_cleanup, open_blocker, dismissed_blocker or fixed_anyway.")
    origin_label = serializers.CharField()
    pull_request = serializers.CharField(help_text="The pull request it was found in, owner/name#number.")
    pull_request_number = serializers.IntegerField()
    merge_commit = serializers.CharField(allow_null=True)
    opened_at = serializers.DateTimeField()
    age_days = serializers.IntegerField()
    state = serializers.CharField(help_text="open, verified_fixed (to be marked by a person), fixed or closed.")
    state_label = serializers.CharField()
    due_at = serializers.DateTimeField(allow_null=True, help_text="When it is due, by the repository's merge policy "
                                       "(null: opened before due dates).")
    due_state = serializers.ChoiceField(choices=["", "due", "due_soon", "overdue"],
                                        help_text="overdue, due_soon (within 7 days), due, or '' (no due date, or "
                                        "nothing left to do).")
    due_label = serializers.CharField()
    regressed = serializers.BooleanField(help_text="Marked fixed, and its evidence is back on the default branch.")
    verdict = serializers.CharField(allow_null=True, help_text="At the default branch's head.")
    verdict_label = serializers.CharField()
    verdict_detail = serializers.CharField()
    checked_commit = serializers.CharField(allow_null=True)
    checked_branch = serializers.CharField()
    checked_at = serializers.DateTimeField(allow_null=True)
    evidence = FollowUpEvidenceSerializer(many=True)
    fixed_commit = serializers.CharField(allow_null=True, help_text="Where it was verified fixed, or marked fixed.")
    decided_by = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField()

    def to_representation(self, instance):
        return follow_up_summary(instance)
