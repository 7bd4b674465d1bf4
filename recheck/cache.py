"""The cache as a help, never a need: Redis down, full or slow is a miss, never an error.

Everything Recheck keeps in the cache (pages, the gate's looked-up answers, the findings lists,
what a pull request changes, the API's throttle counts) can be worked out again from the
database, so a request that finds Redis gone is answered the slow way instead of with a 500. Each
failure is logged. The throttles count nothing while Redis is away (they let requests through),
as every other cached answer is worked out afresh."""
import logging

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)


def _forgiving(name: str, fallback):
    def method(self, *args, **kwargs):
        try:
            return getattr(super(ForgivingRedisCache, self), name)(*args, **kwargs)
        except RedisError as error:
            logger.warning("cache unavailable (%s): %s", name, error)
            return fallback

    method.__name__ = name
    return method


class ForgivingRedisCache(RedisCache):
    """Django's Redis cache whose reads miss and writes are dropped while Redis cannot answer."""

    get_many = _forgiving("get_many", {})
    has_key = _forgiving("has_key", False)
    set = _forgiving("set", None)
    set_many = _forgiving("set_many", [])
    add = _forgiving("add", False)
    touch = _forgiving("touch", False)
    delete = _forgiving("delete", False)
    delete_many = _forgiving("delete_many", None)
    clear = _forgiving("clear", None)

    def get(self, key, default=None, version=None):  # the miss is the caller's default
        try:
            return super().get(key, default, version)
        except RedisError as error:
            logger.warning("cache unavailable (get): %s", error)
            return default
