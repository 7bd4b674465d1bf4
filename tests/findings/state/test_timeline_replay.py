"""The timeline misses nothing and doubles nothing: OneAnswer's random histories of a review
(imports, pushes where the evidence moved, was fixed or broke again, CI reports, fixed, fixed
anyway, dismissed, reopened, evidence edited), and after every step the events since the first
state, replayed over it, give the current stored state: each finding's verdict and why it is an
error (waiting for CI before the check's report, none once it came or when it was cancelled)."""
import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant, run_state_machine_as_test

from findings.models import ReviewEvent
from findings.state.stored import pull_request_state
from findings.state.timeline import replay, replayed, snapshot
from tests.findings.state.test_one_answer import OneAnswer, settings_fixture  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


class TimelineReplays(OneAnswer):
    first = None

    @invariant()
    def every_interface_reports_the_stored_state(self):
        # OneAnswer's own invariant is checked by its own test; this one checks the timeline only.
        if not hasattr(self, "pull_request"):
            return
        state = pull_request_state(pull_request_id=self.pull_request.pk)
        events = ReviewEvent.objects.filter(pull_request=self.pull_request).order_by("id")
        if self.first is None:
            # The first state, and where its events end: the replay starts there.
            self.first = snapshot(state)
            self.after = events.values_list("id", flat=True).last() or 0
            return
        since = [{"kind": kind, "payload": payload}
                 for kind, payload in events.filter(id__gt=self.after).values_list("kind", "payload")]
        replayed_now = replay(self.first, since)
        assert replayed_now == replayed(snapshot(state))
        assert {pk: finding["verdict_reason"] for pk, finding in replayed_now["findings"].items()} == {
            pk: finding["verdict_reason"] for pk, finding in state["findings"].items()}
        # Nothing doubled: no finding has two events of one kind for one state.
        keys = list(events.values_list("key", flat=True))
        assert len(keys) == len(set(keys))


def test_the_events_since_the_first_state_replay_to_the_current_state(tmp_path, settings_fixture):  # noqa: F811
    TimelineReplays.tmp = tmp_path
    run_state_machine_as_test(
        TimelineReplays,
        settings=settings(max_examples=15, stateful_step_count=10, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]),
    )
