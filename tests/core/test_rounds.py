"""The senders' one loop: a failed round does not end it, a wake-up runs the next round at once,
and a stop ends it within a slice."""
import logging
import threading
import time

from core.rounds import rounds_run_until_stopped


def _loop(round_run, *, poll=30.0):
    stop, wake, after = threading.Event(), threading.Event(), []
    thread = threading.Thread(target=rounds_run_until_stopped, daemon=True, kwargs={
        "stop": stop, "wake": wake, "poll": poll, "round_run": round_run, "after_round": lambda: after.append(1),
        "what": "A test round", "logger": logging.getLogger("tests.rounds")})
    thread.start()
    return thread, stop, wake, after


def _until(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


def test_a_failed_round_is_logged_and_the_loop_goes_on(caplog):
    calls = []

    def round_run():
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("the database went away")
        return None

    thread, stop, wake, after = _loop(round_run, poll=0.05)
    assert _until(lambda: len(calls) >= 3)
    stop.set()
    thread.join(2)
    assert not thread.is_alive()
    assert "A test round failed; trying again in 0.1 s" in caplog.text
    assert "the database went away" in caplog.text
    assert len(after) >= len(calls) - 1  # the connections are closed after every round, failed or not


def test_a_wake_up_runs_the_next_round_before_the_poll_is_up():
    calls = []
    thread, stop, wake, after = _loop(lambda: calls.append(1), poll=30.0)
    assert _until(lambda: len(calls) == 1)
    wake.set()
    assert _until(lambda: len(calls) == 2, seconds=2.0)
    stop.set()
    thread.join(2)
    assert not thread.is_alive()  # a stop is seen within a slice, not after the 30 s poll


def test_the_next_round_comes_when_its_work_is_due():
    moments = []
    thread, stop, wake, after = _loop(lambda: moments.append(time.monotonic()) or 0.1, poll=30.0)
    assert _until(lambda: len(moments) >= 3)
    stop.set()
    thread.join(2)
    assert 0.05 < moments[2] - moments[1] < 2.0
