"""Creating and revoking API tokens: the command, the admin and the site's token page call these."""
from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from access.audit import audit_record, audit_refusal
from access.models import ApiToken
from access.permissions import ACTION_PERMISSIONS, Action, user_may
from core.scopes import SCOPE_ACTION_NAMES, SCOPES, scopes_checked
from core.errors import RecheckError


class TokenError(RecheckError):
    pass


# The action a token's user must hold for each write scope, and the model permission that carries
# it instance-wide, from the one scope table (core.scopes): a token never promises more than its
# user may do.
SCOPE_ACTIONS: dict[str, Action] = {scope: Action(action) for scope, action in SCOPE_ACTION_NAMES.items()}
SCOPE_PERMISSIONS: dict[str, str] = {scope: ACTION_PERMISSIONS[action] for scope, action in SCOPE_ACTIONS.items()}


def api_token_scope_held(*, user, scope: str, repositories=()) -> bool:
    """Whether `user` may hold `scope` on a token limited to `repositories` (or of every repository
    when there are none). Reading needs nothing more (the repositories are checked on their own);
    each write scope needs its action on every repository the token is limited to or, for a token
    of every repository, on at least one (each request is then checked on its own)."""
    if scope not in SCOPE_ACTIONS:
        return True
    action = SCOPE_ACTIONS[scope]
    if repositories:
        return all(user_may(user, action, repository) for repository in repositories)
    return user_may(user, action)


def api_token_scopes_held(*, user) -> list[str]:
    """The scopes `user` may hold on some token, in the order of `core.scopes.SCOPES`: what the
    token page offers."""
    return [scope for scope in SCOPES if api_token_scope_held(user=user, scope=scope)]


def api_token_create(
    *,
    user,
    name: str,
    scopes,
    days: int | None = None,
    repositories=(),
    created_by=None,
) -> tuple[ApiToken, str]:
    """A new token for `user` and its secret, which exists only in this return value: the database
    keeps its digest. It expires after `days` (RECHECK_API_TOKEN_DAYS by default, at most
    RECHECK_API_TOKEN_MAX_DAYS). A write scope needs the model permission that goes with it, so a
    token never promises more than its user may do."""
    target = f"{user.get_username()}: {name}"
    try:
        token, secret = _create(
            user=user, name=name, scopes=scopes, days=days, repositories=list(repositories), created_by=created_by
        )
    except RecheckError as error:
        audit_refusal(action="token.create", actor=created_by, target=target, message=str(error))
        raise
    return token, secret


@transaction.atomic
def _create(*, user, name, scopes, days, repositories, created_by) -> tuple[ApiToken, str]:
    name = name.strip()
    if not name:
        raise TokenError("Name the token after what it is for (e.g. “CI merge gate”).")
    try:
        scopes = scopes_checked(scopes)
    except ValueError as error:
        raise TokenError(str(error)) from None
    days = settings.RECHECK_API_TOKEN_DAYS if days is None else days
    if not 1 <= days <= settings.RECHECK_API_TOKEN_MAX_DAYS:
        raise TokenError(f"A token lasts 1 to {settings.RECHECK_API_TOKEN_MAX_DAYS} days, not {days}.")
    if not user.is_active:
        raise TokenError(f"User {user.get_username()!r} is inactive: a token for it would not work.")
    # A repository the user may not read is refused in the words of one that is not recorded.
    unreadable = [repository.slug for repository in repositories if not user_may(user, Action.READ, repository)]
    if unreadable:
        raise TokenError(f"No repository {', '.join(unreadable)} is recorded for {user.get_username()!r} to read.")
    missing = [scope for scope in scopes if not api_token_scope_held(user=user, scope=scope, repositories=repositories)]
    if missing:
        where = f" on {', '.join(repository.slug for repository in repositories)}" if repositories else ""
        raise TokenError(
            f"User {user.get_username()!r} may not do what the scope(s) {', '.join(missing)} allow{where}: "
            f"grant a role first ({', '.join(SCOPE_PERMISSIONS[scope] for scope in missing)} instance-wide, or a "
            "membership of the repository; Django admin, or create_api_token --grant)."
        )
    token, secret = ApiToken.objects.create(
        user=user, expiry=timedelta(days=days), name=name, scopes=scopes, created_by=created_by,
        limited=bool(repositories),
    )
    if repositories:
        token.repositories.set(repositories)
    audit_record(
        action="token.create",
        actor=created_by,
        token=token,
        target=f"{user.get_username()}: {token.label}",
        changes={
            "scopes": [None, scopes],
            "expiry": [None, token.expiry.isoformat()],
            "repositories": [None, sorted(repository.slug for repository in repositories)],
        },
    )
    return token, secret


def api_token_revoke(*, token: ApiToken, revoked_by=None) -> ApiToken:
    """Stop `token` from working at once. The row stays, so the admin and the audit log can still
    say what it could do and when it was last used."""
    with transaction.atomic():
        # Claimed with a conditional update: revoking twice (two admins, a double click) records once.
        revoked = ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now(), revoked_by=revoked_by
        )
        token.refresh_from_db()
        if revoked:
            audit_record(
                action="token.revoke", actor=revoked_by, token=token,
                target=f"{token.user.get_username()}: {token.label}",
                changes={"revoked_at": [None, token.revoked_at.isoformat()]},
            )
            return token
    message = f"{token.label.capitalize()} was already revoked on {token.revoked_at:%Y-%m-%d %H:%M} UTC."
    audit_refusal(action="token.revoke", actor=revoked_by, token=token, target=token.label, message=message)
    raise TokenError(message)


def api_token_reader(*, secret: str, repository) -> object | None:
    """The user a token `secret` reads `repository` as, or None: the token is usable (not revoked,
    not expired), holds the `read` scope, reaches the repository (when it is limited), and its
    user may read it. For what cannot send a header (a feed reader given `?token=`); compared as
    knox compares (the secret's prefix looks it up, its digest is compared in constant time)."""
    from knox.auth import TokenAuthentication
    from rest_framework import exceptions

    try:
        user, token = TokenAuthentication().authenticate_credentials(secret.strip().encode())
    except exceptions.AuthenticationFailed:
        return None
    if not isinstance(token, ApiToken) or not ApiToken.objects.usable().filter(pk=token.pk).exists():
        return None
    if "read" not in (token.scopes or []):
        return None
    if token.limited and not token.repositories.filter(pk=repository.pk).exists():
        return None
    return user if user_may(user, Action.READ, repository) else None
