"""Stacked pull requests in the stored state: a PR based on another open PR's head branch is
blocked while the PR below is not mergeable, naming the lowest one that blocks; a change of a PR
below moves the generations of those above it, so their stored answers follow; an override at
the PR's own head still lets it merge; cycles, deep stacks, a merged PR below and a base branch no
PR has end the stack without looping."""
import pytest

from findings.models import Finding, GateOverride, VerificationRun
from findings.services.resolution import finding_resolve
from findings.state.stored import pull_request_state
from reviews.models import PinnedCommit, PullRequest
from reviews.stack import CYCLE, DEPTH, STACK_DEPTH, stack_above, stack_below
from tests import personas
from tests.factories import (
    CommitFactory,
    FindingFactory,
    PinnedCommitFactory,
    PullRequestFactory,
    RepositoryFactory,
    VerificationFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def stacked(repository, number, *, base, head, blocker=False):
    """An open PR from `head` into `base`, verified at its head: mergeable unless it has an open
    blocker (present there)."""
    pull_request = PullRequestFactory(repository=repository, number=number, base_branch=base, head_branch=head)
    commit = CommitFactory(repository=repository)
    PinnedCommitFactory(pull_request=pull_request, commit=commit, role=PinnedCommit.Role.HEAD)
    VerificationRun.objects.create(pull_request=pull_request, commit=commit, status=VerificationRun.Status.DONE)
    if blocker:
        finding = FindingFactory(pull_request=pull_request, number=1, kind=Finding.Kind.BLOCKER)
        VerificationFactory(finding=finding, commit=commit, verdict="present")
    pull_request.head = commit
    return pull_request


def gate(pull_request) -> dict:
    state = pull_request_state(pull_request_id=pull_request.pk)
    return state["gates"][state["head_sha"]]


@pytest.fixture
def three(db):
    """main <- #1 (a) <- #2 (b) <- #3 (c): the middle has an open blocker."""
    repository = RepositoryFactory(slug="acme/stacked")
    bottom = stacked(repository, 1, base="main", head="a")
    middle = stacked(repository, 2, base="a", head="b", blocker=True)
    top = stacked(repository, 3, base="b", head="c")
    return bottom, middle, top


def test_the_top_of_a_stack_is_blocked_by_the_pr_below_and_says_which(three):
    bottom, middle, top = three
    assert stack_below(top.pk).pull_requests == [(middle.pk, 2), (bottom.pk, 1)]
    assert stack_above([bottom.pk]) == [middle.pk, top.pk]
    answer = gate(top)
    assert (answer["mergeable"], answer["own_mergeable"], answer["blocked_below"]) == (False, True, 2)
    assert answer["reason"].startswith("Stacked: blocked by #2 below, which is not mergeable.")
    # The middle is blocked by its own finding, not by the stack; the bottom is on the default branch.
    assert (gate(middle)["mergeable"], gate(middle)["blocked_below"]) == (False, None)
    assert gate(bottom)["mergeable"] is True


def test_resolving_the_blocker_below_moves_the_stored_answers_above(three):
    bottom, middle, top = three
    assert gate(top)["mergeable"] is False  # stored for the top's generation
    before = PullRequest.objects.get(pk=top.pk).generation
    finding_resolve(finding=Finding.objects.get(pull_request=middle), status="dismissed", actor=None,
                    source="command", commit=middle.head, note="Not a problem after all.")
    # The change of the middle moved the top's generation: its stored answer is derived again.
    assert PullRequest.objects.get(pk=top.pk).generation > before
    assert gate(middle)["mergeable"] is True
    assert (gate(top)["mergeable"], gate(top)["blocked_below"]) == (True, None)


def test_the_lowest_blocking_pr_is_named(three):
    bottom, middle, top = three
    finding = FindingFactory(pull_request=bottom, number=1, kind=Finding.Kind.BLOCKER)
    VerificationFactory(finding=finding, commit=bottom.head, verdict="present")
    assert gate(top)["blocked_below"] == 1
    assert "blocked by #1 below" in gate(top)["reason"]
    assert gate(middle)["blocked_below"] == 1


def override(pull_request):
    GateOverride.objects.create(pull_request=pull_request, commit=pull_request.head, reason=GateOverride.Reason.URGENT_FIX,
                                note="Ship it.", by=UserFactory(), by_label="maintainer")


def test_an_override_at_a_prs_own_head_overrides_the_stack_and_one_below_unblocks_what_is_above(three):
    bottom, middle, top = three
    override(top)
    assert (gate(top)["mergeable"], gate(top)["blocked_below"]) == (True, 2)
    GateOverride.objects.filter(pull_request=top).delete()
    assert gate(top)["mergeable"] is False
    # The middle's override makes it mergeable: nothing above it is blocked by it any more.
    override(middle)
    assert (gate(top)["mergeable"], gate(top)["blocked_below"]) == (True, None)


def test_a_merged_pr_below_leaves_the_stack_and_an_unknown_base_ends_it(three):
    bottom, middle, top = three
    middle.state = PullRequest.State.MERGED
    middle.save()
    # #3's base branch b is the head of no open PR now (b merged, or deleted): the stack ends.
    assert stack_below(top.pk).pull_requests == []
    assert (gate(top)["mergeable"], gate(top)["blocked_below"]) == (True, None)


def test_a_new_pr_below_moves_the_generation_of_those_based_on_its_branch(db):
    repository = RepositoryFactory(slug="acme/later")
    top = stacked(repository, 2, base="feature", head="more")
    assert gate(top)["mergeable"] is True
    stacked(repository, 1, base="main", head="feature", blocker=True)
    assert (gate(top)["mergeable"], gate(top)["blocked_below"]) == (False, 1)


def test_a_cycle_answers_and_says_so(db):
    repository = RepositoryFactory(slug="acme/cycle")
    first = stacked(repository, 1, base="y", head="x", blocker=True)
    second = stacked(repository, 2, base="x", head="y")
    below = stack_below(second.pk)
    assert (below.pull_requests, below.cut) == ([(first.pk, 1)], CYCLE)
    answer = gate(second)
    assert (answer["mergeable"], answer["blocked_below"]) == (False, 1)
    assert "form a cycle" in answer["reason"]
    assert gate(first)["blocked_below"] is None and "form a cycle" in gate(first)["reason"]
    # A change of either moves the other, without looping.
    assert set(stack_above([first.pk], open_only=False)) == {second.pk}
    itself = stacked(repository, 3, base="z", head="z")
    assert stack_below(itself.pk).cut == CYCLE and "its own head branch" in gate(itself)["reason"]


def test_a_stack_fifty_deep_is_read_to_its_bound_and_says_so(db):
    repository = RepositoryFactory(slug="acme/deep")
    # #1 on main, #n on the head of #n-1; the bottom one blocks.
    prs = [stacked(repository, 1, base="main", head="b1", blocker=True)]
    prs += [stacked(repository, n, base=f"b{n - 1}", head=f"b{n}") for n in range(2, 51)]
    below = stack_below(prs[-1].pk)
    assert (len(below.pull_requests), below.cut) == (STACK_DEPTH, DEPTH)
    answer = gate(prs[-1])
    # Only the nearest STACK_DEPTH are counted: the blocker at the bottom is beyond them.
    assert answer["blocked_below"] is None and f"deeper than {STACK_DEPTH}" in answer["reason"]
    assert gate(prs[STACK_DEPTH - 1])["blocked_below"] == 1
    assert len(stack_above([prs[0].pk])) == STACK_DEPTH


def test_the_api_the_pages_and_recheck_gate_show_the_stack_with_each_gate(three):
    """One answer: the API's `stack`, the overview and blockers pages, the gate's reason as
    recheck-gate prints it, all from the stored state."""
    from recheck_gate.cli import text_report


    bottom, middle, top = three
    api = personas.api_client()
    body = api.get("/api/repos/acme/stacked/pulls/2/").json()
    assert (body["base_branch"], body["head_branch"]) == ("a", "b")
    assert [(e["number"], e["gate"], e["mergeable"]) for e in body["stack"]["below"]] == [(1, "may merge", True)]
    assert [(e["number"], e["gate"], e["blocked_below"]) for e in body["stack"]["above"]] == [(3, "may not merge", 2)]
    assert api.get("/api/repos/acme/stacked/pulls/1/").json()["stack"]["above"][1]["number"] == 3
    gate = api.get("/api/repos/acme/stacked/pulls/3/gate").json()
    assert gate["mergeable"] is False and gate["reason"] == gate_of(top)["reason"]
    assert text_report(gate).splitlines()[0].startswith("Stacked: blocked by #2 below")
    for tab in ("", "blockers/"):
        page = personas.site_client().get(f"{top.get_absolute_url()}{tab}").content.decode()
        assert 'id="stack"' in page and 'href="' + middle.get_absolute_url() + '">#2</a>' in page
        assert "may not merge</span> <span class=\"muted\">(below)" in page
    lone = stacked(RepositoryFactory(slug="acme/alone"), 9, base="main", head="solo")
    assert 'id="stack"' not in personas.site_client().get(lone.get_absolute_url()).content.decode()
    assert personas.api_client().get("/api/repos/acme/alone/pulls/9/").json()["stack"] == {
        "below": [], "above": [], "cut": ""}


gate_of = gate


def test_a_change_anywhere_in_a_stack_moves_every_page_of_it(three):
    """The pages of the PRs below list those above with their gates: a change of the top moves
    the bottom's generation too (so a kept page of it is not served), and nothing outside the stack."""
    bottom, middle, top = three
    outside = stacked(bottom.repository, 9, base="main", head="elsewhere")
    before = dict(PullRequest.objects.values_list("pk", "generation"))
    override(top)
    after = dict(PullRequest.objects.values_list("pk", "generation"))
    assert all(after[pr.pk] > before[pr.pk] for pr in (bottom, middle, top))
    assert after[outside.pk] == before[outside.pk]
    page = personas.site_client().get(bottom.get_absolute_url()).content.decode()
    assert "overridden</span> <span class=\"muted\">(above)" in page
