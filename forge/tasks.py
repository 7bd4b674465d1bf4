"""Celery tasks of reporting: they load by id and call the service, which owns the retries (each
attempt is recorded on the call's row, with the time it is due again)."""
from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def send_github_call(call_id: int) -> dict:
    """Send one call to GitHub if it is due; safe to run twice, the service claims the row first."""
    from forge.outbox import github_call_send

    call = github_call_send(call_id=call_id)
    return {"call": call_id, "status": call.status if call else "skipped"}


@shared_task(acks_late=True)
def send_due_github_calls() -> dict:
    """Beat's round: every call whose time has come, however it came to wait."""
    from forge.outbox import github_calls_send_due

    return {"attempted": github_calls_send_due()}
