"""The token page's form. What a token may be given is `access.tokens`' rule: the form offers the
scopes and repositories that rule allows the user, and the service says why anything else is
refused."""
import secrets

from django import forms
from django.conf import settings

from access.tokens import api_token_scopes_held
from core.scopes import SCOPES
from reviews.models import Repository


class TokenForm(forms.Form):
    # Reloading the page that shows a new secret sends the form again; this makes that a no-op
    # (the view spends it with the token it made, never before).
    once = forms.CharField(widget=forms.HiddenInput)
    name = forms.CharField(max_length=100, help_text="What it is for, e.g. “CI merge gate”.")
    scopes = forms.MultipleChoiceField(choices=list(SCOPES.items()), widget=forms.CheckboxSelectMultiple,
                                       initial=["read"])
    days = forms.IntegerField(min_value=1, label="Expires after (days)")
    repositories = forms.ModelMultipleChoiceField(
        queryset=Repository.objects.order_by("slug"), required=False,
        help_text="Leave empty for every repository you may see.",
    )

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["once"].initial = secrets.token_urlsafe(16)
        # Only the scopes the user may hold somewhere are offered: a box that can only be refused
        # is not a choice.
        held = set(api_token_scopes_held(user=user))
        self.fields["scopes"].choices = [(scope, label) for scope, label in SCOPES.items() if scope in held]
        # Only the repositories the user may read are offered: the others do not exist for them.
        self.fields["repositories"].queryset = Repository.objects.readable_by(user).order_by("slug")
        self.fields["days"].initial = settings.RECHECK_API_TOKEN_DAYS
        self.fields["days"].max_value = settings.RECHECK_API_TOKEN_MAX_DAYS
