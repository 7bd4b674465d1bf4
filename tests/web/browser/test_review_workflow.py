"""The whole review in a real headless Chromium, one finding from the code to its decision: a
reviewer logs in, opens the code at the reviewed commit, selects lines 7-8, writes a blocker from
them, adds a pattern after trying it and sees the blocker on the blockers page; after the pins are
verified, a maintainer is refused at an unknown SHA, warned at the commit where the evidence still
holds, and marks it fixed at the fix; the history shows each step; a reader sees no buttons, and a
forged POST (from the reader, or without the CSRF token) writes nothing.
Screenshots land in tests/artifacts/."""
import re

import pytest

from access.models import AuditEntry
from findings.models import Finding, FindingEvent
from findings.services.verification.run import pull_request_verify
from reviews.mirrors import repository_fetch
from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot, sign_in
from tests.factories import CommitFactory, PinnedCommitFactory, PullRequestFactory, RepositoryFactory, UserFactory
from tests.gitrepo import GitRepoBuilder

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LOADER = "".join(f"line_{n} = {n}\n" for n in range(1, 7)) + "tolerance = 0\nwhile tolerance == 0:\n    pass\n"
FIXED = "".join(f"line_{n} = {n}\n" for n in range(1, 7)) + "tolerance = 100\nwhile tolerance > 0:\n    tolerance -= 1\n"


def post_from_page(page, url: str, fields: dict, *, with_token: bool = True) -> int:
    """The status of a POST the page's own script sends (a forged form, as an attacker would)."""
    return page.evaluate(
        """async ([url, fields, withToken]) => {
            const body = new URLSearchParams(fields);
            const token = document.querySelector('[name=csrfmiddlewaretoken]');
            if (withToken && token) body.set('csrfmiddlewaretoken', token.value);
            const response = await fetch(url, {method: 'POST', body, redirect: 'manual'});
            return response.status;
        }""",
        [url, fields, with_token],
    )


