"""What a first visit meets besides the companion pages, in a real Chromium: the API's docs (Swagger
UI and Redoc) drawn whole with nothing asked of another host, as on a server without internet
access; the browsable API and the account pages in the site's look with a way back; a wrong URL
answered by the site's own styled page (the live server runs with DEBUG off, as the demo does)."""
from urllib.parse import urlsplit

import pytest

from tests.factories import UserFactory, reviewed_pull_request
from tests.web.browser.test_companion_pages import ARTIFACTS, DESKTOP, chromium, shoot, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def offline(context, live_server) -> list[str]:
    """Refuse, and keep, every request `context` makes to a host other than the live server's."""
    ours = urlsplit(live_server.url).netloc
    elsewhere: list[str] = []

    def route(route_):
        if urlsplit(route_.request.url).netloc == ours or not route_.request.url.startswith("http"):
            route_.continue_()
        else:
            elsewhere.append(route_.request.url)
            route_.abort()

    context.route("**/*", route)
    return elsewhere


def test_the_api_docs_draw_whole_with_nothing_from_another_host(live_server):
    reviewed_pull_request(blockers=1, cleanups=1)
    with chromium() as browser:
        context = signed_in(browser, live_server, UserFactory(username="rita"))
        elsewhere = offline(context, live_server)
        page = context.new_page()
        page.goto(f"{live_server.url}/api/docs/")
        page.wait_for_selector(".swagger-ui .opblock", timeout=20_000)
        assert page.locator(".swagger-ui .opblock").count() > 20
        assert page.locator(".api-header a", has_text="Back to the site").get_attribute("href") == "/"
        page.screenshot(path=str(ARTIFACTS / "api-docs-swagger.png"))
        page.goto(f"{live_server.url}/api/redoc/")
        page.wait_for_selector(".api-content h1", timeout=20_000)
        page.wait_for_timeout(500)  # Redoc draws its sidebar credit after the first paint
        assert "Recheck API" in page.locator(".api-content h1").first.inner_text()
        assert page.locator("a", has_text="API docs by Redocly").count() == 1
        assert page.locator("img[src^='http']").count() == 0
        page.screenshot(path=str(ARTIFACTS / "api-docs-redoc.png"))
    assert elsewhere == []


def test_the_browsable_api_is_in_the_site_s_look_with_a_way_back(live_server):
    reviewed_pull_request(blockers=1, cleanups=1)
    with chromium() as browser:
        page = signed_in(browser, live_server, UserFactory(username="rita")).new_page()
        page.goto(f"{live_server.url}/api/findings/")
        assert page.title() == "Finding List · Recheck API"
        header = page.locator("header.api-header")
        assert header.evaluate("element => getComputedStyle(element).backgroundColor") == "rgb(18, 55, 42)"
        assert "Django REST framework" not in page.content()
        assert header.locator("button", has_text="Sign out").is_visible()
        shoot(page, "api-browsable")
        header.locator("a", has_text="Back to the site").click()
        page.wait_for_url(f"{live_server.url}/")


def test_a_wrong_url_and_the_sign_in_page_are_the_site_s_own(live_server):
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        response = page.goto(f"{live_server.url}/no/such/page/at/all/")
        assert response.status == 404
        assert page.locator(".site-header .brand").is_visible()
        assert page.locator("h1").inner_text() == "Not found"
        assert "URLconf" not in page.content()
        # The site's stylesheet is loaded and applied (its header's colour), not a bare page.
        assert page.locator(".site-header").evaluate("element => getComputedStyle(element).display") != "inline"
        page.goto(f"{live_server.url}/accounts/login/")
        assert page.locator("h1").inner_text() == "Sign in"
        assert page.locator(".site-nav a", has_text="Sign in").count() == 1
        assert page.locator(".account-back a").get_attribute("href") == "/"
        shoot(page, "sign-in-page")
