"""The companion pages in a real headless Chromium: a reader follows the links between the three
pages to a finding's anchor, a phone-width screen never scrolls sideways, and the static render
works from disk without fetching anything. Screenshots land in tests/artifacts/."""
import contextlib
import os
from pathlib import Path

import pytest
from django.db import connections
from django.test import Client

from presentation.companion import companion_render
from tests.factories import USER_PASSWORD, reviewed_pull_request
from tests.web.browser.violations import Refusals

# Playwright's sync API runs an event loop in this thread; the ORM calls made here are ordinary
# blocking calls, not coroutines, so Django's async guard does not apply.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BROWSER = os.environ.get("RECHECK_BROWSER", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@contextlib.contextmanager
def chromium(refusals: Refusals | None = None):
    """A launched Chromium. Without one, CI fails (it must run these) and a laptop skips. Every
    page it opens is watched for what the Content-Security-Policy refuses: a test that ends with a
    refusal fails (pass `refusals` to look at them, and at script errors, yourself)."""
    if not os.path.exists(BROWSER):
        message = (
            f"No Chromium at {BROWSER}. Install it with `apt-get install chromium` "
            "(or point RECHECK_BROWSER at a Chromium binary)."
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=BROWSER, args=ARGS)
        watched = refusals if refusals is not None else Refusals()
        watched.watch(browser)
        try:
            yield browser
            if refusals is None:
                assert not watched.csp, f"The Content-Security-Policy refused: {watched.csp}"
        finally:
            browser.close()
            # Playwright's loop gives ORM calls made inside this block their own connection,
            # which the test database teardown cannot see: close it here.
            connections.close_all()


def signed_in(browser, live_server, user):
    """A browser context with `user`'s session (signing in through the form is `sign_in`'s)."""
    client = Client()
    client.force_login(user)
    context = browser.new_context(viewport=DESKTOP)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    return context


def sign_in(page, live_server, username: str, next_url: str, *, sent_there: bool = True) -> None:
    """Sign in as the factory user `username` and land on `next_url` (a path; a fragment is the
    page's own). With `sent_there` the page itself must send an anonymous visitor to the sign-in
    page; otherwise (a page anyone may read) the sign-in page is opened with `next`."""
    if sent_there:
        page.goto(live_server.url + next_url)
        assert "/accounts/login/" in page.url, page.url
    else:
        page.goto(f"{live_server.url}/accounts/login/?next={next_url}")
    page.fill("input[name=login]", username)
    page.fill("input[name=password]", USER_PASSWORD)
    page.click(".signin-password button[type=submit]")
    page.wait_for_url(live_server.url + next_url.split("#")[0] + "**")


def shoot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def nav(page):
    return page.locator(".companion-nav")


def targeted_id(page) -> str | None:
    return page.evaluate("document.querySelector(':target') && document.querySelector(':target').id")


def in_viewport(page, selector: str) -> bool:
    return page.evaluate(
        """selector => {
            const box = document.querySelector(selector).getBoundingClientRect();
            return box.top >= -1 && box.top < window.innerHeight;
        }""",
        selector,
    )


