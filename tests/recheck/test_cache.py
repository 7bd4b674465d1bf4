"""The cache as a help: with Redis not answering, a read is a miss and a write is dropped, each
logged, never an error."""
import logging

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
    assert caplog.text.count("cache unavailable") == 7
