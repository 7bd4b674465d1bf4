"""Check evidence shown where its verdict is: the finding page's table of outcomes across pins, the
API's results, `verify --json` and the gate, all reading what one verification stored."""
import json
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from findings.models import EvidenceResult, Verification
from tests.findings.services.test_verification_checks import FLOOR, ZERO, History, send, verify
from tests.findings.services.test_verification_checks import pull_request as pull_request  # noqa: F401  (fixture)
from tests.personas import site_client, superuser

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    return History(tmp_path_factory.mktemp("history"))


def test_the_finding_page_shows_each_named_test_s_outcome_at_each_pin(history, pull_request):  # noqa: F811
    for sha in (history.reviewed, history.partly):
        send(history, pull_request, sha, "unit-tests", "lint")
        verify(pull_request, sha)
    verify(pull_request, history.fixed)  # no report there yet
    client = site_client(superuser())
    page = client.get(pull_request.findings.get(number=1).get_absolute_url()).content.decode()
    table = page[page.index('<table class="check-table">'):page.index("</table>")]
    assert [history.reviewed[:7] in table, history.partly[:7] in table, history.fixed[:7] in table] == [True] * 3
    zero_row = table[table.index(ZERO):].split("</tr>")[0]
    assert zero_row.count(">Fails<") == 1 and zero_row.count(">Passes<") == 1 and zero_row.count(">—<") == 1
    floor_row = table[table.index(FLOOR):].split("</tr>")[0]
    assert floor_row.count(">Fails<") == 2
    assert ">Partly fixed<" in table and ">Waiting for CI<" in table
    lint = client.get(pull_request.findings.get(number=2).get_absolute_url()).content.decode()
    assert "at <code>config/soak.py:3</code>" in lint  # the result pushed down by two new lines


def test_the_api_verify_json_and_the_gate_say_what_was_stored(history, pull_request):  # noqa: F811
    send(history, pull_request, history.partly, "unit-tests", "lint")
    verify(pull_request, history.partly)
    verify(pull_request, history.fixed)
    stored = {result.verification.finding.number: result.facts
              for result in EvidenceResult.objects.filter(verification__commit__sha=history.partly)
              .select_related("verification__finding")}

    client = APIClient()
    client.force_authenticate(superuser("api-root"))
    listed = client.get("/api/verifications/", {"commit": history.partly}).json()["results"]
    api_facts = {}
    for item in listed:
        number = Verification.objects.get(pk=item["id"]).finding.number
        api_facts[number] = item["results"][0]["facts"]
    assert api_facts == stored

    out = StringIO()
    call_command("verify", "acme/calc", "1", "--commit", history.partly, "--json", "--no-fetch", stdout=out)
    reported = json.loads(out.getvalue())
    assert {item["number"]: item["evidence"][0]["facts"] for item in reported["findings"]} == stored
    assert {item["number"]: item["verdict"] for item in reported["findings"]} == {
        1: "partly_fixed", 2: "present", 3: "error"}

    # At the head, no report has come: waiting for CI, and the gate stays shut.
    gate = client.get("/api/repos/acme/calc/pulls/1/gate", {"commit": history.fixed}).json()
    assert gate["mergeable"] is False


def test_sarif_out_points_a_check_item_s_result_at_where_it_is_reported_now(history, pull_request):  # noqa: F811
    import jsonschema

    from engine.reports.sarif import SARIF_SCHEMA_PATH
    from findings.exchange.sarif import pull_request_sarif, sarif_dump

    send(history, pull_request, history.partly, "lint")
    verify(pull_request, history.partly)
    log = json.loads(sarif_dump(pull_request_sarif(pull_request=pull_request)))
    jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA_PATH.read_text())).validate(log)
    [lint] = [result for result in log["runs"][0]["results"] if result["message"]["text"].startswith("A password")]
    physical = lint["locations"][0]["physicalLocation"]
    assert (physical["artifactLocation"]["uri"], physical["region"]["startLine"]) == ("config/soak.py", 3)
    assert lint["locations"][0]["message"]["text"] == "S105 in lint"
