"""The pages' own scripts under the site's Content-Security-Policy, in a real Chromium: the
editor, the code browser, Mermaid's diagrams, a run's progress, the admin and the API's pages load
with the policy in their header and nothing refused, no script error on the console. (Every other
browser test fails on a refusal too: `chromium()` watches each page.)"""
import pytest

from findings.models import Finding, VerificationRun
from reviews.mirrors import repository_fetch
from tests.factories import (
    CommitFactory, PinnedCommitFactory, PullRequestFactory, RepositoryFactory, UserFactory, reviewed_pull_request,
)
from tests.gitrepo import GitRepoBuilder
from tests.web.browser.test_companion_pages import DESKTOP, chromium, sign_in, signed_in
from tests.web.browser.test_diagrams import BROKEN, GOOD, HOSTILE, diagram_review, wait_for_diagrams
from tests.web.browser.violations import Refusals
from tests.web.test_code_browser import browsed_pull_request

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def opened(page, url: str):
    """Open `url` and check the answer carries the policy that the page is then held to."""
    response = page.goto(url)
    policy = response.headers.get("content-security-policy", "")
    assert "default-src 'self'" in policy and "object-src 'none'" in policy, (url, policy)
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0], policy
    return response


def assert_nothing_refused(refusals: Refusals) -> None:
    assert refusals.violations == [], refusals.violations
    assert refusals.errors == [], refusals.errors


def test_the_editor_previews_and_tries_a_pattern_under_the_policy(live_server, tmp_path):
    repo = GitRepoBuilder(tmp_path)
    sha = repo.write("src/loader.py", "tolerance = 0\nwhile tolerance == 0:\n    pass\n").commit("add")
    repository = RepositoryFactory(slug="acme/rl", clone_url=repo.url)
    repository_fetch(repository=repository)
    pull_request = PullRequestFactory(repository=repository, number=7)
    PinnedCommitFactory(pull_request=pull_request, role="reviewed", commit=CommitFactory(repository=repository, sha=sha))
    UserFactory(username="rae", groups=["Reviewer"])
    refusals = Refusals()
    with chromium(refusals) as browser:
        page = browser.new_page(viewport=DESKTOP)
        sign_in(page, live_server, "rae", f"/acme/rl/pull/7/findings/new/?commit={sha}&path=src/loader.py&lines=1-2")
        opened(page, page.url)
        page.fill("textarea[name=body]", "The loop **never ends**")
        page.wait_for_selector("#body-preview strong")
        page.click("#add-evidence")
        row = page.locator(".evidence-form").nth(1)
        row.locator(".evidence-kind-select").select_option("pattern")
        row.locator("input[name$='-path']").fill("src/*.py")
        row.locator("input[name$='-regex']").fill("^tolerance = 0")
        row.locator(".check-button").click()
        row.locator(".check-matches").wait_for()
    assert_nothing_refused(refusals)


def test_the_code_browser_selects_lines_under_the_policy(live_server, tmp_path, settings):
    settings.RECHECK_ALLOW_LOCAL_REPOSITORIES = True
    browsed = browsed_pull_request(tmp_path)
    refusals = Refusals()
    with chromium(refusals) as browser:
        page = signed_in(browser, live_server, UserFactory(username="rita", groups=["Reviewer"])).new_page()
        opened(page, live_server.url + browsed.url(path="src/app.py"))
        page.click('a[data-line="7"]')
        page.click('a[data-line="8"]', modifiers=["Shift"])
        page.wait_for_selector("[data-code-selection]", state="visible")
        assert page.locator(".code-lines tr.selected").count() == 2
    assert_nothing_refused(refusals)


def test_mermaid_draws_under_the_policy_and_a_smuggled_handler_is_refused_by_it(live_server):
    pull_request = diagram_review()
    Finding.objects.filter(pull_request=pull_request, number=3).update(fix="")
    refusals = Refusals()
    with chromium(refusals) as browser:
        page = browser.new_page(viewport=DESKTOP)
        opened(page, live_server.url + pull_request.get_absolute_url() + "blockers/")
        wait_for_diagrams(page)
        assert page.locator("#finding-1 .mermaid-diagram").get_attribute("data-state") == "drawn"
        assert page.locator("#finding-2 .mermaid-diagram").get_attribute("data-state") == "error"
        # Drawn as Mermaid styles it (its <style> and style attributes are allowed).
        assert page.locator("#finding-1 .mermaid-drawn svg style").count() >= 1
    assert_nothing_refused(refusals)

    # A label carrying an inline event handler: Mermaid puts it in the page while it draws, and
    # the policy refuses the handler — the only thing refused.
    Finding.objects.filter(pull_request=pull_request, number=3).update(fix=HOSTILE)
    hostile = Refusals()
    with chromium(hostile) as browser:
        page = browser.new_page(viewport=DESKTOP)
        page.goto(live_server.url + pull_request.get_absolute_url() + "blockers/")
        wait_for_diagrams(page)
        assert page.evaluate("() => window.__pwned") is None
    assert hostile.violations and {(v["directive"], v["blocked"]) for v in hostile.violations} == {
        ("script-src-attr", "inline")
    }
    assert GOOD and BROKEN  # the same diagrams the diagram tests draw


