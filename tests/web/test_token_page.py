"""The site's token page: a signed-in user makes a token, sees its secret once, and revokes it."""
import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

from access.models import ApiToken, AuditEntry
from tests.factories import RepositoryFactory, UserFactory
from tests.personas import member_of

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


def test_the_form_offers_only_the_scopes_the_user_may_hold(client, reviewer):
    offered = [value for value, _ in client.get(URL).context["form"].fields["scopes"].choices]
    assert offered == ["read", "verify", "reports:write"]
    page = client.get(URL).content.decode()
    assert 'value="verify"' in page and 'value="resolve"' not in page and 'value="settings"' not in page


def test_a_member_is_offered_the_scopes_of_their_role_and_a_user_without_a_role_only_reading(client):
    client.force_login(member_of(RepositoryFactory(slug="acme/loader"), UserFactory(username="mia"), "maintainer"))
    assert [value for value, _ in client.get(URL).context["form"].fields["scopes"].choices] == [
        "read", "verify", "import", "resolve", "reports:write",
    ]
    client.force_login(UserFactory(username="nobody"))
    assert [value for value, _ in client.get(URL).context["form"].fields["scopes"].choices] == ["read"]


def test_a_scope_the_user_may_not_hold_sent_from_an_old_form_is_refused(client, reviewer):
    response = client.post(URL, form(client, name="Resolver", scopes=["resolve"], days="30"))
    assert response.status_code == 200 and "resolve is not one of the available choices" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_scope_refused_on_a_repository_is_refused_with_the_reason(client):
    mine = RepositoryFactory(slug="acme/loader")
    other = RepositoryFactory(slug="acme/public-site")
    client.force_login(member_of(mine, UserFactory(username="mia"), "reviewer"))
    response = client.post(URL, form(client, name="CI", scopes=["verify"], days="30", repositories=[other.pk]))
    assert "may not do what the scope(s) verify allow on acme/public-site" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_a_refused_form_corrected_and_sent_again_makes_its_token(client):
    mine = RepositoryFactory(slug="acme/loader")
    other = RepositoryFactory(slug="acme/public-site")
    user = member_of(mine, UserFactory(username="mia"), "reviewer")
    client.force_login(user)
    refused = client.post(URL, form(client, name="CI", scopes=["verify"], days="30", repositories=[other.pk]))
    assert "may not do what the scope(s) verify allow" in refused.content.decode()
    assert AuditEntry.objects.get(action="token.create").outcome == AuditEntry.Outcome.REFUSED
    # The page sent back carries the same one-time field, the fields as typed and the reason.
    again = refused.context["form"]
    corrected = {"once": again["once"].value(), "name": "CI", "scopes": ["verify"], "days": "30",
                 "repositories": [mine.pk]}
    response = client.post(URL, corrected)
    assert response.status_code == 200 and "already sent" not in response.content.decode()
    assert response.context["secret"] and response.context["secret"] in response.content.decode()
    token = ApiToken.objects.get(user=user)
    assert (token.scopes, list(token.repositories.all())) == (["verify"], [mine])
    assert list(AuditEntry.objects.order_by("pk").values_list("outcome", flat=True)) == ["refused", "done"]
    # The form is spent now: sending it once more makes nothing.
    assert "already sent" in client.post(URL, corrected, follow=True).content.decode()
    assert ApiToken.objects.count() == 1


def test_a_user_revokes_their_token_and_nobody_else_s(client, reviewer):
    client.post(URL, form(client, name="Mine", scopes=["read"], days="7"))
    mine = ApiToken.objects.get(user=reviewer)
    other_user = UserFactory(username="otto")
    theirs, _ = ApiToken.objects.create(user=other_user, name="Theirs", scopes=["read"])
    assert client.post(f"{URL}{theirs.token_key}/revoke", {"confirm": "yes"}).status_code == 404
    assert client.get(f"{URL}{theirs.token_key}/revoke").status_code == 404
    response = client.post(f"{URL}{mine.token_key}/revoke", {"confirm": "yes"}, follow=True)
    assert "Revoked" in response.content.decode()
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.is_revoked and mine.revoked_by == reviewer and not theirs.is_revoked


def test_revoking_asks_first_and_only_a_confirmed_post_revokes(client, reviewer):
    client.post(URL, form(client, name="Mine", scopes=["read"], days="7"))
    token = ApiToken.objects.get()
    listed = client.get(URL).content.decode()
    assert f'href="{URL}{token.token_key}/revoke"' in listed
    for asked in (client.get(f"{URL}{token.token_key}/revoke"), client.post(f"{URL}{token.token_key}/revoke")):
        page = asked.content.decode()
        assert asked.status_code == 200 and "Revoke Mine?" in page and "stops working at once" in page
        assert 'name="confirm" value="yes"' in page and f'href="{URL}"' in page
    token.refresh_from_db()
    assert not token.is_revoked
    client.post(f"{URL}{token.token_key}/revoke", {"confirm": "yes"})
    token.refresh_from_db()
    assert token.is_revoked


def test_sending_the_same_form_again_makes_no_second_token(client, reviewer):
    data = form(client, name="Once", scopes=["read"], days="7")
    first = client.post(URL, data)
    assert first.context["secret"]
    again = client.post(URL, data, follow=True)
    assert "already sent" in again.content.decode() and first.context["secret"] not in again.content.decode()
    assert ApiToken.objects.count() == 1
