"""Signing in with the forge, against a fake GitHub Enterprise and a fake self-managed GitLab on
127.0.0.1: the browser's round trip (Recheck → the forge's authorise page → Recheck's callback)
is walked with the test client and real HTTP, and Recheck itself talks to the forge's token, user
and organisation endpoints over the wire."""
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache

from access.models import AuditEntry
from tests.factories import UserFactory
from tests.fakeforge import Account, FakeForge

pytestmark = pytest.mark.django_db


@pytest.fixture
def forge():
    github = settings.SOCIALACCOUNT_PROVIDERS["github"]["APPS"][0]
    with FakeForge(
        settings.FAKE_FORGE_PORT, client_id=github["client_id"], client_secret=github["secret"]
    ) as fake:
        yield fake


@pytest.fixture(autouse=True)
def fresh_rate_limits():
    cache.clear()
    yield
    cache.clear()


def sign_in(client, forge, provider: str, account: Account):
    """What a browser does: start on Recheck, agree on the forge, come back to the callback."""
    forge.account = account
    start = client.post(f"/accounts/{provider}/login/")
    assert start.status_code == 302 and start["Location"].startswith(forge.url), start
    authorise = requests.get(start["Location"], allow_redirects=False, timeout=10)
    assert authorise.status_code == 302, authorise.text
    callback = urlsplit(authorise.headers["Location"])
    assert callback.path == f"/accounts/{provider}/login/callback/"
    return client.get(f"{callback.path}?{callback.query}")


def signed_in_user(client):
    user_id = client.session.get("_auth_user_id")
    return get_user_model().objects.get(pk=user_id) if user_id else None


def test_a_member_of_the_allowed_github_organisation_signs_in_and_gets_no_role(client, forge):
    response = sign_in(client, forge, "github", Account(id=101, login="dana", email="dana@example.com",
                                                        organisations=["other", "acme"]))
    assert response.status_code == 302 and response["Location"] == "/"
    user = signed_in_user(client)
    assert user is not None and user.email == "dana@example.com"
    assert not user.is_staff and not user.groups.exists() and not user.user_permissions.exists()
    assert not user.has_usable_password()
    signup = AuditEntry.objects.get(action="user.signup")
    assert signup.actor == user and "member of acme" in signup.message
    # What Recheck asked the forge for: the organisation scope, and the secret only on the back channel.
    authorise = next(params for method, path, params in forge.requests if path == "/login/oauth/authorize")
    assert "read:org" in authorise["scope"] and "client_secret" not in authorise
    token = next(params for method, path, params in forge.requests if path == "/login/oauth/access_token")
    assert token["client_secret"] == "recheck-test-secret"
    assert ("GET", "/api/v3/user/orgs") in [(method, path) for method, path, _ in forge.requests]


def test_a_github_user_outside_the_allowed_organisation_is_refused(client, forge):
    response = sign_in(client, forge, "github", Account(id=102, login="mallory", email="m@example.com",
                                                        organisations=["elsewhere"]))
    assert response.status_code == 403
    page = response.content.decode()
    assert "mallory is not a member of acme" in page
    assert signed_in_user(client) is None
    assert not get_user_model().objects.filter(email="m@example.com").exists()
    refusal = AuditEntry.objects.get(action="user.signin")
    assert refusal.outcome == "refused" and "mallory" in refusal.message


def test_a_member_who_left_the_organisation_is_refused_next_time(client, forge):
    dana = Account(id=103, login="dana", email="dana@example.com", organisations=["acme"])
    sign_in(client, forge, "github", dana)
    client.logout()
    dana.organisations = []
    assert sign_in(client, forge, "github", dana).status_code == 403
    assert signed_in_user(client) is None


