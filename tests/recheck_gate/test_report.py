"""recheck-gate's text report of a gate answer the API gave: the listed blockers, and a line for
those the answer counts but does not list, pointing to where they all are."""
import pytest

from findings.state.stored import GATE_LISTED, pull_request_state_derive
from recheck_gate.cli import text_report
from tests.api.test_gate_state import big_pull_request

pytestmark = pytest.mark.django_db


def test_blockers_past_those_listed_are_counted_with_where_to_read_them(client):
    pull_request, _ = big_pull_request(600)  # 60 open blockers
    pull_request_state_derive(pull_request_id=pull_request.pk)
    answer = client.get("/api/repos/acme/big/pulls/1/gate").json()

    lines = text_report(answer).splitlines()

    assert lines[0] == answer["reason"] and "60 open blocker(s)" in lines[0]
    blockers = [line for line in lines if line.startswith("  B") and "looks regressed" not in line]
    assert len(blockers) == GATE_LISTED
    assert lines[1 + GATE_LISTED] == f"  ... and 10 more open blocker(s): {answer['open_blockers_url']}"
    regressed = lines[2 + GATE_LISTED:]
    assert len(regressed) == answer["possibly_regressed_count"] > 0
    assert all("marked fixed, looks regressed" in line for line in regressed)


def test_a_short_answer_has_no_line_for_more(client):
    pull_request, _ = big_pull_request(40)
    pull_request_state_derive(pull_request_id=pull_request.pk)
    answer = client.get("/api/repos/acme/big/pulls/1/gate").json()

    assert "more open blocker" not in text_report(answer)
    lines = text_report(answer).splitlines()
    assert len(lines) == 1 + answer["open_blockers_count"] + answer["possibly_regressed_count"] == 7
