"""Summing up a finding's evidence results into one verdict."""

from __future__ import annotations

from collections.abc import Iterable

from engine.verification.results import ERROR, HOLDS, UNCHECKED, CheckResult

PRESENT = "present"
PARTLY_FIXED = "partly_fixed"
LIKELY_FIXED = "likely_fixed"
UNVERIFIABLE = "unverifiable"
ERRORED = "error"
VERDICTS = (PRESENT, PARTLY_FIXED, LIKELY_FIXED, UNVERIFIABLE, ERRORED)


def verdict_for(results: Iterable[CheckResult]) -> str:
    """The finding's verdict from its evidence results.

    Any error wins ("error"), so a check that failed is never read as a fix.
    With nothing checkable (only notes, or no evidence) it is "unverifiable";
    otherwise "present" when every checked item holds, "likely_fixed" when
    none does and "partly_fixed" in between, or when every item holds but one of them only in
    part (a check item some of whose named tests now pass: `partly` in its facts).
    """
    results = list(results)
    states = [result.state for result in results]
    if ERROR in states:
        return ERRORED
    checked = [state for state in states if state != UNCHECKED]
    if not checked:
        return UNVERIFIABLE
    holding = checked.count(HOLDS)
    if holding == len(checked):
        partly = any(result.state == HOLDS and result.facts.get("partly") for result in results)
        return PARTLY_FIXED if partly else PRESENT
    if holding == 0:
        return LIKELY_FIXED
    return PARTLY_FIXED
