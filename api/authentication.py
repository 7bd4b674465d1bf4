"""API authentication with hashed tokens (`Authorization: Token <secret>`), on knox's lookup by
the secret's first characters and constant-time digest comparison."""
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from knox.auth import TokenAuthentication
from rest_framework import exceptions

from access.audit import client_ip
from access.models import ApiToken

# Recording every request's use would write once per request; once a minute says the same.
LAST_USE_RESOLUTION = timedelta(minutes=1)
NEW_TOKEN_HINT = "An admin creates a new one with manage.py create_api_token, or you do on the site's token page."


class ApiTokenAuthentication(TokenAuthentication):
    def authenticate(self, request):
        result = super().authenticate(request)
        if result is not None:
            _record_use(result[1], ip=client_ip(request))
        return result

    def _cleanup_token(self, auth_token) -> bool:
        # knox deletes expired tokens as it meets them; keeping them lets the admin show what a
        # token could do and when it was last used, and lets validate_user say why it is refused.
        return False

    def validate_user(self, auth_token: ApiToken):
        if auth_token.is_revoked:
            raise exceptions.AuthenticationFailed(
                f"This token ({auth_token.name}) was revoked on {auth_token.revoked_at:%Y-%m-%d %H:%M} UTC. {NEW_TOKEN_HINT}"
            )
        if auth_token.is_expired:
            raise exceptions.AuthenticationFailed(
                f"This token ({auth_token.name}) expired on {auth_token.expiry:%Y-%m-%d %H:%M} UTC. {NEW_TOKEN_HINT}"
            )
        return super().validate_user(auth_token)


def _record_use(token: ApiToken, *, ip: str | None) -> None:
    now = timezone.now()
    ApiToken.objects.filter(pk=token.pk).filter(
        Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USE_RESOLUTION) | ~Q(last_used_ip=ip)
    ).update(last_used_at=now, last_used_ip=ip)


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes the token header (registered by being defined)."""

    target_class = ApiTokenAuthentication
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": 'A token made with manage.py create_api_token, sent as "Token <secret>". Its scopes '
            "(read, verify, import, resolve, settings) and repositories limit what it may do.",
        }