def test_a_blocker_goes_from_selected_lines_to_marked_fixed_in_the_browser(live_server, tmp_path, settings):
    settings.RECHECK_PUBLIC_READ = False
    repo = GitRepoBuilder(tmp_path)
    base = repo.write("src/loader.py", "line_1 = 1\n").commit("base")
    reviewed = repo.write("src/loader.py", LOADER).commit("the loader waits for a tolerance")
    fix = repo.write("src/loader.py", FIXED).commit("tolerance back to 100")
    repository = RepositoryFactory(slug="acme/rl", clone_url=repo.url)
    repository_fetch(repository=repository)
    pull_request = PullRequestFactory(repository=repository, number=7)
    for role, sha in (("base", base), ("reviewed", reviewed)):
        PinnedCommitFactory(pull_request=pull_request, role=role, commit=CommitFactory(repository=repository, sha=sha))
    UserFactory(username="rae", groups=["Reviewer"])
    UserFactory(username="mona", groups=["Maintainer"])
    UserFactory(username="rhea", groups=["Reader"])
    pr_url = pull_request.get_absolute_url()

    with chromium() as browser:
        # The reviewer: the code at the reviewed commit, lines 7-8 selected with the mouse.
        page = browser.new_context(viewport=DESKTOP).new_page()
        sign_in(page, live_server, "rae", f"{pr_url}code/{reviewed}/src/loader.py")
        assert page.locator("text=modified").count() >= 1  # changed by the PR since its base
        page.click('a[data-line="7"]')
        page.click('a[data-line="8"]', modifiers=["Shift"])
        assert page.inner_text("[data-selection-label]") == "Lines 7\u20138 selected"
        page.click("text=New finding from these lines")
        page.wait_for_url("**/findings/new/**")
        assert page.locator("textarea[name='evidence-0-text']").input_value() == "tolerance = 0\nwhile tolerance == 0:"

        page.fill("input[name=title]", "Tolerance 0 never stops")
        page.fill("textarea[name=body]", "The loop **never ends**.")
        page.click("#add-evidence")
        row = page.locator(".evidence-form").nth(1)
        row.locator(".evidence-kind-select").select_option("pattern")
        row.locator("input[name$='-path']").fill("src/*.py")
        row.locator("input[name$='-regex']").fill("^tolerance = 0$")
        row.locator(".check-button").click()
        row.locator(".check-matches").wait_for()
        assert [text.split()[0] for text in row.locator(".check-matches li").all_inner_texts()] == ["src/loader.py:7"]
        page.click("#save-finding")
        page.wait_for_url(f"{live_server.url}{pr_url}findings/1/")
        page.goto(f"{live_server.url}{pr_url}blockers/")
        assert "Tolerance 0 never stops" in page.content()
        assert page.locator(".decide").count() == 0  # a reviewer does not decide
        shoot(page, "workflow-reviewer-blockers")

    finding = Finding.objects.get()
    assert (finding.kind, list(finding.evidence.values_list("kind", "start_line", "end_line"))) == (
        "blocker", [("snippet", 7, 8), ("pattern", None, None)])

    # The PR is pushed again with the fix, and a worker verifies both pins.
    PinnedCommitFactory(pull_request=pull_request, role="head", commit=CommitFactory(repository=repository, sha=fix))
    repository_fetch(repository=repository)
    for pin in pull_request.pins.select_related("commit").exclude(role="base"):
        pull_request_verify(pull_request=pull_request, commit=pin.commit)

    with chromium() as browser:
        page = browser.new_context(viewport=DESKTOP).new_page()
        sign_in(page, live_server, "mona", f"{pr_url}blockers/")
        card = page.locator("#finding-1")

        card.locator("summary", has_text="Mark fixed").click()
        assert card.locator("input[name=commit]").input_value() == fix  # the latest verified pin
        card.locator("input[name=commit]").fill("deadbeef")
        card.locator("button", has_text="Mark fixed").click()
        page.wait_for_selector("#decide-refusal")
        assert "No commit deadbeef in acme/rl" in page.locator("#decide-refusal").inner_text()

        page.fill("#id_commit", reviewed[:10])
        page.locator("#decide-fixed button[type=submit]").click()
        page.wait_for_selector(".decide-still-holds")
        assert "The evidence still holds at" in page.locator(".decide-still-holds").inner_text()
        shoot(page, "workflow-maintainer-warned")

        page.fill("#id_commit", fix)
        page.fill("#id_note_fixed", "Tolerance back to 100.")
        page.locator("#decide-fixed button[type=submit]").click()
        page.wait_for_selector(".message-success")
        finding.refresh_from_db()
        assert (finding.status, finding.resolved_commit.sha, finding.resolved_by.username) == ("fixed", fix, "mona")

        page.goto(live_server.url + finding.get_absolute_url())
        history = page.locator("ol.history").inner_text()
        assert "rae" in history
        assert re.search(rf"Open → Fixed at {fix[:8]} by mona \(site\) ?: Tolerance back to 100\.", history)
        shoot(page, "workflow-history")

        # CSRF: the maintainer's own session, without the token, changes nothing.
        assert post_from_page(page, finding.get_absolute_url() + "decide/", {"status": "open"}, with_token=False) == 403

        reader = browser.new_context(viewport=DESKTOP).new_page()
        sign_in(reader, live_server, "rhea", f"{pr_url}blockers/")
        assert reader.locator(".decide").count() == 0 and "Mark fixed" not in reader.content()
        assert "New finding" not in reader.content()
        assert post_from_page(reader, finding.get_absolute_url() + "decide/", {"status": "open", "note": "forged"}) == 403

    finding.refresh_from_db()
    assert finding.status == "fixed"
    steps = list(finding.history.order_by("at", "id").values_list("kind", "to_status", "actor__username"))
    assert steps == [("created", "open", "rae"), ("status", "fixed", "mona")]
    refused = AuditEntry.objects.filter(action="finding.resolve", outcome="refused")
    assert refused.filter(actor__username="mona").count() == 2  # the unknown SHA and the warning
    assert refused.filter(actor__username="rhea").count() == 1
    assert not FindingEvent.objects.filter(note="forged").exists()
