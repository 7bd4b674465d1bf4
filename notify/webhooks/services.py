"""What a repository's Admin sets for its outgoing webhooks (an endpoint's URL, kinds, preset,
secret and its rotation; turning it on and off; removing it), sending a message again, and the
messages the events of a transaction make (`webhook_messages_write`, called by the receiver of
`findings.signals.events_recorded` inside the events' transaction). Each person's write checks
the Admin role (`Action.SETTINGS`) on the repository and is recorded in the audit log; the
endpoint's secrets are never in the audit log."""
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from access.audit import audit_changes, audit_record, writes
from access.permissions import Action, actor_check
from core.errors import RecheckError
from core.vocabulary import events as ev
from notify.models import WebhookEndpoint, WebhookMessage
from notify.webhooks.addresses import webhook_url_check
from notify.webhooks.signing import webhook_secret_new
from notify.webhooks.wake import webhooks_wake


class WebhookError(RecheckError):
    pass


def _kinds_checked(kinds) -> list[str]:
    kinds = list(dict.fromkeys(kinds or []))
    unknown = sorted(set(kinds) - set(ev.EVENT_KINDS))
    if unknown:
        raise WebhookError(f"Unknown event kinds {', '.join(unknown)}: choose among {', '.join(ev.EVENT_KINDS)}.")
    if not kinds:
        raise WebhookError("Choose at least one kind of event to send.")
    return kinds


def _shown(endpoint: WebhookEndpoint) -> dict:
    return {"url": endpoint.url, "kinds": endpoint.kinds, "preset": endpoint.preset, "active": endpoint.active,
            "description": endpoint.description, "secrets": len(endpoint.secrets)}


