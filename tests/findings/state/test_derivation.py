"""The rules of a pull request's review state, over plain values (no database)."""
from datetime import datetime, timedelta, timezone

from findings.state.derivation import Facts, FindingFacts, PinFacts, RunFacts, VerificationFacts, derive

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def pin(commit_id, *, at, role="head", resolved=True):
    return PinFacts(commit_id=commit_id, sha=f"{commit_id:040x}", role=role, pinned_at=T0 + timedelta(hours=at),
                    resolved=resolved)


def finding(pk, *, status="open", kind="blocker", resolved_at=None, resolved_commit_id=None, version=1):
    return FindingFacts(pk=pk, number=pk, kind=kind, status=status, title=f"F{pk}", evidence_version=version,
                        resolved_at=None if resolved_at is None else T0 + timedelta(hours=resolved_at),
                        resolved_commit_id=resolved_commit_id)


def verdict(finding_id, commit_id, value, version=1):
    return VerificationFacts(finding_id=finding_id, commit_id=commit_id, verdict=value, evidence_version=version)


def test_a_fix_anyway_at_the_head_is_not_a_regression_until_a_later_push_still_holds():
    fixed_anyway = finding(1, status="fixed", resolved_at=2, resolved_commit_id=10)
    state = derive(Facts(findings=[fixed_anyway], pins=[pin(10, at=1)], verifications=[verdict(1, 10, "present")]))
    item = state["findings"]["1"]
    assert (item["resolution"], item["possibly_regressed"], item["needs_decision"]) == ("fixed_anyway", False, False)
    assert state["gates"][f"{10:040x}"]["possibly_regressed"] == []

    pushed = Facts(findings=[fixed_anyway], pins=[pin(10, at=1), pin(11, at=3)],
                   verifications=[verdict(1, 10, "present"), verdict(1, 11, "partly_fixed")])
    state = derive(pushed)
    assert state["findings"]["1"]["possibly_regressed"] is True and state["findings"]["1"]["needs_decision"] is True
    assert [row[1] for row in state["gates"][f"{11:040x}"]["possibly_regressed"]] == [1]
    assert state["counts"]["blocker"]["possibly_regressed"] == 1


def test_the_verdict_is_the_one_at_the_latest_verified_pin_of_the_current_evidence():
    facts = Facts(
        findings=[finding(1, version=2), finding(2)],
        pins=[pin(10, at=1), pin(11, at=2), pin(12, at=3)],
        # Pin 12 only has a verdict of finding 1's older evidence: it is not verified.
        verifications=[verdict(1, 11, "present", version=2), verdict(2, 11, "likely_fixed"), verdict(1, 12, "present")],
    )
    state = derive(facts)
    assert state["latest_sha"] == f"{11:040x}"
    assert (state["findings"]["1"]["verdict"], state["findings"]["2"]["verdict"]) == ("present", "likely_fixed")
    assert state["findings"]["2"]["needs_decision"] is True
    assert state["counts"]["blocker"] == {"total": 2, "open": 2, "verdict:present": 1, "verdict:likely_fixed": 1,
                                          "open:present": 1, "open:likely_fixed": 1}


def test_the_gate_is_verified_only_where_everything_was_checked_without_errors():
    blocker = finding(1)
    cases = {
        "verified": (pin(10, at=1), [verdict(1, 10, "likely_fixed")], [], True),
        "unknown to the mirror": (pin(10, at=1, resolved=False), [verdict(1, 10, "likely_fixed")], [], False),
        "an error": (pin(10, at=1), [verdict(1, 10, "error")], [], False),
        "not verified": (pin(10, at=1), [], [], False),
        "run failed": (pin(10, at=1), [verdict(1, 10, "likely_fixed")], [RunFacts(10, "failed", (2,))], False),
        "failed, then done": (
            pin(10, at=1), [verdict(1, 10, "likely_fixed")], [RunFacts(10, "failed", (2,)), RunFacts(None, "done", (3,))],
            True,
        ),
    }
    for name, (the_pin, verifications, runs, verified) in cases.items():
        gate = derive(Facts(findings=[blocker], pins=[the_pin], verifications=verifications, runs=runs))["gates"][
            the_pin.sha
        ]
        assert gate["verified"] is verified, name
        assert gate["mergeable"] is False, name  # the blocker is open


def test_with_no_open_blocker_a_commit_is_mergeable_only_once_something_was_verified_there():
    closed = finding(1, status="dismissed", resolved_at=0)
    nothing = derive(Facts(findings=[closed], pins=[pin(10, at=1)], verifications=[]))["gates"][f"{10:040x}"]
    assert (nothing["verified"], nothing["mergeable"]) == (False, False)
    done = derive(Facts(findings=[closed], pins=[pin(10, at=1)], verifications=[], runs=[RunFacts(10, "done", (1,))]))
    assert done["gates"][f"{10:040x}"]["mergeable"] is True
    assert done["gates"][f"{10:040x}"]["reason"].startswith("No open blocker at")
