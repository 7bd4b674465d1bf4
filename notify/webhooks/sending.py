"""Delivering webhook messages: each when it is due, once at a time, in order per endpoint and
pull request, the way the forge outbox sends its calls (decision 0012).

A sender claims a due message with a conditional update that moves its due time a lease ahead, so
two senders never send it together and one that dies leaves it due again. Before each attempt the
URL is checked again (`addresses`): a host that resolves to an internal address now is refused
then. A redirect is not followed. A 2xx is delivered; 410 Gone turns the endpoint off; anything
else (an error, a timeout, a 5xx, a redirect) is tried again after the next wait of
RECHECK_WEBHOOK_RETRY_SCHEDULE, jittered, until the schedule ends and the message fails. Every
attempt is recorded (`WebhookAttempt`) and shown on the repository's webhooks page, where an Admin
sends a failed message again."""
import logging
import random
import time
from datetime import timedelta

import httpx
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from notify.models import WebhookAttempt, WebhookEndpoint, WebhookMessage
from notify.webhooks.addresses import WebhookUrlRefused, webhook_url_addresses
from notify.webhooks.payloads import message_body
from notify.webhooks.signing import signed_headers
from notify.webhooks.wake import webhooks_wake

logger = logging.getLogger(__name__)

# The start of a receiver's answer kept with the attempt; the rest is not read.
RESPONSE_KEPT = 4096
SEND_BATCH = 100


def retry_delay(attempt: int) -> float | None:
    """Seconds before the attempt after `attempt` (1-based), jittered by up to a tenth either way so
    that messages failed together do not come back together; None when the schedule is over."""
    schedule = settings.RECHECK_WEBHOOK_RETRY_SCHEDULE
    if attempt > len(schedule):
        return None
    wait = schedule[attempt - 1]
    return wait * random.uniform(0.9, 1.1)


def _lease() -> timedelta:
    return timedelta(seconds=max(30.0, 3 * settings.RECHECK_WEBHOOK_TIMEOUT))


def webhook_message_send(*, message_id: int, now=None, transport=None) -> WebhookMessage | None:
    """Attempt one message if it is due and the earlier messages of its endpoint and pull request
    are done. Returns the row after the attempt, or None when there was nothing to do."""
    now = now or timezone.now()
    message = WebhookMessage.objects.select_related("endpoint__repository", "pull_request__repository").filter(
        pk=message_id).first()
    if message is None or message.is_finished:
        return None
    if message.due_at > now:
        return None
    earlier = WebhookMessage.objects.unfinished().filter(endpoint_id=message.endpoint_id,
                                                         pull_request_id=message.pull_request_id, pk__lt=message.pk)
    if earlier.exists():
        return None
    claimed = WebhookMessage.objects.filter(pk=message.pk, status__in=[WebhookMessage.Status.PENDING,
                                                                       WebhookMessage.Status.SENDING],
                                            due_at__lte=now).update(
        status=WebhookMessage.Status.SENDING, attempts=F("attempts") + 1, due_at=now + _lease())
    if claimed != 1:
        return None
    message.refresh_from_db()
    endpoint = message.endpoint
    if not endpoint.active:
        _finish(message, failed=True, error=f"The endpoint is off: {endpoint.disabled_reason or 'turned off'}.")
        return message
    status, error, kept, started = None, "", "", time.monotonic()
    try:
        addresses = webhook_url_addresses(endpoint.url)
        events = list(message.events.select_related("actor", "repository", "pull_request__repository").order_by("id"))
        body = message_body(message, events)
        headers = signed_headers(message_id=message.message_id, timestamp=timezone.now(), body=body,
                                 secrets=endpoint.secrets)
        status, kept = _post(endpoint.url, addresses, body=body.encode(), headers=headers, transport=transport)
    except WebhookUrlRefused as refused:
        error = str(refused)
    except httpx.HTTPError as failure:
        error = f"{type(failure).__name__}: {failure}" or type(failure).__name__
    duration = int((time.monotonic() - started) * 1000)
    WebhookAttempt.objects.create(message=message, response_status=status, error=error[:2000],
                                  response_body=kept[:RESPONSE_KEPT], duration_ms=duration)
    if status is not None and 200 <= status < 300:
        _finish(message, failed=False)
    elif status == 410:
        WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
            active=False, disabled_reason=f"The receiver answered 410 Gone at {timezone.now():%Y-%m-%d %H:%M} UTC.")
        _finish(message, failed=True, error="410 Gone: the endpoint is turned off.")
    else:
        what = error or (f"{status}: a redirect, which is not followed" if status and 300 <= status < 400
                         else f"{status}: {kept[:200]}")
        delay = retry_delay(message.attempts)
        if delay is None:
            _finish(message, failed=True, error=f"Gave up after {message.attempts} attempts. Last: {what}")
        else:
            due_at = timezone.now() + timedelta(seconds=delay)
            with transaction.atomic():
                WebhookMessage.objects.filter(pk=message.pk).update(
                    status=WebhookMessage.Status.PENDING, due_at=due_at, last_error=what[:2000])
                message.due_at = due_at
                webhooks_wake([message])
    message.refresh_from_db()
    return message


