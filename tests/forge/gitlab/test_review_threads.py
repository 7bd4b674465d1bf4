"""A GitLab merge request's review threads, at the wire: its diff discussions (GitLab's documented
shapes, with their `position`) read into the same inbox GitHub's review comments fill, by the
command, the page's button and GitLab's documented "Comment on a merge request" hook; triaged into
a blocker pinned where the note is; answered with one verdict reply, edited in place."""
import pytest
from django.core.management import call_command

from access.models import AuditEntry
from findings.models import Evidence
from forge.gitlab import threads as gitlab_threads
from forge.models import ForgeCall
from forge.threads.models import ReviewThread, ThreadSettings, ThreadSync
from forge.threads.triage import review_thread_triage
from tests.forge.gitlab_world import IID, PROJECT_ID, SLUG, deliver_hook, example
from tests.forge.scenario import verify
from tests.forge.threads_scenario import inbox, sync
from tests.personas import member_of, site_client, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer(merge_request):
    return member_of(merge_request.repository, user_with_role("no_role", username="rita"), "reviewer")


def discussion_on(fake_gitlab, sha, body="Tolerance 0 never stops", **position) -> tuple[str, int]:
    return fake_gitlab.add_discussion(PROJECT_ID, IID, body, head_sha=sha,
                                      **({"new_path": "src/loader.py", "new_line": 10} | position))


def test_a_discussion_on_a_new_line_is_one_thread_in_the_inbox_read_once_and_edits_follow(
    merge_request, gitlab_repo, fake_gitlab
):
    discussion_id, first = discussion_on(fake_gitlab, gitlab_repo.reviewed, start_line=9)
    reply = fake_gitlab.reply_in_discussion(discussion_id, "It does stop, at 1.")
    fake_gitlab.reply_in_discussion(discussion_id, "changed this line in version 2", system=True)
    fake_gitlab.add_note(PROJECT_ID, IID, "Looks good overall.")  # a comment on the whole merge request

    outcome = sync(merge_request)

    assert outcome.ok and (outcome.created, outcome.changed) == (1, 2), outcome.message
    [thread] = inbox(merge_request).values()
    assert (thread.root_comment_id, thread.node_id, thread.resolved) == (first, discussion_id, False)
    assert (thread.path, thread.side, thread.subject_type) == ("src/loader.py", "RIGHT", "line")
    assert (thread.original_commit_id, thread.original_start_line, thread.original_line) == (
        gitlab_repo.reviewed, 9, 10)
    assert thread.html_url == f"https://gitlab.example.com/{SLUG}/-/merge_requests/{IID}#note_{first}"
    assert thread.where == "src/loader.py:9–10"
    assert [(c.github_id, c.in_reply_to_id, c.author_login, c.author_id) for c in thread.comments.all()] == [
        (first, None, "reviewer", 51), (reply, first, "author", 52)]
    assert ThreadSync.objects.get(pull_request=merge_request).status == ThreadSync.Status.OK

    again = sync(merge_request)
    assert (again.created, again.changed, again.deleted) == (0, 0, 0)

    fake_gitlab.edit_note(first, "Tolerance 0 never stops, edited")
    fake_gitlab.discussions[discussion_id]["resolved"] = True
    edited = sync(merge_request)

    assert (edited.created, edited.changed) == (0, 1)
    thread = inbox(merge_request)[first]
    assert thread.first_comment.body == "Tolerance 0 never stops, edited" and thread.resolved
    assert ReviewThread.objects.of(merge_request).count() == 1


def test_discussions_are_read_page_by_page_and_an_old_line_is_the_left_side(
    merge_request, gitlab_repo, fake_gitlab, monkeypatch
):
    monkeypatch.setattr(gitlab_threads, "PER_PAGE", 1)
    _, right = discussion_on(fake_gitlab, gitlab_repo.reviewed)
    _, left = discussion_on(fake_gitlab, gitlab_repo.reviewed, new_path=None, new_line=None,
                            old_path="src/old_loader.py", old_line=4)
    _, whole = discussion_on(fake_gitlab, gitlab_repo.reviewed, new_line=None, position_type="file",
                             new_path="config.yaml")

    assert sync(merge_request).created == 3

    threads = inbox(merge_request)
    assert (threads[left].side, threads[left].path, threads[left].original_line) == ("LEFT", "src/old_loader.py", 4)
    assert (threads[whole].subject_type, threads[whole].path, threads[whole].original_line) == (
        "file", "config.yaml", None)
    assert len(fake_gitlab.calls("GET", r"/discussions$")) == 3  # one a page, the last without X-Next-Page


