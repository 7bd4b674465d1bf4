"""The loop of a sender in a process without a worker (`manage.py send_forge_calls`,
`manage.py send_notifications`): a round of work, then a sleep until the next is due, a wake-up
from this process, or `poll` seconds (work written by other processes); until stopped.

One loop for both senders, so they stop, wake and survive a failed round the same way. Plain
Python: what a round does, and what must happen after each (a process's database connections
closed), is the caller's."""
import logging
import threading
import time
from collections.abc import Callable


def rounds_run_until_stopped(*, stop: threading.Event, wake: threading.Event, poll: float,
                             round_run: Callable[[], float | None], after_round: Callable[[], None],
                             what: str, logger: logging.Logger) -> None:
    """Run `round_run` (which returns the seconds until its next work is due, or None) until `stop`
    is set. A round that raises is logged and tried again after `poll` seconds: the loop goes on."""
    while not stop.is_set():
        wait = poll
        try:
            wake.clear()  # before the round: a wake-up during it starts the next at once
            due_in = round_run()
            if due_in is not None:
                wait = min(poll, max(0.0, due_in))
        except Exception:
            logger.exception("%s failed; trying again in %.1f s", what, poll)
        finally:
            after_round()
        # In slices, so a stop (a signal handled between them) is seen at once.
        deadline = time.monotonic() + wait
        while not stop.is_set() and (left := deadline - time.monotonic()) > 0:
            if wake.wait(min(left, 0.25)):
                break
