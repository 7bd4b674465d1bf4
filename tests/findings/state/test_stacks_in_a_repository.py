"""A stack of three pull requests in a real git repository, imported through the bundle format
and verified by the service the tasks use: the top is blocked by the middle's blocker; fixing it
(a commit that removes it, verified, then marked fixed by a person) opens the middle and then the
top; merging the bottom and retargeting the middle onto the default branch keeps the gates right.
(The forge's webhooks for the merge and the retarget: tests/forge/*/test_stack_retarget.py.)"""
import pytest

from findings.services.resolution import finding_resolve
from findings.services.review_import import review_import
from findings.services.verification.run import pull_request_verify
from findings.state.stored import pull_request_state
from reviews.models import Commit, PullRequest
from reviews.services import pull_request_branches_record, pull_request_pin_commit, pull_request_state_record
from reviews.stack import stack_below
from tests.gitrepo import GitRepoBuilder

pytestmark = pytest.mark.django_db

NOTE = {"kind": "cleanup", "title": "Talk it over", "evidence": [{"kind": "note", "text": "Ask."}]}
DEBUG = {"kind": "blocker", "title": "Debug flag left on", "evidence": [{"kind": "path", "path": "config.yaml",
                                                                         "expect": "exists"}]}


def imported(repo, number, *, base, head, sha, finding):
    review_import(data={
        "repository": {"slug": "acme/stack", "clone_url": str(repo.path), "web_url": "https://github.com/acme/stack"},
        "pull_request": {"number": number, "title": f"Part {number}", "base_branch": base, "head_branch": head},
        "commits": [{"sha": sha, "role": "head"}],
        # The evidence is recorded at the head (a PR imported at its head has no reviewed pin).
        "findings": [{"number": 1, **finding,
                      "evidence": [{**item, "commit": sha} if item["kind"] == "path" else item
                                   for item in finding["evidence"]]}],
    }, actor=None)
    pull_request = PullRequest.objects.get(repository__slug="acme/stack", number=number)
    verify(pull_request, sha)
    return pull_request


def verify(pull_request, sha):
    commit = Commit.objects.get(repository=pull_request.repository, sha=sha)
    return {v.finding.number: v.verdict for v in pull_request_verify(pull_request=pull_request, commit=commit)}


def head_gate(pull_request) -> dict:
    state = pull_request_state(pull_request_id=pull_request.pk)
    return state["gates"][state["head_sha"]]


def test_a_stack_of_three_follows_the_blocker_in_the_middle_and_the_merge_at_the_bottom(tmp_path):
    repo = GitRepoBuilder(tmp_path)
    repo.write("README", "stack\n").commit("start")
    repo.git("checkout", "--quiet", "-b", "part-1")
    bottom_sha = repo.write("src/one.py", "one = 1\n").commit("part 1")
    repo.git("checkout", "--quiet", "-b", "part-2")
    middle_sha = repo.write("src/two.py", "two = 2\n").write("config.yaml", "debug: true\n").commit("part 2")
    repo.git("checkout", "--quiet", "-b", "part-3")
    top_sha = repo.write("src/three.py", "three = 3\n").commit("part 3")

    bottom = imported(repo, 1, base="main", head="part-1", sha=bottom_sha, finding=NOTE)
    middle = imported(repo, 2, base="part-1", head="part-2", sha=middle_sha, finding=DEBUG)
    top = imported(repo, 3, base="part-2", head="part-3", sha=top_sha, finding=NOTE)

    assert head_gate(bottom)["mergeable"] is True
    assert (head_gate(middle)["mergeable"], head_gate(middle)["blocked_below"]) == (False, None)
    gate = head_gate(top)
    assert (gate["mergeable"], gate["own_mergeable"], gate["blocked_below"]) == (False, True, 2)
    assert gate["reason"].startswith("Stacked: blocked by #2 below")

    # The middle's fix: verified, it looks fixed, but only a person closes a blocker.
    repo.git("checkout", "--quiet", "part-2")
    repo.git("rm", "--quiet", "config.yaml")
    fixed_sha = repo.commit("drop the debug config")
    fixed = Commit.objects.create(repository=middle.repository, sha=fixed_sha, resolved=True)
    pull_request_pin_commit(pull_request=middle, commit=fixed, role="head")
    assert verify(middle, fixed_sha) == {1: "likely_fixed"}
    assert head_gate(middle)["mergeable"] is False and head_gate(top)["blocked_below"] == 2
    finding_resolve(finding=middle.findings.get(number=1), status="fixed", actor=None, source="command",
                    commit=fixed, note="Removed in the fix.")
    assert head_gate(middle)["mergeable"] is True
    assert (head_gate(top)["mergeable"], head_gate(top)["blocked_below"]) == (True, None)

    # The bottom merges; the forge retargets the middle onto main: the stack is the two of them.
    pull_request_state_record(pull_request=bottom, state=PullRequest.State.MERGED)
    assert stack_below(middle.pk).pull_requests == []
    assert pull_request_branches_record(pull_request=middle, base_branch="main", head_branch="part-2") is True
    assert stack_below(top.pk).pull_requests == [(middle.pk, 2)]
    assert head_gate(middle)["mergeable"] is True and head_gate(top)["mergeable"] is True
    # A regression of the middle's own gate (its blocker reopened) blocks the top again.
    finding_resolve(finding=middle.findings.get(number=1), status="open", actor=None, source="command",
                    note="Back after all.")
    assert (head_gate(top)["mergeable"], head_gate(top)["blocked_below"]) == (False, 2)
