"""The pictures in a real Chromium: a submodule pin's history on its finding page and the PR-wide
verification picture on the overview, drawn without script and readable at phone width.
Screenshots land in tests/artifacts/."""
import pytest

from tests.web.browser.test_companion_pages import DESKTOP, PHONE, chromium, scrolls_sideways, shoot
from tests.submodules import verified_submodule_review

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_finding_page_draws_the_pin_history_and_the_overview_the_verification_picture(live_server, tmp_path):
    pull_request, bridge = verified_submodule_review(tmp_path)
    base = live_server.url + pull_request.get_absolute_url()

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP, java_script_enabled=False)
        page.goto(base + "findings/1/")
        history = page.locator("svg.pin-history")
        assert history.count() == 1 and history.is_visible()
        assert history.bounding_box()["width"] > 600
        assert history.locator("text.figures").text_content() == "4 ahead · 5 behind main"
        assert page.get_by_role("img", name="Pin history of 3rdparty/bridge: 4 ahead · 5 behind main").is_visible()
        history.scroll_into_view_if_needed()
        shoot(page, "finding-pin-history")
        history.screenshot(path=str(__import__("tests.web.browser.test_companion_pages", fromlist=["ARTIFACTS"])
                                    .ARTIFACTS / "pin-history.png"))

        page.goto(base)
        grid = page.locator("svg.grid")
        assert grid.is_visible() and grid.locator("rect.cell").count() == 2 * 3
        assert grid.locator("text.mark-moved").count() == 1
        shoot(page, "overview-verification-picture")

        page.set_viewport_size(PHONE)
        for url in (base, base + "findings/1/", base + "blockers/"):
            page.goto(url)
            assert not scrolls_sideways(page), f"{url} scrolls sideways at phone width with its pictures."


def test_on_first_start_the_samples_first_blocker_shows_a_real_pin_history(live_server, settings, tmp_path):
    import io

    from django.core.management import call_command

    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    call_command("load_demo", stdout=io.StringIO())

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + "/recheck-demo/sample/pull/1/findings/1/")
        history = page.locator("svg.pin-history")
        assert history.locator("text.figures").text_content() == "3 ahead · 4 behind main"
        assert history.locator("text.fast-forward").text_content().startswith("not a fast-forward from ")
        assert "“Fix the record validator for empty turns”" in page.locator(".pin-history-frame .picture-text").inner_text()
        shoot(page, "sample-finding-1-pin-history")

        page.goto(live_server.url + "/recheck-demo/sample/pull/1/")
        assert page.locator("svg.grid text.mark-renamed").count() >= 1
        assert page.locator("svg.grid text.mark-reindented").count() >= 1
        shoot(page, "sample-overview-verification-picture")


def test_the_4108_pages_carry_the_reviews_own_framing(live_server, settings, tmp_path):
    import io

    from django.core.management import call_command

    settings.RECHECK_MIRROR_ROOT = tmp_path / "var" / "mirrors"
    call_command("load_demo", "--no-verify", stdout=io.StringIO())
    base = live_server.url + "/NVIDIA-NeMo/RL/pull/4108/"

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(base)
        attestation = page.get_by_role("complementary", name="The reviewer's own check")
        assert attestation.is_visible() and "all still present" in attestation.inner_text()
        assert "Not verified by Recheck" in page.locator(".status-line").inner_text()
        shoot(page, "review-4108-overview")
        page.goto(base + "cleanups/")
        assert page.locator(".not-recorded").inner_text().startswith(
            "The review counts 5 cleanups that are not recorded here.")
        shoot(page, "review-4108-cleanups")
        page.goto(base + "blockers/")
        assert page.get_by_role("region", name="What to do with this").is_visible()
        shoot(page, "review-4108-blockers")
