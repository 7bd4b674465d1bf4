"""What is delivered of the events a transaction writes is written in that transaction: the
webhook messages (`notify.webhooks.services.webhook_messages_write`)."""
from django.dispatch import receiver

from findings.models import ReviewEvent
from findings.signals import events_recorded
from notify.webhooks.services import webhook_messages_write


@receiver(events_recorded, sender=ReviewEvent)
def _events_recorded(sender, events, **kwargs):
    webhook_messages_write(events=events)
