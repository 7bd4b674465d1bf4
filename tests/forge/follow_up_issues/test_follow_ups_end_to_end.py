"""The whole story through the doors a real deployment uses: GitHub's webhooks for the merge and
the pushes (signed, GitHub's example payloads), a worker's checks (tasks run in-process), the
Follow-ups page and the API, a maintainer's Mark fixed on the site, and the issue closed at the
fake GitHub, which validates every request with githubkit's models."""
import re

import pytest
from rest_framework.test import APIClient

from forge.follow_up_issues.services import follow_up_issues_update
from forge.models import FollowUpIssue
from tests.factories import UserFactory
from tests.findings.follow_up_world import SLUG, merged_world, push_the_move_and_the_fix
from tests.forge.scenario import deliver
from tests.forge.follow_up_issues.test_follow_up_webhooks import closed, pushed
from tests.forge.github.test_webhook_events import SECRET, send
from tests.personas import site_client

pytestmark = pytest.mark.django_db


def test_a_merge_and_two_pushes_end_with_one_follow_up_moved_and_one_fixed_with_its_issue_closed(
    client, settings, tmp_path, fake_github, django_capture_on_commit_callbacks
):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = SECRET
    fake_github.install(SLUG)
    world = merged_world(tmp_path, merge=False)
    follow_up_issues_update(actor=None, repository=world.pull_request.repository, open_issues=True)

    send(client, "pull_request", closed(world, merged=True), django_capture_on_commit_callbacks, "merge-1")
    send(client, "pull_request", closed(world, merged=True), django_capture_on_commit_callbacks, "merge-1-again")
    assert len(fake_github.issues_of(SLUG)) == 2

    push_the_move_and_the_fix(world)
    send(client, "push", pushed(world.moved), django_capture_on_commit_callbacks, "push-1")
    send(client, "push", pushed(world.fixed), django_capture_on_commit_callbacks, "push-2")

    api = {row["finding_number"]: row for row in APIClient().get("/api/repos/acme/loader/follow-ups/").json()["results"]}
    assert (api[2]["state"], api[2]["evidence"][0]["where"]) == ("open", "src/helpers.py:3–4")
    assert (api[3]["state"], api[3]["fixed_commit"]) == ("verified_fixed", world.fixed)
    page = site_client().get("/acme/loader/follow-ups/").content.decode()
    assert "src/helpers.py:3–4" in page and re.search(r"Verified fixed, to be marked</span> <span class=\"muted\">at "
                                                       rf"<code>{world.fixed[:8]}</code>", page)

    maintainer = site_client(UserFactory(username="mona", groups=["Maintainer"]))
    with django_capture_on_commit_callbacks(execute=True):
        maintainer.post("/acme/loader/pull/7/findings/3/follow-up/", {"action": "mark_fixed"})
    deliver()

    issues = fake_github.issues_of(SLUG)
    fixed = issues[FollowUpIssue.objects.get(follow_up=world.follow_up(3)).number]
    moved = issues[FollowUpIssue.objects.get(follow_up=world.follow_up(2)).number]
    assert (fixed["state"], fixed["state_reason"], moved["state"]) == ("closed", "completed", "open")
    assert any(f"Fixed in {world.fixed}" in comment["body"] for comment in fake_github.comments.values()
               if comment["number"] == fixed["number"])
