"""Every URL the project mounts is one the access tests cover: the site's pages and the API by the
persona matrices, the admin's model pages by their querysets, and each view of Django's or a
library's by name, with why it names no private object (or which test shows it does not leak one).
A new URL whose view is not classified here fails, saying where to classify it."""
import re

from django.urls import URLPattern, URLResolver, get_resolver

# Project code, by package: what covers it.
PROJECT = {
    "web.": "the site: tests/access/test_persona_matrix_site.py walks every route",
    "api.": "the API: tests/access/test_persona_matrix_api.py walks every operation of its schema",
    "backoffice.shortcut.": "the admin's View on site: tests/backoffice/test_view_on_site.py",
    "backoffice.": "the admin's own pages on an object, read through the model admin's get_queryset",
    "recheck.health.": "the health check, and the operations figures behind RECHECK_OPERATIONS_TOKEN: no object",
}

# The admin's pages of a model: each loads its object through the model admin's get_queryset
# (repository-scoped in backoffice.audited) and asks its model permissions.
MODEL_ADMIN_VIEW = re.compile(r"^django\.contrib\.(admin\.options\.ModelAdmin|auth\.admin\.UserAdmin)\.\w+$")

# Django's and the libraries' views, by name, with why each is safe.
BUILT_IN = {
    # The admin site's own pages: none loads an object by an id from the URL.
    "django.contrib.admin.sites.AdminSite.index": "lists the models the user has permissions on",
    "django.contrib.admin.sites.AdminSite.app_index": "lists an app's models the user has permissions on",
    "django.contrib.admin.sites.AdminSite.autocomplete_view": "searches through the model admin's get_queryset",
    "django.contrib.admin.sites.AdminSite.catch_all_view": "redirects to a URL with a slash, or 404",
    "django.contrib.admin.sites.AdminSite.i18n_javascript": "the admin's translations",
    "django.contrib.admin.sites.AdminSite.login": "sign-in (answered by the site's page first)",
    "django.contrib.admin.sites.AdminSite.logout": "sign-out",
    "django.contrib.admin.sites.AdminSite.password_change": "the signed-in user's own password",
    "django.contrib.admin.sites.AdminSite.password_change_done": "the signed-in user's own password",
    "django.contrib.auth.admin.UserAdmin.user_change_password": "users' admin, staff with auth permissions",
    # The admin's "<id>/" redirects to "<id>/change/", which loads through get_queryset; allauth's
    # old social/ paths redirect to 3rdparty/.
    "django.views.generic.base.RedirectView": "redirects to a URL whose own view checks",
    # Sign-in, sign-up and the account's own pages: about the signed-in person, never a repository.
    "allauth.account.views._account.AccountInactiveView": "sign-in",
    "allauth.account.views._email_change.EmailView": "the account's own addresses",
    "allauth.account.views._email_verification.ConfirmEmailView": "the account's own addresses",
    "allauth.account.views._email_verification.email_verification_sent": "the account's own addresses",
    "allauth.account.views._login.ConfirmLoginCodeView": "sign-in",
    "allauth.account.views._login.LoginView": "sign-in",
    "allauth.account.views._logout.LogoutView": "sign-out",
    "allauth.account.views._password_change.PasswordChangeView": "the account's own password",
    "allauth.account.views._password_change.PasswordSetView": "the account's own password",
    "allauth.account.views._password_reset.PasswordResetDoneView": "the account's own password",
    "allauth.account.views._password_reset.PasswordResetFromKeyDoneView": "the account's own password",
    "allauth.account.views._password_reset.PasswordResetFromKeyView": "the account's own password",
    "allauth.account.views._password_reset.PasswordResetView": "the account's own password",
    "allauth.account.views._reauthenticate.ConfirmReauthenticationCodeView": "sign-in",
    "allauth.account.views._reauthenticate.ReauthenticateView": "sign-in",
    "allauth.account.views._reauthenticate.RequestReauthenticationCodeView": "sign-in",
    "allauth.account.views._signup.SignupView": "sign-up",
    "allauth.socialaccount.providers.oauth2.views.OAuth2View.adapter_view.<locals>.view": "sign-in with a forge",
    "allauth.socialaccount.providers.openid_connect.views.callback": "sign-in with OpenID Connect",
    "allauth.socialaccount.providers.openid_connect.views.login": "sign-in with OpenID Connect",
    "allauth.socialaccount.views.ConnectionsView": "the account's own connections",
    "allauth.socialaccount.views.LoginCancelledView": "sign-in",
    "allauth.socialaccount.views.LoginErrorView": "sign-in",
    "allauth.socialaccount.views.SignupView": "sign-up",
    # The API's description: the schema and two readers of it.
    "drf_spectacular.views.SpectacularAPIView": "the API's schema",
    "drf_spectacular.views.SpectacularRedocView": "the API's documentation",
    "drf_spectacular.views.SpectacularSwaggerView": "the API's documentation",
}


def _walk(resolver, prefix=""):
    for pattern in resolver.url_patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def view_name(pattern: URLPattern) -> str:
    view = getattr(pattern.callback, "view_class", None) or pattern.callback
    return f"{view.__module__}.{view.__qualname__}"


def classification(name: str) -> str | None:
    for package, reason in PROJECT.items():
        if name.startswith(package):
            return reason
    if MODEL_ADMIN_VIEW.match(name):
        return "a model admin's page"
    return BUILT_IN.get(name)


def test_every_url_pattern_is_classified():
    unclassified = sorted({f"{route} ({view_name(pattern)})" for route, pattern in _walk(get_resolver())
                           if classification(view_name(pattern)) is None})
    assert not unclassified, (
        "Views that no access test covers: classify each in tests/recheck/test_url_classification.py, saying "
        f"why it names no private object or which test shows it does not: {unclassified}"
    )


def test_djangos_own_view_on_site_is_not_mounted():
    names = {view_name(pattern) for _, pattern in _walk(get_resolver())}
    assert "django.contrib.contenttypes.views.shortcut" not in names
    assert "backoffice.shortcut.view_on_site" in names


def test_each_classified_view_is_still_mounted():
    """A name kept here after its view is gone would classify a stranger that reuses it."""
    names = {view_name(pattern) for _, pattern in _walk(get_resolver())}
    assert set(BUILT_IN) <= names, sorted(set(BUILT_IN) - names)