@writes("webhook.create")
def webhook_endpoint_create(*, repository, actor, url: str, kinds, preset: str = WebhookEndpoint.Preset.STANDARD,
                            description: str = "") -> tuple[WebhookEndpoint, str]:
    """A new endpoint of `repository`, with a new secret: returned once, as the receiver needs it."""
    actor_check(actor, Action.SETTINGS, repository, audit_action="webhook.create", target=repository.slug)
    url = webhook_url_check(url)
    kinds = _kinds_checked(kinds)
    if preset not in WebhookEndpoint.Preset.values:
        raise WebhookError(f"Unknown preset {preset!r}: standard or chat.")
    secret = webhook_secret_new()
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.create(
            repository=repository, url=url, kinds=kinds, preset=preset, description=description[:200],
            secrets=[secret], created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        audit_record(action="webhook.create", actor=actor, target=f"{repository.slug} webhook {endpoint.pk}",
                     repository=repository, changes=audit_changes({}, _shown(endpoint)))
    return endpoint, secret


@writes("webhook.update")
def webhook_endpoint_update(*, endpoint: WebhookEndpoint, actor, url: str | None = None, kinds=None,
                            preset: str | None = None, active: bool | None = None,
                            description: str | None = None) -> WebhookEndpoint:
    """Change what is given (None leaves it); turning an endpoint back on clears why it was off."""
    repository = endpoint.repository
    actor_check(actor, Action.SETTINGS, repository, audit_action="webhook.update",
                target=f"{repository.slug} webhook {endpoint.pk}")
    before = _shown(endpoint)
    if url is not None:
        endpoint.url = webhook_url_check(url)
    if kinds is not None:
        endpoint.kinds = _kinds_checked(kinds)
    if preset is not None:
        if preset not in WebhookEndpoint.Preset.values:
            raise WebhookError(f"Unknown preset {preset!r}: standard or chat.")
        endpoint.preset = preset
    if description is not None:
        endpoint.description = description[:200]
    if active is not None:
        endpoint.active = active
        if active:
            endpoint.disabled_reason = ""
    with transaction.atomic():
        endpoint.save()
        audit_record(action="webhook.update", actor=actor, target=f"{repository.slug} webhook {endpoint.pk}",
                     repository=repository, changes=audit_changes(before, _shown(endpoint)))
    return endpoint


@writes("webhook.secret")
def webhook_secret_rotate(*, endpoint: WebhookEndpoint, actor, retire: bool = False) -> str | None:
    """Rotate the endpoint's secret: a new one signs beside the old ones until they are retired
    (`retire`: keep only the newest). Returns the new secret, None when retiring."""
    repository = endpoint.repository
    actor_check(actor, Action.SETTINGS, repository, audit_action="webhook.secret",
                target=f"{repository.slug} webhook {endpoint.pk}")
    before = len(endpoint.secrets)
    secret = None
    if retire:
        endpoint.secrets = endpoint.secrets[:1]
    else:
        secret = webhook_secret_new()
        endpoint.secrets = [secret, *endpoint.secrets][:5]
    with transaction.atomic():
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(secrets=endpoint.secrets)
        audit_record(action="webhook.secret", actor=actor, target=f"{repository.slug} webhook {endpoint.pk}",
                     repository=repository, changes={"secrets": [before, len(endpoint.secrets)]},
                     message="Old secrets retired." if retire else "A new secret signs beside the old ones.")
    return secret


@writes("webhook.delete")
def webhook_endpoint_delete(*, endpoint: WebhookEndpoint, actor) -> None:
    repository = endpoint.repository
    actor_check(actor, Action.SETTINGS, repository, audit_action="webhook.delete",
                target=f"{repository.slug} webhook {endpoint.pk}")
    with transaction.atomic():
        audit_record(action="webhook.delete", actor=actor, target=f"{repository.slug} webhook {endpoint.pk}",
                     repository=repository, changes=audit_changes(_shown(endpoint), {}))
        endpoint.delete()


@writes("webhook.resend")
def webhook_message_resend(*, message: WebhookMessage, actor) -> WebhookMessage:
    """Send a message again, now, with the same `webhook-id` (a receiver that handled it drops it),
    its retries counted afresh. A message being sent is left to finish."""
    repository = message.endpoint.repository
    actor_check(actor, Action.SETTINGS, repository, audit_action="webhook.resend",
                target=f"{repository.slug} webhook message {message.message_id}")
    now = timezone.now()
    with transaction.atomic():
        resent = WebhookMessage.objects.filter(pk=message.pk).exclude(status=WebhookMessage.Status.SENDING).update(
            status=WebhookMessage.Status.PENDING, attempts=0, due_at=now, window_ends_at=now, last_error="")
        if not resent:
            raise WebhookError("This message is being sent now; wait for the attempt to finish.")
        audit_record(action="webhook.resend", actor=actor, repository=repository,
                     target=f"{repository.slug} webhook message {message.message_id}")
        message.refresh_from_db()
        webhooks_wake([message])
    return message


@writes("webhook.message", system="the events' own transaction")
def webhook_messages_write(*, events) -> list[WebhookMessage]:
    """The messages `events` (ReviewEvents of one repository, just written) make for the
    repository's active endpoints that want their kinds: one per endpoint, pull request and kind,
    joining a message of the same three still inside its batch window, so a push that moves
    thousands of verdicts is one webhook per kind. Called inside the events' transaction."""
    events = list(events)
    if not events:
        return []
    endpoints = list(WebhookEndpoint.objects.filter(repository_id=events[0].repository_id, active=True))
    if not endpoints:
        return []
    groups: dict[tuple, list] = {}
    for event in events:
        groups.setdefault((event.pull_request_id, event.kind), []).append(event)
    now = timezone.now()
    window = timedelta(seconds=settings.RECHECK_NOTIFY_BATCH_SECONDS)
    written = []
    for endpoint in endpoints:
        for (pull_request_id, kind), grouped in groups.items():
            if kind not in endpoint.kinds:
                continue
            message = (WebhookMessage.objects.filter(endpoint=endpoint, pull_request_id=pull_request_id, kind=kind,
                                                     status=WebhookMessage.Status.PENDING, attempts=0,
                                                     window_ends_at__gt=now).order_by("-id").first())
            if message is None:
                message = WebhookMessage.objects.create(
                    endpoint=endpoint, pull_request_id=pull_request_id, kind=kind,
                    message_id=f"msg_{uuid.uuid4().hex}", due_at=now + window, window_ends_at=now + window,
                )
                written.append(message)
            message.events.add(*grouped)
    webhooks_wake(written)
    return written
