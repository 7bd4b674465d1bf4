"""GitHub failing in every way a network can, in both task modes: the embedded default (no
broker, tasks in-process, the process's sender `send_forge_calls` sends) and a real Celery worker.
Each time the report arrives once GitHub is back, no sooner than the call's due time, with one
check run on the head; and the webhook records and answers without calling GitHub."""
import socket
import threading
import time

import pytest

from findings.services.runs import verification_run_request
from forge.models import ForgeCall
from forge.outbox.sending import forge_calls_send_forever
from tests.api.test_webhooks import deliver as deliver_hook
from tests.api.test_webhooks import pull_request_event
from tests.findings.test_tasks import celery_worker  # noqa: F401  (the worker thread, as a fixture)

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "webhook-secret-for-tests"
SECONDARY_LIMIT = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
BACKOFF_BASE = 0.2


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/"  # nothing listens there once the probe is closed


@pytest.fixture(params=["embedded", "worker"])
def mode(request, fake_github, settings):
    """How due calls are sent: by the process's sender loop, or by a real Celery worker."""
    settings.RECHECK_GITHUB_BACKOFF_BASE_SECONDS = BACKOFF_BASE
    settings.RECHECK_GITHUB_BACKOFF_MAX_SECONDS = 1
    if request.param == "worker":
        request.getfixturevalue("celery_worker")
        yield "worker"
        return
    stop = threading.Event()
    sender = threading.Thread(target=forge_calls_send_forever, kwargs={"stop": stop, "poll": 0.05}, daemon=True)
    sender.start()
    yield "embedded"
    stop.set()
    from forge.outbox.wake import sender_event

    sender_event.set()
    sender.join(timeout=10)


def wait_until(condition, timeout: float = 30, what: str = ""):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, what or list(ForgeCall.objects.values("kind", "state", "status",
                                                                                     "attempts", "response_message"))
        time.sleep(0.05)


def reported(sha: str) -> bool:
    return ForgeCall.objects.filter(sha=sha, state__startswith="completed", status="sent").exists()


@pytest.mark.parametrize("fault", ["server_error", "refused", "after_timeout", "rate_limited"])
def test_the_report_arrives_once_github_is_back_after_the_due_time_with_one_check_run(
    fault, mode, pull_request, repo, fake_github, settings
):
    api_url = settings.RECHECK_GITHUB_API_URL
    gap = BACKOFF_BASE / 2  # the shortest first backoff
    if fault == "server_error":
        fake_github.fail("POST", r"/check-runs$", 500, "Server Error", times=2)
    elif fault == "refused":
        settings.RECHECK_GITHUB_API_URL = closed_port_url()
    elif fault == "after_timeout":
        # GitHub makes the run, and answers after the client gave up.
        settings.RECHECK_GITHUB_TIMEOUT = 0.3
        fake_github.answer_slowly("POST", r"/check-runs$", 0.8)
    else:
        fake_github.fail("POST", r"/check-runs$", 403, SECONDARY_LIMIT, headers={"Retry-After": "1"})
        gap = 1.0

    verification_run_request(pull_request=pull_request, commit_sha=repo.reviewed)

    if fault == "refused":
        wait_until(lambda: ForgeCall.objects.filter(attempts__gte=1, response_status=None)
                   .exclude(response_message="").exists())
        assert fake_github.requests == []
        settings.RECHECK_GITHUB_API_URL = api_url  # GitHub is back
    wait_until(lambda: reported(repo.reviewed))

    [check_run] = fake_github.runs_of(repo.reviewed)
    assert (check_run["status"], check_run["conclusion"]) == ("completed", "failure")
    first = ForgeCall.objects.get(sha=repo.reviewed, state="in_progress")
    assert first.status == "sent" and first.attempts >= 2
    creates = fake_github.answers("POST", r"/check-runs$")
    if fault == "after_timeout":
        # Found again rather than created twice.
        assert len(creates) == 1 and fake_github.calls("GET", r"/commits/.+/check-runs$")
    elif fault != "refused":
        assert creates[-1][1] == 201 and len(creates) >= 2
        # Each attempt no sooner than its due time.
        assert all(later - earlier >= gap for (earlier, _), (later, _) in zip(creates, creates[1:], strict=False))
    assert not ForgeCall.objects.exclude(status="sent").exists()


def test_the_webhook_records_and_answers_without_calling_github(mode, pull_request, repo, fake_github, settings,
                                                                client):
    settings.RECHECK_GITHUB_WEBHOOK_SECRET = SECRET
    # GitHub answers nothing for 3 s: a request that called it would have waited for an answer.
    # (A sender may start calling it meanwhile; those answers come after the webhook's.)
    fake_github.answer_slowly(".*", ".*", 3, times=100)
    head = repo.write("README.md", "pushed\n").commit("pushed")

    response = deliver_hook(client, pull_request_event(number=7, sha=head), delivery="slow-1", secret=SECRET)

    assert response.status_code == 202, response.json()
    assert fake_github.answered == []
    # The report is recorded, and a sender sends it.
    assert ForgeCall.objects.filter(sha=head).exists()
    fake_github.slow.clear()
    wait_until(lambda: reported(head))


def test_beat_sends_a_call_whose_wait_was_too_long_for_a_countdown(pull_request, repo, fake_github, settings,
                                                                   celery_worker):  # noqa: F811
    from datetime import timedelta

    from django.utils import timezone

    from findings.enqueue import enqueue

    entry = settings.CELERY_BEAT_SCHEDULE["send-due-github-calls"]
    assert entry["task"] == "forge.tasks.send_due_github_calls"
    assert entry["schedule"] == settings.RECHECK_GITHUB_SEND_INTERVAL_SECONDS
    # A call whose backoff (hours) was longer than a countdown is trusted with: no task waits for it.
    call = ForgeCall.objects.create(
        repository=pull_request.repository, pull_request=pull_request, sha=repo.reviewed,
        kind=ForgeCall.Kind.CHECK_RUN, state="in_progress", digest="0" * 64, attempts=3,
        body={"name": "Recheck", "head_sha": repo.reviewed, "status": "in_progress",
              "output": {"title": "Verifying", "summary": "Recheck is verifying."}},
        due_at=timezone.now() - timedelta(seconds=1),
    )

    enqueue(entry["task"])  # beat's round

    wait_until(lambda: ForgeCall.objects.filter(pk=call.pk, status="sent").exists())
    assert len(fake_github.runs_of(repo.reviewed)) == 1