def test_a_runs_progress_is_followed_under_the_policy(live_server):
    data = reviewed_pull_request(blockers=2, cleanups=1)
    run = VerificationRun.objects.create(pull_request=data.pull_request, status="running", done=1, total=3)
    refusals = Refusals()
    with chromium(refusals) as browser:
        page = browser.new_page(viewport=DESKTOP)
        opened(page, live_server.url + data.pull_request.get_absolute_url())
        VerificationRun.objects.filter(pk=run.pk).update(done=2)
        page.wait_for_function("() => document.querySelector('progress').value === 2", timeout=10_000)
        VerificationRun.objects.filter(pk=run.pk).update(done=3, status="done")
        page.wait_for_selector("progress", state="detached", timeout=10_000)
    assert_nothing_refused(refusals)


PAGES = ["/admin/", "/admin/findings/finding/", "/api/", "/api/findings/", "/api/docs/", "/api/redoc/",
         "/accounts/tokens/", "/accounts/login/", "/nowhere/"]


def test_the_admin_the_api_s_pages_and_the_site_s_others_load_under_the_policy(live_server):
    reviewed_pull_request(blockers=1, cleanups=1)
    refusals = Refusals()
    with chromium(refusals) as browser:
        page = signed_in(browser, live_server, UserFactory(username="root", is_staff=True,
                                                                 is_superuser=True)).new_page()
        for path in PAGES:
            refusals.violations.clear(), refusals.errors.clear(), refusals.failed.clear()
            opened(page, live_server.url + path)
            page.wait_for_load_state("networkidle")
            if path == "/api/docs/":
                page.wait_for_selector(".swagger-ui .opblock", timeout=15_000)
            if path == "/api/redoc/":
                page.wait_for_selector(".api-content h1", timeout=15_000)
            # Redoc's CDN logo is left out before it is asked for (api-docs-offline.js).
            violations, errors = refusals.violations, refusals.errors
            assert violations == [] and errors == [], (path, violations, errors)
            # A page that is not there answers 404, and nothing the pages load is missing.
            assert refusals.failed == ([f"404 {live_server.url}/nowhere/"] if path == "/nowhere/" else []), path


def test_a_page_revalidated_with_a_304_is_still_held_to_its_policy(live_server, monkeypatch):
    """The browser asks again (`Cache-Control: no-cache`), gets a 304 with no policy of its own, and
    shows the copy it holds under the policy that copy came with: an inline script is refused."""
    from web import pagecache

    answered = []

    # What the server answered each time the page was asked for: the browser shows a 304 as the
    # 200 it holds.
    def conditional(request, **kwargs):
        response = get_conditional_response(request, **kwargs)
        answered.append(None if response is None else response.status_code)
        return response

    get_conditional_response = pagecache.get_conditional_response
    monkeypatch.setattr(pagecache, "get_conditional_response", conditional)
    data = reviewed_pull_request(blockers=2, cleanups=1)
    url = live_server.url + data.pull_request.get_absolute_url()
    refusals = Refusals()
    with chromium(refusals) as browser:
        page = browser.new_page(viewport=DESKTOP)
        opened(page, url)
        again = page.goto(url)
        assert answered == [None, 304], answered
        assert "default-src 'self'" in again.headers.get("content-security-policy", ""), again.headers
        assert_nothing_refused(refusals)
        ran = page.evaluate("""() => {
            const script = document.createElement("script");
            script.textContent = "window.smuggled = true";
            document.body.append(script);
            return window.smuggled === true;
        }""")
        page.wait_for_timeout(200)  # the refusal's event is dispatched after the append
    assert not ran and [refusal["directive"] for refusal in refusals.violations] == ["script-src-elem"]
