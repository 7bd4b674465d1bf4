"""The cache as a help: with Redis not answering, a read is a miss and a write is dropped, each
logged, never an error."""
import logging
from unittest import mock

from recheck import cache as forgiving
from recheck.cache import ForgivingRedisCache


def cache_nobody_answers() -> ForgivingRedisCache:
    # Port 9 (discard): nothing listens, so every connection is refused at once.
    return ForgivingRedisCache("redis://127.0.0.1:9/0", {"OPTIONS": {"socket_connect_timeout": 1}})


def test_a_read_is_a_miss_and_a_write_is_dropped_while_redis_is_down(caplog):
    cache = cache_nobody_answers()
    with caplog.at_level(logging.WARNING, logger="recheck.cache"):
        assert cache.get("page:1:key") is None
        assert cache.get("page:1:key", "default") == "default"
        cache.set("page:1:key", "a page", 60)
        assert cache.add("page:1:key", "a page") is False
        assert cache.get_many(["a", "b"]) == {}
        assert cache.has_key("a") is False
        assert cache.delete("a") is False
    # The first failure is logged; the process then leaves Redis alone for a while.
    assert caplog.text.count("cache unavailable") == 1


def test_after_a_failure_redis_is_not_asked_again_for_a_while(monkeypatch):
    """A Redis that hangs costs its timeout once, not on every read of a page and its fragments."""
    cache = cache_nobody_answers()
    now = [1000.0]
    monkeypatch.setattr(forgiving.time, "monotonic", lambda: now[0])
    with mock.patch.object(cache._cache, "get", wraps=cache._cache.get) as asked:
        assert cache.get("fragment:a") is None
        assert asked.call_count == 1
        for _ in range(50):
            assert cache.get("fragment:a", "rendered") == "rendered"
        cache.set("fragment:a", "x", 60)
        assert asked.call_count == 1
        now[0] += forgiving.RETRY_AFTER_SECONDS + 0.1
        assert cache.get("fragment:a") is None
        assert asked.call_count == 2  # asked again once the while is over
