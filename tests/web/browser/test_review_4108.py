"""The #4108 blockers page against the hand-made companion page it was recorded from (the seed,
review-4108-companion.txt beside this file): its nine pictures drawn as diagrams, one beside each
blocker; one introduction; the seed's order (the three CI refuses, then the six nothing checks);
what the review recorded, instead of empty boxes, while the repository cannot be read; and no
link to the forge at the shortened paths the review writes.

How the seed's length is measured: its text, one paragraph per line, in the site's own stylesheet
and main column (`main.wrap`), in the same Chromium at 1440x900; the length is the document's
scroll height (5,318 px). The blockers page is measured the same way once its diagrams are drawn:
5,165 px when this was written (it was 7,703 px while its text was some 45% longer than the
seed's), so it may be no longer than the seed."""
import html
import io
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.web.browser.test_companion_pages import PHONE, chromium, scrolls_sideways, shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDE = {"width": 1440, "height": 900}
SEED = Path(__file__).with_name("review-4108-companion.txt")
# The page may be no longer than the seed (see the docstring).
LENGTH_BOUND = 1.0


def seed_height(page, live_server) -> int:
    paragraphs = "".join(f"<p>{html.escape(line)}</p>" for line in SEED.read_text().splitlines() if line.strip())
    page.set_content(
        f'<!doctype html><html><head><link rel="stylesheet" href="{live_server.url}/static/findings/recheck.css">'
        f'</head><body><main class="wrap">{paragraphs}</main></body></html>'
    )
    page.wait_for_load_state("load")
    return page.evaluate("document.documentElement.scrollHeight")


def test_the_4108_blockers_page_shows_nine_pictures_one_beside_each_blocker(live_server, settings, tmp_path):
    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    call_command("load_demo", "--no-verify", stdout=io.StringIO())
    with chromium() as browser:
        page = browser.new_page(viewport=WIDE)
        seed = seed_height(page, live_server)
        page.goto(live_server.url + "/NVIDIA-NeMo/RL/pull/4108/blockers/")
        page.wait_for_selector("html[data-diagrams=done]", state="attached", timeout=60_000)
        shoot(page, "review-4108-blockers-wide")

        # Blocker 1 starts above the fold, as the seed's does.
        assert page.locator("#finding-1 .finding-head").bounding_box()["y"] < WIDE["height"] - 100
        articles = page.locator("article.finding")
        assert articles.count() == 9
        assert page.locator(".finding .mermaid-diagram[data-state=drawn] svg").count() == 9
        for index in range(9):
            article = articles.nth(index)
            assert article.locator(".finding-picture .mermaid-diagram[data-state=drawn]").count() == 1
            # Beside the text at this width: on the right half, level with the finding's prose.
            box = article.bounding_box()
            prose = article.locator(":scope > .prose").first.bounding_box()
            picture = article.locator(".finding-picture").bounding_box()
            assert picture["x"] >= box["x"] + box["width"] / 2, index + 1
            assert picture["y"] < prose["y"] + prose["height"] and prose["y"] < picture["y"] + picture["height"]

        # The seed's order: the three a CI job refuses, then the six no job checks.
        groups = page.locator("section.group")
        assert [groups.nth(i).locator("article.finding").count() for i in range(groups.count())] == [3, 6]
        assert groups.first.locator("h2").inner_text().startswith("Caught by CI")
        # One introduction: the review's own opening, not a second one made up beside it.
        text = page.locator("main").inner_text()
        assert text.count("Fourteen review comments") == 1 and "review left" not in text
        # What was recorded, not a box per item waiting for code that cannot be read here.
        assert page.locator(".evidence-pending").count() == 0
        assert page.locator(".evidence-recorded").count() == 9
        recorded = page.locator("#finding-5 .evidence-recorded")
        recorded.locator("summary").click()
        assert "nemotron_multimodal.py:460" in recorded.inner_text()
        # No link to GitHub at a path the review shortened (the repository was never read).
        assert page.locator('a[href*="github.com/NVIDIA-NeMo/RL/blob/"]').count() == 0

        recorded.locator("summary").click()
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height <= seed * LENGTH_BOUND, f"The page is {height}px long at 1440x900, the seed {seed}px."

        page.set_viewport_size(PHONE)
        page.reload()
        page.wait_for_selector("html[data-diagrams=done]", state="attached", timeout=60_000)
        assert not scrolls_sideways(page)
        shoot(page, "review-4108-blockers-phone")