def test_the_inbox_page_of_a_merge_request_speaks_of_gitlab(merge_request, gitlab_repo, fake_gitlab, reviewer):
    _, first = discussion_on(fake_gitlab, gitlab_repo.reviewed)
    sync(merge_request)

    page = site_client(reviewer).get(f"/{SLUG}/pull/{IID}/threads/").content.decode()

    assert "The merge request&#x27;s review threads on GitLab" in page or \
        "The merge request's review threads on GitLab" in page
    assert f'href="https://gitlab.example.com/{SLUG}/-/merge_requests/{IID}#note_{first}"' in page
    assert "On GitLab" in page and "GitHub" not in page.split("<main", 1)[-1]


def test_the_command_reads_a_nested_group_project_s_threads(merge_request, gitlab_repo, fake_gitlab, capsys):
    discussion_on(fake_gitlab, gitlab_repo.reviewed)

    call_command("sync_review_threads", SLUG, str(IID))

    assert "1 new threads" in capsys.readouterr().out
    assert ReviewThread.objects.of(merge_request).count() == 1


def test_gitlab_answering_404_changes_nothing_and_the_inbox_says_why(merge_request, gitlab_repo, fake_gitlab):
    discussion_on(fake_gitlab, gitlab_repo.reviewed)
    fake_gitlab.fail("GET", r"/discussions$", 404, {"message": "404 Project Not Found"})

    outcome = sync(merge_request)

    assert not outcome.ok and outcome.retry_in is None
    assert "GitLab answered 404 (404 Project Not Found): the merge request or the repository" in outcome.message
    sync_row = ThreadSync.objects.get(pull_request=merge_request)
    assert (sync_row.status, sync_row.response_status) == (ThreadSync.Status.FAILED, 404)
    assert not ReviewThread.objects.of(merge_request).exists()


