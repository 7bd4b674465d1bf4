"""An event's one sentence says why a verdict could not be checked as the finding's badge does;
an event with no reason, or written before reasons were on the timeline, reads as it always did."""
from core.vocabulary import events as ev
from presentation.events import event_summary

SHA = "1a2b3c4d" + "0" * 32


def test_a_verdict_change_says_each_reason_as_the_badge_does():
    payload = {"from": "error", "to": "error", "from_reason": "waiting", "to_reason": "flaky"}
    assert event_summary(ev.FINDING_VERDICT_CHANGED, payload, finding_number=3, sha=SHA) \
        == "Finding 3: Waiting for CI → Flaky at 1a2b3c4d."
    payload = {"from": "error", "to": "partly_fixed", "from_reason": "not_run", "to_reason": ""}
    assert event_summary(ev.FINDING_VERDICT_CHANGED, payload, finding_number=3, sha=SHA) \
        == "Finding 3: Not run → Partly fixed at 1a2b3c4d."


def test_with_no_reason_or_none_known_the_sentence_is_the_plain_one():
    plain = "Finding 3: Check failed → Likely fixed at 1a2b3c4d."
    for payload in ({"from": "error", "to": "likely_fixed"},
                    {"from": "error", "to": "likely_fixed", "from_reason": None, "to_reason": ""},
                    {"from": "error", "to": "likely_fixed", "from_reason": "", "to_reason": ""}):
        assert event_summary(ev.FINDING_VERDICT_CHANGED, payload, finding_number=3, sha=SHA) == plain
    # A reason that names no error (a verdict that is not one) is not said: the rule is the badge's.
    payload = {"from": "present", "to": "likely_fixed", "from_reason": "flaky", "to_reason": ""}
    assert event_summary(ev.FINDING_VERDICT_CHANGED, payload, finding_number=3, sha=SHA) \
        == "Finding 3: Still present → Likely fixed at 1a2b3c4d."

