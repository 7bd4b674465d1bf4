"""One forge budget for every worker: at most so many calls to a forge in any window, counted in
Redis (a redis-server of the test's own), with the forge's Retry-After kept for every sender; the
calls it holds back wait in the outbox, never lost; and with Redis gone they wait, never sent blind."""
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from forge.models import ForgeCall
from forge.outbox import budget as budgets
from forge.outbox.budget import RedisBudget
from forge.outbox.sending import forge_call_send, forge_calls_send_due
from tests.findings.test_redis_restart import OwnRedis

ROOT = Path(__file__).resolve().parents[3]
STATUS_PATH = "/statuses/"

needs_redis = pytest.mark.skipif(
    shutil.which("redis-server") is None and not os.environ.get("CI"), reason="needs redis-server"
)


@pytest.fixture
def own_redis():
    server = OwnRedis()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def budget(settings):
    """A small budget over a short window, so a test sees it run out and come back in seconds."""
    def configure(*, calls: int, window: float, redis_url: str = ""):
        settings.RECHECK_FORGE_BUDGET_CALLS = calls
        settings.RECHECK_FORGE_BUDGET_WINDOW_SECONDS = window
        settings.RECHECK_FORGE_BUDGET_REDIS_URL = redis_url
        settings.RECHECK_FORGE_BUDGET_RETRY_SECONDS = 0.5
        budgets._budget.cache_clear()

    yield configure
    budgets._budget.cache_clear()


def status_calls(pull_request, count: int) -> list[ForgeCall]:
    """`count` commit statuses to send, each on a commit of its own (so none waits for another)."""
    return [
        ForgeCall.objects.create(
            repository=pull_request.repository, pull_request=pull_request, forge="github", sha=f"{index + 1:040x}",
            kind="commit_status", state="pending", digest=f"{index:064x}",
            body={"context": "recheck", "state": "pending", "description": f"Verifying {index}"},
        )
        for index in range(count)
    ]


def statuses_sent(fake_github) -> list[float]:
    return sorted(at for at, method, path, status in fake_github.answered
                  if method == "POST" and STATUS_PATH in path and status == 201)


def most_in_any_window(times: list[float], window: float) -> int:
    most, start = 0, 0
    for end, at in enumerate(times):
        while at - times[start] >= window:
            start += 1
        most = max(most, end - start + 1)
    return most


@pytest.mark.django_db
def test_a_spent_budget_holds_calls_back_in_the_outbox_without_counting_an_attempt(pull_request, fake_github, budget):
    budget(calls=3, window=30)
    calls = status_calls(pull_request, 5)
    assert forge_calls_send_due() == 3
    rows = {call.pk: call for call in ForgeCall.objects.filter(pk__in=[call.pk for call in calls])}
    assert sorted(row.status for row in rows.values()) == ["pending", "pending", "sent", "sent", "sent"]
    waiting = [row for row in rows.values() if row.status == "pending"]
    # The first call the budget refused waits until the window has room; the forge's other calls
    # are not asked for in that round.
    assert sorted((row.attempts, row.due_at > timezone.now() + timedelta(seconds=20)) for row in waiting) == [
        (0, False), (0, True)
    ]
    assert forge_calls_send_due() == 0, "the next round sends nothing either"
    assert len(statuses_sent(fake_github)) == 3
    assert ForgeCall.objects.filter(status="pending", due_at__gt=timezone.now() + timedelta(seconds=20)).count() == 2


@needs_redis
@pytest.mark.django_db
def test_with_redis_not_answering_calls_wait_and_go_once_it_is_back(pull_request, fake_github, budget, own_redis):
    budget(calls=10, window=1, redis_url=f"redis://127.0.0.1:{own_redis.port}/0")
    [call] = status_calls(pull_request, 1)
    own_redis.stop()
    before = timezone.now()
    assert forge_call_send(call_id=call.pk) is None
    call.refresh_from_db()
    assert (call.status, call.attempts) == ("pending", 0)
    assert call.due_at >= before + timedelta(seconds=0.5)
    assert statuses_sent(fake_github) == [], "nothing is sent past a budget nobody can count"

    own_redis.start()
    call.due_at = timezone.now()
    ForgeCall.objects.filter(pk=call.pk).update(due_at=call.due_at)
    assert forge_call_send(call_id=call.pk).status == "sent"
    assert len(statuses_sent(fake_github)) == 1


@needs_redis
def test_a_forge_s_retry_after_holds_back_every_sender(own_redis):
    url = f"redis://127.0.0.1:{own_redis.port}/0"
    told, other = RedisBudget(url, calls=100, window=60), RedisBudget(url, calls=100, window=60)
    assert other.acquire("github") == 0
    told.hold("github", 30)
    assert 29 < other.acquire("github") <= 30
    assert other.acquire("gitlab") == 0, "another forge's budget is its own"


