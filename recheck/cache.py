"""The cache as a help, never a need: Redis down, full or slow is a miss, never an error.

Everything Recheck keeps in the cache (pages, the gate's looked-up answers, the findings lists,
what a pull request changes, the API's throttle counts) can be worked out again from the
database, so a request that finds Redis gone is answered the slow way instead of with a 500. Each
failure is logged, and the process then leaves Redis alone for a few seconds (every read a miss,
every write dropped) rather than wait on it again for each read. The throttles count nothing
while Redis is away (they let requests through), as every other cached answer is worked out
afresh.

What never changes under its key (a kept page, whose key holds everything its bytes depend on) is
also kept near: in the process, the most recently read first, up to `NEAR_BYTES`, so a page read
again and again costs no round trip to Redis (`get_near`, `set_near`). Nothing is ever stale there,
since a key is never given other bytes; `cache.clear()` empties it with Redis."""
import logging
import threading
import time
from collections import OrderedDict

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
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


# The near memory's bound, in characters (a page is text), for each process.
NEAR_BYTES = 32 * 1024 * 1024


class _Near:
    """The most recently read entries of a cache that never change under their key, in the process."""

    def __init__(self, bound: int):
        self.bound, self.size = bound, 0
        self.entries: OrderedDict[str, str] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: str):
        with self.lock:
            value = self.entries.get(key)
            if value is not None:
                self.entries.move_to_end(key)
            return value

    def set(self, key: str, value: str) -> None:
        if not isinstance(value, str) or len(value) > self.bound // 8:
            return  # one entry never takes more than an eighth of it
        with self.lock:
            old = self.entries.pop(key, None)
            self.size += len(value) - (len(old) if old is not None else 0)
            self.entries[key] = value
            while self.size > self.bound:
                _, dropped = self.entries.popitem(last=False)
                self.size -= len(dropped)

    def forget(self, key: str | None = None) -> None:
        with self.lock:
            if key is None:
                self.entries.clear()
                self.size = 0
            else:
                old = self.entries.pop(key, None)
                self.size -= len(old) if old is not None else 0


# One near memory for each Redis (by its address) in the process.
_NEAR: dict[str, _Near] = {}


class _KeptClient(RedisCacheClient):
    """Django's Redis client, with one `redis.Redis` a connection pool instead of one made for each
    read and write (making one sets up a few hundred response callbacks: more than a small read
    of a page costs). A `redis.Redis` is shared safely: it takes a connection from its pool for
    each command."""

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        clients = self.__dict__.setdefault("_clients", {})
        client = clients.get(id(pool))
        if client is None:
            client = clients[id(pool)] = self._client(connection_pool=pool)
        return client


class ForgivingRedisCache(RedisCache):
    """Django's Redis cache whose reads miss and writes are dropped while Redis cannot answer."""

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _KeptClient
        # Found once, not on every read: Django makes a cache object per thread, each of which
        # shares its Redis's one near memory.
        self._near = _NEAR.setdefault(repr(self._servers), _Near(NEAR_BYTES))

    get_many = _forgiving("get_many", {})
    has_key = _forgiving("has_key", False)
    set_many = _forgiving("set_many", [])
    add = _forgiving("add", False)
    touch = _forgiving("touch", False)

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

    def clear(self):
        self._near.forget()
        return self._forgiven("clear", None, lambda: super(ForgivingRedisCache, self).clear())

    def delete(self, key, version=None):
        self._forget_near(key, version)
        return self._forgiven("delete", False, lambda: super(ForgivingRedisCache, self).delete(key, version))

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        self._forget_near(key, version)  # whatever was kept near under it is not what is now written
        return self._forgiven("set", None, lambda: super(ForgivingRedisCache, self).set(key, value, timeout, version))

    def delete_many(self, keys, version=None):
        keys = list(keys)
        for key in keys:
            self._forget_near(key, version)
        return self._forgiven("delete_many", None, lambda: super(ForgivingRedisCache, self).delete_many(keys, version))

    def _forget_near(self, key, version=None) -> None:
        self._near.forget(self.make_key(key, version=version))

    def get_near(self, key: str, default=None):
        """The entry `key`, which never changes under its key: from the process when it was read or
        written here lately, else from Redis (and kept near)."""
        made = self.make_key(key)
        value = self._near.get(made)
        if value is None:
            value = self.get(key)
            if value is None:
                return default
            self._near.set(made, value)
        return value

    def set_near(self, key: str, value, timeout=DEFAULT_TIMEOUT) -> None:
        """Keep `value` under `key`, which it never changes under, in Redis and near."""
        self.set(key, value, timeout)
        self._near.set(self.make_key(key), value)
