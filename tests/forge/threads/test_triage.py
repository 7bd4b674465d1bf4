"""Triage: a Reviewer makes a thread a finding (evidence from where the comment is), attaches it
to a finding, or says it is not a finding; with `/recheck blocker` on GitHub too, where anyone
without the role gets a polite answer through the outbox."""
import pytest

from access.models import AuditEntry
from access.permissions import ActionRefused
from findings.models import Evidence, Finding
from forge.models import ForgeCall
from forge.threads.models import ReviewThread
from forge.threads.triage import TriageError, review_thread_attach, review_thread_triage
from tests.forge.threads_scenario import comment_on, inbox, signed_in_with_github, sync
from tests.personas import member_of, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer(pull_request):
    return member_of(pull_request.repository, user_with_role("no_role", username="rita"), "reviewer")


def thread_of(fake_github, pull_request, repo, **fields) -> ReviewThread:
    first = comment_on(fake_github, pull_request, repo.reviewed, **{"body": "Tolerance 0 never stops", **fields})
    sync(pull_request)
    return inbox(pull_request)[first]


def test_a_right_side_comment_becomes_a_blocker_with_a_snippet_at_its_original_commit_and_lines(
    pull_request, repo, fake_github, reviewer
):
    thread = thread_of(fake_github, pull_request, repo, body="**Tolerance 0** never stops\n\nIt loops.",
                       start_line=9, line=10)

    thread = review_thread_triage(thread=thread, actor=reviewer, outcome="blocker")

    finding = thread.finding
    assert thread.state == ReviewThread.State.FINDING and thread.problem == ""
    assert (finding.kind, finding.title, finding.number) == ("blocker", "Tolerance 0 never stops", 4)
    assert finding.body == "**Tolerance 0** never stops\n\nIt loops."
    assert finding.review_comment_url == thread.html_url
    [evidence] = finding.evidence.all()
    assert (evidence.kind, evidence.path, evidence.start_line, evidence.end_line, evidence.commit.sha) == (
        "snippet", "src/loader.py", 9, 10, repo.reviewed)
    assert "A snippet of src/loader.py:9–10" in thread.placement
    assert AuditEntry.objects.filter(action="review_thread.triage", actor=reviewer).exists()
    assert AuditEntry.objects.filter(action="finding.create", actor=reviewer).exists()


def test_a_left_side_comment_is_a_note_and_the_entry_says_so(pull_request, repo, fake_github, reviewer):
    thread = thread_of(fake_github, pull_request, repo, side="LEFT")

    thread = review_thread_triage(thread=thread, actor=reviewer, outcome="cleanup")

    [evidence] = thread.finding.evidence.all()
    assert evidence.kind == Evidence.Kind.NOTE and "src/loader.py:10" in evidence.text
    assert "old side of the diff (LEFT)" in thread.placement


def test_a_file_comment_is_a_path_item(pull_request, repo, fake_github, reviewer):
    thread = thread_of(fake_github, pull_request, repo, path="config.yaml", line=None, subject_type="file")

    thread = review_thread_triage(thread=thread, actor=reviewer, outcome="blocker")

    [evidence] = thread.finding.evidence.all()
    assert (evidence.kind, evidence.path, evidence.expect) == ("path", "config.yaml", "exists")


@pytest.mark.parametrize(("fields", "problem"), [
    ({"line": 40}, ReviewThread.Problem.LINE_BEYOND_FILE),
    ({"path": "src/missing.py"}, ReviewThread.Problem.FILE_NOT_IN_MIRROR),
])
def test_lines_the_mirror_cannot_show_are_a_note_with_a_clear_problem(pull_request, repo, fake_github, reviewer,
                                                                      fields, problem):
    thread = thread_of(fake_github, pull_request, repo, **fields)

    thread = review_thread_triage(thread=thread, actor=reviewer, outcome="blocker")

    assert thread.problem == problem and thread.problem_detail
    assert thread.finding.evidence.get().kind == Evidence.Kind.NOTE


def test_a_commit_the_mirror_does_not_have_is_a_note_with_a_clear_problem(pull_request, repo, fake_github, reviewer):
    first = comment_on(fake_github, pull_request, "f" * 40, body="On a commit nobody pushed")
    sync(pull_request)

    thread = review_thread_triage(thread=inbox(pull_request)[first], actor=reviewer, outcome="blocker")

    assert thread.problem == ReviewThread.Problem.COMMIT_NOT_IN_MIRROR
    assert thread.finding.evidence.get().kind == Evidence.Kind.NOTE


