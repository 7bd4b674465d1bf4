from django import forms

from findings.models import Finding
from recheck.errors import RecheckError
from reviews.services import commit_sha_checked


class ResolveForm(forms.Form):
    """What the admin asks before changing the status of findings. Whether the change may be made
    (a commit to fix, a reason to dismiss) is `finding_resolve`'s rule, shown as its message."""

    status = forms.ChoiceField(choices=Finding.Status.choices, widget=forms.HiddenInput)
    commit = forms.CharField(
        required=False,
        max_length=40,
        help_text="The commit it was fixed in: the full SHA or at least 7 hex digits.",
    )
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean_commit(self) -> str:
        commit = self.cleaned_data.get("commit", "").strip()
        if not commit:
            return ""
        try:
            return commit_sha_checked(commit)
        except RecheckError as error:
            raise forms.ValidationError(str(error)) from None
