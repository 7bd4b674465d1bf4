"""The pictures at their edges, in a real Chromium, on the demo's sample review: the verification
grid's legend stays inside the picture with no entry running into the next; the pin history's
fork label keeps clear of the pin's line; at phone width a grid is stacked (each label above its
cells, whole columns in view) and scrolls inside its frame while the page does not; the focus ring stands out from the page (3:1)."""
import io

import pytest
from django.core.management import call_command

from tests.web.browser.test_companion_pages import DESKTOP, PHONE, chromium, scrolls_sideways, shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BOXES = """selector => Array.from(document.querySelectorAll(selector)).map(e => {
  const b = e.getBoundingClientRect(); return {x: b.x, y: b.y, right: b.right, bottom: b.bottom, text: e.textContent};
})"""


def overlaps(one, other) -> bool:
    return one["x"] < other["right"] - 0.5 and other["x"] < one["right"] - 0.5 and \
        one["y"] < other["bottom"] - 0.5 and other["y"] < one["bottom"] - 0.5


def luminance(rgb) -> float:
    def channel(value):
        value /= 255
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4
    red, green, blue = (channel(value) for value in rgb)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue


def contrast(one, other) -> float:
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def rgb(css: str) -> tuple[int, int, int]:
    return tuple(int(part) for part in css[css.index("(") + 1: css.index(")")].split(",")[:3])


def test_the_pictures_keep_their_labels_inside_and_apart(live_server, settings, tmp_path):
    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    call_command("load_demo", stdout=io.StringIO())
    base = live_server.url + "/recheck-demo/sample/pull/1/"
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        for url in (base, base + "findings/1/"):
            page.goto(url)
            for grid in page.locator("svg.grid").all():
                frame = grid.bounding_box()
                legend = [box for box in grid.evaluate(
                    "svg => Array.from(svg.querySelectorAll(':scope > text')).map(e => {"
                    "const b = e.getBoundingClientRect(); return {x: b.x, y: b.y, right: b.right, bottom: b.bottom,"
                    " text: e.textContent}; })"
                ) if "=" in box["text"] or box["y"] > frame["y"] + frame["height"] - 60]
                assert legend, url
                for box in legend:
                    assert box["right"] <= frame["x"] + frame["width"] + 0.5, (url, box["text"])
                for index, box in enumerate(legend):
                    for other in legend[index + 1:]:
                        assert not overlaps(box, other), (url, box["text"], other["text"])
        shoot(page, "sample-finding-grid-legend")

        page.goto(base + "findings/1/")
        fork = page.locator("svg.pin-history text.fork")
        if fork.count():
            label = fork.bounding_box()
            dot = page.locator("svg.pin-history circle").filter(has=page.locator("title", has_text="the fork point"))
            point = dot.bounding_box()
            # The pin's line leaves the fork point to the right: the label ends left of it.
            assert label["x"] + label["width"] <= point["x"] + 1

        # The focus ring against the page.
        page.keyboard.press("Tab")
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineColor")
        assert contrast(rgb(outline), (255, 255, 255)) >= 3, outline

        page.set_viewport_size(PHONE)
        for url in (base, base + "findings/1/"):
            page.goto(url)
            assert not scrolls_sideways(page), url
            # The grid stacked for the phone, each label above its cells: whole columns, not a sliver.
            assert page.locator("svg.grid-stacked").first.is_visible() and not page.locator("svg.grid").first.is_visible()
            first_cell = page.locator("svg.grid-stacked rect.cell").first.bounding_box()
            frame_box = page.locator(".picture-frame").first.bounding_box()
            assert first_cell["x"] + first_cell["width"] <= frame_box["x"] + frame_box["width"], url
            frame = page.locator(".picture-frame").first
            # A grid wider than the phone scrolls inside its frame, so its last column is reachable.
            width, scroll = frame.evaluate("f => [f.clientWidth, f.scrollWidth]")
            if scroll > width:
                frame.evaluate("f => f.scrollLeft = f.scrollWidth")
                assert frame.evaluate("f => f.scrollLeft") > 0
        shoot(page, "sample-overview-phone")
