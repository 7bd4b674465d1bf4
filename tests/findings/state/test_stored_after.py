"""A state derived for a page is stored once the page is sent (`states_stored_after`): read from
where it is held until then, never derived twice, stored as it would have been at once, and a
failure to store it only logged (the next reader derives it)."""
import pytest

from findings.models import PullRequestGate, PullRequestState
from findings.state import stored
from findings.state.stored import pull_request_state, states_store, states_stored_after
from reviews.models import PullRequest
from reviews.services import pull_request_changed
from tests.factories import reviewed_pull_request

pytestmark = pytest.mark.django_db


def generation(pull_request) -> int:
    return PullRequest.objects.values_list("generation", flat=True).get(pk=pull_request.pk)


def test_a_state_held_back_is_read_from_where_it_is_held_then_stored_as_at_once(django_assert_max_num_queries):
    data = reviewed_pull_request(blockers=3, cleanups=1)
    pull_request_changed(pull_request_id=data.pull_request.pk)
    with states_stored_after() as pending:
        state = pull_request_state(pull_request_id=data.pull_request.pk)
        # Asked again before it is stored: its row (none yet) and the generation, nothing derived.
        with django_assert_max_num_queries(2):
            assert pull_request_state(pull_request_id=data.pull_request.pk) is state
    assert not PullRequestState.objects.filter(generation=generation(data.pull_request)).exists()
    states_store(pending)
    assert pending == []
    row = PullRequestState.objects.get(pull_request=data.pull_request)
    assert row.generation == state["generation"] == generation(data.pull_request)
    assert PullRequestGate.objects.filter(generation=row.generation).count() == len(data.pins)
    assert pull_request_state(pull_request_id=data.pull_request.pk) == state
    # Outside it, a state is stored at once again.
    pull_request_changed(pull_request_id=data.pull_request.pk)
    pull_request_state(pull_request_id=data.pull_request.pk)
    assert PullRequestState.objects.filter(generation=generation(data.pull_request)).exists()


def test_a_state_held_back_that_cannot_be_stored_is_logged_and_derived_by_the_next_reader(monkeypatch, caplog):
    data = reviewed_pull_request(blockers=1, cleanups=0)
    pull_request_changed(pull_request_id=data.pull_request.pk)
    with states_stored_after() as pending:
        state = pull_request_state(pull_request_id=data.pull_request.pk)

    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(stored, "_store", broken)
    states_store(pending)
    assert "Storing the state of pull request" in caplog.text
    monkeypatch.undo()
    assert not PullRequestState.objects.filter(generation=generation(data.pull_request)).exists()
    assert pull_request_state(pull_request_id=data.pull_request.pk) == state
    assert PullRequestState.objects.filter(generation=generation(data.pull_request)).exists()
