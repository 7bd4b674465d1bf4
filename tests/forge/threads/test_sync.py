"""Reading a pull request's review threads from the fake GitHub into its inbox: once per comment
id however often it is read, edits and deletions on GitHub reflected, and GitHub's errors a clear
state on the pull request with nothing in the inbox lost or doubled."""
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from forge.threads.models import ReviewComment, ReviewThread, ThreadSync
from tests.forge.threads_scenario import comment_on, inbox, sync

pytestmark = pytest.mark.django_db


def test_reading_twice_gives_one_entry_per_thread_with_its_replies(pull_request, repo, fake_github):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops", line=10)
    reply = comment_on(fake_github, pull_request, repo.reviewed, body="Agreed", reply_to=first, user=("bob", 502))
    other = comment_on(fake_github, pull_request, repo.reviewed, body="Nit: name", line=3, start_line=2)

    assert sync(pull_request).created == 2
    again = sync(pull_request)

    assert (again.ok, again.created, again.changed, again.deleted) == (True, 0, 0, 0)
    threads = inbox(pull_request)
    assert set(threads) == {first, other}
    assert [c.github_id for c in threads[first].comments.all()] == [first, reply]
    assert [c.author_login for c in threads[first].replies] == ["bob"]
    thread = threads[other]
    assert (thread.path, thread.original_start_line, thread.original_line, thread.side, thread.state) == (
        "src/loader.py", 2, 3, "RIGHT", ReviewThread.State.NEW)
    assert thread.html_url.endswith(f"#discussion_r{other}")
    assert ReviewComment.objects.count() == 3
    assert ThreadSync.objects.get(pull_request=pull_request).status == ThreadSync.Status.OK


def test_every_page_is_read(pull_request, repo, fake_github):
    for n in range(105):
        comment_on(fake_github, pull_request, repo.reviewed, body=f"comment {n}", line=1 + n % 20)

    sync(pull_request)

    assert ReviewThread.objects.of(pull_request).count() == 105
    assert len(fake_github.calls("GET", r"/pulls/7/comments$")) == 2


def test_an_edit_and_a_deletion_on_github_are_reflected(pull_request, repo, fake_github):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    reply = comment_on(fake_github, pull_request, repo.reviewed, body="Really?", reply_to=first)
    sync(pull_request)

    fake_github.edit_review_comment(first, "Tolerance 0 never stops the loop")
    fake_github.delete_review_comment(reply)
    outcome = sync(pull_request)

    assert (outcome.changed, outcome.deleted) == (1, 1)
    thread = inbox(pull_request)[first]
    assert thread.first_comment.body == "Tolerance 0 never stops the loop"
    gone = ReviewComment.objects.get(github_id=reply)
    assert gone.deleted and gone.body == "Really?"  # kept, so nothing is lost
    assert thread.problem == ""


def test_a_thread_whose_first_comment_is_deleted_says_so(pull_request, repo, fake_github):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    comment_on(fake_github, pull_request, repo.reviewed, body="Still here", reply_to=first)
    sync(pull_request)
    fake_github.delete_review_comment(first)

    sync(pull_request)

    thread = inbox(pull_request)[first]
    assert thread.problem == ReviewThread.Problem.FIRST_DELETED
    assert thread.path == "src/loader.py" and len(thread.comments.all()) == 2


def test_a_reply_whose_first_comment_was_never_seen_makes_a_thread_that_says_its_first_is_gone(
    pull_request, repo, fake_github
):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Soon gone")
    comment_on(fake_github, pull_request, repo.reviewed, body="Reply", reply_to=first)
    fake_github.delete_review_comment(first)

    sync(pull_request)

    assert inbox(pull_request)[first].problem == ReviewThread.Problem.FIRST_DELETED


@pytest.mark.parametrize(("status", "message", "headers", "words"), [
    (404, "Not Found", {}, "GitHub answered 404"),
    (410, "Gone", {}, "GitHub answered 410"),
    (422, "Validation Failed", {}, "GitHub answered 422"),
    (502, "Bad Gateway", {}, "GitHub answered 502"),
    (403, "You have exceeded a secondary rate limit", {"retry-after": "30"}, "rate limit"),
])
def test_a_github_error_is_a_clear_state_and_changes_nothing(pull_request, repo, fake_github, status, message,
                                                             headers, words):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    sync(pull_request)
    fake_github.edit_review_comment(first, "Edited meanwhile")
    fake_github.fail("GET", r"/pulls/7/comments$", status, message, headers=headers)

    outcome = sync(pull_request)

    state = ThreadSync.objects.get(pull_request=pull_request)
    assert not outcome.ok and state.status == ThreadSync.Status.FAILED and state.response_status == status
    assert words in state.message and "Nothing was changed" in state.message
    assert inbox(pull_request)[first].first_comment.body == "Tolerance 0 never stops"
    assert (outcome.retry_in is not None) == (status in (403, 502))

    sync(pull_request)
    assert inbox(pull_request)[first].first_comment.body == "Edited meanwhile"
    assert ThreadSync.objects.get(pull_request=pull_request).status == ThreadSync.Status.OK
    assert ReviewComment.objects.count() == 1


def test_the_command_reads_the_threads_and_says_what_changed(pull_request, repo, fake_github, capsys):
    comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")

    call_command("sync_review_threads", "acme/loader", "7")

    assert "1 new threads" in capsys.readouterr().out
    fake_github.fail("GET", r"/pulls/7/comments$", 404, "Not Found")
    with pytest.raises(CommandError, match="GitHub answered 404"):
        call_command("sync_review_threads", "acme/loader", "7")


def test_a_comment_listed_twice_is_recorded_once(pull_request, repo, fake_github):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    reply = comment_on(fake_github, pull_request, repo.reviewed, body="Agreed", reply_to=first)
    fake_github.listed_twice = {first, reply}

    outcome = sync(pull_request)

    assert (outcome.created, outcome.changed) == (1, 2)
    assert ReviewComment.objects.count() == 2


def test_a_body_of_any_size_and_content_is_kept_whole(pull_request, repo, fake_github):
    body = "<img src=x onerror=alert(1)>" + "ü" * 65000
    first = comment_on(fake_github, pull_request, repo.reviewed, body=body)

    sync(pull_request)

    assert inbox(pull_request)[first].first_comment.body == body


def test_whether_a_thread_is_resolved_is_read_from_graphql_and_its_failure_loses_nothing_else(
    pull_request, repo, fake_github
):
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    fake_github.review_comments[first]["resolved"] = True

    sync(pull_request)

    thread = inbox(pull_request)[first]
    assert thread.resolved and thread.node_id == fake_github.review_comments[first]["thread"]
    fake_github.review_comments[first]["resolved"] = False
    fake_github.edit_review_comment(first, "Edited")
    fake_github.fail("POST", r"^/graphql$", 502, "Bad Gateway")
    assert sync(pull_request).ok
    thread = inbox(pull_request)[first]
    assert thread.resolved and thread.first_comment.body == "Edited"


def test_a_repository_on_another_forge_is_read_from_that_forge_not_from_github(pull_request, fake_github, settings):
    type(pull_request.repository).objects.filter(pk=pull_request.repository_id).update(forge="gitlab")
    pull_request.repository.refresh_from_db()
    settings.RECHECK_GITLAB_TOKEN = ""

    outcome = sync(pull_request)

    # Through the forge interface: GitLab's wire is asked (and says what it lacks), never GitHub's.
    assert not outcome.ok and "GitLab answered nothing: No GitLab token is configured" in outcome.message
    assert fake_github.calls("GET", r"/comments$") == []
