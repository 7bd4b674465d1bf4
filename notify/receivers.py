"""What is delivered of the events a transaction writes is written in that transaction: the
webhook messages and the emails (`webhook_messages_write`, `mail_messages_write`)."""
from django.dispatch import receiver

from findings.models import ReviewEvent
from findings.signals import events_recorded
from notify.mail.services import mail_messages_write
from notify.webhooks.services import webhook_messages_write


@receiver(events_recorded, sender=ReviewEvent)
def _events_recorded(sender, events, **kwargs):
    webhook_messages_write(events=events)
    mail_messages_write(events=events)
