"""Verdicts out: after each verification of the head, a thread whose finding changed gets one
reply from Recheck, edited in place after, naming where the code is now (across a rebase and a
rename) or that it is verified fixed; the thread is resolved when the setting says so, and when a
maintainer marks the finding fixed; unresolved on a regression. Through the outbox, so GitHub's
rate limit and errors hold a reply back without losing or doubling it."""
import pytest

from findings.models import Finding
from findings.services.resolution import finding_resolve
from findings.services.runs import verification_run_request
from forge.models import ForgeCall
from forge.threads.calls import PACE
from forge.threads.models import ReviewThread, ThreadSettings
from forge.threads.triage import review_thread_attach, review_thread_triage
from reviews.models import Commit
from tests.findings.services.test_verification import LOADER
from tests.forge.scenario import deliver, verify
from tests.forge.threads_scenario import comment_on, inbox, sync
from tests.personas import member_of, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer(pull_request):
    return member_of(pull_request.repository, user_with_role("no_role", username="rita"), "reviewer")


@pytest.fixture
def thread(pull_request, repo, fake_github, reviewer):
    ThreadSettings.objects.create(repository=pull_request.repository, publish_verdicts=True)
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Tolerance 0 never stops", line=10)
    sync(pull_request)
    return review_thread_triage(thread=inbox(pull_request)[first], actor=reviewer, outcome="blocker")


def recheck_replies(fake_github, thread) -> list[dict]:
    return [c for c in fake_github.replies_to(thread.root_comment_id) if c["user"]["login"] == "recheck[bot]"]


def rebased_and_renamed(repo) -> str:
    """The branch rebased onto a rewritten base: a new history, the file renamed, its code lower."""
    repo.git("checkout", "--quiet", "--orphan", "rebased")
    repo.write("src/load.py", "import os\nimport sys\n\n" + LOADER).delete("src/loader.py")
    return repo.write("config.yaml", "debug: true\n").commit("rebased onto the new base, loader renamed")


