"""Celery tasks of notify: they load by id and call the services, which claim their rows first, so
a task run twice does nothing more."""
from celery import shared_task


@shared_task(acks_late=True, reject_on_worker_lost=True)
def send_webhook(message_id: int) -> dict:
    from notify.webhooks.sending import webhook_message_send

    message = webhook_message_send(message_id=message_id)
    return {"message": message_id, "status": message.status if message else "skipped"}


@shared_task(acks_late=True)
def send_due_webhooks() -> dict:
    """Beat's round: every message whose time has come, however it came to wait."""
    from notify.webhooks.sending import webhooks_send_due

    return {"attempted": webhooks_send_due()}


@shared_task(acks_late=True)
def catch_up_timelines() -> dict:
    """Beat's round: the states of the pull requests that moved and nobody read, with their events."""
    from findings.selectors.timeline import timelines_catch_up

    return {"derived": timelines_catch_up()}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def send_mail(message_id: int) -> dict:
    from notify.mail.sending import mail_message_send

    message = mail_message_send(message_id=message_id)
    return {"message": message_id, "status": message.status if message else "skipped"}


@shared_task(acks_late=True)
def send_due_mails() -> dict:
    """Beat's round: every email whose batch window has ended, however it came to wait."""
    from notify.mail.sending import mails_send_due

    return {"attempted": mails_send_due()}
