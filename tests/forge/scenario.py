"""Steps the reporting tests share: verify as every entry point does, send what is due as the
process's sender would, and read what GitHub got."""
import time

from django.utils import timezone

from findings.services.runs import verification_run_request
from forge.models import ForgeCall
from forge.outbox.sending import forge_calls_send_due


def verify(pull_request, sha, capture, **options):
    with capture(execute=True):
        run = verification_run_request(pull_request=pull_request, commit_sha=sha, **options)
    deliver()
    return run


def deliver(timeout: float = 20) -> None:
    """Send the due calls until none is left unfinished, waiting for each one's due time (the
    tests' backoff is a fraction of a second) as the embedded sender does."""
    deadline = time.monotonic() + timeout
    while True:
        forge_calls_send_due()
        waiting = ForgeCall.objects.unfinished().order_by("due_at").first()
        if waiting is None:
            return
        assert time.monotonic() < deadline, list(ForgeCall.objects.unfinished().values())
        time.sleep(min(0.5, max(0.01, (waiting.due_at - timezone.now()).total_seconds())))


def the_check_run(fake_github) -> dict:
    assert len(fake_github.check_runs) == 1, fake_github.check_runs
    return next(iter(fake_github.check_runs.values()))