def test_not_a_finding_attach_and_twice(pull_request, repo, fake_github, reviewer):
    one = thread_of(fake_github, pull_request, repo)
    two = thread_of(fake_github, pull_request, repo, body="Same again")
    existing = Finding.objects.get(pull_request=pull_request, number=1)

    assert review_thread_triage(thread=one, actor=reviewer, outcome="not_a_finding").state == "not_a_finding"
    attached = review_thread_attach(thread=two, finding=existing, actor=reviewer)

    assert (attached.state, attached.finding) == (ReviewThread.State.ATTACHED, existing)
    with pytest.raises(TriageError, match="already"):
        review_thread_triage(thread=one, actor=reviewer, outcome="blocker")
    assert Finding.objects.filter(pull_request=pull_request).count() == 3


def test_someone_without_the_reviewer_role_is_refused_and_it_is_recorded(pull_request, repo, fake_github):
    reader = member_of(pull_request.repository, user_with_role("no_role", username="rex"), "reader")
    thread = thread_of(fake_github, pull_request, repo)

    with pytest.raises(ActionRefused, match="Reviewer"):
        review_thread_triage(thread=thread, actor=reader, outcome="blocker")

    assert inbox(pull_request)[thread.root_comment_id].state == ReviewThread.State.NEW
    assert AuditEntry.objects.filter(action="review_thread.triage", outcome="refused").exists()


def test_a_recheck_command_by_a_reviewer_signed_in_with_github_triages_the_thread(
    pull_request, repo, fake_github, reviewer
):
    signed_in_with_github(reviewer, 501, "alice")
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    comment_on(fake_github, pull_request, repo.reviewed, body="/recheck blocker", reply_to=first)

    outcome = sync(pull_request)
    sync(pull_request)  # read again: the command is acted on once

    thread = inbox(pull_request)[first]
    assert outcome.commands == [f"Triaged thread {first} as a blocker for rita."]
    assert (thread.state, thread.finding.kind, thread.triaged_by) == ("finding", "blocker", reviewer)
    assert thread.finding.title == "Tolerance 0 never stops"
    assert Finding.objects.filter(pull_request=pull_request).count() == 4
    assert fake_github.replies_to(first)[1:] == []


def test_a_recheck_command_by_someone_without_the_role_gets_a_polite_answer_once(pull_request, repo, fake_github):
    signed_in_with_github(member_of(pull_request.repository, user_with_role("no_role", username="rex"), "reader"),
                          502, "bob")
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops")
    comment_on(fake_github, pull_request, repo.reviewed, body="/recheck cleanup please", reply_to=first,
               user=("bob", 502))
    comment_on(fake_github, pull_request, repo.reviewed, body="/recheck blocker", reply_to=first, user=("carol", 503))

    sync(pull_request)
    sync(pull_request)

    assert inbox(pull_request)[first].state == ReviewThread.State.NEW
    answers = [reply["body"] for reply in fake_github.replies_to(first) if reply["user"]["login"] == "recheck[bot]"]
    assert len(answers) == 2
    assert "@bob does not hold the Reviewer role on acme/loader" in answers[0]
    assert "@carol has not signed in to Recheck with GitHub" in answers[1]
    assert "Thanks" in answers[0]
    assert ForgeCall.objects.filter(kind="thread_reply", status="sent").count() == 2
    # Recheck's own answers are read back as its own, never as a command or a reviewer's comment.
    assert inbox(pull_request)[first].comments.filter(by_recheck=True).count() == 2


def test_a_comment_on_a_binary_file_at_a_commit_newer_than_the_mirror_is_a_note(pull_request, repo, fake_github,
                                                                                reviewer):
    newer = repo.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary").commit("a logo")
    first = comment_on(fake_github, pull_request, newer, body="Too big", path="logo.png", line=1)
    sync(pull_request)

    thread = review_thread_triage(thread=inbox(pull_request)[first], actor=reviewer, outcome="cleanup")

    assert thread.problem == ReviewThread.Problem.BINARY_FILE  # fetched, then found binary
    assert thread.finding.evidence.get().kind == Evidence.Kind.NOTE


def test_a_long_hostile_body_becomes_the_finding_s_body_with_a_plain_title(pull_request, repo, fake_github, reviewer):
    body = "## <img src=x onerror=alert(1)> **Loops** " + "forever " * 100 + "\n\n" + "x" * 70000
    thread = thread_of(fake_github, pull_request, repo, body=body)

    finding = review_thread_triage(thread=thread, actor=reviewer, outcome="blocker").finding

    assert finding.body == body
    assert len(finding.title) == 300 and finding.title.startswith("<img src=x onerror=alert(1)> Loops forever")
