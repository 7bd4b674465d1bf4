"""The one resolve form: what a person types to mark findings fixed, dismiss or reopen them, on the
site's decide page and in the admin alike, with the same fields, limits and messages. It checks the
shape of what was typed; whether the change may be made (a commit the mirror knows, a reason to
dismiss, a note to mark fixed where the evidence still holds) is `finding_resolve`'s rule, and its
refusal is shown next to the field it names."""
from django import forms

from findings.models import Finding

# The three decisions, as their buttons say them, in the order they are offered.
DECISION_LABELS = {
    Finding.Status.FIXED: "Mark fixed",
    Finding.Status.DISMISSED: "Dismiss",
    Finding.Status.OPEN: "Reopen",
}

# A full SHA-1 is 40 hexadecimal digits (reviews.services.commit_sha_checked says what a SHA is).
COMMIT_MAX_LENGTH = 40
NOTE_MAX_LENGTH = 5000
NEXT_MAX_LENGTH = 2000


class ResolveForm(forms.Form):
    status = forms.ChoiceField(choices=list(DECISION_LABELS.items()), widget=forms.HiddenInput)
    commit = forms.CharField(
        required=False, max_length=COMMIT_MAX_LENGTH, strip=True,
        help_text="The commit that fixed it: its full SHA, or at least 7 hex digits.",
        error_messages={
            "max_length": "A commit SHA has 7 to %(limit_value)d hexadecimal digits; this has %(show_value)d characters.",
        },
    )
    note = forms.CharField(
        required=False, max_length=NOTE_MAX_LENGTH, widget=forms.Textarea(attrs={"rows": 3}),
        error_messages={"max_length": "A note is at most %(limit_value)d characters; this one has %(show_value)d."},
    )
    anyway = forms.BooleanField(
        required=False, label="Mark fixed anyway",
        help_text="The evidence still holds at this commit: mark it fixed all the same, and say why in the note.",
    )
    # Where the site's decide page goes back to once decided (the admin returns to its own pages).
    next = forms.CharField(required=False, max_length=NEXT_MAX_LENGTH, widget=forms.HiddenInput)
