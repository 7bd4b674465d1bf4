"""Searching and following a finding's relatives in a real headless Chromium: a reader types a
query with a filter, reads why a result matched, opens it, follows a related finding to its file
page and the repository page, whose charts are drawn and described. Screenshots land in
tests/artifacts/."""
import pytest

from findings.services.tags_and_links import finding_link_create, finding_tags_set
from tests.web.browser.test_companion_pages import DESKTOP, PHONE, chromium, shoot
from tests.factories import FindingFactory, PullRequestFactory, RepositoryFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reader_searches_then_follows_related_findings_to_the_file_and_repository(live_server):
    repository = RepositoryFactory(slug="acme/loader")
    first = FindingFactory(pull_request=PullRequestFactory(repository=repository, number=1),
                           title="Failure tolerance switched off", path="src/loader.py",
                           body="The tolerance is zero, so a broken dataset never stops the job.")
    second = FindingFactory(pull_request=PullRequestFactory(repository=repository, number=2),
                            title="Retries hide a broken dataset", path="src/loader.py", body="Same loader.")
    finding_tags_set(finding=first, slugs=["silent-failure"], actor=None)
    finding_tags_set(finding=second, slugs=["silent-failure"], actor=None)
    finding_link_create(source=second, target=first, kind="follow_up_of", actor=None)
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + "/")
        page.fill("input[name=q]", '"never stops" repo:acme/loader')
        page.click("button[type=submit]")
        assert page.locator("#results-title").inner_text().startswith("1 finding found")
        assert page.locator(".result-excerpt mark").first.inner_text().lower() == "never stops"
        assert "Matched: text: \"never stops\"; filters: repo:acme/loader" in page.locator(".result-why").inner_text()
        shoot(page, "search-results")

        page.click(".result-title a")
        related = page.locator(".related-finding")
        assert related.first.inner_text().startswith("Followed up by acme/loader#2/")
        shoot(page, "finding-related")
        page.click(".file-link a")
        assert page.locator("h1").inner_text() == "src/loader.py"
        assert page.locator(".result").count() == 2

        page.click(".eyebrow a")
        charts = page.locator("svg.chart")
        assert charts.count() == 7  # five figures, and the open and the overdue follow-ups over time
        # The open follow-ups come first (none: nothing merged), then the overdue ones; then the five figures.
        assert charts.first.locator("desc").text_content().startswith("0 open follow-ups now")
        assert charts.nth(2).locator("desc").text_content() == "2 open blockers: under a week 2, 1–4 weeks 0, 1–3 months 0, over 3 months 0."
        box = charts.nth(2).bounding_box()
        assert box and box["width"] > 200
        shoot(page, "repository-page")

        phone = browser.new_page(viewport=PHONE)
        phone.goto(live_server.url + "/acme/loader/")
        assert phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
