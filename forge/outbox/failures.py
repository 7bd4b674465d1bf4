"""What a forge's refusal means for the outbox, in words every forge shares: a `Failure` (the
forge's status and message, whether trying again can help, how long the forge asked to wait),
the backoff before the next attempt, and the hint for a failure that passes by itself. Each forge's
client turns its own answers into a `Failure` (`forge.github.client`, `forge.gitlab.client`)."""
from __future__ import annotations

import random
from dataclasses import dataclass

from django.conf import settings

from forge.outbox.models import ForgeCall


@dataclass(frozen=True)
class Failure(Exception):
    """A call the forge did not accept: its status and message, and whether trying again later can
    help (`retry_after` seconds, when the forge said how long)."""

    status: int | None
    message: str
    retryable: bool
    retry_after: float | None = None
    rate_limited: bool = False

    def __str__(self) -> str:
        return f"{self.status or 'no answer'}: {self.message}"


def passing_failure_hint(call, failure: Failure, *, gave_up: bool, forge: str) -> str | None:
    """What to do about a failure that passes, in the same words on every forge: a report that could
    not be prepared, a rate limit, the forge not answering. None for a refusal, which each forge's
    hint words in the terms of its own settings pages."""
    if call.kind == ForgeCall.Kind.REPORT:
        return ("Recheck prepares the report again with backoff; the database's own message is above."
                if not gave_up else "The report could not be prepared after several attempts: resend it.")
    if failure.rate_limited:
        return (f"{forge}'s rate limit: Recheck waits as long as {forge} asks and tries again."
                if not gave_up else "Still rate limited after several attempts: resend it later.")
    if failure.retryable:
        return (f"{forge} did not answer or failed: Recheck tries again with backoff."
                if not gave_up else f"{forge} kept failing after {call.attempts} attempts: resend it once {forge} "
                "is back.")
    return None


def retry_delay(failure: Failure, attempt: int) -> float:
    """Seconds to wait before attempt `attempt + 1`: at least what the forge asked for when it said
    (a little more, so many senders do not come back in step), else an exponential backoff from
    RECHECK_GITHUB_BACKOFF_BASE_SECONDS up to RECHECK_GITHUB_BACKOFF_MAX_SECONDS (settings named when
    GitHub was the only forge, read for every forge), jittered."""
    base = settings.RECHECK_GITHUB_BACKOFF_BASE_SECONDS
    if failure.retry_after is not None:
        return max(0.0, failure.retry_after) + random.uniform(0, min(1.0, base))
    ceiling = min(settings.RECHECK_GITHUB_BACKOFF_MAX_SECONDS, base * 2 ** max(0, attempt - 1))
    return random.uniform(ceiling / 2, ceiling)