def scrolls_sideways(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth > window.innerWidth")


def test_a_reader_follows_the_three_pages_to_a_finding(live_server):
    data = reviewed_pull_request(blockers=9, cleanups=5)
    overview_url = live_server.url + data.pull_request.get_absolute_url()

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(overview_url)
        assert page.locator("h1").inner_text() == "What does #4108 change?"
        assert "none of the nine blockers are fixed" in page.locator(".status-line").first.inner_text()
        shoot(page, "desktop-overview")

        nav(page).get_by_role("link", name="What blocks the merge").click()
        page.wait_for_url("**/blockers/")
        assert page.locator("h1").inner_text() == "What has to be fixed before #4108 can merge?"
        assert page.locator("h2", has_text="Caught by CI").is_visible()
        assert page.locator("h2", has_text="Nothing checks these").is_visible()
        shoot(page, "desktop-blockers")

        nav(page).get_by_role("link", name="What can land afterwards").click()
        page.wait_for_url("**/cleanups/")
        assert page.locator("article.finding").count() == 5
        shoot(page, "desktop-cleanups")

        nav(page).get_by_role("link", name="What it changes").click()
        page.wait_for_url(overview_url)
        page.locator(".glance-list a", has_text="29 of the PR's own tests fail").click()
        page.wait_for_url("**/blockers/#finding-3")
        assert targeted_id(page) == "finding-3"
        assert page.locator("#finding-3").is_visible() and in_viewport(page, "#finding-3")
        page.screenshot(path=str(ARTIFACTS / "desktop-blockers-finding-3.png"))

        page.locator("#finding-1 .detail-link").click()
        page.wait_for_url("**/findings/1/")
        assert page.locator("table.matrix").is_visible()
        assert page.locator("table.matrix tbody tr").count() == 4
        shoot(page, "desktop-finding-1")

        page.goto(live_server.url + "/")
        assert page.get_by_role("link", name="#4108 Nemotron multimodal SFT").is_visible()
        page.get_by_role("searchbox").fill("audio")
        page.get_by_role("button", name="Search").click()
        page.wait_for_url("**/?q=audio*")
        assert page.locator(".result").count() == 2
        shoot(page, "desktop-index-search")


def test_the_pages_fit_a_phone_screen(live_server):
    data = reviewed_pull_request(blockers=9, cleanups=5)
    base = live_server.url + data.pull_request.get_absolute_url()
    pages = {
        "overview": base,
        "blockers": base + "blockers/",
        "cleanups": base + "cleanups/",
        "finding": base + "findings/1/",
        "index": live_server.url + "/?q=the",
    }

    with chromium() as browser:
        page = browser.new_page(viewport=PHONE, is_mobile=True, device_scale_factor=2)
        for name, url in pages.items():
            page.goto(url)
            assert not scrolls_sideways(page), f"The {name} page scrolls sideways at phone width."
            shoot(page, f"phone-{name}")


def test_the_static_render_works_from_disk_and_fetches_nothing(live_server, tmp_path):
    data = reviewed_pull_request(blockers=9, cleanups=5)
    pages = companion_render(pull_request=data.pull_request)
    for name, html in (
        ("index.html", pages.index_html),
        ("blockers.html", pages.blockers_html),
        ("cleanups.html", pages.cleanups_html),
    ):
        (tmp_path / name).write_text(html, encoding="utf-8")

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        requested = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto((tmp_path / "index.html").as_uri())
        assert page.locator("h1").inner_text() == "What does #4108 change?"
        shoot(page, "static-index")

        nav(page).get_by_role("link", name="What blocks the merge").click()
        page.wait_for_url("**/blockers.html")
        nav(page).get_by_role("link", name="What can land afterwards").click()
        page.wait_for_url("**/cleanups.html")
        nav(page).get_by_role("link", name="What it changes").click()
        page.wait_for_url("**/index.html")
        page.locator(".glance-list a", has_text="29 of the PR's own tests fail").click()
        page.wait_for_url("**/blockers.html#finding-3")
        assert targeted_id(page) == "finding-3" and in_viewport(page, "#finding-3")
        shoot(page, "static-blockers")

        page.set_viewport_size(PHONE)
        for name in ("index.html", "blockers.html", "cleanups.html"):
            page.goto((tmp_path / name).as_uri())
            assert not scrolls_sideways(page), f"The static {name} scrolls sideways at phone width."

    assert [url for url in requested if not url.startswith("file://")] == []


def test_a_running_verification_shows_progress_and_the_page_refreshes_when_it_ends(live_server):
    from findings.models import VerificationRun

    data = reviewed_pull_request(blockers=3, cleanups=1)
    run = VerificationRun.objects.create(pull_request=data.pull_request, status="running", done=1, total=4)

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + data.pull_request.get_absolute_url())
        assert page.locator("progress").get_attribute("value") == "1"
        shoot(page, "desktop-overview-running")

        VerificationRun.objects.filter(pk=run.pk).update(done=3)
        page.wait_for_function("() => document.querySelector('progress').value === 3", timeout=10_000)
        assert page.locator("[data-run-count]").inner_text() == "3 of 4"

        VerificationRun.objects.filter(pk=run.pk).update(done=4, status="done")
        page.wait_for_selector("progress", state="detached", timeout=10_000)
