"""What the webhooks pages and the API read: a repository's endpoints, and an endpoint's latest
messages with every attempt."""
from django.db.models import Prefetch

from notify.models import WebhookAttempt, WebhookEndpoint, WebhookMessage

MESSAGES_SHOWN = 50


def repository_webhooks(repository):
    return WebhookEndpoint.objects.filter(repository=repository).order_by("id")


def endpoint_messages(endpoint, *, limit: int = MESSAGES_SHOWN) -> list[WebhookMessage]:
    """The endpoint's latest messages, newest first, each with its attempts (oldest first)."""
    return list(WebhookMessage.objects.filter(endpoint=endpoint).select_related("pull_request")
                .prefetch_related(Prefetch("attempts_made", queryset=WebhookAttempt.objects.order_by("id")))
                .order_by("-id")[:limit])
