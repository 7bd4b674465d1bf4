"""Diagrams reviewers write as ```mermaid blocks, in a real Chromium: drawn by the local copy of
Mermaid on the live pages and in the static render (which fetches nothing), the parser's message
beside the source when a diagram does not parse, and nothing a block smuggles in ever runs.
Screenshots land in tests/artifacts/."""
import pytest

from presentation.companion import companion_pages_html, with_scripts
from findings.models import Finding
from tests.web.browser.test_companion_pages import ARTIFACTS, DESKTOP, chromium, shoot
from tests.factories import reviewed_pull_request
from tests.web.browser.violations import Refusals

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

GOOD = """Where the pin goes:

```mermaid
graph LR
  A[5ed97996 RL main pins] --> B[Bridge main continues]
  A --> C[3961f399 feature branch head]
```
"""
BROKEN = """```mermaid
graph LR
  A --> --> [
```
"""
HOSTILE = """```mermaid
graph LR
  A["<script>window.__pwned = 'label'</script>"] --> B["<img src=x onerror=window.__pwned='img'>"]
  B --> C[<a href='javascript:window.__pwned=1'>link</a>]
  click A "javascript:window.__pwned='click'" "tooltip"
  click B callback
```
"""


def diagram_review():
    data = reviewed_pull_request(blockers=3, cleanups=1)
    Finding.objects.filter(pull_request=data.pull_request, number=1).update(body=GOOD)
    Finding.objects.filter(pull_request=data.pull_request, number=2).update(body=BROKEN)
    Finding.objects.filter(pull_request=data.pull_request, number=3).update(fix=HOSTILE)
    return data.pull_request


def wait_for_diagrams(page):
    page.wait_for_function("() => document.documentElement.dataset.diagrams === 'done'", timeout=30_000)


def check_diagrams(page, dialogs):
    good, broken, hostile = (page.locator(f"#finding-{n} .mermaid-diagram") for n in (1, 2, 3))
    assert good.get_attribute("data-state") == "drawn"
    assert good.locator(".mermaid-drawn svg").count() == 1
    drawn = good.locator(".mermaid-drawn svg").text_content()
    assert "Bridge main" in drawn and "3961f399" in drawn

    assert broken.get_attribute("data-state") == "error"
    assert broken.locator(".mermaid-error p").inner_text() == "This diagram could not be drawn. Mermaid says:"
    assert "Parse error on line 2" in broken.locator(".mermaid-error-message").inner_text()
    assert "A --> --> [" in broken.locator("pre.mermaid-source").inner_text()

    assert page.evaluate("window.__pwned") is None
    assert dialogs == []
    assert hostile.locator("script").count() == 0
    assert hostile.locator("[onerror], [onclick]").count() == 0
    assert hostile.locator("img, foreignObject, iframe, object, embed").count() == 0
    hrefs = hostile.evaluate("b => [...b.querySelectorAll('a')].map(a => a.getAttribute('href') || a.getAttribute('xlink:href') || '')")
    assert not [href for href in hrefs if "javascript" in href.lower()]
    for link in hostile.locator(".mermaid-drawn a, .mermaid-drawn .node").all():
        link.click(force=True)
    assert page.evaluate("window.__pwned") is None


def test_diagrams_draw_on_the_blockers_page_and_hostile_ones_stay_inert(live_server):
    pull_request = diagram_review()

    refusals = Refusals()
    with chromium(refusals) as browser:
        page = browser.new_page(viewport=DESKTOP)
        dialogs = []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        requested = []
        page.on("request", lambda request: requested.append(request.url))
        page.goto(live_server.url + pull_request.get_absolute_url() + "blockers/")
        wait_for_diagrams(page)
        check_diagrams(page, dialogs)
        page.locator("#finding-1 .mermaid-diagram").screenshot(path=str(ARTIFACTS / "mermaid-diagram.png"))
        page.locator("#finding-2 .mermaid-diagram").screenshot(path=str(ARTIFACTS / "mermaid-parse-error.png"))
        shoot(page, "blockers-with-diagrams")

    assert all(url.startswith(live_server.url) for url in requested), "Mermaid must be served locally."
    # The hostile label's inline handler reaches the page while Mermaid draws: the site's
    # Content-Security-Policy refuses it, and refuses nothing else.
    assert {(violation["directive"], violation["blocked"]) for violation in refusals.violations} <= {
        ("script-src-attr", "inline")
    }
    assert not [url for url in requested if url.rstrip("/").endswith("/x")], "A label's image was fetched."


def test_the_static_render_carries_mermaid_and_fetches_nothing(live_server, tmp_path):
    pull_request = diagram_review()
    files, _ = companion_pages_html(pull_request=pull_request)
    # The pages and the one copy of Mermaid they link, as the zip and the command ship them.
    for name, text in with_scripts(files).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert "mermaid" not in files["index.html"].split("<footer")[1]  # no diagram there: no script

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        dialogs, requested = [], []
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.on("request", lambda request: requested.append(request.url))
        page.goto((tmp_path / "blockers.html").as_uri())
        wait_for_diagrams(page)
        check_diagrams(page, dialogs)
        shoot(page, "static-blockers-with-diagrams")

    assert [url for url in requested if not url.startswith("file://")] == []


def test_without_script_the_reader_sees_the_diagrams_source(live_server):
    pull_request = diagram_review()

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP, java_script_enabled=False)
        page.goto(live_server.url + pull_request.get_absolute_url() + "blockers/")
        assert "Bridge main continues" in page.locator("#finding-1 pre.mermaid-source").inner_text()


# What every page with a diagram loaded before: the whole of Mermaid's classic build.
WHOLE_MERMAID = 5_537_838


def test_a_page_with_a_diagram_loads_a_small_fraction_of_mermaid_before_it_is_drawn(live_server):
    data = reviewed_pull_request(blockers=3, cleanups=1)
    Finding.objects.filter(pull_request=data.pull_request, number=1).update(body=GOOD)
    pull_request = data.pull_request
    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        loaded: dict[str, int] = {}
        page.on("requestfinished", lambda request: loaded.__setitem__(request.url, len(request.response().body())))
        page.goto(live_server.url + pull_request.get_absolute_url() + "blockers/")
        wait_for_diagrams(page)
        assert page.locator("#finding-1 .mermaid-diagram[data-state=drawn] svg").is_visible()
        weight = sum(loaded.values())
        scripts = sum(size for url, size in loaded.items() if "/vendor/mermaid/" in url)
        assert 0 < scripts < weight
        # Neither the whole classic build nor the ELK layout (1.6 MB) a flowchart does not need.
        assert not any(url.endswith("mermaid.min.js") or "/elk-" in url for url in loaded)
        # Under a fifth of what every such page loaded before (some 0.97 MB when this was written).
        assert weight < WHOLE_MERMAID * 0.2, f"{weight} bytes loaded before the diagram was drawn"