def test_members_get_reader_on_their_organisations_repositories_when_configured(client, forge, settings):
    from access.models import Membership
    from access.permissions import Action, user_may
    from reviews.models import Repository
    from tests.factories import RepositoryFactory

    settings.RECHECK_SIGNIN_GRANT_READER = True
    ours = RepositoryFactory(slug="acme/loader", visibility=Repository.Visibility.PRIVATE)
    theirs = RepositoryFactory(slug="elsewhere/loader", visibility=Repository.Visibility.PRIVATE)
    rae = Account(id=104, login="rae", email="rae@example.com", organisations=["acme"])
    sign_in(client, forge, "github", rae)
    user = signed_in_user(client)
    # No instance-wide role: the Reader role of acme's repositories, and of nothing else.
    assert not user.groups.exists()
    assert list(Membership.objects.filter(user=user).values_list("repository__slug", "role")) == [
        ("acme/loader", "reader")
    ]
    assert user_may(user, Action.READ, ours) and not user_may(user, Action.READ, theirs)
    assert not user_may(user, Action.WRITE, ours)
    # A repository of acme's added later is granted at the next sign-in, once.
    RepositoryFactory(slug="acme/later")
    client.logout()
    sign_in(client, forge, "github", rae)
    client.logout()
    sign_in(client, forge, "github", rae)
    assert sorted(Membership.objects.filter(user=user).values_list("repository__slug", flat=True)) == [
        "acme/later", "acme/loader"
    ]


def test_without_an_allowed_organisation_sign_up_is_closed(client, forge, settings):
    settings.RECHECK_SIGNIN_ALLOWED = {**settings.RECHECK_SIGNIN_ALLOWED, "github": []}
    response = sign_in(client, forge, "github", Account(id=105, login="sam", email="sam@example.com",
                                                        organisations=["acme"]))
    assert response.status_code == 403 and "closed" in response.content.decode()
    assert not get_user_model().objects.filter(email="sam@example.com").exists()


def test_a_member_of_the_allowed_gitlab_group_signs_in_and_others_are_refused(client, forge):
    response = sign_in(client, forge, "gitlab", Account(id=201, login="erin", email="erin@example.com",
                                                        organisations=["acme/reviewers"]))
    assert response.status_code == 302 and signed_in_user(client).email == "erin@example.com"
    client.logout()
    refused = sign_in(client, forge, "gitlab", Account(id=202, login="eve", email="eve@example.com",
                                                       organisations=["acme"]))
    assert refused.status_code == 403 and signed_in_user(client) is None


def test_a_member_of_the_allowed_openid_connect_group_signs_in_and_others_are_refused(client, forge):
    response = sign_in(client, forge, "oidc/oidc", Account(id=301, login="olga", email="olga@example.com",
                                                      organisations=["staff", "reviewers"]))
    assert response.status_code == 302, response.content.decode()[:500]
    assert signed_in_user(client).email == "olga@example.com"
    assert ("GET", "/oidc/.well-known/openid-configuration") in [(m, p) for m, p, _ in forge.requests]
    client.logout()
    refused = sign_in(client, forge, "oidc/oidc", Account(id=302, login="oscar", email="oscar@example.com",
                                                     organisations=["staff"]))
    assert refused.status_code == 403 and "oscar is not a member of reviewers" in refused.content.decode()


def test_a_code_the_forge_did_not_issue_signs_nobody_in(client, forge):
    forge.account = Account(id=106, login="dana", email="dana@example.com", organisations=["acme"])
    start = client.post("/accounts/github/login/")
    state = parse_qs(urlsplit(start["Location"]).query)["state"][0]
    response = client.get(f"/accounts/github/login/callback/?code=forged&state={state}")
    assert signed_in_user(client) is None and response.status_code == 401


def test_the_admin_s_login_goes_through_the_rate_limited_sign_in_page(client):
    UserFactory(username="staff", is_staff=True)
    assert client.get("/admin/login/?next=/admin/")["Location"] == "/accounts/login/?next=/admin/"
    for _ in range(5):
        client.post("/accounts/login/", {"login": "staff", "password": "wrong"})
    # The sixth attempt is refused even with the right password: the account is locked for a while.
    response = client.post("/accounts/login/", {"login": "staff", "password": "correct horse battery staple"})
    assert "Too many failed login attempts" in response.content.decode()
    assert signed_in_user(client) is None


def test_credentials_posted_to_the_admin_s_old_login_page_sign_nobody_in(client):
    UserFactory(username="staff", is_staff=True)
    response = client.post("/admin/login/", {"username": "staff", "password": "correct horse battery staple"})
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert signed_in_user(client) is None


