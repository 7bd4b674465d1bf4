"""The people and tools the tests act as, defined once. The root conftest turns each into a
fixture; a test that needs a persona on a particular repository grants it with `member_of`.

- anonymous: no session, no token;
- no role: signed in, holding no role anywhere;
- reader, reviewer, maintainer: the instance-wide role groups (every repository);
- superuser;
- staff maintainer / staff reader: the admin's staff users with model permissions;
- tokens: an API token of each scope (read, verify, import, resolve, settings), expired, revoked,
  and limited to repositories (`api_client`).
"""
from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from tests.factories import UserFactory, make_api_token

ROLE_GROUPS = {"reader": "Reader", "reviewer": "Reviewer", "maintainer": "Maintainer"}
STAFF_MAINTAINER_PERMISSIONS = [
    "findings.view_finding",
    "findings.change_finding",
    "findings.resolve_finding",
    "findings.view_evidence",
    "findings.change_evidence",
    "findings.view_verification",
    "findings.view_findingevent",
]


def user_with_role(role: str, *, username: str | None = None):
    """A user holding the instance-wide `role` (reader, reviewer, maintainer), or no role."""
    if role == "no_role":
        return UserFactory(username=username or "no-role")
    return UserFactory(username=username or f"a-{role}", groups=[ROLE_GROUPS[role]])


def superuser(username: str = "root"):
    return UserFactory(username=username, is_staff=True, is_superuser=True)


def staff_maintainer():
    """A staff user who may change findings from the admin."""
    return UserFactory(username="maintainer", is_staff=True, permissions=STAFF_MAINTAINER_PERMISSIONS)


def staff_reader():
    """A staff user who may only look."""
    return UserFactory(username="onlooker", is_staff=True, permissions=["findings.view_finding"])


def member_of(repository, user, role: str):
    """Give `user` the membership `role` (reader, reviewer, maintainer, admin) on `repository`."""
    from access.models import Membership

    Membership.objects.update_or_create(repository=repository, user=user, defaults={"role": role})
    # Memberships are read once per request and kept on the user object.
    if hasattr(user, "_recheck_membership_actions"):
        del user._recheck_membership_actions
    return user


def site_client(user=None) -> Client:
    """The site as `user` sees it in a browser session (anonymous without one)."""
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def api_client(user=None, *, scopes=("read",), repositories=(), expired: bool = False,
               revoked: bool = False, name: str = "test token") -> APIClient:
    """The API as a tool holding a token of `user` with `scopes` (limited to `repositories` when
    given), or as an anonymous caller without a user."""
    from access.models import ApiToken

    client = APIClient()
    if user is None:
        return client
    secret = make_api_token(user, scopes=scopes, repositories=repositories, name=name)
    token = ApiToken.objects.get(user=user, name=name)
    if expired:
        ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(minutes=1))
    if revoked:
        ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    client.user = user
    return client
