"""The Follow-ups page in a real headless Chromium, after a merge and two pushes to main: one
follow-up still present at its new place, one verified fixed; a maintainer marks it fixed from the
page, and the page (under the strict Content-Security-Policy) shows who decided. Screenshots land
in tests/artifacts/."""
import pytest

from tests.factories import UserFactory
from tests.findings.follow_up_world import checked_world
from tests.web.browser.test_companion_pages import DESKTOP, PHONE, chromium, scrolls_sideways, shoot, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_maintainer_reads_the_follow_ups_and_marks_the_verified_one_fixed(live_server, tmp_path):
    world = checked_world(tmp_path)
    maintainer = UserFactory(username="mona", groups=["Maintainer"])
    with chromium() as browser:
        context = signed_in(browser, live_server, maintainer)
        page = context.new_page()
        page.set_viewport_size(DESKTOP)
        page.goto(live_server.url + "/acme/loader/")
        page.click("a:text-is('Follow-ups')")
        page.wait_for_url("**/acme/loader/follow-ups/")
        helper = page.locator('[data-follow-up="acme/loader#7/2"]')
        debug = page.locator('[data-follow-up="acme/loader#7/3"]')
        assert "src/helpers.py:3–4" in helper.inner_text()
        assert "Still present" in helper.inner_text()
        assert "gone, last seen at src/loader.py:16" in debug.inner_text()
        assert "Verified fixed, to be marked" in debug.inner_text()
        shoot(page, "follow-ups")

        debug.locator("summary", has_text="Mark fixed").click()
        assert debug.locator("input[name=commit]").input_value() == world.fixed
        debug.locator("button", has_text="Mark fixed").click()
        page.wait_for_selector(".message-success")
        debug = page.locator('[data-follow-up="acme/loader#7/3"]')
        assert "mona" in debug.inner_text() and "Fixed" in debug.inner_text()
        assert debug.locator("summary", has_text="Mark fixed").count() == 0

        page.set_viewport_size(PHONE)
        page.reload()
        assert not scrolls_sideways(page)
        shoot(page, "follow-ups-phone")
    assert world.follow_up(3).state == "fixed"
