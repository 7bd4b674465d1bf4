"""Retargeting a stacked merge request on GitLab: a Merge Request Hook `update` whose
`target_branch` changed (GitLab's documented example, webhook_examples/gitlab/, its `changes`
given a `target_branch` entry as GitLab sends it for a new target) records the new base, reads the
stack again and verifies the head again, every finding kept; a merged MR below leaves the stack."""
import pytest

from findings.models import Finding, VerificationRun, WebhookDelivery
from findings.state.stored import pull_request_state
from reviews.models import PullRequest
from tests.factories import FindingFactory, PullRequestFactory
from tests.forge.gitlab_world import IID, SLUG, deliver_hook, merge_request_event

pytestmark = pytest.mark.django_db


def hook(client, capture, payload, **options):
    with capture(execute=True):
        return deliver_hook(client, payload, **options)


def test_a_new_target_branch_stacks_the_merge_request_and_a_merge_below_unstacks_it(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    lower = PullRequestFactory(repository=merge_request.repository, number=11, base_branch="main",
                               head_branch="feature-a")
    FindingFactory(pull_request=lower, number=1, kind=Finding.Kind.BLOCKER)
    findings = sorted(Finding.objects.filter(pull_request=merge_request).values_list("pk", flat=True))

    payload = merge_request_event("update", gitlab_repo.reviewed, target_branch="feature-a", source_branch="feature-b")
    payload["changes"]["target_branch"] = {"previous": "main", "current": "feature-a"}
    response = hook(client, django_capture_on_commit_callbacks, payload, event_uuid="retarget-1")

    assert response.status_code in (200, 202), response.content
    retargeted = PullRequest.objects.get(pk=merge_request.pk)
    assert (retargeted.base_branch, retargeted.head_branch) == ("feature-a", "feature-b")
    assert WebhookDelivery.objects.get(delivery_id="gitlab:retarget-1").outcome.startswith(
        f"Retargeted {SLUG}!{IID} onto feature-a: verifying")
    assert VerificationRun.objects.filter(pull_request=merge_request, commit__sha=gitlab_repo.reviewed).exists()
    assert sorted(Finding.objects.filter(pull_request=merge_request).values_list("pk", flat=True)) == findings
    gate = pull_request_state(pull_request_id=merge_request.pk)["gates"][gitlab_repo.reviewed]
    assert (gate["mergeable"], gate["blocked_below"]) == (False, 11)

    merged = merge_request_event("merge", gitlab_repo.reviewed, iid=11, target_branch="main", source_branch="feature-a")
    hook(client, django_capture_on_commit_callbacks, merged, event_uuid="merged-11")
    assert PullRequest.objects.get(pk=lower.pk).state == PullRequest.State.MERGED
    gate = pull_request_state(pull_request_id=merge_request.pk)["gates"][gitlab_repo.reviewed]
    assert gate["blocked_below"] is None and "below" not in gate["reason"]
