"""Writing a finding in a real headless Chromium: from the code browser's selection to the
blockers page, with the live preview and a pattern tried before it is added. Screenshots land in
tests/artifacts/."""
import pytest

from findings.models import Finding
from reviews.mirrors import repository_fetch
from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot, sign_in
from tests.web.browser.test_diagrams import BROKEN, GOOD
from tests.factories import CommitFactory, PinnedCommitFactory, PullRequestFactory, RepositoryFactory, UserFactory
from tests.gitrepo import GitRepoBuilder

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


LOADER = "".join(f"line_{n} = {n}\n" for n in range(1, 7)) + "tolerance = 0\nwhile tolerance == 0:\n    pass\n"


@pytest.mark.usefixtures("eager_tasks")  # verified in-process, as the embedded default does
def test_a_reviewer_writes_a_blocker_from_selected_lines_tries_a_pattern_and_sees_it_on_the_blockers_page(
    live_server, tmp_path
):
    repo = GitRepoBuilder(tmp_path)
    sha = repo.write("src/loader.py", LOADER).write("src/other.py", "tolerance = 0  # again\n").commit("add")
    repository = RepositoryFactory(slug="acme/rl", clone_url=repo.url)
    repository_fetch(repository=repository)
    pull_request = PullRequestFactory(repository=repository, number=7)
    PinnedCommitFactory(pull_request=pull_request, role="reviewed", commit=CommitFactory(repository=repository, sha=sha))
    UserFactory(username="rae", groups=["Reviewer"])
    base = f"{live_server.url}/acme/rl/pull/7/"

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        sign_in(page, live_server, "rae", f"/acme/rl/pull/7/findings/new/?commit={sha}&path=src/loader.py&lines=7-8")

        snippet = page.locator("textarea[name='evidence-0-text']")
        assert snippet.input_value() == "tolerance = 0\nwhile tolerance == 0:"
        assert page.locator("input[name=location_path]").input_value() == "src/loader.py"

        page.fill("input[name=title]", "Tolerance 0 never stops")
        page.fill("textarea[name=body]", "The loop **never ends** <script>window.pwned = 1</script>")
        page.wait_for_selector("#body-preview strong")
        assert page.locator("#body-preview strong").inner_text() == "never ends"
        assert page.evaluate("window.pwned === undefined")

        page.click("#add-evidence")
        row = page.locator(".evidence-form").nth(1)
        row.locator(".evidence-kind-select").select_option("pattern")
        assert row.locator("input[name$='-start_line']").is_hidden()
        row.locator("input[name$='-path']").fill("src/*.py")
        row.locator("input[name$='-regex']").fill("^tolerance = 0")
        assert row.locator("select[name$='-expect']").input_value() == "present"
        row.locator(".check-button").click()
        assert row.locator(".check-button").inner_text() == "Try it"
        row.locator(".check-matches").wait_for()
        matches = row.locator(".check-matches li").all_inner_texts()
        assert [text.split()[0] for text in matches] == ["src/loader.py:7", "src/other.py:1"]
        assert "Still present" in row.locator(".check-result").inner_text()
        shoot(page, "editor-new-finding")

        page.click("#save-finding")
        page.wait_for_url(f"{base}findings/1/")
        assert "Finding 1 recorded." in page.content()
        # Verified at once (tasks run in-process here): its page shows a verdict, not "Not verified",
        # and the message says the run is done, not "queued".
        assert "Verification of acme/rl#7 done" in page.locator(".messages").inner_text()
        assert page.locator(".pr-header .badges .badge[class*='verdict-']").inner_text().startswith("Still present")
        page.goto(f"{base}blockers/")
        assert "Tolerance 0 never stops" in page.content()
        shoot(page, "editor-on-the-blockers-page")

    finding = Finding.objects.get()
    assert list(finding.evidence.values_list("kind", "path")) == [("snippet", "src/loader.py"), ("pattern", "src/*.py")]
    assert finding.history.get().actor.username == "rae"


