"""The site's token page: a signed-in user makes a token, sees its secret once, and revokes it."""
import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from access.models import ApiToken, AuditEntry
from tests.factories import RepositoryFactory, UserFactory

pytestmark = pytest.mark.django_db

URL = "/accounts/tokens/"


@pytest.fixture
def reviewer(client):
    user = UserFactory(username="rita", permissions=["findings.verify_pullrequest"])
    client.force_login(user)
    return user


def test_anonymous_visitors_are_sent_to_sign_in(client):
    response = client.get(URL)
    assert response.status_code == 302 and "login" in response["Location"]


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def form(client, **fields) -> dict:
    """The form as the page hands it out (with its one-time field), filled in."""
    return {"once": client.get(URL).context["form"]["once"].value(), **fields}


def test_a_user_makes_a_token_sees_it_once_and_it_works(client, reviewer):
    repository = RepositoryFactory(slug="acme/loader")
    response = client.post(URL, form(client, name="CI gate", scopes=["read", "verify"], days="30",
                                     repositories=[repository.pk]))
    assert response.status_code == 200 and response["Cache-Control"].startswith("max-age=0")
    secret = response.context["secret"]
    assert secret in response.content.decode()
    token = ApiToken.objects.get(user=reviewer)
    assert (token.name, token.scopes, list(token.repositories.all())) == ("CI gate", ["read", "verify"], [repository])
    assert APIClient(HTTP_AUTHORIZATION=f"Token {secret}").get("/api/repos/acme/loader/").status_code == 200
    again = client.get(URL).content.decode()
    assert secret not in again and token.token_key in again
    assert AuditEntry.objects.get(action="token.create").source == "site"


def test_a_scope_the_user_is_not_permitted_is_refused_with_the_reason(client, reviewer):
    response = client.post(URL, form(client, name="Resolver", scopes=["resolve"], days="30"))
    assert "may not do what the scope(s) resolve allow" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_user_revokes_their_token_and_nobody_else_s(client, reviewer):
    client.post(URL, form(client, name="Mine", scopes=["read"], days="7"))
    mine = ApiToken.objects.get(user=reviewer)
    other_user = UserFactory(username="otto")
    theirs, _ = ApiToken.objects.create(user=other_user, name="Theirs", scopes=["read"])
    assert client.post(f"{URL}{theirs.token_key}/revoke").status_code == 404
    response = client.post(f"{URL}{mine.token_key}/revoke", follow=True)
    assert "Revoked" in response.content.decode()
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.is_revoked and mine.revoked_by == reviewer and not theirs.is_revoked


def test_revoking_needs_a_post(client, reviewer):
    client.post(URL, form(client, name="Mine", scopes=["read"], days="7"))
    token = ApiToken.objects.get()
    assert client.get(f"{URL}{token.token_key}/revoke").status_code == 405


def test_sending_the_same_form_again_makes_no_second_token(client, reviewer):
    data = form(client, name="Once", scopes=["read"], days="7")
    first = client.post(URL, data)
    assert first.context["secret"]
    again = client.post(URL, data, follow=True)
    assert "already sent" in again.content.decode() and first.context["secret"] not in again.content.decode()
    assert ApiToken.objects.count() == 1
