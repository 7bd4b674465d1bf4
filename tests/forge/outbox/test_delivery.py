"""Delivering calls to GitHub: what is retried (5xx, timeouts, rate limits, as long as GitHub asks),
what is reported with GitHub's message and what to fix (403, 404, 422), installation tokens, and
that no failure touches the verification."""
import io
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from findings.models import VerificationRun
from forge.github import client as github
from forge.outbox.failures import Failure, retry_delay
from forge.models import ForgeCall
from tests.forge.scenario import the_check_run, verify

pytestmark = pytest.mark.django_db


def completed_call() -> ForgeCall:
    return ForgeCall.objects.get(state__startswith="completed")


def test_a_403_without_rate_limit_is_reported_with_githubs_message_and_the_missing_permission(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.fail("POST", r"/check-runs$", 403, "Resource not accessible by integration", times=5)

    run = verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    call = ForgeCall.objects.get(state="in_progress")
    assert (call.status, call.attempts, call.response_status) == ("failed", 1, 403)
    assert call.response_message == "Resource not accessible by integration"
    assert "The App lacks checks: write on acme/loader" in call.hint
    # The completed report tries again (a person may have granted the permission meanwhile).
    assert completed_call().status == "failed"
    run.refresh_from_db()
    assert run.status == VerificationRun.Status.DONE


def test_a_404_says_to_install_the_app_on_the_repository(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.fail("POST", r"/check-runs$", 404, "Not Found", times=5)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    call = completed_call()
    assert (call.status, call.attempts, call.response_status) == ("failed", 1, 404)
    assert "install the App on acme/loader" in call.hint


def test_a_422_is_reported_with_the_fields_github_refused(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.fail("POST", r"/check-runs$", 422, "Validation Failed", times=5,
                     errors=[{"resource": "CheckRun", "field": "head_sha", "code": "invalid",
                              "message": "No commit found for SHA"}])

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    call = completed_call()
    assert (call.status, call.attempts) == ("failed", 1)
    assert call.response_message == "Validation Failed (No commit found for SHA)"
    assert "the commit must be in the repository on GitHub" in call.hint


def test_a_secondary_rate_limit_is_retried_after_the_time_github_asks(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.fail("POST", r"/check-runs$", 403,
                     "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
                     headers={"Retry-After": "1"})

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    first = ForgeCall.objects.get(state="in_progress")
    assert (first.status, first.attempts) == ("sent", 2)
    [(refused_at, refused), (created_at, created)] = fake_github.answers("POST", r"/check-runs$")
    assert (refused, created) == (403, 201)
    assert created_at - refused_at >= 1
    # The completed report, due meanwhile, waited too: the limit holds for the installation.
    assert fake_github.answers("PATCH", r"/check-runs/")[0][0] - refused_at >= 1
    assert the_check_run(fake_github)["conclusion"] == "failure"


def test_a_call_that_used_up_the_rate_limit_holds_back_the_next_until_the_reset(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.use_up_rate_limit("POST", r"/check-runs$", reset_in=2)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    [(created_at, _)] = fake_github.answers("POST", r"/check-runs$")
    next_request = min(at for at, method, path, _ in fake_github.answered if at > created_at)
    # The reset is a whole second on GitHub's clock: at least one second later, whatever the rounding.
    assert next_request - created_at >= 1
    assert the_check_run(fake_github)["conclusion"] == "failure"


def test_a_primary_rate_limit_waits_until_x_ratelimit_reset(fake_github):
    reset = int(time.time()) + 120
    fake_github.fail("GET", r"/installation$", 403, "API rate limit exceeded for installation ID 77.",
                     headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)})
    from reviews.models import Repository

    repository = Repository.objects.create(slug="acme/loader", clone_url="https://example.com/acme/loader.git")
    with pytest.raises(Failure) as raised:
        github.repository_installation_id(repository)

    failure = raised.value
    assert failure.retryable and failure.rate_limited
    assert 110 <= failure.retry_after <= 120
    assert 110 <= retry_delay(failure, 1) <= 121


def test_server_errors_are_retried_with_backoff_until_github_answers(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.fail("POST", r"/check-runs$", 502, "Server Error", times=2)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    first = ForgeCall.objects.get(state="in_progress")
    assert (first.status, first.attempts, first.response_status) == ("sent", 3, 201)
    assert first.response_message == ""
    assert the_check_run(fake_github)["conclusion"] == "failure"


def test_a_server_error_with_retry_after_waits_that_long(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    fake_github.fail("POST", r"/check-runs$", 503, "Service Unavailable", headers={"Retry-After": "1"})

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    [(refused_at, _), (created_at, status)] = fake_github.answers("POST", r"/check-runs$")
    assert status == 201 and created_at - refused_at >= 1


def test_it_gives_up_after_a_bounded_number_of_attempts_and_says_so(
    pull_request, repo, fake_github, settings, django_capture_on_commit_callbacks
):
    settings.RECHECK_GITHUB_MAX_ATTEMPTS = 4
    fake_github.fail("POST", r"/check-runs$", 503, "Service Unavailable", times=100)

    run = verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    first = ForgeCall.objects.get(state="in_progress")
    assert (first.status, first.attempts) == ("failed", 4)
    assert "kept failing after 4 attempts" in first.hint
    run.refresh_from_db()
    assert run.status == VerificationRun.Status.DONE


def test_backoff_grows_with_each_attempt_up_to_hours_and_is_jittered(settings):
    settings.RECHECK_GITHUB_BACKOFF_BASE_SECONDS = 30
    settings.RECHECK_GITHUB_BACKOFF_MAX_SECONDS = 6 * 3600
    failure = Failure(502, "Server Error", retryable=True)
    first = [retry_delay(failure, 1) for _ in range(20)]
    third = [retry_delay(failure, 3) for _ in range(20)]
    last = [retry_delay(failure, 11) for _ in range(20)]
    assert all(15 <= delay <= 30 for delay in first)
    assert all(60 <= delay <= 120 for delay in third)
    assert all(3 * 3600 <= delay <= 6 * 3600 for delay in last)
    assert len(set(first)) > 1


def test_a_timeout_is_retried(pull_request, repo, fake_github, settings,
                              django_capture_on_commit_callbacks, httpserver):
    settings.RECHECK_GITHUB_TIMEOUT = 1
    slow = {"left": 1}
    handle = fake_github.handle

    def slow_once(request):
        if request.path.endswith("/check-runs") and slow["left"]:
            slow["left"] -= 1
            time.sleep(1.5)
        return handle(request)

    httpserver.clear_all_handlers()
    httpserver.expect_request(__import__("re").compile(".*")).respond_with_handler(slow_once)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    first = ForgeCall.objects.get(state="in_progress")
    assert first.status == "sent" and first.attempts == 2


def test_an_installation_token_github_refuses_is_replaced_once(
    pull_request, repo, fake_github, django_capture_on_commit_callbacks
):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)
    assert len(fake_github.calls("POST", r"/access_tokens$")) == 1
    # GitHub expires or revokes the cached token before its time.
    fake_github.revoked.update(fake_github.tokens)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    assert len(fake_github.calls("POST", r"/access_tokens$")) == 2
    assert ForgeCall.objects.exclude(status="sent").count() == 0


def test_a_token_close_to_expiry_is_not_reused(pull_request, repo, fake_github,
                                               django_capture_on_commit_callbacks):
    fake_github.token_lifetime = timedelta(seconds=github.TOKEN_MARGIN_SECONDS - 60)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    # One token per request: none was cached, since each would expire within the margin.
    requests = [path for _, path, _ in fake_github.requests if "/check-runs" in path]
    assert len(fake_github.calls("POST", r"/access_tokens$")) == len(requests) == 3
    assert ForgeCall.objects.exclude(status="sent").count() == 0


def test_the_installation_is_looked_up_once_and_remembered(pull_request, repo, fake_github,
                                                           django_capture_on_commit_callbacks):
    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    pull_request.repository.refresh_from_db()
    assert pull_request.repository.github_installation_id == 77
    assert len(fake_github.calls("GET", r"/repos/acme/loader/installation$")) == 1


def test_a_duplicated_task_sends_a_call_once(pull_request, repo, fake_github):
    from forge.outbox.sending import forge_call_send
    from forge.outbox.services import verification_run_report
    from reviews.models import Commit

    commit = Commit.objects.get(repository=pull_request.repository, sha=repo.reviewed)
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit)
    [call] = verification_run_report(run=run)

    assert forge_call_send(call_id=call.pk).status == "sent"
    assert forge_call_send(call_id=call.pk) is None
    assert len(fake_github.calls("POST", r"/check-runs$")) == 1
    call.refresh_from_db()
    assert call.sent_at <= timezone.now()


def test_a_report_with_more_annotations_than_one_request_takes_fails_whole_when_github_refuses_it(
    repo, fake_github, django_capture_on_commit_callbacks
):
    from tests.findings.services.test_verification import import_review

    findings = [
        {"number": number, "kind": "cleanup", "title": f"Line {number}",
         "evidence": [{"kind": "snippet", "path": "src/loader.py", "start_line": 1, "end_line": 1}]}
        for number in range(1, 61)
    ]
    pull_request = import_review(repo, findings=findings, commits=[{"sha": repo.reviewed, "role": "reviewed"}])
    pull_request.repository.publish_checks = True
    pull_request.repository.save()
    fake_github.install("acme/loader")
    fake_github.fail("POST", r"/check-runs$", 422, "Validation Failed", times=5)

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    [report] = ForgeCall.objects.filter(state__startswith="completed")
    assert (report.status, report.response_status) == ("failed", 422)
    assert fake_github.check_runs == {}


def test_publishing_without_credentials_says_what_to_set(
    pull_request, repo, fake_github, settings, django_capture_on_commit_callbacks
):
    settings.RECHECK_GITHUB_APP_ID = ""
    settings.RECHECK_GITHUB_APP_PRIVATE_KEY = ""

    run = verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    call = ForgeCall.objects.failed().latest("id")
    assert call.response_message == "No GitHub credentials are configured."
    assert "RECHECK_GITHUB_APP_ID" in call.hint and "RECHECK_GITHUB_TOKEN" in call.hint
    assert fake_github.requests == []
    run.refresh_from_db()
    assert run.status == VerificationRun.Status.DONE


def test_a_reinstalled_app_is_found_again(pull_request, repo, fake_github, django_capture_on_commit_callbacks):
    repository = pull_request.repository
    repository.github_installation_id = 12  # an installation that was removed since
    repository.save()

    verify(pull_request, repo.reviewed, django_capture_on_commit_callbacks)

    repository.refresh_from_db()
    assert repository.github_installation_id == 77
    assert ForgeCall.objects.exclude(status="sent").count() == 0


def test_a_call_is_not_sent_before_its_due_time(pull_request, repo, fake_github):
    from forge.outbox.sending import forge_call_send, forge_calls_send_due
    from forge.outbox.services import verification_run_report
    from reviews.models import Commit

    commit = Commit.objects.get(repository=pull_request.repository, sha=repo.reviewed)
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit)
    [call] = verification_run_report(run=run)
    ForgeCall.objects.filter(pk=call.pk).update(due_at=timezone.now() + timedelta(minutes=5))

    assert forge_call_send(call_id=call.pk) is None
    assert forge_calls_send_due() == 0
    assert fake_github.requests == []
    assert forge_calls_send_due(now=timezone.now() + timedelta(minutes=6)) == 1
    call.refresh_from_db()
    assert call.status == "sent"


def test_a_call_whose_sender_died_is_sent_once_its_lease_runs_out(pull_request, repo, fake_github):
    from forge.outbox.sending import forge_calls_send_due
    from forge.outbox.services import verification_run_report
    from reviews.models import Commit

    commit = Commit.objects.get(repository=pull_request.repository, sha=repo.reviewed)
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit)
    [call] = verification_run_report(run=run)
    # Claimed by a sender that stopped before it finished.
    leased_until = timezone.now() + timedelta(minutes=1)
    ForgeCall.objects.filter(pk=call.pk).update(status="sending", attempts=1, due_at=leased_until)

    assert forge_calls_send_due() == 0
    assert forge_calls_send_due(now=leased_until + timedelta(seconds=1)) == 1
    call.refresh_from_db()
    assert (call.status, call.attempts) == ("sent", 2)
    assert len(fake_github.runs_of(repo.reviewed)) == 1


@pytest.mark.parametrize("command", ["send_forge_calls", "send_github_calls"])
def test_the_sender_command_and_its_alias_send_what_is_due(pull_request, repo, fake_github,
                                                           django_capture_on_commit_callbacks, command):
    from django.core.management import call_command

    from findings.services.runs import verification_run_request

    with django_capture_on_commit_callbacks(execute=True):
        verification_run_request(pull_request=pull_request, commit_sha=repo.reviewed)
    # Tasks ran in-process, and nothing was sent by them.
    assert fake_github.requests == [] and ForgeCall.objects.filter(status="pending").count() == 2

    out, err = io.StringIO(), io.StringIO()
    call_command(command, "--once", stdout=out, stderr=err)

    assert the_check_run(fake_github)["conclusion"] == "failure"
    assert not ForgeCall.objects.exclude(status="sent").exists()
    assert "2 call(s) to the forges attempted." in out.getvalue()
    alias_said = "send_github_calls is an alias of send_forge_calls" in err.getvalue()
    assert alias_said == (command == "send_github_calls")


def test_sending_a_due_call_takes_a_bounded_number_of_queries(
    pull_request, repo, fake_github, django_assert_max_num_queries
):
    from forge.outbox.sending import forge_calls_send_due
    from forge.outbox.services import verification_run_report
    from reviews.models import Commit

    commit = Commit.objects.get(repository=pull_request.repository, sha=repo.reviewed)
    run = VerificationRun.objects.create(pull_request=pull_request, commit=commit)
    verification_run_report(run=run)
    pull_request.repository.github_installation_id = 77
    pull_request.repository.save()

    with django_assert_max_num_queries(12):
        assert forge_calls_send_due() == 1
