"""The GitHub events about Recheck's check, delivered to the signed webhook endpoint. Payloads are
GitHub's example payloads (webhook_examples/, from the octokit/webhooks examples), changed only to
name this test's repository and commits, and validated against githubkit's webhook models before
they are sent."""
import json
from pathlib import Path

import pytest
from githubkit import webhooks

from findings.models import VerificationRun, WebhookDelivery
from reviews.models import PullRequest, Repository
from tests.api.test_webhooks import deliver
from tests.forge.scenario import deliver as send_due, the_check_run, verify

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).parents[1] / "webhook_examples"
SECRET = "webhook-secret-for-tests"


@pytest.fixture
def hook_secret(settings):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = SECRET


def example(name: str, change=None) -> dict:
    """GitHub's example payload `name` (event.action), changed by `change`, still valid."""
    payload = json.loads((EXAMPLES / f"{name}.json").read_text())
    if "repository" in payload:
        payload["repository"].update(full_name="acme/loader", name="loader")
        payload["repository"]["owner"]["login"] = "acme"
    if change:
        change(payload)
    webhooks.parse_obj(name.split(".")[0], payload)
    return payload


def send(client, event, payload, capture, delivery):
    """Deliver the event, then let the process's sender send what the delivery recorded."""
    with capture(execute=True):
        response = deliver(client, payload, event=event, delivery=delivery, secret=SECRET)
    send_due()
    return response


def test_a_rerequested_check_run_verifies_that_sha_again_and_reports_on_the_same_check_run(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    def rerequest(payload):
        payload["check_run"].update(name="Recheck", head_sha=repo.reviewed)
        payload["check_run"]["check_suite"]["head_sha"] = repo.reviewed

    response = send(client, "check_run", example("check_run.rerequested", rerequest),
                    django_capture_on_commit_callbacks, "cr-1")

    assert response.status_code == 202, response.json()
    runs = VerificationRun.objects.filter(pull_request=pull_request, commit__sha=repo.reviewed)
    assert runs.count() == 2 and all(run.status == "done" for run in runs)
    assert response.json()["run"] == runs.latest_first().first().pk
    run = the_check_run(fake_github)
    assert run["conclusion"] == "failure"
    assert [body["status"] for body in fake_github.calls("PATCH", rf"/check-runs/{run['id']}$")] == [
        "completed", "in_progress", "completed"
    ]


def test_a_rerequest_of_another_check_is_ignored(
    client, hook_secret, pull_request, repo, django_capture_on_commit_callbacks
):
    def other(payload):
        payload["check_run"].update(name="lint", head_sha=repo.reviewed)

    response = send(client, "check_run", example("check_run.rerequested", other),
                    django_capture_on_commit_callbacks, "cr-2")

    assert response.status_code == 200
    assert "not of 'Recheck'" in response.json()["detail"]
    assert not VerificationRun.objects.exists()


def test_a_rerequested_check_suite_verifies_the_pull_requests_github_names(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    def rerequest(payload):
        payload["check_suite"]["head_sha"] = repo.reviewed
        payload["check_suite"]["pull_requests"][0]["number"] = 7

    response = send(client, "check_suite", example("check_suite.rerequested", rerequest),
                    django_capture_on_commit_callbacks, "cs-1")

    assert response.status_code == 202
    assert "acme/loader#7" in response.json()["detail"]
    assert the_check_run(fake_github)["head_sha"] == repo.reviewed


def test_a_merge_group_is_verified_and_reported_on_its_head_sha(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    # The queue's commit: the pull request merged onto main, on GitHub's temporary branch.
    merged = repo.write("README.md", "queued\n").commit("Merge pull request #7")
    branch = f"gh-readonly-queue/main/pr-7-{repo.reviewed}"
    repo.git("branch", branch, merged)

    def queued(payload):
        payload["merge_group"].update(head_sha=merged, head_ref=f"refs/heads/{branch}")

    response = send(client, "merge_group", example("merge_group.checks_requested", queued),
                    django_capture_on_commit_callbacks, "mg-1")

    assert response.status_code == 202, response.json()
    run = VerificationRun.objects.get(pull_request=pull_request)
    assert (run.commit.sha, run.status) == (merged, "done")
    check_run = the_check_run(fake_github)
    assert (check_run["head_sha"], check_run["status"], check_run["conclusion"]) == (merged, "completed", "failure")


def test_a_merge_group_of_an_untracked_pull_request_is_acknowledged(
    client, hook_secret, pull_request, django_capture_on_commit_callbacks
):
    response = send(client, "merge_group", example("merge_group.checks_requested"),
                    django_capture_on_commit_callbacks, "mg-2")

    assert response.status_code == 200
    assert response.json()["detail"] == "Ignored: acme/loader#104 is not tracked here."


@pytest.mark.parametrize(("merged", "state"), [(True, "merged"), (False, "closed")])
def test_a_closed_pull_request_records_whether_it_was_merged(
    client, hook_secret, pull_request, django_capture_on_commit_callbacks, merged, state
):
    def closed(payload):
        payload["pull_request"].update(number=7, merged=merged)
        payload["number"] = 7

    response = send(client, "pull_request", example("pull_request.closed", closed),
                    django_capture_on_commit_callbacks, f"pr-{state}")

    assert response.status_code == 200
    assert PullRequest.objects.get(pk=pull_request.pk).state == state
    outcome = WebhookDelivery.objects.get(delivery_id=f"pr-{state}").outcome
    assert outcome.startswith(f"Recorded acme/loader#7 as {state}")
    assert ("3 follow-up(s) opened" if merged else "without merging: no follow-ups") in outcome


def test_installation_events_keep_the_installation_ids_right(client, hook_secret, django_capture_on_commit_callbacks):
    hello = Repository.objects.create(slug="Codertocat/Hello-World", clone_url="https://github.com/x/y.git")
    space = Repository.objects.create(slug="codertocat/space", clone_url="https://github.com/x/z.git")

    send(client, "installation", example("installation.created"), django_capture_on_commit_callbacks, "i-1")
    hello.refresh_from_db()
    assert hello.github_installation_id == 957387

    send(client, "installation_repositories", example("installation_repositories.added"),
         django_capture_on_commit_callbacks, "i-2")
    space.refresh_from_db()
    assert space.github_installation_id == 957387

    def removed(payload):
        payload["installation"]["id"] = 957387
        payload["repositories_removed"][0].update(full_name="Codertocat/Space", name="Space")

    send(client, "installation_repositories", example("installation_repositories.removed", removed),
         django_capture_on_commit_callbacks, "i-3")
    space.refresh_from_db()
    assert space.github_installation_id is None

    def deleted(payload):
        payload["installation"]["id"] = 957387

    response = send(client, "installation", example("installation.deleted", deleted),
                    django_capture_on_commit_callbacks, "i-4")
    hello.refresh_from_db()
    assert hello.github_installation_id is None
    assert response.json()["detail"] == "Installation 957387 deleted: forgotten on 1 repositories."


def test_a_redelivered_rerequest_changes_nothing(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    def rerequest(payload):
        payload["check_run"].update(name="Recheck", head_sha=repo.reviewed)

    payload = example("check_run.rerequested", rerequest)
    send(client, "check_run", payload, django_capture_on_commit_callbacks, "cr-9")
    again = send(client, "check_run", payload, django_capture_on_commit_callbacks, "cr-9")

    assert again.status_code == 200 and again.json()["duplicate"] is True
    assert VerificationRun.objects.count() == 1
