"""The signed-in user's own API tokens: list them, make one (its secret is on the answer to that
request only, never stored or put in a message), revoke one (after a confirmation: a revoked
token cannot be brought back, and whatever used it stops working at once)."""
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from access.models import ApiToken
from access.tokens import api_token_create, api_token_revoke
from core.errors import RecheckError
from web.forms.tokens import TokenForm


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_list(request):
    form = TokenForm(request.POST or None, user=request.user)
    created = secret = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        once = f"token-form:{request.user.pk}:{data['once']}"
        # The one-time field is spent with the token it makes and with nothing else: it is claimed
        # before the token's transaction (so two sends at once make one token, the second told so)
        # and given back when that transaction does not commit, so a refused form can be corrected
        # and sent again.
        if not cache.add(once, True, timeout=86400):
            messages.warning(request, "That form was already sent, and its token made: its secret was shown once. "
                             "If you did not copy it, revoke that token and make another.")
            return redirect("access:tokens")
        try:
            # Atomic itself: a token that is not committed raises here. (Not wrapped in another
            # transaction, which would roll back the audit entry of a refusal.)
            created, secret = api_token_create(
                user=request.user, name=data["name"], scopes=data["scopes"], days=data["days"],
                repositories=list(data["repositories"]), created_by=request.user,
            )
        except RecheckError as error:
            cache.delete(once)
            form.add_error(None, str(error))
        except BaseException:
            cache.delete(once)
            raise
        else:
            form = TokenForm(user=request.user)
    tokens = ApiToken.objects.filter(user=request.user).prefetch_related("repositories").order_by("-created")
    return render(request, "access/tokens.html", {"form": form, "tokens": tokens, "created": created,
                                                  "secret": secret})


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def token_revoke(request, token_key: str):
    """GET, or a POST without `confirm` (the list's button): the confirmation page. A POST from it
    revokes."""
    token = ApiToken.objects.filter(user=request.user, token_key=token_key, revoked_at__isnull=True).first()
    if token is None:
        raise Http404("You have no active token that starts with that.")
    if request.method == "GET" or request.POST.get("confirm") != "yes":
        return render(request, "access/token_revoke.html", {"token": token})
    try:
        api_token_revoke(token=token, revoked_by=request.user)
        messages.success(request, f"Revoked {token.label}: it stops working at once.")
    except RecheckError as error:
        messages.error(request, str(error))
    return redirect("access:tokens")
