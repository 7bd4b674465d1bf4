"""The repository page's form of the merge policy: what the Admin typed, as the service takes
it (`findings.services.policy.repository_policy_update` checks the values again and the actor)."""
from django import forms

from core import vocabulary as v


class PolicyForm(forms.Form):
    possibly_regressed_block = forms.BooleanField(required=False,
                                                  label="Blockers that look regressed block the merge")
    overdue_cleanups_block = forms.BooleanField(required=False,
                                                label="Overdue cleanup follow-ups block every merge")
    cleanup_due_days = forms.IntegerField(min_value=1, max_value=v.LONGEST_DUE_DAYS,
                                          label="Cleanups are due, days after the merge")
    blocker_due_days = forms.IntegerField(min_value=1, max_value=v.LONGEST_DUE_DAYS,
                                          label="Blockers dismissed, fixed anyway or left open are due, days after the merge")
    regression_restarts_clock = forms.BooleanField(required=False, label="A regression restarts the clock")
    override_role = forms.ChoiceField(choices=list(v.OVERRIDE_ROLE_LABELS.items()),
                                      label="Who may override the gate")
