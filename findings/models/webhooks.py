"""Forge webhook deliveries, kept so a redelivered event has one effect."""
from django.db import models


class WebhookDelivery(models.Model):
    """A forge webhook delivery, kept so a redelivered event has one effect."""

    delivery_id = models.CharField(max_length=100, unique=True)
    event = models.CharField(max_length=50)
    action = models.CharField(max_length=50, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)
    outcome = models.TextField(blank=True)

    class Meta:
        verbose_name_plural = "webhook deliveries"
        ordering = ["-received_at"]

    def __str__(self) -> str:
        return f"{self.event} {self.delivery_id}"
