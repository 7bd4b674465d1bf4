"""Recording a finding from the blockers page's list of new failures, in a real headless
Chromium: the reports are acme/calc's own pytest JUnit at the pull request's head; one click opens
the editor with the check item filled in, saving records it, and the list no longer shows it."""
import pytest

from findings.models import Finding
from tests.factories import UserFactory
from tests.findings.selectors.test_new_failures import DIVISION, Calc, arrive, imported
from tests.web.browser.test_companion_pages import DESKTOP, chromium, shoot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.usefixtures("eager_tasks")  # verified in-process, as the embedded default does
def test_a_reviewer_records_a_new_failure_as_a_finding_in_one_click_and_it_leaves_the_list(live_server, tmp_path):
    calc = Calc(tmp_path)
    pull_request = imported(calc, [DIVISION])
    arrive(pull_request, calc.head, "unit-tests", file=calc.junit)
    UserFactory(username="rae", groups=["Reviewer"])
    blockers = "/acme/calc/pull/1/blockers/"

    with chromium() as browser:
        page = browser.new_page(viewport=DESKTOP)
        sign_in(page, live_server, "rae", blockers, sent_there=False)
        listed = page.locator(".new-failure")
        assert listed.count() == 1
        test = listed.locator(".new-failure-label").inner_text()
        assert test.endswith("test_by_zero") and "in unit-tests" in listed.inner_text()
        shoot(page, "new-failures-on-the-blockers-page")

        listed.get_by_role("link", name="Record as a finding").click()
        page.wait_for_url("**/findings/new/**")
        assert page.locator("input[name=title]").input_value() == f"{test} fails in unit-tests"
        assert page.locator("select[name=caught_by]").input_value() == "ci"
        assert page.locator("input[name='evidence-0-check']").input_value() == "unit-tests"
        assert page.locator("textarea[name='evidence-0-tests']").input_value() == test
        page.click("#save-finding")
        page.wait_for_url(f"{live_server.url}/acme/calc/pull/1/findings/2/")
        assert "Finding 2 recorded." in page.content()

        page.goto(live_server.url + blockers)
        assert page.locator(".new-failure").count() == 0
        assert f"{test} fails in unit-tests" in page.content()

    finding = Finding.objects.get(number=2)
    evidence = finding.evidence.get()
    assert (finding.caught_by, evidence.kind, evidence.check_name, evidence.check_tests, evidence.commit.sha) == (
        "ci", "check", "unit-tests", [test], calc.head)
