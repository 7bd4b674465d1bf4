"""Selecting lines in the code browser in a real headless Chromium: with the mouse (click, then
shift-click), from the keyboard, and from a URL that names the lines; the selection bar carries the
finding editor's links for a reviewer and none for a reader. Screenshots land in tests/artifacts/."""
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot, signed_in
from tests.factories import FindingFactory, UserFactory
from tests.web.test_code_browser import browsed_pull_request

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browsed(tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    browsed = browsed_pull_request(tmp_path)
    FindingFactory(pull_request=browsed.pull_request, number=1, title="The loader drops a row")
    FindingFactory(pull_request=browsed.pull_request, number=2, title="Seven is a string")
    return browsed


def selected_lines(page) -> list[int]:
    return page.eval_on_selector_all(".code-lines tr.selected", "rows => rows.map(row => Number(row.id.slice(1)))")


def fragment(page) -> str:
    """The URL's fragment as the page holds it. Not `page.url`: Playwright learns of a
    `history.replaceState` from an event that may arrive after the key press that caused it has
    returned, so reading it straight after a press can give the fragment before."""
    return page.evaluate("window.location.hash.slice(1)")


def query_of(page, selector: str) -> tuple[str, dict[str, list[str]]]:
    href = page.get_attribute(selector, "href")
    parts = urlsplit(href)
    return parts.path, parse_qs(parts.query)


def test_a_reviewer_selects_lines_7_to_8_with_the_mouse_and_gets_the_editors_links(live_server, browsed):
    with chromium() as browser:
        context = signed_in(browser, live_server, UserFactory(username="rita", groups=["Reviewer"]))
        page = context.new_page()
        page.goto(live_server.url + browsed.url(path="src/app.py"))
        assert page.is_hidden("[data-code-selection]")
        page.click('a[data-line="7"]')
        page.click('a[data-line="8"]', modifiers=["Shift"])
        assert len(context.pages) == 1  # shift-click selected: it opened no window
        assert fragment(page) == "L7-L8"
        assert selected_lines(page) == [7, 8]
        assert page.inner_text("[data-selection-label]") == "Lines 7\u20138 selected"
        shoot(page, "code-browser-selection")

        base = browsed.pull_request.get_absolute_url()
        path, query = query_of(page, "text=New finding from these lines")
        assert path == f"{base}findings/new/"
        assert query == {"commit": [browsed.reviewed], "path": ["src/app.py"], "lines": ["7-8"]}

        page.select_option("[data-evidence-finding]", "2")
        path, query = query_of(page, "[data-add-evidence]")
        assert path == f"{base}findings/2/evidence/new/"
        assert query == {"kind": ["snippet"], "commit": [browsed.reviewed], "path": ["src/app.py"], "lines": ["7-8"]}
        assert page.inner_text("[data-add-evidence]") == "Add as evidence to finding 2"

        page.click('a[data-line="3"]', modifiers=["Shift"])  # extends from the line first clicked
        assert fragment(page) == "L3-L7" and selected_lines(page) == [3, 4, 5, 6, 7]
        page.click("[data-clear-selection]")
        assert selected_lines(page) == [] and fragment(page) == ""
        assert page.is_hidden("[data-code-selection]")


def test_lines_are_selected_from_the_keyboard(live_server, browsed):
    with chromium() as browser:
        context = signed_in(browser, live_server, UserFactory(username="kim", groups=["Reviewer"]))
        page = context.new_page()
        page.goto(live_server.url + browsed.url(path="src/app.py"))
        # The line numbers are one Tab stop: after the first, Tab leaves the code.
        tab_stops = page.eval_on_selector_all("a[data-line]", "links => links.filter(l => l.tabIndex === 0).length")
        assert tab_stops == 1
        page.focus('a[data-line="3"]')
        page.keyboard.press("Enter")
        assert fragment(page) == "L3" and selected_lines(page) == [3]
        page.keyboard.press("Shift+ArrowDown")
        page.keyboard.press("Shift+ArrowDown")
        assert fragment(page) == "L3-L5" and selected_lines(page) == [3, 4, 5]
        assert page.evaluate("document.activeElement.dataset.line") == "5"
        page.keyboard.press("ArrowDown")  # moves without selecting
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Shift+Enter")
        assert fragment(page) == "L3-L7" and len(context.pages) == 1
        _, query = query_of(page, "text=New finding from these lines")
        assert query["lines"] == ["3-7"]
        page.keyboard.press("ArrowDown")
        page.keyboard.press(" ")
        assert fragment(page) == "L8" and selected_lines(page) == [8]
        page.keyboard.press("Escape")
        assert selected_lines(page) == []


def test_a_url_with_lines_selects_them_and_a_reader_gets_no_write_links(live_server, browsed):
    with chromium() as browser:
        context = signed_in(browser, live_server, UserFactory(username="rob", groups=["Reader"]))
        page = context.new_page()
        page.goto(live_server.url + browsed.url(path="src/app.py") + "#L7-L8")
        page.wait_for_selector("[data-code-selection]:not([hidden])")
        assert selected_lines(page) == [7, 8]
        assert page.inner_text("[data-selection-label]") == "Lines 7\u20138 selected"
        assert page.locator("text=New finding from these lines").count() == 0
        assert page.locator("[data-add-evidence], [data-evidence-finding]").count() == 0
        shoot(page, "code-browser-reader")

        page.click('a[data-line="12"]')
        page.click('a[data-line="10"]', modifiers=["Shift"])
        assert fragment(page) == "L10-L12" and selected_lines(page) == [10, 11, 12]

        anonymous = browser.new_page(viewport=DESKTOP)
        anonymous.goto(live_server.url + browsed.url(path="src/app.py") + "#L20")
        assert selected_lines(anonymous) == [20]
        assert anonymous.locator("text=New finding from these lines").count() == 0


def test_the_tree_links_through_to_a_file(live_server, browsed):
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + browsed.pull_request.get_absolute_url())
        page.click(f'a.pin-code[href="{browsed.url()}"]')
        page.wait_for_selector("text=All files")
        shoot(page, "code-browser-tree")
        page.click(".code-changes >> text=src/app.py")
        page.wait_for_selector(".code-lines")
        assert page.locator(".code-lines tr").count() == 20