def _post(url: str, addresses: list[str], *, body: bytes, headers: dict, transport=None) -> tuple[int, str]:
    """POST to `url`, connecting only to `addresses` (the ones just checked, in the resolver's
    order: the next when one refuses the connection), so a name that resolves elsewhere by the
    time the connection is made is not followed there. The URL's host goes in the Host header and
    the TLS server name, so the certificate is checked against it. Returns the status and the
    start of the answer."""
    parts = httpx.URL(url)
    failure = None
    for address in addresses or [parts.host]:
        pinned = parts.copy_with(host=address)
        try:
            with httpx.Client(timeout=settings.RECHECK_WEBHOOK_TIMEOUT, follow_redirects=False,
                              transport=transport) as client:
                request = client.build_request("POST", pinned, content=body,
                                               headers={**headers, "host": parts.netloc.decode()},
                                               extensions={"sni_hostname": parts.host})
                response = client.send(request, stream=True)
                try:
                    kept = ""
                    for chunk in response.iter_bytes():
                        kept += chunk.decode("utf-8", "replace")
                        if len(kept) >= RESPONSE_KEPT:
                            break
                    return response.status_code, kept
                finally:
                    response.close()
        except httpx.ConnectError as error:
            failure = error
    raise failure


def _finish(message: WebhookMessage, *, failed: bool, error: str = "") -> None:
    """Delivered or given up: the next message of its endpoint and pull request may go."""
    with transaction.atomic():
        WebhookMessage.objects.filter(pk=message.pk).update(
            status=WebhookMessage.Status.FAILED if failed else WebhookMessage.Status.SENT,
            sent_at=None if failed else timezone.now(), last_error=error[:2000])
        following = WebhookMessage.objects.filter(endpoint_id=message.endpoint_id, pull_request_id=message.pull_request_id,
                                                  pk__gt=message.pk, status=WebhookMessage.Status.PENDING)
        next_message = following.order_by("id").first()
        if next_message is not None:
            webhooks_wake([next_message])


def webhooks_send_due(*, now=None, limit: int = SEND_BATCH, transport=None) -> int:
    """Attempt every due message, in order per endpoint and pull request; returns how many."""
    attempted, skipped = 0, set()
    while attempted < limit:
        moment = now or timezone.now()
        pk = (WebhookMessage.objects.due(moment).exclude(pk__in=skipped).order_by("due_at", "id")
              .values_list("pk", flat=True).first())
        if pk is None:
            break
        # Once a round each: a message that failed again waits for a later round.
        skipped.add(pk)
        if webhook_message_send(message_id=pk, now=moment, transport=transport) is not None:
            attempted += 1
    return attempted


def webhooks_next_due():
    return WebhookMessage.objects.unfinished().order_by("due_at").values_list("due_at", flat=True).first()
