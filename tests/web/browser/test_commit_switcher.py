"""The companion pages at another pinned commit, in a real Chromium: the switcher (a plain GET
form) shows them as they stood there, the links between the three pages keep to that pin, and the
way back leads to the latest verified commit."""
import pytest

from findings.services.verification.run import pull_request_verify
from reviews.models import Commit
from tests.factories import FindingFactory
from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot
from tests.web.test_code_browser import browsed_pull_request

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reader_switches_the_pages_to_the_base_pin_and_back(live_server, tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    browsed = browsed_pull_request(tmp_path)
    finding = FindingFactory(pull_request=browsed.pull_request, number=1, kind="blocker", title="Seven is a string")
    finding.evidence.create(position=1, kind="snippet", path="src/app.py", start_line=7, end_line=7,
                            commit=Commit.objects.get(sha=browsed.reviewed), text="value_7 = 'seven'")
    for sha in (browsed.base, browsed.reviewed):
        pull_request_verify(pull_request=browsed.pull_request, commit=Commit.objects.get(sha=sha))
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(f"{live_server.url}{browsed.pull_request.get_absolute_url()}blockers/")
        card = page.locator("article.finding").first
        assert "Still present" in card.inner_text()
        page.select_option("#pin-switcher-commit", browsed.base)
        page.click(".pin-switcher button")
        page.wait_for_url(f"**/blockers/?commit={browsed.base}")
        assert page.locator(".pin-chosen").inner_text().startswith(f"These pages as they stood at {browsed.base[:8]}")
        assert "Likely fixed" in page.locator("article.finding").first.inner_text()
        shoot(page, "companion-at-base-pin")
        page.click(".companion-nav >> text=What can land afterwards")
        page.wait_for_url(f"**/cleanups/?commit={browsed.base}")
        assert page.locator("#pin-switcher-commit").input_value() == browsed.base
        page.click("text=See them at the latest verified commit")
        page.wait_for_url("**/cleanups/")
        assert page.locator(".pin-chosen").count() == 0