def test_on_a_phone_tapping_13_then_17_selects_13_to_17(live_server, browsed):
    with chromium() as browser:
        user = UserFactory(username="rita", groups=["Reviewer"])
        from django.test import Client

        client = Client()
        client.force_login(user)
        context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
        context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
        page = context.new_page()
        page.goto(live_server.url + browsed.url(path="src/app.py"))
        page.tap('a[data-line="13"]')
        assert selected_lines(page) == [13]
        page.tap('a[data-line="17"]')
        assert selected_lines(page) == [13, 14, 15, 16, 17]
        assert fragment(page) == "L13-L17"
        assert page.inner_text("[data-selection-label]") == "Lines 13\u201317 selected"
        _, query = query_of(page, "text=New finding from these lines")
        assert query["lines"] == ["13-17"]
        shoot(page, "code-browser-touch-selection")
        page.tap('a[data-line="4"]')  # a third tap starts again
        assert selected_lines(page) == [4]
        page.tap('a[data-line="4"]')  # and tapping the one selected line clears it
        assert selected_lines(page) == []


def test_lines_carrying_findings_are_marked_in_the_gutter_and_link_to_them(live_server, browsed):
    from reviews.models import Commit

    finding = browsed.pull_request.findings.get(number=2)
    finding.evidence.create(position=1, kind="snippet", path="src/app.py", start_line=7, end_line=8,
                            commit=Commit.objects.get(sha=browsed.reviewed), text="value_7 = 'seven'\nvalue_8 = 8")
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + browsed.url(path="src/app.py"))
        marker = page.locator("#L7 .line-marks a.finding-marker")
        assert marker.inner_text() == "2" and marker.get_attribute("aria-label") == "Blocker 2: Seven is a string, lines 7–8"
        assert page.eval_on_selector_all(".code-lines tr.has-finding", "rows => rows.map(row => row.id)") == ["L7", "L8"]
        shoot(page, "code-browser-gutter")
        marker.click()
        page.wait_for_url(f"{live_server.url}{finding.get_absolute_url()}")


def test_the_diff_view_between_two_pins_places_the_findings_and_switches_pins(live_server, browsed):
    from reviews.models import Commit

    finding = browsed.pull_request.findings.get(number=2)
    finding.evidence.create(position=1, kind="snippet", path="src/app.py", start_line=7, end_line=7,
                            commit=Commit.objects.get(sha=browsed.reviewed), text="value_7 = 'seven'")
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + browsed.url(path="src/app.py"))
        page.click("text=See what changed between two pins")
        page.wait_for_url("**/diff/**")
        assert page.locator(".diff-summary").inner_text() == "4 files changed, +2 −2; findings on 1 of them."
        added = page.locator("tr.diff-added.has-finding")
        assert added.count() == 1 and "value_7 = 'seven'" in added.inner_text()
        assert added.locator("a.finding-marker").get_attribute("href") == finding.get_absolute_url()
        shoot(page, "code-browser-diff")
        # The other way round, from the pins' selects (a plain GET form).
        page.select_option("#diff-from", browsed.reviewed)
        page.select_option("#diff-to", browsed.base)
        page.click(".diff-pins button")
        page.wait_for_url(f"**from={browsed.reviewed}**")
        assert page.locator("tr.diff-removed.has-finding").count() == 1
        assert page.locator("h1").inner_text().startswith(f"From {browsed.reviewed[:8]}")
