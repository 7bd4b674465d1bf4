from django import forms

from findings.models import Finding


class ResolveForm(forms.Form):
    """What the admin asks before changing the status of findings."""

    status = forms.ChoiceField(choices=Finding.Status.choices, widget=forms.HiddenInput)
    commit = forms.CharField(
        required=False,
        max_length=40,
        help_text="The commit it was fixed in: the full SHA or at least 7 hex digits.",
    )
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean(self):
        data = super().clean()
        status = data.get("status")
        if status == Finding.Status.FIXED and not data.get("commit"):
            self.add_error("commit", "Say which commit fixed it.")
        if status == Finding.Status.DISMISSED and not data.get("note", "").strip():
            self.add_error("note", "Say why it is dismissed.")
        return data
