"""Storing a pull request's state: with the generation it was derived at, whole, only when the
generation held still while its facts were read, and by the task that verified when its run ends."""
import pytest

from findings.models import PullRequestGate, PullRequestState, VerificationRun
from findings.services.runs import verification_run_finish
from findings.state import stored
from findings.state.stored import pull_request_state, pull_request_state_derive
from reviews.models import PullRequest
from reviews.services import pull_request_changed
from tests.factories import reviewed_pull_request

pytestmark = pytest.mark.django_db


def generation(pull_request) -> int:
    return PullRequest.objects.values_list("generation", flat=True).get(pk=pull_request.pk)


def test_a_reader_derives_and_stores_the_state_of_a_generation_once(django_assert_max_num_queries):
    data = reviewed_pull_request(blockers=3, cleanups=1)
    pull_request_changed(pull_request_id=data.pull_request.pk)
    assert not PullRequestState.objects.filter(generation=generation(data.pull_request)).exists()
    state = pull_request_state(pull_request_id=data.pull_request.pk)
    row = PullRequestState.objects.get(pull_request=data.pull_request)  # the older generation's row went
    assert (row.generation, state["generation"]) == (generation(data.pull_request),) * 2
    # One gate answer per pinned commit, and one more for the latest head (there is none here).
    assert PullRequestGate.objects.filter(generation=row.generation).count() == len(data.pins)
    with django_assert_max_num_queries(1):
        assert pull_request_state(pull_request_id=data.pull_request.pk) == state


def test_a_state_whose_facts_moved_while_they_were_read_is_not_stored(monkeypatch):
    data = reviewed_pull_request(blockers=2, cleanups=0)
    pull_request_changed(pull_request_id=data.pull_request.pk)
    facts = stored.pull_request_facts

    def facts_then_a_write(pull_request_id):
        read = facts(pull_request_id)
        pull_request_changed(pull_request_id=pull_request_id)  # a write lands meanwhile
        return read

    monkeypatch.setattr(stored, "pull_request_facts", facts_then_a_write)
    pull_request_state_derive(pull_request_id=data.pull_request.pk)
    assert not PullRequestState.objects.filter(generation__gte=generation(data.pull_request) - 1).exists()


def test_the_task_that_verified_stores_the_state_when_its_run_ends():
    data = reviewed_pull_request(blockers=2, cleanups=0)
    run = VerificationRun.objects.create(pull_request=data.pull_request, status="running")
    verification_run_finish(run)
    assert PullRequestState.objects.filter(
        pull_request=data.pull_request, generation=generation(data.pull_request)
    ).exists()


def test_a_finding_moved_to_another_pull_request_leaves_the_state_of_both():
    """The admin may move a finding to another PR: the PR it left must stop counting it, not only
    the PR it joined."""
    left = reviewed_pull_request(blockers=2, cleanups=0, slug="acme/left", number=1)
    joined = reviewed_pull_request(blockers=1, cleanups=0, slug="acme/joined", number=2)
    before = {pr.pk: pull_request_state(pull_request_id=pr.pk) for pr in (left.pull_request, joined.pull_request)}
    assert [len(before[pr.pk]["findings"]) for pr in (left.pull_request, joined.pull_request)] == [2, 1]
    moving = type(left.blockers[1]).objects.get(pk=left.blockers[1].pk)
    moving.pull_request, moving.number = joined.pull_request, 2
    moving.save()
    after = {pr.pk: pull_request_state(pull_request_id=pr.pk) for pr in (left.pull_request, joined.pull_request)}
    assert set(after[left.pull_request.pk]["findings"]) == {str(left.blockers[0].pk)}
    assert str(moving.pk) in after[joined.pull_request.pk]["findings"]
    assert all(after[pk]["generation"] > before[pk]["generation"] for pk in after)


def test_a_state_stored_in_an_older_shape_is_derived_again_and_replaced():
    """After an upgrade changes what a state holds, the row of the current generation stored
    before it is never read: the next reader derives the state again and stores it over the old."""
    data = reviewed_pull_request(blockers=2, cleanups=0)
    state = pull_request_state(pull_request_id=data.pull_request.pk)
    row = PullRequestState.objects.get(pull_request=data.pull_request, generation=state["generation"])
    PullRequestState.objects.filter(pk=row.pk).update(summary={**row.summary, "shape": 0})
    PullRequestGate.objects.filter(pull_request=data.pull_request).update(body="{}")
    again = pull_request_state(pull_request_id=data.pull_request.pk)
    assert again == state
    assert PullRequestState.objects.get(pull_request=data.pull_request).summary["shape"] == state["shape"]
    assert "{}" not in PullRequestGate.objects.filter(pull_request=data.pull_request).values_list("body", flat=True)
