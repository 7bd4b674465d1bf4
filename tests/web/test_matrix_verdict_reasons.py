"""Each pin's own reason: a real repository driven through four commits, CI reporting at some and
not at others. The finding page's matrix says, under every pin, what the verification there found
(waiting for CI, not run, still present, partly fixed), in its footer and in each check item's
cell, and the API's verifications give the same reason for the same commit; a report arriving
later moves only its own pin."""
import re

import pytest
from rest_framework.test import APIClient

from core import vocabulary
from tests.findings.services.test_verification_checks import History, send, verify
from tests.findings.services.test_verification_checks import pull_request as pull_request  # noqa: F401  (fixture)
from tests.personas import site_client, superuser

# A report's re-derivation runs in-process even where a broker is configured (CI).
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_tasks")]

BADGE = r'<span class="badge {cls}-[a-z_]+"[^>]*><span class="badge-dot" aria-hidden="true"></span>([^<]+)<'


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    return History(tmp_path_factory.mktemp("history"))


def matrix_words(pull_request, number: int) -> dict:
    """The matrix on finding `number`'s page: each column's commit, the verdict word under it and
    each evidence row's words."""
    page = site_client(superuser()).get(pull_request.findings.get(number=number).get_absolute_url())
    assert page.status_code == 200
    html = page.content.decode()
    table = html[html.index('<table class="matrix">'):]
    table = table[:table.index("</table>")]
    head, body, foot = table.split("<tbody>")[0], table.split("<tbody>")[1].split("</tbody>")[0], \
        table.split("<tfoot>")[1]
    shas = re.findall(r"<code>([0-9a-f]{7,})</code>", head)
    rows = [re.findall(BADGE.format(cls="state"), row) for row in body.split("</tr>") if "<td" in row]
    return {"shas": shas, "verdicts": [word.strip() for word in re.findall(BADGE.format(cls="verdict"), foot)],
            "rows": [[word.strip() for word in row] for row in rows]}


def api_words(pull_request, number: int, shas: list[str]) -> dict[str, str]:
    """Each commit's verdict as the API's verifications give it, in the words the page uses, by
    the page's short SHAs."""
    client = APIClient()
    client.force_authenticate(superuser("api-root"))
    finding = pull_request.findings.get(number=number)
    listed = client.get("/api/verifications/", {"finding": finding.pk, "page_size": 50}).json()["results"]
    return {next(short for short in shas if item["commit"].startswith(short)):
            vocabulary.finding_verdict_label(item["verdict"], item["verdict_reason"]) for item in listed}


def test_every_pin_of_the_matrix_says_its_own_reason_and_the_api_agrees(history, pull_request):  # noqa: F811
    # CI reports at the reviewed commit and at the one where a named test was renamed away; not
    # at the one between, nor at the head; and the linter only at the first.
    send(history, pull_request, history.reviewed, "unit-tests", "lint", "fast-forward")
    send(history, pull_request, history.renamed, "unit-tests", "fast-forward")
    for sha in (history.reviewed, history.partly, history.renamed, history.fixed):
        verify(pull_request, sha)

    tests = matrix_words(pull_request, 1)
    assert [sha.startswith(short) for sha, short in zip(
        (history.reviewed, history.partly, history.renamed, history.fixed), tests["shas"], strict=True)] == [True] * 4
    assert tests["verdicts"] == ["Still present", "Waiting for CI", "Not run", "Waiting for CI"]
    assert tests["rows"] == [["still fails", "waiting for CI", "not run", "waiting for CI"]]
    lint = matrix_words(pull_request, 2)
    assert lint["verdicts"] == ["Still present", "Waiting for CI", "Waiting for CI", "Waiting for CI"]
    fast_forward = matrix_words(pull_request, 3)
    assert fast_forward["verdicts"] == ["Still present", "Waiting for CI", "Likely fixed", "Waiting for CI"]
    assert fast_forward["rows"] == [["still fails", "waiting for CI", "passes", "waiting for CI"]]
    for number in (1, 2, 3):
        page = matrix_words(pull_request, number)
        assert api_words(pull_request, number, page["shas"]) == dict(zip(page["shas"], page["verdicts"], strict=True)), number

    # The Markdown export, at the latest verified pin (the head, where nothing has reported yet).
    from findings.exchange.markdown import pull_request_markdown

    exported = pull_request_markdown(pull_request=pull_request)
    assert "3 waiting for CI" in exported and "could not be checked" not in exported
    from findings.exchange.sarif import pull_request_sarif

    properties = [result["properties"] for result in pull_request_sarif(pull_request=pull_request)["runs"][0]["results"]]
    assert [(item["verdict"], item.get("verdictReason")) for item in properties] == [("error", "waiting")] * 3

    # The reports of the commit between arrive: that pin moves, and no other.
    send(history, pull_request, history.partly, "unit-tests", "lint", "fast-forward")

    tests = matrix_words(pull_request, 1)
    assert tests["verdicts"] == ["Still present", "Partly fixed", "Not run", "Waiting for CI"]
    assert tests["rows"] == [["still fails", "partly fixed", "not run", "waiting for CI"]]
    assert matrix_words(pull_request, 2)["verdicts"] == ["Still present", "Still present", "Waiting for CI",
                                                         "Waiting for CI"]
    for number in (1, 2, 3):
        page = matrix_words(pull_request, number)
        assert api_words(pull_request, number, page["shas"]) == dict(zip(page["shas"], page["verdicts"], strict=True)), number
