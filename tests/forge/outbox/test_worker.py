"""Reporting through a real Celery worker (Redis in CI, the in-memory transport on a laptop): the
calls are queued after their transaction commits and sent by the worker, in order."""
import time

import pytest

from findings.services.runs import verification_run_request
from forge.models import ForgeCall
from tests.findings.test_tasks import celery_worker  # noqa: F401  (the worker thread, as a fixture)

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queued_tasks_run_on_the_worker(fake_github):
    """The fake GitHub without the in-process tasks its fixture asks for: the worker sends."""
    from recheck.celery import app

    app.conf.task_always_eager = False


def test_a_worker_verifies_and_posts_in_progress_then_the_conclusion(
    pull_request, repo, fake_github, queued_tasks_run_on_the_worker, celery_worker  # noqa: F811
):
    verification_run_request(pull_request=pull_request, commit_sha=repo.reviewed)

    deadline = time.monotonic() + 60
    finished = ForgeCall.objects.filter(state__startswith="completed", status__in=["sent", "failed"])
    while not finished.exists():
        assert time.monotonic() < deadline, list(ForgeCall.objects.values("state", "status", "response_message"))
        time.sleep(0.2)

    [check_run] = fake_github.check_runs.values()
    assert (check_run["status"], check_run["conclusion"]) == ("completed", "failure")
    assert [body.get("status") for _, _, body in fake_github.requests if body and "status" in body] == [
        "in_progress", "completed"
    ]
