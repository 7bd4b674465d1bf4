"""Signing in with the forge (GitHub, GitLab, an OpenID Connect provider) through django-allauth.

Who gets in: when a provider names allowed organisations (GitHub) or groups (GitLab, OpenID
Connect), a new user must belong to one of them, checked against the forge at each sign-in. A
provider without such a list lets in only the accounts already connected to a user, so turning a
provider on never opens the door to everyone on github.com. A new user gets no role until an
admin grants one, or, with RECHECK_SIGNIN_GRANT_READER, the Reader role on the repositories of
the organisations or groups they are a member of (a membership per repository, at each sign-in)."""
from __future__ import annotations

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.forms import LoginForm as BaseLoginForm
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.adapter import get_adapter as get_social_adapter
from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.db.models import Q
from django.shortcuts import render

from access.audit import audit_record, audit_refusal
from access.models import Membership
from core.forges import FORGE_NAMES
from forge.interface import forge_named

PROVIDER_NAMES = {"github": "GitHub", "gitlab": "GitLab"}


class LoginForm(BaseLoginForm):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Recheck sends no e-mail, so a reset link would lead nowhere: admins reset passwords.
        self.fields["password"].help_text = ""


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request) -> bool:
        # No self-service accounts with a password: people come in through the forge, or an admin makes them.
        return False


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def is_open_for_signup(self, request, sociallogin) -> bool:
        # pre_social_login has refused whoever may not come in by now.
        return True

    def pre_social_login(self, request, sociallogin) -> None:
        provider = sociallogin.account.provider
        name = _provider_name(sociallogin)
        allowed = set(settings.RECHECK_SIGNIN_ALLOWED.get(provider, []))
        claims = _claims(sociallogin)
        who = claims.get("login") or claims.get("username") or claims.get("preferred_username") or ""
        if allowed:
            memberships = set(provider_memberships(sociallogin))
            matched = sorted(memberships & allowed)
            if not matched:
                _refuse(request, sociallogin, f"Your {name} account {who} is not a member of "
                        f"{', '.join(sorted(allowed))}, which this Recheck admits.")
            sociallogin.state["recheck_memberships"] = matched
            if sociallogin.is_existing:
                # Repositories added since the last sign-in: the rule grants their Reader role now.
                signin_grant_roles(user=sociallogin.user, memberships=matched, forge=provider)
        elif not sociallogin.is_existing:
            _refuse(request, sociallogin, f"Signing up with {name} is closed here: no {name} organisation or group "
                    "is allowed to sign up. An admin can connect your account to a user.")

    def save_user(self, request, sociallogin, form=None):
        user = super().save_user(request, sociallogin, form)
        matched = sociallogin.state.get("recheck_memberships", [])
        audit_record(
            action="user.signup", actor=user, target=user.get_username(),
            message=f"Signed up with {_provider_name(sociallogin)}"
            + (f" as a member of {', '.join(matched)}." if matched else "."),
        )
        signin_grant_roles(user=user, memberships=matched, forge=sociallogin.account.provider)
        return user


def signin_grant_roles(*, user, memberships: list[str], forge: str = "") -> None:
    """What a user gets at sign-in for the organisations or groups that let them in, when
    RECHECK_SIGNIN_GRANT_READER is on: the Reader role on each repository whose owner is one of
    them (acme's members read acme/*; a GitLab group's read its subgroups' projects too, as on
    GitLab), as a membership; nothing otherwise (an admin grants roles). Signing in with a forge,
    only that forge's repositories: a GitLab group acme is not GitHub's organisation acme. A role
    they already hold on a repository is kept, whatever it is."""
    if not (memberships and settings.RECHECK_SIGNIN_GRANT_READER):
        return
    from reviews.models import Repository

    owners = Q()
    for owner in memberships:
        owners |= Q(slug__istartswith=f"{owner}/")
    held = Membership.objects.filter(user=user).values("repository_id")
    repositories = Repository.objects.filter(owners)
    if forge in FORGE_NAMES:
        repositories = repositories.filter(forge=forge)
    for repository in repositories.exclude(pk__in=held).order_by("slug"):
        Membership.objects.create(repository=repository, user=user, role=Membership.Role.READER)
        audit_record(action="membership.add", actor=user, target=f"{user.get_username()}: Reader of {repository.slug}",
                     repository=repository, changes={"role": [None, Membership.Role.READER]},
                     message=f"Granted at sign-in for membership of {repository.owner}.")


def provider_memberships(sociallogin) -> list[str]:
    """The organisations (GitHub) or groups (GitLab, OpenID Connect's `groups` claim) the
    signing-in account belongs to, as the forge says now."""
    provider = sociallogin.account.provider
    token = sociallogin.token.token if sociallogin.token else ""
    if provider in FORGE_NAMES:
        return forge_named(provider).signin_memberships(token=token)
    groups = _claims(sociallogin).get("groups") or []
    return [str(group) for group in groups] if isinstance(groups, list) else []


def _claims(sociallogin) -> dict:
    """What the provider said about the account (OpenID Connect nests it under userinfo)."""
    data = sociallogin.account.extra_data
    return data.get("userinfo") or data.get("id_token") or data


def forge_paged(url: str, headers: dict, limit: int = 10) -> list[dict]:
    """Every row of a forge's paged list (100 a page, at most `limit` pages)."""
    rows: list[dict] = []
    separator = "&" if "?" in url else "?"
    with get_social_adapter().get_requests_session() as session:
        for page in range(1, limit + 1):
            response = session.get(f"{url}{separator}per_page=100&page={page}", headers=headers, timeout=10)
            response.raise_for_status()
            batch = response.json()
            rows.extend(batch)
            if len(batch) < 100:
                break
    return rows


def _provider_name(sociallogin) -> str:
    provider = sociallogin.account.provider
    return PROVIDER_NAMES.get(provider) or getattr(sociallogin.provider, "name", "") or provider


def _refuse(request, sociallogin, reason: str):
    audit_refusal(action="user.signin", target=_provider_name(sociallogin), message=reason)
    raise ImmediateHttpResponse(render(request, "access/signin_refused.html", {"reason": reason}, status=403))


class NoPasswordBackend(ModelBackend):
    """Permissions and sessions as ModelBackend has them, but no password ever signs anyone in:
    the backend when RECHECK_PASSWORD_LOGIN is off, so the forge is the only way in."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        return None
