from django import forms

from findings.models import Finding


class ResolveForm(forms.Form):
    """What the admin asks before changing the status of findings. Whether the change may be made
    (a commit the mirror knows, a reason to dismiss, a note to mark fixed where the evidence still
    holds) is `finding_resolve`'s rule, shown as its message."""

    status = forms.ChoiceField(choices=Finding.Status.choices, widget=forms.HiddenInput)
    commit = forms.CharField(
        required=False,
        max_length=40,
        help_text="The commit it was fixed in: the full SHA or at least 7 hex digits.",
    )
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    anyway = forms.BooleanField(
        required=False,
        label="Mark fixed anyway",
        help_text="The evidence still holds at this commit: mark it fixed all the same (say why in the note).",
    )
