"""A finding whose verdict is an error because its check items wait for CI, or name a test that
was not run, says so at the finding level (not only on the item), read by every interface from one
rule (`vocabulary.verdict_reason`): the stored state, the pages' badges, the API's finding and the
gate, `verify --json`, and the check run's text."""
import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from core import vocabulary
from findings.state.stored import pull_request_state
from tests.findings.services.test_verification_checks import History, send, verify
from tests.findings.services.test_verification_checks import pull_request as pull_request  # noqa: F401  (fixture)
from tests.personas import site_client, superuser

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    return History(tmp_path_factory.mktemp("history"))


def reasons_everywhere(pull_request, sha) -> dict[str, dict[int, str]]:
    """Each finding's word for its verdict, as every interface reads it."""
    state = pull_request_state(pull_request_id=pull_request.pk)
    numbers = {int(pk): finding["number"] for pk, finding in state["findings"].items()}
    client = APIClient()
    client.force_authenticate(superuser("api-root"))
    api = {number: client.get(f"/api/findings/{pk}/").json() for pk, number in numbers.items()}
    out = StringIO()
    call_command("verify", "acme/calc", "1", "--commit", sha, "--json", "--no-fetch", stdout=out)
    reported = json.loads(out.getvalue())["findings"]
    gate = client.get("/api/repos/acme/calc/pulls/1/gate", {"commit": sha}).json()
    page = site_client(superuser()).get("/acme/calc/pull/1/blockers/").content.decode()
    badges = re.findall(r'class="badge verdict-[a-z_]+" title="Verdict at [0-9a-f]+"><span class="badge-dot"'
                        r' aria-hidden="true"></span>([^<]+)<', page)
    return {
        "state": {numbers[int(pk)]: finding["verdict_reason"] for pk, finding in state["findings"].items()},
        "api": {number: body["verdict_reason"] for number, body in api.items()},
        "verify": {item["number"]: item["verdict_reason"] for item in reported},
        "gate": {item["number"]: item["verdict_reason"] for item in gate["open_blockers"]},
        "badges": [badge.strip() for badge in badges],
        "gate_reason": gate["reason"],
    }


def test_with_no_report_yet_each_finding_reads_waiting_for_ci_on_every_interface(history, pull_request):  # noqa: F811
    verify(pull_request, history.partly)

    seen = reasons_everywhere(pull_request, history.partly)

    waiting = {1: "waiting", 2: "waiting", 3: "waiting"}
    assert seen["state"] == seen["api"] == seen["verify"] == seen["gate"] == waiting
    assert seen["badges"] == ["Waiting for CI"] * 3
    assert "3 waiting for CI" in seen["gate_reason"] and "could not be checked" not in seen["gate_reason"]


def test_a_named_test_missing_from_the_report_reads_not_run_and_the_rest_their_own_words(history, pull_request):  # noqa: F811
    send(history, pull_request, history.renamed, "unit-tests", "fast-forward")
    verify(pull_request, history.renamed)

    seen = reasons_everywhere(pull_request, history.renamed)

    # Finding 1: test_floor was renamed away (not run); 2 has no lint report (waiting); 3 passed.
    assert seen["state"] == seen["api"] == seen["verify"] == {1: "not_run", 2: "waiting", 3: ""}
    assert seen["gate"] == {1: "not_run", 2: "waiting", 3: ""}
    assert seen["badges"] == ["Not run", "Waiting for CI", "Likely fixed"]
    assert "could not be checked" in seen["gate_reason"]  # not all of them wait: a verification may help


@pytest.mark.parametrize(("verdict", "outcomes", "reason"), [
    ("error", ["waiting"], "waiting"),
    ("error", ["flaky", "waiting"], "waiting"),
    ("error", ["flaky", "not_run"], "not_run"),
    ("error", ["flaky"], "flaky"),
    ("error", ["waiting", ""], ""),  # another item could not be read at all
    ("error", ["uncheckable"], ""),
    ("error", [], ""),
    ("present", ["waiting"], ""),
])
def test_the_one_rule_for_a_finding_s_reason(verdict, outcomes, reason):
    assert vocabulary.verdict_reason(verdict, outcomes) == reason
    expected = vocabulary.CHECK_OUTCOME_LABELS[reason] if reason else vocabulary.verdict_label(verdict)
    assert vocabulary.finding_verdict_label(verdict, reason) == expected


def test_a_thread_s_reply_says_why_a_finding_could_not_be_checked():
    assert vocabulary.thread_verdict_sentence(verdict="error", short_sha="abc1234", reason="waiting") == (
        "Waiting for CI at abc1234")
    assert vocabulary.thread_verdict_sentence(verdict="error", short_sha="abc1234") == "Check failed at abc1234"


def test_the_api_s_finding_lists_give_the_reason_the_detail_gives(history, pull_request):  # noqa: F811
    verify(pull_request, history.partly)
    client = APIClient()
    client.force_authenticate(superuser("api-root"))
    findings = list(pull_request.findings.order_by("number"))
    detail = {finding.pk: client.get(f"/api/findings/{finding.pk}/").json()["verdict_reason"] for finding in findings}
    assert list(detail.values()) == ["waiting"] * 3
    # The list read with its SQL written out (every finding; by repository; by kind), and the one
    # read by the ORM (a path prefix), whose rows the serializer writes by its own fast path.
    prefix = findings[0].path[:1]
    for query in ({}, {"repository": "acme/calc"}, {"kind": findings[0].kind}, {"path": prefix}):
        listed = client.get("/api/findings/", {**query, "page_size": 50}).json()["results"]
        wanted = [finding.pk for finding in findings
                  if finding.kind == query.get("kind", finding.kind) and finding.path.startswith(prefix)]
        assert wanted and {row["id"]: row["verdict_reason"] for row in listed} == {pk: detail[pk] for pk in wanted}, \
            query
