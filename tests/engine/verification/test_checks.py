"""What a check item's reports say at a commit (engine.verification.checks.check_item_result), as
plain data, and the finding's verdict from it."""
import pytest

from engine.verification import EvidenceSpec, verdict_for
from engine.verification.checks import CheckReading, ReportSeen, check_item_result
from engine.verification.specs import CheckResultRef

FAILED, PASSED = ReportSeen("failure", has_tests=True), ReportSeen("success", has_tests=True)


def item(**fields):
    return EvidenceSpec(kind="check", commit="a" * 40, check="unit-tests", **fields)


@pytest.mark.parametrize(
    ("spec", "reading", "state", "outcome", "detail"),
    [
        (item(), CheckReading(), "error", "waiting", "Waiting for CI: no report of unit-tests at abc1234 yet"),
        (item(), CheckReading(reports=(ReportSeen("cancelled"), ReportSeen("timed_out"))), "error", "uncheckable",
         "unit-tests was cancelled, timed out at abc1234: it says nothing of the problem"),
        (item(), CheckReading(reports=(ReportSeen("failure"),)), "holds", "fails", "unit-tests failed at abc1234"),
        (item(), CheckReading(reports=(ReportSeen("success"),)), "gone", "passes", "unit-tests passed at abc1234"),
        (item(), CheckReading(reports=(ReportSeen("failure"), ReportSeen("success"))), "error", "flaky",
         "unit-tests both failed and passed at abc1234: flaky, not fixed"),
        (item(tests=("a", "b", "c")), CheckReading((FAILED,), {"a": ("failed",), "b": ("passed",), "c": ("failed",)}),
         "holds", "partly", "2 of 3 named tests still fail at abc1234"),
        (item(tests=("a", "b")), CheckReading((FAILED, PASSED), {"a": ("failed", "passed"), "b": ("passed",)}),
         "error", "flaky", "1 of 2 named tests failed and passed at abc1234: flaky, not fixed"),
        (item(tests=("a", "b")), CheckReading((PASSED,), {"a": ("passed",), "b": ()}),
         "error", "not_run", "1 of 2 named tests not in the reports at abc1234: not run, not fixed"),
        (item(tests=("a", "b")), CheckReading((PASSED,), {"a": ("passed",), "b": ("skipped",)}),
         "error", "not_run", "1 of 2 named tests not in the reports at abc1234: not run, not fixed"),
        (item(tests=("a",)), CheckReading((PASSED,), {"a": ("passed", "passed")}), "gone", "passes",
         "1 of 1 named test passed at abc1234"),
        # A bare conclusion, with no test report, says only what the whole check did.
        (item(tests=("a",)), CheckReading((ReportSeen("failure"),), {"a": ()}), "holds", "fails",
         "unit-tests failed at abc1234"),
        (item(results=(CheckResultRef("S105", "a.py", 3), CheckResultRef("S105", "a.py", 9))),
         CheckReading((ReportSeen("failure", has_results=True),), results=(("a.py", 5), None)),
         "holds", "partly", "1 of 2 named results still reported at abc1234"),
        (item(results=(CheckResultRef("S105", "a.py", 3),)),
         CheckReading((ReportSeen("success", has_results=True),), results=(None,)),
         "gone", "passes", "0 of 1 named result reported at abc1234"),
    ],
)
def test_each_reading_gives_its_state_outcome_and_words(spec, reading, state, outcome, detail):
    result = check_item_result(spec, reading, "abc1234")
    assert (result.state, result.facts["outcome"], result.detail) == (state, outcome, detail)


def test_an_item_that_holds_in_part_makes_the_finding_partly_fixed_and_never_fixed():
    partly = check_item_result(item(tests=("a", "b")), CheckReading((FAILED,), {"a": ("failed",), "b": ("passed",)}),
                               "abc1234")
    whole = check_item_result(item(), CheckReading((ReportSeen("failure"),)), "abc1234")
    assert verdict_for([partly]) == "partly_fixed" and verdict_for([partly, whole]) == "partly_fixed"
    assert verdict_for([whole]) == "present"
    waiting = check_item_result(item(), CheckReading(), "abc1234")
    passed = check_item_result(item(), CheckReading((ReportSeen("success"),)), "abc1234")
    assert verdict_for([passed, waiting]) == "error" and verdict_for([passed]) == "likely_fixed"
