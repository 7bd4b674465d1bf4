import itertools

import pytest

from engine.verification import CheckResult, verdict_for

HOLDS = CheckResult("holds", "a.py", 1, 1, "unchanged")
GONE = CheckResult("gone", "a.py", None, None, "no longer in a.py")
ERROR = CheckResult("error", None, None, None, "no commit 'abc1234'")
NOTE = CheckResult("unchecked", None, None, None, "not checkable by machine")


@pytest.mark.parametrize(
    ("results", "verdict"),
    [
        ([HOLDS], "present"),
        ([HOLDS, HOLDS], "present"),
        ([HOLDS, NOTE], "present"),
        ([GONE], "likely_fixed"),
        ([GONE, GONE, NOTE], "likely_fixed"),
        ([HOLDS, GONE], "partly_fixed"),
        ([HOLDS, GONE, NOTE], "partly_fixed"),
        ([NOTE], "unverifiable"),
        ([NOTE, NOTE], "unverifiable"),
        ([], "unverifiable"),
        ([ERROR], "error"),
        ([ERROR, NOTE], "error"),
    ],
)
def test_the_verdict_sums_up_the_results(results, verdict):
    assert verdict_for(results) == verdict


@pytest.mark.parametrize("others", [combo for n in range(4) for combo in itertools.product([HOLDS, GONE, NOTE], repeat=n)])
def test_an_error_always_wins_so_it_is_never_reported_as_fixed(others):
    for position in range(len(others) + 1):
        results = [*others[:position], ERROR, *others[position:]]
        assert verdict_for(results) == "error"


def test_any_iterable_of_results_will_do():
    assert verdict_for(result for result in (HOLDS, GONE)) == "partly_fixed"


def test_a_result_must_have_a_known_state():
    with pytest.raises(ValueError, match="unknown check state"):
        CheckResult("fixed")