def _database_url() -> str:
    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{settings_dict['NAME']}"
    user = settings_dict["USER"] + (f":{settings_dict['PASSWORD']}" if settings_dict["PASSWORD"] else "")
    return f"postgres://{user}@{settings_dict['HOST'] or '127.0.0.1'}:{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"


@needs_redis
@pytest.mark.django_db(transaction=True)
def test_three_senders_keep_300_calls_within_one_budget_and_send_every_one(
    pull_request, fake_github, settings, own_redis, tmp_path
):
    calls, window = 50, 1.0
    status_calls(pull_request, 300)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "recheck.test_settings",
        "DATABASE_URL": _database_url(),
        "CELERY_BROKER_URL": "",
        "RECHECK_GITHUB_API_URL": settings.RECHECK_GITHUB_API_URL,
        "RECHECK_GITHUB_APP_ID": str(settings.RECHECK_GITHUB_APP_ID),
        "RECHECK_GITHUB_APP_PRIVATE_KEY": settings.RECHECK_GITHUB_APP_PRIVATE_KEY,
        "RECHECK_SITE_URL": settings.RECHECK_SITE_URL,
        "RECHECK_FORGE_BUDGET_CALLS": str(calls),
        "RECHECK_FORGE_BUDGET_WINDOW_SECONDS": str(window),
        "RECHECK_FORGE_BUDGET_REDIS_URL": f"redis://127.0.0.1:{own_redis.port}/0",
    }
    senders = [
        subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "send_forge_calls", "--interval", "0.2"],
                         cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / f"sender{n}.log", "w"),
                         start_new_session=True)
        for n in range(3)
    ]
    try:
        deadline = time.monotonic() + 120
        while ForgeCall.objects.filter(status="sent").count() < 300:
            assert time.monotonic() < deadline, ForgeCall.objects.exclude(status="sent").values("status").first()
            assert all(sender.poll() is None for sender in senders), "a sender stopped"
            time.sleep(0.25)
    finally:
        for sender in senders:
            os.killpg(sender.pid, signal.SIGTERM)
        for sender in senders:
            sender.wait(timeout=30)
    sent = statuses_sent(fake_github)
    assert len(sent) == 300, "every call arrived, once"
    assert len({status["description"] for status in fake_github.statuses}) == 300
    # Timed where the fake answered, a little after the budget counted it: a window a few
    # hundredths of a second shorter keeps that jitter from counting twice.
    assert most_in_any_window(sent, window - 0.05) <= calls
    assert sent[-1] - sent[0] >= (300 / calls - 1) * window * 0.9, "the budget paced them"


@pytest.mark.django_db
def test_each_github_app_installation_and_gitlab_server_has_a_budget_of_its_own(
    pull_request, fake_github, budget, settings
):
    """What GitHub counts is an installation's requests: one installation's burst does not hold
    back another's, nor a GitLab server's, and each stays within its own budget."""
    from forge.interface import forge_named
    from reviews.models import Repository

    budget(calls=3, window=30)
    Repository.objects.filter(pk=pull_request.repository.pk).update(github_installation_id=77)
    other = Repository.objects.create(slug="umbrella/tools", clone_url="https://github.com/umbrella/tools.git")
    fake_github.install("umbrella/tools", 78)
    gitlab = Repository.objects.create(slug="acme/tools/loader", forge="gitlab",
                                       clone_url="https://gitlab.example.com/acme/tools/loader.git",
                                       forge_url="https://gitlab.example.com")
    status_calls(pull_request, 5)
    for index in range(5):
        ForgeCall.objects.create(repository=other, forge="github", sha=f"{index + 101:040x}", kind="commit_status",
                                 state="pending", digest=f"{index + 100:064x}",
                                 body={"context": "recheck", "state": "pending", "description": f"Other {index}"})

    assert forge_calls_send_due() == 6
    sent = ForgeCall.objects.filter(status="sent")
    assert sent.filter(repository=pull_request.repository).count() == 3 and sent.filter(repository=other).count() == 3
    keys = {forge_named(call.forge).budget_key(call) for call in ForgeCall.objects.select_related("repository")}
    probe = ForgeCall(repository=gitlab, forge="gitlab")
    keys.add(forge_named("gitlab").budget_key(probe))
    server = settings.RECHECK_GITHUB_API_URL.split("//")[1].rstrip("/")
    assert keys == {f"github:{server}:installation:77", f"github:{server}:installation:78",
                    "gitlab:gitlab.example.com"}
