"""Signing in with a password on the sign-in page and managing API tokens, in a real headless
Chromium. Screenshots land in tests/artifacts/."""
import pytest
import requests

from access.models import ApiToken
from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot, sign_in
from tests.factories import USER_PASSWORD, UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_user_signs_in_makes_a_token_uses_it_and_revokes_it(live_server):
    UserFactory(username="rita")
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(f"{live_server.url}/accounts/tokens/")
        assert "/accounts/login/" in page.url
        shoot(page, "sign-in")
        page.fill("input[name=login]", "rita")
        page.fill("input[name=password]", USER_PASSWORD)
        page.click(".signin-password button[type=submit]")
        page.wait_for_url(f"{live_server.url}/accounts/tokens/")

        page.fill("input[name=name]", "Dashboard")
        page.fill("input[name=days]", "14")
        page.click("text=Create token")
        secret = page.get_by_test_id("token-secret").inner_text()
        shoot(page, "token-created")
        assert secret.startswith("rck_")
        api = requests.get(f"{live_server.url}/api/findings/", headers={"Authorization": f"Token {secret}"}, timeout=10)
        assert api.status_code == 200

        page.reload()  # sends the form again: no second token, and the secret is not shown again
        assert secret not in page.content() and "already sent" in page.content()
        page.click("a[aria-label='Revoke Dashboard…']")
        page.wait_for_selector("h1:has-text('Revoke Dashboard?')")
        shoot(page, "token-revoke-confirm")
        assert not ApiToken.objects.get().is_revoked  # asked, not done
        page.click("button:has-text('Revoke Dashboard')")
        page.wait_for_selector(".message-success:has-text('it stops working at once')")
        shoot(page, "token-revoked")
        assert "revoked" in page.locator("table.tokens").inner_text()
        api = requests.get(f"{live_server.url}/api/findings/", headers={"Authorization": f"Token {secret}"}, timeout=10)
        assert api.status_code == 401 and "revoked" in api.json()["detail"]
    assert ApiToken.objects.get().is_revoked


def test_a_member_signs_in_with_github_in_the_browser_and_an_outsider_is_shown_why_not(live_server, settings):
    from tests.fakeforge import Account, FakeForge

    settings.ACCOUNT_DEFAULT_HTTP_PROTOCOL = "http"  # production's callback is https; the live server's is not
    github = settings.SOCIALACCOUNT_PROVIDERS["github"]["APPS"][0]
    with FakeForge(settings.FAKE_FORGE_PORT, client_id=github["client_id"], client_secret=github["secret"]) as forge:
        with chromium() as browser:
            forge.account = Account(id=301, login="dana", email="dana@example.com", organisations=["acme"])
            page = browser.new_page(viewport=DESKTOP)
            page.goto(f"{live_server.url}/accounts/login/?next=/accounts/tokens/")
            page.click("text=Sign in with GitHub")
            page.wait_for_url(f"{live_server.url}/accounts/tokens/")
            assert "API tokens" in page.locator("h1").inner_text()

            forge.account = Account(id=302, login="mallory", email="m@example.com", organisations=["elsewhere"])
            outsider = browser.new_page(viewport=DESKTOP)
            outsider.goto(f"{live_server.url}/accounts/login/")
            outsider.click("text=Sign in with GitHub")
            outsider.wait_for_selector("text=Sign-in refused")
            shoot(outsider, "sign-in-refused")
            assert "mallory is not a member of acme" in outsider.content()


def test_a_refused_token_form_is_corrected_in_the_browser_and_makes_its_token(live_server):
    from tests.factories import RepositoryFactory
    from tests.personas import member_of

    mine = RepositoryFactory(slug="acme/loader")
    other = RepositoryFactory(slug="acme/public-site")
    member_of(mine, UserFactory(username="mia"), "reviewer")
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        sign_in(page, live_server, "mia", "/accounts/tokens/")
        # A reviewer may hold verify, not resolve: only what they may hold is offered.
        assert page.locator("input[name=scopes][value=verify]").count() == 1
        assert page.locator("input[name=scopes][value=resolve]").count() == 0
        page.fill("input[name=name]", "CI")
        page.check("input[name=scopes][value=verify]")
        page.select_option("select[name=repositories]", [str(other.pk)])
        page.click("text=Create token")
        page.wait_for_selector("text=may not do what the scope(s) verify allow on acme/public-site")
        shoot(page, "token-refused")
        assert not ApiToken.objects.exists()

        page.select_option("select[name=repositories]", [str(mine.pk)])
        page.click("text=Create token")
        secret = page.get_by_test_id("token-secret").inner_text()
        assert secret.startswith("rck_") and "already sent" not in page.content()
    token = ApiToken.objects.get()
    assert (token.scopes, [repository.slug for repository in token.repositories.all()]) == (
        ["read", "verify"], ["acme/loader"],
    )
