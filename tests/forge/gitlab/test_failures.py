"""GitLab refusing or failing Recheck's calls: a token without the api scope, a token GitLab does
not know, a project it does not show (moved, renamed, or out of the token's reach), a rate limit
and errors. A call that can succeed later is sent again after its backoff and arrives once; one no
retry can change is kept, failed, with GitLab's own message and what to fix."""
import pytest

from forge.models import ForgeCall
from tests.forge.gitlab_world import (
    IID,
    PROJECT_ID,
)
from tests.forge.scenario import verify

pytestmark = pytest.mark.django_db


def the_call(kind=ForgeCall.Kind.COMMIT_STATUS) -> ForgeCall:
    return ForgeCall.objects.filter(kind=kind).order_by("-id").first()


def test_a_rate_limit_holds_the_call_back_and_it_arrives_once(merge_request, gitlab_repo, fake_gitlab,
                                                              django_capture_on_commit_callbacks):
    fake_gitlab.fail("POST", r"/statuses/", 429, {"message": "Retry later"}, headers={"Retry-After": "0.3"})
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    states = [status["status"] for status in fake_gitlab.statuses if status["sha"] == gitlab_repo.reviewed]
    assert states == ["running", "failed"]
    first = ForgeCall.objects.filter(kind=ForgeCall.Kind.COMMIT_STATUS).order_by("id").first()
    assert first.attempts == 2 and first.status == ForgeCall.Status.SENT
    assert all(call.forge == "gitlab" for call in ForgeCall.objects.all())


def test_a_server_error_is_retried_with_backoff(merge_request, gitlab_repo, fake_gitlab,
                                                django_capture_on_commit_callbacks):
    fake_gitlab.fail("POST", rf"/merge_requests/{IID}/notes$", 502, {"message": "502 Bad Gateway"}, times=2)
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    note = the_call(ForgeCall.Kind.COMMENT)
    assert note.status == ForgeCall.Status.SENT and note.attempts == 3
    assert len(fake_gitlab.mr_notes(PROJECT_ID, IID)) == 1


def test_a_token_without_the_api_scope_fails_the_call_saying_so(merge_request, gitlab_repo, fake_gitlab, settings,
                                                                django_capture_on_commit_callbacks):
    settings.RECHECK_GITLAB_TOKEN = fake_gitlab.read_only_token
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    call = the_call()
    assert call.status == ForgeCall.Status.FAILED and call.response_status == 403 and call.attempts == 1
    assert "insufficient_scope" in call.response_message
    assert "lacks the api scope" in call.hint
    assert fake_gitlab.statuses == []


def test_a_token_gitlab_does_not_know_fails_the_call_saying_so(merge_request, gitlab_repo, settings,
                                                               django_capture_on_commit_callbacks, fake_gitlab):
    settings.RECHECK_GITLAB_TOKEN = "glpat-revoked"
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    call = the_call()
    assert call.status == ForgeCall.Status.FAILED and call.response_status == 401
    assert "expired or was revoked" in call.hint


def test_a_project_gitlab_does_not_show_fails_the_call_saying_it_may_have_moved(
    merge_request, gitlab_repo, fake_gitlab, django_capture_on_commit_callbacks
):
    # Renamed on GitLab before any of its hooks told Recheck its id: its old path is not found.
    fake_gitlab.move_project(PROJECT_ID, "platform/renamed/recheck-demo")
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    call = the_call()
    assert call.status == ForgeCall.Status.FAILED and call.response_status == 404
    assert "404 Project Not Found" in call.response_message
    assert "moved or renamed" in call.hint


def test_no_gitlab_token_records_a_failed_call_that_says_what_to_set(merge_request, gitlab_repo, settings,
                                                                     django_capture_on_commit_callbacks, fake_gitlab):
    settings.RECHECK_GITLAB_TOKEN = ""
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    call = the_call()
    assert call.status == ForgeCall.Status.FAILED and "RECHECK_GITLAB_TOKEN" in call.hint
    assert fake_gitlab.requests == []


def test_a_status_gitlab_already_has_counts_as_sent(merge_request, gitlab_repo, fake_gitlab,
                                                    django_capture_on_commit_callbacks):
    # An earlier attempt landed and its answer was lost: GitLab refuses the same state again.
    fake_gitlab.statuses.append({"project_id": PROJECT_ID, "sha": gitlab_repo.reviewed, "name": "recheck",
                                 "status": "running", "id": 1})
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    running = ForgeCall.objects.filter(kind=ForgeCall.Kind.COMMIT_STATUS, state="running").get()
    assert running.status == ForgeCall.Status.SENT and running.response_status == 400
    assert [status["status"] for status in fake_gitlab.statuses] == ["running", "failed"]


def test_a_refused_call_is_shown_on_the_merge_requests_page_in_gitlabs_words(
    merge_request, gitlab_repo, fake_gitlab, settings, django_capture_on_commit_callbacks
):
    from tests.personas import site_client, superuser

    settings.RECHECK_GITLAB_TOKEN = fake_gitlab.read_only_token
    verify(merge_request, gitlab_repo.reviewed, django_capture_on_commit_callbacks)

    page = site_client(superuser()).get(merge_request.get_absolute_url()).content.decode()
    assert "Reporting to GitLab failed" in page and "GitLab answered 403" in page
    assert "lacks the api scope" in page