def test_a_thread_on_lines_that_move_across_a_rebase_and_a_rename_is_answered_where_they_are_now(
    pull_request, repo, fake_github, thread, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    [reply] = recheck_replies(fake_github, thread)
    assert f"Still present at {repo.reviewed[:8]}, now at src/loader.py:10" in reply["body"]

    head = rebased_and_renamed(repo)
    verify(pull_request, head, django_capture_on_commit_callbacks)

    [reply] = recheck_replies(fake_github, thread)  # edited in place, not a second reply
    assert f"Still present at {head[:8]}, now at src/load.py:13" in reply["body"]
    assert "[Blocker 4 on Recheck](https://recheck.example.com/acme/loader/pull/7/findings/4/)" in reply["body"]
    thread.refresh_from_db()
    assert thread.reply_comment_id == reply["id"] and thread.finding.number == 4
    assert len(fake_github.calls("PATCH", rf"/pulls/comments/{reply['id']}$")) == 1

    verify(pull_request, head, django_capture_on_commit_callbacks)  # the same again: nothing to say
    assert len(fake_github.calls("PATCH", rf"/pulls/comments/{reply['id']}$")) == 1


def test_a_fixed_thread_is_verified_fixed_and_resolved_when_the_setting_says_so(
    pull_request, repo, fake_github, thread, django_capture_on_commit_callbacks
):
    ThreadSettings.objects.filter(repository=pull_request.repository).update(resolve_when_verified=True)
    fixed = repo.write("src/loader.py", LOADER.replace("    tolerance = 0\n", "    tolerance = 1e-6\n")).commit("fix")

    verify(pull_request, fixed, django_capture_on_commit_callbacks)

    [reply] = recheck_replies(fake_github, thread)
    assert f"Verified fixed at {fixed[:8]}" in reply["body"]
    assert fake_github.thread_resolved(thread.root_comment_id)
    assert ReviewThread.objects.get(pk=thread.pk).resolved


def test_without_the_setting_a_maintainer_marking_it_fixed_resolves_it_and_a_regression_unresolves_it(
    pull_request, repo, fake_github, thread, django_capture_on_commit_callbacks
):
    fixed = repo.write("src/loader.py", LOADER.replace("    tolerance = 0\n", "    tolerance = 1e-6\n")).commit("fix")
    verify(pull_request, fixed, django_capture_on_commit_callbacks)
    assert not fake_github.thread_resolved(thread.root_comment_id)

    maintainer = member_of(pull_request.repository, user_with_role("no_role", username="max"), "maintainer")
    with django_capture_on_commit_callbacks(execute=True):
        finding_resolve(finding=Finding.objects.get(pk=thread.finding_id), status=Finding.Status.FIXED,
                        actor=maintainer, source="site",
                        commit=Commit.objects.get(repository=pull_request.repository, sha=fixed), note="")
    deliver()
    assert fake_github.thread_resolved(thread.root_comment_id)

    regressed = repo.write("src/loader.py", LOADER).commit("revert the fix")
    verify(pull_request, regressed, django_capture_on_commit_callbacks)

    assert not fake_github.thread_resolved(thread.root_comment_id)
    [reply] = recheck_replies(fake_github, thread)
    assert f"Still present at {regressed[:8]}" in reply["body"]


def test_nothing_is_said_on_threads_of_a_repository_that_does_not_publish_to_them(
    pull_request, repo, fake_github, thread, django_capture_on_commit_callbacks
):
    ThreadSettings.objects.filter(repository=pull_request.repository).update(publish_verdicts=False)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    assert recheck_replies(fake_github, thread) == []
    assert not ForgeCall.objects.filter(kind__in=ForgeCall.THREAD_KINDS).exists()


@pytest.mark.parametrize(("status", "headers"), [(429, {"retry-after": "0"}), (502, {})])
def test_a_rate_limit_or_an_error_holds_the_reply_back_and_it_is_sent_once(
    pull_request, repo, fake_github, thread, django_capture_on_commit_callbacks, status, headers
):
    fake_github.fail("POST", r"/replies$", status, "API rate limit exceeded" if status == 429 else "Bad Gateway",
                     headers=headers)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    assert len(recheck_replies(fake_github, thread)) == 1
    call = ForgeCall.objects.get(kind=ForgeCall.Kind.THREAD_REPLY)
    assert (call.status, call.attempts) == ("sent", 2)


def test_a_reply_deleted_on_github_is_made_again_and_a_thread_gone_from_github_is_a_failed_call(
    pull_request, repo, fake_github, thread, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    [reply] = recheck_replies(fake_github, thread)
    fake_github.delete_review_comment(reply["id"])
    head = rebased_and_renamed(repo)

    verify(pull_request, head, django_capture_on_commit_callbacks)

    [again] = recheck_replies(fake_github, thread)
    assert again["id"] != reply["id"] and "src/load.py:13" in again["body"]

    fake_github.delete_review_comment(again["id"])
    fake_github.delete_review_comment(thread.root_comment_id)
    fixed = repo.write("src/load.py", "gone\n").commit("fix")
    verify(pull_request, fixed, django_capture_on_commit_callbacks)
    failed = ForgeCall.objects.filter(kind=ForgeCall.Kind.THREAD_REPLY).latest("id")
    assert (failed.status, failed.response_status) == ("failed", 404)
    assert "The review thread is gone on GitHub" in failed.hint


def test_the_replies_of_many_threads_are_spaced_within_github_s_secondary_rate_limit(
    pull_request, repo, fake_github, thread, reviewer, django_capture_on_commit_callbacks
):
    for line in (3, 5):
        first = comment_on(fake_github, pull_request, repo.reviewed, body=f"Line {line}", line=line)
        sync(pull_request)
        review_thread_triage(thread=inbox(pull_request)[first], actor=reviewer, outcome="cleanup")

    with django_capture_on_commit_callbacks(execute=True):
        verification_run_request(pull_request=pull_request, commit_sha=repo.reviewed)

    # Each is due one pace after the one before, whenever a sender comes for them.
    due = list(ForgeCall.objects.filter(kind=ForgeCall.Kind.THREAD_REPLY).order_by("id").values_list("due_at",
                                                                                                       flat=True))
    assert [later - earlier >= PACE for earlier, later in zip(due, due[1:], strict=False)] == [True, True]
    deliver()
    assert len([status for _, status in fake_github.answers("POST", r"/replies$") if status == 201]) == 3


def test_a_thread_attached_to_a_finding_that_is_partly_fixed_says_how_much_is_gone(
    pull_request, repo, fake_github, reviewer, django_capture_on_commit_callbacks
):
    ThreadSettings.objects.create(repository=pull_request.repository, publish_verdicts=True)
    first = comment_on(fake_github, pull_request, repo.reviewed, body="Same as the tolerance one", line=10)
    sync(pull_request)
    thread = review_thread_attach(thread=inbox(pull_request)[first], actor=reviewer,
                                  finding=Finding.objects.get(pull_request=pull_request, number=1))
    partly = repo.write("src/loader.py", LOADER.replace("    tolerance = 0\n", "    tolerance = 0.5\n")).commit("half")

    verify(pull_request, partly, django_capture_on_commit_callbacks)

    [reply] = recheck_replies(fake_github, thread)
    assert f"Partly fixed: 1 of 2 items gone at {partly[:8]}" in reply["body"]
    assert "[Blocker 1 on Recheck]" in reply["body"]


def test_a_reply_github_made_but_answered_too_late_is_not_made_twice(
    pull_request, repo, fake_github, thread, settings, django_capture_on_commit_callbacks
):
    settings.RECHECK_GITHUB_TIMEOUT = 0.3
    fake_github.answer_slowly("POST", r"/replies$", 0.8)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    [reply] = recheck_replies(fake_github, thread)
    call = ForgeCall.objects.get(kind=ForgeCall.Kind.THREAD_REPLY)
    assert (call.status, call.github_id) == ("sent", reply["id"]) and call.attempts >= 2
    assert len(fake_github.calls("POST", r"/replies$")) == 1
    assert ReviewThread.objects.get(pk=thread.pk).reply_comment_id == reply["id"]
