"""Retargeting a stacked pull request on GitHub: `pull_request` `edited` with `changes.base`
records the new base, reads the stack again and verifies the head again, every finding kept; a
merged PR below (`closed`, merged) leaves the stack. The `edited` body is GitHub's
`pull_request.synchronize` example (webhook_examples/, from octokit/webhooks) with its action set
to `edited` and the `changes.base` object GitHub documents for a changed base added and its labels left out (no `edited`
example with a base change is kept here), validated against githubkit's models like the others."""
import pytest

from findings.models import Finding, VerificationRun, WebhookDelivery
from findings.state.stored import pull_request_state
from reviews.models import PullRequest
from tests.factories import FindingFactory, PullRequestFactory
from tests.forge.github.test_webhook_events import example, hook_secret, send  # noqa: F401

pytestmark = pytest.mark.django_db


def gate_at(pull_request, sha) -> dict:
    return pull_request_state(pull_request_id=pull_request.pk)["gates"][sha]


def test_a_retarget_onto_another_prs_branch_stacks_it_and_a_merge_below_unstacks_it(
    client, hook_secret, pull_request, repo, django_capture_on_commit_callbacks  # noqa: F811
):
    # #6 from feature-a into main, with an open blocker nothing verified: not mergeable.
    lower = PullRequestFactory(repository=pull_request.repository, number=6, base_branch="main",
                               head_branch="feature-a")
    FindingFactory(pull_request=lower, number=1, kind=Finding.Kind.BLOCKER)
    findings = sorted(Finding.objects.filter(pull_request=pull_request).values_list("pk", flat=True))

    def retarget(payload):
        payload.update(action="edited", number=7)
        payload["pull_request"].update(number=7, labels=[])  # the `edited` model's labels carry more fields
        payload["pull_request"]["head"].update(sha=repo.reviewed, ref="feature-b")
        previous = payload["pull_request"]["base"]["sha"]
        payload["pull_request"]["base"].update(ref="feature-a")
        payload["changes"] = {"base": {"ref": {"from": "main"}, "sha": {"from": previous}}}

    response = send(client, "pull_request", example("pull_request.synchronize", retarget),
                    django_capture_on_commit_callbacks, "retarget-1")

    assert response.status_code in (200, 202), response.json()
    retargeted = PullRequest.objects.get(pk=pull_request.pk)
    assert (retargeted.base_branch, retargeted.head_branch) == ("feature-a", "feature-b")
    assert WebhookDelivery.objects.get(delivery_id="retarget-1").outcome.startswith(
        "Retargeted acme/loader#7 onto feature-a: verifying")
    assert VerificationRun.objects.filter(pull_request=pull_request, commit__sha=repo.reviewed).exists()
    assert sorted(Finding.objects.filter(pull_request=pull_request).values_list("pk", flat=True)) == findings
    answer = gate_at(pull_request, repo.reviewed)
    assert (answer["mergeable"], answer["blocked_below"]) == (False, 6)
    assert "blocked by #6 below" in answer["reason"]

    def merged(payload):
        payload.update(number=6)
        payload["pull_request"].update(number=6, merged=True)
        payload["pull_request"]["head"].update(ref="feature-a")
        payload["pull_request"]["base"].update(ref="main")

    send(client, "pull_request", example("pull_request.closed", merged), django_capture_on_commit_callbacks, "merged-6")
    assert PullRequest.objects.get(pk=lower.pk).state == PullRequest.State.MERGED
    # #6 merged leaves the stack: #7 answers by its own findings again.
    assert gate_at(pull_request, repo.reviewed)["blocked_below"] is None
    assert "below" not in gate_at(pull_request, repo.reviewed)["reason"]
