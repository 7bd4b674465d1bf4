"""A maintainer deciding about a finding whose code was rewritten sees, in a real browser, what
replaced it beside the lines recorded, on the decide form and in Needs a decision."""
import pytest
from django.urls import reverse

from tests.factories import UserFactory
from tests.findings.selectors.test_successors import world  # noqa: F401 (a fixture)
from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_decide_form_and_the_queue_show_the_gone_lines_beside_what_replaced_them(live_server, world):  # noqa: F811
    _, commit, _ = world
    UserFactory(username="mona", groups=["Maintainer"])
    decide = reverse("findings:finding_decide", kwargs={"owner": "acme", "name": "loader", "number": 7,
                                                        "finding_number": 1})
    sentence = f"Rewritten at {commit.sha[:8]}: now src/loader.py:10–11"
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        sign_in(page, live_server, "mona", decide, sent_there=False)
        successor = page.locator(".evidence-successor")
        assert successor.is_visible()
        assert sentence in successor.inner_text()
        assert successor.locator("tr.diff-removed").count() == 2
        assert successor.locator("tr.diff-added").count() == 2
        assert "settings = {n: configure(n) for n in (10, 11)}" in successor.locator("tr.diff-added").first.inner_text()
        shoot(page, "decide-successor")

        page.goto(live_server.url + reverse("findings:decisions"))
        assert sentence in page.locator(".evidence-successor").inner_text()