def test_the_right_password_signs_a_staff_member_in(client):
    UserFactory(username="staff", is_staff=True)
    response = client.post("/accounts/login/?next=/admin/", {"login": "staff", "password": "correct horse battery staple"})
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert signed_in_user(client).username == "staff"


def test_nobody_signs_up_with_a_password(client):
    response = client.post("/accounts/signup/", {"username": "new", "email": "new@example.com",
                                                 "password1": "a-long-passphrase-1", "password2": "a-long-passphrase-1"})
    assert not get_user_model().objects.filter(username="new").exists()
    assert response.status_code in (200, 403)


def test_with_password_login_off_no_password_signs_in_but_the_forge_does(client, forge, settings):
    settings.AUTHENTICATION_BACKENDS = ["forge.signin.NoPasswordBackend"]
    settings.SOCIALACCOUNT_ONLY = True
    UserFactory(username="staff", is_staff=True)
    refused = client.post("/accounts/login/", {"login": "staff", "password": "correct horse battery staple"})
    assert refused.status_code == 403 and signed_in_user(client) is None
    assert client.login(username="staff", password="correct horse battery staple") is False
    response = sign_in(client, forge, "github", Account(id=107, login="dana", email="d@example.com",
                                                        organisations=["acme"]))
    assert response.status_code == 302 and signed_in_user(client).email == "d@example.com"


def production_settings(**env) -> dict:
    """The settings a production process reads (DEBUG off), with `env` on top."""
    import json
    import os
    import subprocess
    import sys

    code = (
        "import json, recheck.settings as s; print(json.dumps({name: getattr(s, name) for name in "
        "['SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'AUTHENTICATION_BACKENDS', "
        "'SOCIALACCOUNT_ONLY', 'SOCIALACCOUNT_PROVIDERS', 'ACCOUNT_DEFAULT_HTTP_PROTOCOL']}))"
    )
    clean = {key: value for key, value in os.environ.items() if not key.startswith("RECHECK_")}
    clean.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run(
        [sys.executable, "-c", code], env={**clean, "SECRET_KEY": "x" * 50, "DEBUG": "0", **env},
        capture_output=True, text=True, cwd=settings.BASE_DIR,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_production_cookies_are_secure_and_password_login_can_be_turned_off():
    default = production_settings()
    assert default["SESSION_COOKIE_SECURE"] and default["CSRF_COOKIE_SECURE"]
    assert default["ACCOUNT_DEFAULT_HTTP_PROTOCOL"] == "https" and default["SOCIALACCOUNT_PROVIDERS"] == {}
    off = production_settings(RECHECK_PASSWORD_LOGIN="0")
    assert off["AUTHENTICATION_BACKENDS"] == ["forge.signin.NoPasswordBackend"] and off["SOCIALACCOUNT_ONLY"]


def test_providers_are_configured_from_the_environment():
    configured = production_settings(
        RECHECK_GITHUB_CLIENT_ID="gh-id", RECHECK_GITHUB_SECRET="gh-secret", RECHECK_GITHUB_URL="https://github.example.com/",
        RECHECK_GITLAB_CLIENT_ID="gl-id", RECHECK_GITLAB_SECRET="gl-secret", RECHECK_GITLAB_URL="https://gitlab.example.com",
        RECHECK_OIDC_CLIENT_ID="oidc-id", RECHECK_OIDC_SECRET="oidc-secret",
        RECHECK_OIDC_SERVER_URL="https://sso.example.com/realms/acme", RECHECK_OIDC_NAME="Acme SSO",
    )["SOCIALACCOUNT_PROVIDERS"]
    assert configured["github"]["GITHUB_URL"] == "https://github.example.com"
    assert configured["github"]["APPS"] == [{"client_id": "gh-id", "secret": "gh-secret"}]
    assert configured["gitlab"]["APPS"][0]["settings"] == {"gitlab_url": "https://gitlab.example.com"}
    oidc = configured["openid_connect"]["APPS"][0]
    assert (oidc["provider_id"], oidc["name"], oidc["settings"]["server_url"]) == (
        "oidc", "Acme SSO", "https://sso.example.com/realms/acme"
    )
