"""The cache as a help, never a need: Redis down, full or slow is a miss, never an error.

Everything Recheck keeps in the cache (pages, the gate's looked-up answers, the findings lists,
what a pull request changes, the API's throttle counts) can be worked out again from the
database, so a request that finds Redis gone is answered the slow way instead of with a 500. Each
failure is logged, and the process then leaves Redis alone for a few seconds (every read a miss,
every write dropped) rather than wait on it again for each read. The throttles count nothing
while Redis is away (they let requests through), as every other cached answer is worked out
afresh."""
import logging
import time

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# After a failure a process leaves Redis alone for a few seconds: a Redis that hangs would
# otherwise cost its timeout (a second) on every read of a page and of each fragment in it.
RETRY_AFTER_SECONDS = 5.0
# When each Redis (by its address) may be asked again, in this process.
_ASK_AGAIN_AT: dict[str, float] = {}


def _forgiving(name: str, fallback):
    def method(self, *args, **kwargs):
        return self._forgiven(name, fallback, lambda: getattr(super(ForgivingRedisCache, self), name)(*args, **kwargs))

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
        return self._forgiven("get", default, lambda: super(ForgivingRedisCache, self).get(key, default, version))

    def _forgiven(self, name: str, fallback, call):
        where = repr(self._servers)
        if time.monotonic() < _ASK_AGAIN_AT.get(where, 0.0):
            return fallback
        try:
            return call()
        except RedisError as error:
            _ASK_AGAIN_AT[where] = time.monotonic() + RETRY_AFTER_SECONDS
            logger.warning("cache unavailable (%s), not asked again for %.0f s: %s", name, RETRY_AFTER_SECONDS, error)
            return fallback
