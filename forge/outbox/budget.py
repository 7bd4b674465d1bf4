"""One budget of calls for each forge installation, however many workers send.

GitHub's secondary rate limit (about 80 content-creating requests a minute) and GitLab's limits
count an installation's requests, not a worker's: each sender asks the budget before it sends a
call, and a call the budget cannot take yet waits in the outbox until it can (decision 0025).

The budget is a sliding window kept in Redis, updated atomically by one Lua script on Redis's own
clock: at most `RECHECK_FORGE_BUDGET_CALLS` calls to one budget in any
`RECHECK_FORGE_BUDGET_WINDOW_SECONDS`. A budget is what the forge's own limits count, named by the
forge (`Forge.budget_key`): a GitHub App's installation, a GitHub token, a GitLab server. (A token bucket of that size lets up to twice as many
through in a window that straddles its refill; the forge counts a window.) A forge's Retry-After
is kept beside it, so every sender waits it out, not only the one that was told.

Without Redis configured for it (a laptop, tasks in-process, one sender), the window is kept in the
process. With Redis configured and not answering, it fails closed: calls wait and are tried again
(`BudgetUnavailable`), since sending blind from every worker is what gets an installation blocked."""
import threading
import time
from collections import deque
from functools import cache

from django.conf import settings

# A call reaches the forge a little after the budget granted it, by a time that varies from call to
# call (what the sender does between the two, the network): a grant is counted for this much longer
# than the window, so the forge's own count, made where the calls arrive, stays within it too.
ARRIVAL_MARGIN_SECONDS = 0.25

WINDOW_SCRIPT = """
local key, blocked_key = KEYS[1], KEYS[2]
local limit, window_us = tonumber(ARGV[1]), tonumber(ARGV[2])
local blocked = redis.call('PTTL', blocked_key)
if blocked > 0 then
  return blocked
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window_us)
if redis.call('ZCARD', key) < limit then
  local seq = redis.call('INCR', key .. ':seq')
  redis.call('ZADD', key, now, tostring(seq))
  redis.call('PEXPIRE', key, math.ceil(window_us / 1000) + 1000)
  return 0
end
local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
return math.max(1, math.ceil((tonumber(oldest[2]) + window_us - now) / 1000))
"""


class BudgetUnavailable(Exception):
    """The shared budget cannot be asked (Redis is not answering): the call waits."""


class RedisBudget:
    def __init__(self, url: str, *, calls: int, window: float):
        import redis

        self.calls, self.window = calls, window + ARRIVAL_MARGIN_SECONDS
        self._client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        self._script = self._client.register_script(WINDOW_SCRIPT)

    def acquire(self, forge: str) -> float:
        """Take one call from the budget `forge` (a `Forge.budget_key`): 0 when it may be sent
        now, else the seconds to wait."""
        import redis

        try:
            waited_ms = self._script(keys=[_key(forge), _key(forge) + ":blocked"],
                                     args=[self.calls, int(self.window * 1_000_000)])
        except redis.RedisError as error:
            raise BudgetUnavailable(str(error)) from error
        return int(waited_ms) / 1000

    def hold(self, forge: str, seconds: float) -> None:
        """The forge asked every sender to wait `seconds` (Retry-After, a rate limit's reset)."""
        import redis

        try:
            self._client.set(_key(forge) + ":blocked", "1", px=max(1, int(seconds * 1000)))
        except redis.RedisError as error:
            raise BudgetUnavailable(str(error)) from error


class ProcessBudget:
    """The same window, in this process: where one process sends every call."""

    def __init__(self, *, calls: int, window: float):
        self.calls, self.window = calls, window + ARRIVAL_MARGIN_SECONDS
        self._lock = threading.Lock()
        self._sent: dict[str, deque] = {}
        self._blocked_until: dict[str, float] = {}

    def acquire(self, forge: str) -> float:
        with self._lock:
            now = time.monotonic()
            if (blocked := self._blocked_until.get(forge, 0.0) - now) > 0:
                return blocked
            sent = self._sent.setdefault(forge, deque())
            while sent and sent[0] <= now - self.window:
                sent.popleft()
            if len(sent) < self.calls:
                sent.append(now)
                return 0.0
            return max(0.001, sent[0] + self.window - now)

    def hold(self, forge: str, seconds: float) -> None:
        with self._lock:
            self._blocked_until[forge] = max(self._blocked_until.get(forge, 0.0), time.monotonic() + seconds)


def _key(forge: str) -> str:
    return f"recheck:forge-budget:{forge}"


@cache
def _budget(url: str, calls: int, window: float):
    return RedisBudget(url, calls=calls, window=window) if url else ProcessBudget(calls=calls, window=window)


def forge_budget():
    """The budget the settings configure (built once per process for each configuration)."""
    return _budget(settings.RECHECK_FORGE_BUDGET_REDIS_URL, settings.RECHECK_FORGE_BUDGET_CALLS,
                   float(settings.RECHECK_FORGE_BUDGET_WINDOW_SECONDS))
