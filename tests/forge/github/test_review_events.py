"""GitHub's review events, delivered to the signed webhook endpoint, keep the inbox in step: each
hands the pull request to the sync task (run in-process here), and a thread's resolution is
recorded from its event. Payloads are GitHub's examples (webhook_examples/, from the octokit
webhooks examples) changed only to name this test's repository and pull request."""
import pytest

from findings.models import WebhookDelivery
from forge.threads.models import ReviewThread
from tests.forge.github.test_webhook_events import example, hook_secret, send  # noqa: F401  (hook_secret is a fixture)
from tests.forge.threads_scenario import comment_on, inbox, signed_in_with_github, sync
from tests.personas import member_of, user_with_role

pytestmark = pytest.mark.django_db


def on_pull_request_7(payload):
    payload["pull_request"]["number"] = 7


def test_a_created_comment_event_reads_the_threads_again(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks  # noqa: F811
):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")

    response = send(client, "pull_request_review_comment", example("pull_request_review_comment.created",
                    on_pull_request_7), django_capture_on_commit_callbacks, "rc-1")

    assert response.status_code == 200, response.json()
    assert "Reading the review threads of acme/loader#7 again" in response.json()["detail"]
    assert set(inbox(pull_request)) == {first}
    # The same delivery again: recorded once, read once.
    send(client, "pull_request_review_comment", example("pull_request_review_comment.created", on_pull_request_7),
         django_capture_on_commit_callbacks, "rc-1")
    assert len(fake_github.calls("GET", r"/pulls/7/comments$")) == 1
    assert WebhookDelivery.objects.filter(delivery_id="rc-1").count() == 1


@pytest.mark.parametrize("name", ["pull_request_review_comment.edited", "pull_request_review_comment.deleted",
                                  "pull_request_review.submitted", "pull_request_review.dismissed"])
def test_edits_deletions_and_reviews_read_the_threads_again(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks, name  # noqa: F811
):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    sync(pull_request)
    fake_github.edit_review_comment(first, "Edited on GitHub")

    send(client, name.split(".")[0], example(name, on_pull_request_7), django_capture_on_commit_callbacks, name)

    assert inbox(pull_request)[first].first_comment.body == "Edited on GitHub"


def test_a_resolved_and_an_unresolved_thread_are_recorded(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks  # noqa: F811
):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    sync(pull_request)
    node_id = fake_github.review_comments[first]["thread"]

    def this_thread(payload):
        on_pull_request_7(payload)
        payload["thread"]["node_id"] = node_id
        payload["thread"]["comments"] = payload["thread"]["comments"][:1]
        payload["thread"]["comments"][0].update(id=first, in_reply_to_id=None)
        payload["thread"]["comments"][0].pop("in_reply_to_id")

    # Resolved on GitHub, which then says so: in the event, and to the reading it starts. The
    # reading's GraphQL fails here: the event alone records it.
    fake_github.review_comments[first]["resolved"] = True
    fake_github.fail("POST", r"^/graphql$", 502, "Bad Gateway")
    send(client, "pull_request_review_thread", example("pull_request_review_thread.resolved", this_thread),
         django_capture_on_commit_callbacks, "rt-1")
    thread = ReviewThread.objects.get(root_comment_id=first)
    assert (thread.resolved, thread.node_id) == (True, node_id)

    fake_github.review_comments[first]["resolved"] = False
    send(client, "pull_request_review_thread", example("pull_request_review_thread.unresolved", this_thread),
         django_capture_on_commit_callbacks, "rt-2")
    thread.refresh_from_db()
    assert thread.resolved is False


def test_an_event_of_an_untracked_pull_request_is_ignored(
    client, hook_secret, pull_request, fake_github, django_capture_on_commit_callbacks  # noqa: F811
):
    def elsewhere(payload):
        payload["pull_request"]["number"] = 99

    response = send(client, "pull_request_review_comment", example("pull_request_review_comment.created", elsewhere),
                    django_capture_on_commit_callbacks, "rc-9")

    assert "acme/loader#99 is not tracked here" in response.json()["detail"]
    assert fake_github.calls("GET", r"/comments$") == []


def test_a_recheck_command_written_on_github_triages_its_thread_through_the_webhook(
    client, hook_secret, pull_request, repo, fake_github, django_capture_on_commit_callbacks  # noqa: F811
):
    reviewer = member_of(pull_request.repository, user_with_role("no_role", username="rita"), "reviewer")
    signed_in_with_github(reviewer, 501, "alice")
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    command = comment_on(fake_github, pull_request, repo.reviewed, body="/recheck cleanup", reply_to=first)

    def the_command(payload):
        on_pull_request_7(payload)
        payload["comment"].update(id=command, in_reply_to_id=first, body="/recheck cleanup")

    send(client, "pull_request_review_comment", example("pull_request_review_comment.created", the_command),
         django_capture_on_commit_callbacks, "rc-cmd")

    thread = inbox(pull_request)[first]
    assert (thread.state, thread.finding.kind, thread.triaged_by) == ("finding", "cleanup", reviewer)
