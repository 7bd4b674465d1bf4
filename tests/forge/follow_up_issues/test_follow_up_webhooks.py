"""The webhooks that drive follow-ups: `pull_request` `closed` (merged or not) and `push` to the
default branch, GitHub's example payloads (webhook_examples/) changed only to name this test's
repository and commits, validated against githubkit's webhook models before they are sent."""
import pytest

from findings.models import FollowUp, FollowUpSweep, WebhookDelivery
from reviews.models import Repository
from tests.findings.follow_up_world import SLUG, merged_world, push_the_move_and_the_fix
from tests.forge.github.test_webhook_events import SECRET, example, send

pytestmark = pytest.mark.django_db


@pytest.fixture
def hook_secret(settings):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = SECRET


def closed(world, *, merged: bool):
    def change(payload):
        payload["pull_request"].update(number=7, merged=merged, merge_commit_sha=world.merge)
        payload["number"] = 7
    return example("pull_request.closed", change)


def pushed(sha: str, *, ref: str = "refs/heads/main", default: str = "main", forced: bool = False):
    def change(payload):
        payload.update(ref=ref, after=sha, forced=forced)
        payload["repository"]["default_branch"] = default
    return example("push", change)


def test_a_merged_pull_request_delivered_twice_opens_its_follow_ups_once(
    client, hook_secret, tmp_path, eager_tasks, django_capture_on_commit_callbacks
):
    world = merged_world(tmp_path, merge=False)
    for delivery in ("m-1", "m-2"):
        response = send(client, "pull_request", closed(world, merged=True), django_capture_on_commit_callbacks, delivery)
        assert response.status_code == 200
    # A replay under a new delivery id is a second event for the same merge: nothing twice either.
    send(client, "pull_request", closed(world, merged=True), django_capture_on_commit_callbacks, "m-3")
    assert FollowUp.objects.count() == 2
    assert "2 follow-up(s) opened" in WebhookDelivery.objects.get(delivery_id="m-1").outcome
    assert "0 follow-up(s) opened" in WebhookDelivery.objects.get(delivery_id="m-3").outcome
    assert world.follow_up(2).checked_commit.sha == world.merge


def test_a_pull_request_closed_unmerged_opens_none(client, hook_secret, tmp_path, django_capture_on_commit_callbacks):
    world = merged_world(tmp_path, merge=False)
    send(client, "pull_request", closed(world, merged=False), django_capture_on_commit_callbacks, "c-1")
    assert not FollowUp.objects.exists()
    assert "no follow-ups" in WebhookDelivery.objects.get(delivery_id="c-1").outcome


def test_a_push_to_the_default_branch_checks_the_follow_ups_at_its_head(
    client, hook_secret, tmp_path, eager_tasks, django_capture_on_commit_callbacks
):
    world = push_the_move_and_the_fix(merged_world(tmp_path))
    response = send(client, "push", pushed(world.fixed, forced=True), django_capture_on_commit_callbacks, "p-1")
    assert response.status_code == 200, response.json()
    assert "(force-pushed)" in response.json()["detail"]
    assert world.follow_up(3).state == "verified_fixed"
    assert world.follow_up(2).places[0]["location"] == "src/helpers.py:3–4"
    assert FollowUpSweep.objects.filter(reason="push", sha=world.fixed, status="done").exists()


def test_a_push_to_another_branch_or_a_tag_checks_nothing(client, hook_secret, tmp_path,
                                                          django_capture_on_commit_callbacks):
    world = merged_world(tmp_path)
    response = send(client, "push", pushed(world.merge, ref="refs/heads/feature"), django_capture_on_commit_callbacks,
                    "p-2")
    assert "not to the default branch" in response.json()["detail"]
    assert not FollowUpSweep.objects.filter(reason="push").exists()


def test_a_default_branch_renamed_on_github_is_recorded_from_the_push(client, hook_secret, tmp_path,
                                                                        django_capture_on_commit_callbacks):
    world = merged_world(tmp_path)
    world.repo.git("branch", "-m", "main", "trunk")
    send(client, "push", pushed(world.merge, ref="refs/heads/trunk", default="trunk"),
         django_capture_on_commit_callbacks, "p-3")
    assert Repository.objects.get(slug=SLUG).default_branch == "trunk"
    # The merge's own check at that commit is still waiting: the push joins it.
    assert FollowUpSweep.objects.filter(sha=world.merge, status="queued").count() == 1
