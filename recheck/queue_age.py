"""How long the oldest message in each queue has waited: every task message is stamped with the
time it was sent (a header, `before_task_publish`), and the health page reads the stamp of the
message at the head of each queue in the broker's Redis.

Only the queues' own messages say this for every kind of work alike (render, maintenance, a
verification shard, and any queue added later), where the rows of the work say it only for the
kinds that have rows (a queued run, a due forge call). The stamp is the sending host's clock: hosts
whose clocks drift apart by a few seconds shift the age by as much."""
import json
import time

SENT_AT_HEADER = "recheck_sent_at"


def stamp_sent_at(sender=None, headers=None, **kwargs) -> None:
    """Celery's `before_task_publish` receiver: the headers it is given are the message's own."""
    if headers is not None:
        headers.setdefault(SENT_AT_HEADER, time.time())


def message_sent_at(raw: bytes | None) -> float | None:
    """The stamp of one message as kombu's Redis transport keeps it (JSON, headers at the top),
    or None: no message, or one sent before the stamp (or by another client)."""
    if not raw:
        return None
    try:
        stamp = json.loads(raw).get("headers", {}).get(SENT_AT_HEADER)
    except (ValueError, AttributeError):
        return None
    return float(stamp) if isinstance(stamp, (int, float)) else None
