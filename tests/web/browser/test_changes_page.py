""""What does #N change?" in a real Chromium: the file table's numbers equal `git diff --numstat`
and the API's, the chart sits beside the reviewer's prose at desktop width with no link inside its
picture, and at phone width the page does not scroll sideways and the chart is drawn at a
readable size. Screenshots land in tests/artifacts/."""
import json
import shutil

import pytest

from reviews.mirrors import repository_mirror_dir
from tests.changes import changed_pull_request
from tests.web.browser.test_companion_pages import DESKTOP, PHONE, chromium, scrolls_sideways, shoot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def numstat_on_page(page) -> dict:
    rows = page.locator("table.changes-files tbody tr")
    return {
        row.get_attribute("data-path"): (
            row.get_attribute("data-added"), row.get_attribute("data-removed"), row.get_attribute("data-old-path")
        )
        for row in rows.all()
    }


def test_the_numbers_on_the_page_and_in_the_api_are_git_diff_numstats(live_server, tmp_path):
    changed = changed_pull_request(tmp_path)
    url = live_server.url + changed.pull_request.get_absolute_url()
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(url)
        assert numstat_on_page(page) == changed.numstat
        page.locator("summary", has_text="Every file").click()
        assert page.locator("table.changes-files").is_visible()
        chart = page.get_by_role("img", name="Lines added and removed by directory in acme/changes#12")
        assert chart.is_visible() and chart.locator("a").count() == 0
        # Beside the prose: the chart's column starts right of the prose's, on the same row.
        prose = page.locator(".overview-change-prose").bounding_box()
        figure = page.locator(".changes").bounding_box()
        assert figure["x"] > prose["x"] + prose["width"] - 1 and abs(figure["y"] - prose["y"]) < 40
        shoot(page, "changes-overview")

        answer = json.loads(page.request.get(live_server.url + "/api/repos/acme/changes/pulls/12/changes").text())
        assert {
            item["path"]: ("-" if item["binary"] else str(item["added"]),
                           "-" if item["binary"] else str(item["removed"]), item["old_path"])
            for item in answer["files"]
        } == changed.numstat

        page.set_viewport_size(PHONE)
        page.goto(url)
        assert not scrolls_sideways(page)
        box = chart.bounding_box()
        # Drawn 360 wide: on a 390-pixel screen it keeps most of its size, its 12px labels readable.
        assert box["width"] >= 300
        shoot(page, "changes-overview-phone")


def test_an_unreachable_repository_is_said_so_on_the_page(live_server, tmp_path):
    changed = changed_pull_request(tmp_path)
    shutil.rmtree(repository_mirror_dir(changed.pull_request.repository))
    shutil.rmtree(changed.repo.path)  # nor can this host fetch it again
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + changed.pull_request.get_absolute_url())
        assert "could not be read" in page.locator(".changes-problem").inner_text()
        assert page.locator("table.changes-files").count() == 0