def test_gitlab_s_comment_hook_reads_the_threads_again_and_other_comments_are_ignored(
    client, merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    _, first = discussion_on(fake_gitlab, gitlab_repo.reviewed)
    payload = example("note_merge_request")

    with django_capture_on_commit_callbacks(execute=True):
        response = deliver_hook(client, payload, event="Note Hook", event_uuid="note-1")
    with django_capture_on_commit_callbacks(execute=True):
        again = deliver_hook(client, payload, event="Note Hook", event_uuid="note-1")

    assert response.status_code == 200, response.content
    assert f"Reading the review threads of {SLUG}!{IID} again." in response.json()["detail"]
    assert again.json()["duplicate"] is True
    assert list(inbox(merge_request)) == [first]
    assert len(fake_gitlab.calls("GET", r"/discussions$")) == 1

    issue_note = example("note_merge_request")
    issue_note["object_attributes"]["noteable_type"] = "Issue"
    del issue_note["merge_request"]
    ignored = deliver_hook(client, issue_note, event="Note Hook")
    assert "is on Issue, not on a merge request" in ignored.json()["detail"]

    broken = example("note_merge_request")
    del broken["merge_request"]["iid"]
    assert deliver_hook(client, broken, event="Note Hook").status_code == 400


def test_a_thread_is_triaged_into_a_blocker_with_a_snippet_at_the_position_s_head_and_line(
    merge_request, gitlab_repo, fake_gitlab, reviewer
):
    _, first = discussion_on(fake_gitlab, gitlab_repo.reviewed, body="**Tolerance 0** never stops", start_line=9)
    sync(merge_request)

    thread = review_thread_triage(thread=inbox(merge_request)[first], actor=reviewer, outcome="blocker")

    finding = thread.finding
    assert thread.state == ReviewThread.State.FINDING and thread.problem == ""
    assert (finding.kind, finding.title) == ("blocker", "Tolerance 0 never stops")
    [evidence] = finding.evidence.all()
    assert (evidence.kind, evidence.path, evidence.start_line, evidence.end_line, evidence.commit.sha) == (
        Evidence.Kind.SNIPPET, "src/loader.py", 9, 10, gitlab_repo.reviewed)
    assert AuditEntry.objects.filter(action="review_thread.triage", actor=reviewer).exists()


def test_the_verdict_is_one_reply_in_the_discussion_edited_in_place_and_a_fix_resolves_it(
    merge_request, gitlab_repo, fake_gitlab, reviewer, django_capture_on_commit_callbacks
):
    ThreadSettings.objects.create(repository=merge_request.repository, publish_verdicts=True,
                                  resolve_when_verified=True)
    discussion_id, first = discussion_on(fake_gitlab, gitlab_repo.reviewed)
    sync(merge_request)
    review_thread_triage(thread=inbox(merge_request)[first], actor=reviewer, outcome="blocker")

    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    def recheck_notes():
        return [note for note in fake_gitlab.discussion_notes(discussion_id) if note["author"][1] == "recheck-bot"]

    [reply] = recheck_notes()
    assert f"Still present at {gitlab_repo.reviewed[:8]}, now at src/loader.py:10" in reply["body"]
    assert inbox(merge_request)[first].reply_comment_id == reply["id"]

    gitlab_repo.write("src/loader.py", "def load():\n    return []\n")
    fixed = gitlab_repo.commit("loader rewritten")
    verify(merge_request, fixed, django_capture_on_commit_callbacks)

    [reply] = recheck_notes()  # edited in place, not a second note
    assert f"Verified fixed at {fixed[:8]}" in reply["body"]
    assert fake_gitlab.calls("PUT", rf"/discussions/{discussion_id}/notes/{reply['id']}$")
    assert fake_gitlab.discussions[discussion_id]["resolved"] is True
    assert inbox(merge_request)[first].resolved
    assert not ForgeCall.objects.filter(kind__in=ForgeCall.THREAD_KINDS).exclude(
        status=ForgeCall.Status.SENT).exists()
    assert not ForgeCall.objects.filter(kind__in=ForgeCall.THREAD_KINDS).exclude(forge="gitlab").exists()


def test_a_recheck_command_by_a_reviewer_signed_in_with_gitlab_triages_the_thread(
    merge_request, gitlab_repo, fake_gitlab, reviewer
):
    from allauth.socialaccount.models import SocialAccount

    # The same numeric id on GitHub is someone else: only the GitLab sign-in is the note's author.
    SocialAccount.objects.create(user=reviewer, provider="gitlab", uid="51", extra_data={"username": "reviewer"})
    discussion_id, first = discussion_on(fake_gitlab, gitlab_repo.reviewed)
    command = fake_gitlab.reply_in_discussion(discussion_id, "/recheck blocker", author=(51, "reviewer"))

    outcome = sync(merge_request)

    assert outcome.commands == [f"Triaged thread {first} as a blocker for rita."]
    assert inbox(merge_request)[first].state == ReviewThread.State.FINDING
    assert ReviewThread.objects.of(merge_request).get().comments.get(github_id=command).command_handled


def test_a_reply_gitlab_refuses_for_the_token_s_scope_is_kept_failed_with_what_to_do(
    merge_request, gitlab_repo, fake_gitlab, reviewer, settings, django_capture_on_commit_callbacks
):
    ThreadSettings.objects.create(repository=merge_request.repository, publish_verdicts=True)
    discussion_id, first = discussion_on(fake_gitlab, gitlab_repo.reviewed)
    sync(merge_request)
    review_thread_triage(thread=inbox(merge_request)[first], actor=reviewer, outcome="blocker")
    settings.RECHECK_GITLAB_TOKEN = fake_gitlab.read_only_token

    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    call = ForgeCall.objects.get(kind=ForgeCall.Kind.THREAD_REPLY)
    assert (call.status, call.response_status) == (ForgeCall.Status.FAILED, 403)
    assert "lacks the api scope needed to reply in the merge request's review threads" in call.hint
    assert "Still present" in call.body["body"]  # kept, to be resent
    assert fake_gitlab.discussion_notes(discussion_id)[1:] == []
    assert inbox(merge_request)[first].reply_comment_id is None
