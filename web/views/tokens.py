"""The signed-in user's own API tokens: list them, make one (its secret is on the answer to that
request only, never stored or put in a message), revoke one."""
import secrets

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from access.models import ApiToken
from core.scopes import SCOPES
from access.tokens import api_token_create, api_token_revoke
from core.errors import RecheckError
from reviews.models import Repository


class TokenForm(forms.Form):
    # Reloading the page that shows a new secret sends the form again; this makes that a no-op.
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
        # Only the repositories the user may read are offered: the others do not exist for them.
        self.fields["repositories"].queryset = Repository.objects.readable_by(user).order_by("slug")
        self.fields["days"].initial = settings.RECHECK_API_TOKEN_DAYS
        self.fields["days"].max_value = settings.RECHECK_API_TOKEN_MAX_DAYS


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_list(request):
    form = TokenForm(request.POST or None, user=request.user)
    created = secret = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if not cache.add(f"token-form:{request.user.pk}:{data['once']}", True, timeout=86400):
            messages.warning(request, "That form was already sent, and its token made: its secret was shown once. "
                             "If you did not copy it, revoke that token and make another.")
            return redirect("access:tokens")
        try:
            created, secret = api_token_create(
                user=request.user, name=data["name"], scopes=data["scopes"], days=data["days"],
                repositories=list(data["repositories"]), created_by=request.user,
            )
            form = TokenForm(user=request.user)
        except RecheckError as error:
            form.add_error(None, str(error))
    tokens = ApiToken.objects.filter(user=request.user).prefetch_related("repositories").order_by("-created")
    return render(request, "access/tokens.html", {"form": form, "tokens": tokens, "created": created,
                                                  "secret": secret})


@login_required
@require_POST
def token_revoke(request, token_key: str):
    token = ApiToken.objects.filter(user=request.user, token_key=token_key, revoked_at__isnull=True).first()
    if token is None:
        raise Http404("You have no active token that starts with that.")
    try:
        api_token_revoke(token=token, revoked_by=request.user)
        messages.success(request, f"Revoked {token.label}: it stops working at once.")
    except RecheckError as error:
        messages.error(request, str(error))
    return redirect("access:tokens")
