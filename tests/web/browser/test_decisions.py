"""A maintainer decides in a real headless Chromium, against a real repository and its fetched
mirror: Mark fixed at an unknown SHA (refused), at a commit where the evidence still holds
(warned, then confirmed anyway with a note), and at the right commit; the finding's history shows
each step. A reader sees no decision buttons, and a forged POST from one is refused.
Screenshots land in tests/artifacts/."""
import re

import pytest

from findings.models import Finding, FindingEvent
from tests.web.browser.test_companion_pages import DESKTOP, PHONE, chromium, shoot, sign_in
from tests.factories import UserFactory
from tests.findings.decision_data import fetched_review

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

def test_a_maintainer_is_refused_warned_and_then_marks_fixed_and_a_reader_sees_no_buttons(
    live_server, tmp_path
):
    review = fetched_review(tmp_path)
    UserFactory(username="mona", groups=["Maintainer"])
    UserFactory(username="rhea", groups=["Reader"])
    blockers = review.pull_request.get_absolute_url() + "blockers/"
    first = review.fixed_one
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        sign_in(page, live_server, "mona", blockers, sent_there=False)
        assert page.locator("nav.site-nav >> text=Needs a decision").count() == 1
        card = page.locator("#finding-1")

        # An unknown SHA: refused, the form shown again with the service's message.
        card.locator("summary", has_text="Mark fixed").click()
        commit = card.locator("input[name=commit]")
        assert commit.input_value() == review.fix  # prefilled with the latest verified pin
        commit.fill("deadbeef")
        card.locator("button", has_text="Mark fixed").click()
        page.wait_for_selector("#decide-refusal")
        assert "No commit deadbeef in acme/loader" in page.locator("#decide-refusal").inner_text()
        assert page.locator("#id_commit").get_attribute("aria-invalid") == "true"
        shoot(page, "decide-unknown-sha")

        # The reviewed commit, where the evidence still holds: warned, with a box to tick.
        page.fill("#id_commit", review.reviewed[:10])
        page.locator("#decide-fixed button[type=submit]").click()
        page.wait_for_selector(".decide-still-holds")
        warning = page.locator(".decide-still-holds").inner_text()
        assert f"The evidence still holds at {review.reviewed[:12]}: mark fixed anyway?" in warning
        assert "Still present" in warning
        assert page.locator("#id_anyway").is_visible()
        shoot(page, "decide-still-holds")

        # Ticked, but without a note: still refused.
        page.check("#id_anyway")
        page.locator("#decide-fixed button[type=submit]").click()
        page.wait_for_selector("#decide-refusal")
        assert "needs a note" in page.locator("#decide-refusal").inner_text()
        assert first.status == "open" and not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS).exists()

        # The right commit instead: marked fixed, back on the blockers page.
        page.fill("#id_commit", review.fix)
        page.uncheck("#id_anyway")
        page.fill("#id_note_fixed", "Tolerance back to 100.")
        page.locator("#decide-fixed button[type=submit]").click()
        page.wait_for_selector(".message-success")
        assert f"marked fixed at {review.fix[:8]}" in page.locator(".message-success").inner_text()
        first.refresh_from_db()
        assert (first.status, first.resolved_commit.sha) == ("fixed", review.fix)

        # Finding 2 still holds at the fix: marked fixed anyway, with a note.
        second = page.locator("#finding-2")
        second.locator("summary", has_text="Mark fixed").click()
        second.locator("button", has_text="Mark fixed").click()
        page.wait_for_selector(".decide-still-holds")
        page.check("#id_anyway")
        page.fill("#id_note_fixed", "The flag stays, but nothing reads it any more.")
        page.locator("#decide-fixed button[type=submit]").click()
        page.wait_for_selector(".message-success")
        assert Finding.objects.get(pk=review.still_there.pk).status == "fixed"

        # The history shows each step that happened.
        page.goto(live_server.url + first.get_absolute_url())
        history = page.locator("ol.history").inner_text()
        assert re.search(rf"Open → Fixed at {review.fix[:8]} by mona \(site\) ?: Tolerance back to 100\.", history)
        page.goto(live_server.url + review.still_there.get_absolute_url())
        assert "nothing reads it any more" in page.locator("ol.history").inner_text()
        # And Reopen puts it back, recorded too, once confirmed: the button asks first.
        page.locator(".decide button", has_text="Reopen").click()
        page.wait_for_selector("#confirm-reopen")
        assert "It is marked Fixed by mona" in page.locator("#confirm-reopen").inner_text()
        assert FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS, to_status="open").count() == 0
        shoot(page, "decide-reopen-confirm")
        page.locator("#decide-open button[type=submit]").click()
        page.wait_for_selector(".message-success")
        assert re.search(r"Fixed → Open by mona \(site\)", page.locator("ol.history").inner_text())
        shoot(page, "decide-history")

        phone = browser.new_page(viewport=PHONE)
        phone.goto(live_server.url + "/decisions/")
        assert "/accounts/login/" not in phone.url
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")

        # A reader: no buttons anywhere, and a forged POST is refused.
        reader = browser.new_context(viewport=DESKTOP).new_page()
        sign_in(reader, live_server, "rhea", blockers, sent_there=False)
        assert reader.locator(".decide").count() == 0 and "Mark fixed" not in reader.content()
        assert reader.locator("nav.site-nav >> text=Needs a decision").count() == 0
        reader.goto(live_server.url + review.still_there.get_absolute_url())
        assert reader.locator(".decide").count() == 0
        status = reader.evaluate(
            """async (url) => {
                const token = document.querySelector('[name=csrfmiddlewaretoken]').value;
                const body = new URLSearchParams({csrfmiddlewaretoken: token, status: 'dismissed', note: 'forged'});
                const response = await fetch(url, {method: 'POST', body});
                return response.status;
            }""",
            review.still_there.get_absolute_url() + "decide/",
        )
        assert status == 403
        assert Finding.objects.get(pk=review.still_there.pk).status == "open"
        assert not FindingEvent.objects.filter(kind=FindingEvent.Kind.STATUS, note="forged").exists()
