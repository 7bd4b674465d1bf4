"""Since you last looked, and the Notifications page, in a real headless Chromium under the strict
Content-Security-Policy: a push between two visits marks the two findings it changed, Mark all
seen clears them; a person watches a pull request from the Notifications page."""
import pytest

from core.vocabulary import events as ev
from notify.models import Subscription
from tests import personas
from tests.timeline_world import TimelineWorld
from tests.web.browser.test_companion_pages import chromium, shoot, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def world(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    return TimelineWorld(tmp_path, actor=personas.user_with_role("maintainer", username="ada"))


def test_the_pages_mark_what_changed_since_the_last_visit_until_marked_seen(live_server, world):
    world.imported().first_push()
    with chromium() as browser:
        page = signed_in(browser, live_server, world.actor).new_page()
        page.goto(live_server.url + "/acme/loader/pull/7/")
        page.wait_for_load_state("networkidle")
        assert page.locator(".changed-since").count() == 0 and page.locator("#since-last-visit").is_hidden()
        world.second_push()
        page.reload()
        page.wait_for_selector(".since-summary")
        assert "2 changes since you last looked" in page.locator(".since-summary").inner_text()
        marked = sorted(item.locator(".glance-number").inner_text() for item in page.locator("li.changed-since").all())
        assert marked == ["1", "2"]
        shoot(page, "since-last-visit")
        page.click("text=2 changes since you last looked")
        page.wait_for_url("**/timeline/?since=last-visit")
        assert page.locator("li.event").count() == 2
        page.go_back()
        page.wait_for_selector(".mark-all-seen")
        page.click(".mark-all-seen")
        page.locator(".changed-since-badge").first.wait_for(state="detached")
        assert page.locator(".changed-since").count() == 0
        page.reload()
        page.wait_for_load_state("networkidle")
        assert page.locator(".changed-since").count() == 0


def test_a_person_watches_a_pull_request_from_the_notifications_page(live_server, world):
    world.imported()
    with chromium() as browser:
        page = signed_in(browser, live_server, world.actor).new_page()
        page.goto(live_server.url + "/notifications/")
        assert "No choice made yet" in page.inner_text("table.subscriptions")
        page.select_option("select[name=repository]", "acme/loader")
        page.fill("input[name=pull_request]", "7")
        page.check(f"input[name=kinds][value='{ev.FINDING_REGRESSED}']")
        page.select_option("select[name=channel]", "email")
        page.click("button:text-is('Save')")
        page.wait_for_selector(".message-success")
        row = page.locator("tr.subscription")
        assert "acme/loader#7" in row.inner_text() and "Possibly regressed" in row.inner_text()
        shoot(page, "notifications")
    assert Subscription.objects.get(user=world.actor).kinds == [ev.FINDING_REGRESSED]