def editor_page(live_server, tmp_path, browser):
    repo = GitRepoBuilder(tmp_path)
    sha = repo.write("src/loader.py", LOADER).commit("add")
    repository = RepositoryFactory(slug="acme/rl", clone_url=repo.url)
    repository_fetch(repository=repository)
    pull_request = PullRequestFactory(repository=repository, number=7)
    PinnedCommitFactory(pull_request=pull_request, role="reviewed", commit=CommitFactory(repository=repository, sha=sha))
    UserFactory(username="rae", groups=["Reviewer"])
    page = browser.new_page(viewport=DESKTOP)
    sign_in(page, live_server, "rae", "/acme/rl/pull/7/findings/new/")
    return page


def test_leaving_the_editor_with_unsaved_changes_asks_first_and_saving_does_not(live_server, tmp_path):
    with chromium() as browser:
        page = editor_page(live_server, tmp_path, browser)
        editor_url = page.url
        asked = []

        def answer(dialog):
            asked.append(dialog.type)
            dialog.dismiss()  # stay on the page

        page.on("dialog", answer)
        page.click(".brand")  # nothing typed yet: leaves without a word
        page.wait_for_url(f"{live_server.url}/")
        assert asked == []
        page.goto(editor_url)
        page.locator("input[name=title]").press_sequentially("Tolerance 0 never stops")
        page.click(".brand")
        page.wait_for_timeout(500)
        assert asked == ["beforeunload"] and page.url == editor_url
        assert page.locator("input[name=title]").input_value() == "Tolerance 0 never stops"
        page.click("#save-finding")  # saving is not leaving
        page.wait_for_url("**/findings/1/")
        assert asked == ["beforeunload"]
    assert Finding.objects.get().title == "Tolerance 0 never stops"


def test_the_editor_previews_diagrams_with_the_pages_renderer_and_shows_a_broken_one_s_error(live_server, tmp_path):
    with chromium() as browser:
        page = editor_page(live_server, tmp_path, browser)
        assert page.evaluate("window.mermaid === undefined")  # loaded only once a preview has a diagram
        page.fill("textarea[name=body]", GOOD)
        page.wait_for_selector("#body-preview .mermaid-diagram[data-state=drawn] svg", timeout=30_000)
        assert page.locator("#body-preview .mermaid-source-details summary").inner_text() == "Diagram source"
        page.fill("textarea[name=fix]", BROKEN)
        page.wait_for_selector("#fix-preview .mermaid-diagram[data-state=error]", timeout=30_000)
        assert "could not be drawn" in page.locator("#fix-preview .mermaid-error").inner_text()
        shoot(page, "editor-diagram-preview")


@pytest.mark.usefixtures("eager_tasks")
def test_a_reviewer_records_a_ci_check_with_its_failing_tests_and_its_page_waits_for_ci(live_server, tmp_path):
    with chromium() as browser:
        page = editor_page(live_server, tmp_path, browser)
        page.fill("input[name=title]", "The lane that collects the tests is red")
        page.click("#add-evidence")
        row = page.locator(".evidence-form").first
        row.locator(".evidence-kind-select").select_option("check")
        # Only what a check item takes is offered: no path, no lines, no code.
        assert row.locator("input[name$='-path']").is_hidden() and row.locator("textarea[name$='-text']").is_hidden()
        assert row.locator("select[name$='-expect']").input_value() == "failed"
        row.locator("input[name$='-check']").fill("unit-tests")
        row.locator("textarea[name$='-tests']").fill("tests/test_calc.py::test_div[1-0-0]\ntests/test_calc.py::test_floor")
        page.click("#save-finding")
        page.wait_for_url(f"{live_server.url}/acme/rl/pull/7/findings/1/")
        evidence = page.locator(".evidence-check")
        assert "unit-tests" in evidence.locator(".check-name").inner_text()
        assert "Waiting for CI" in evidence.inner_text()
        shoot(page, "editor-check-evidence-waiting-for-ci")

    [evidence] = Finding.objects.get().evidence.all()
    assert (evidence.kind, evidence.check_name, evidence.expect) == ("check", "unit-tests", "failed")
    assert evidence.check_tests == ["tests/test_calc.py::test_div[1-0-0]", "tests/test_calc.py::test_floor"]
