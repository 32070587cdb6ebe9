"""The console's rate limits, each refused in words: sign-in attempts per address, failed sign-ins per account, and
API requests per token.

The per-address and per-token limits are Litestar's RateLimitMiddleware, keyed by the caller's address or by the
token's SHA-256 (never the token itself). The per-account limit counts failed sign-ins of one email, since an
attacker spreading guesses over many addresses must still not get many tries at one account. With
VERITY_RATE_LIMIT_URL (redis://...) every web process counts in the same Redis, so several processes share one
limit; without it each process counts for itself.
"""

from __future__ import annotations

import hashlib
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from litestar import Request
from litestar.middleware.rate_limit import RateLimitConfig

from app.shell.identity import bearer_token

API_STORE = "api_rate_limit"
API_REQUESTS_PER_MINUTE = "api_requests_per_minute"  # the app state's key: the limit, for the refusal's words


def _with_token(request: Request[Any, Any, Any]) -> bool:
    return bearer_token(request) is not None


def _token_key(request: Request[Any, Any, Any]) -> str:
    return "token:" + hashlib.sha256((bearer_token(request) or "").encode()).hexdigest()[:32]


def api_rate_limit(per_minute: int) -> RateLimitConfig:
    """At most `per_minute` API requests a minute for each token (a session's browser is not limited here): the
    limit of the /api router (app/factory.py), so it sees API requests alone."""
    return RateLimitConfig(
        rate_limit=("minute", per_minute), check_throttle_handler=_with_token,
        identifier_for_request=_token_key, store=API_STORE,
    )


def api_refusal(per_minute: int) -> str:
    return (f"Too many requests with this API token: at most {per_minute:,} a minute. Wait a minute, then try "
            "again.")


class Counter(Protocol):
    def add(self, key: str, window_seconds: int) -> int:
        """Counts one more in the window that holds now; the count so far in it."""
        ...

    def count(self, key: str, window_seconds: int) -> int: ...

    def clear(self, key: str, window_seconds: int) -> None: ...


@dataclass
class MemoryCounter:
    """Fixed windows in this process's memory."""

    _counts: dict[str, tuple[int, int]] = field(default_factory=dict)  # key -> (window, count)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, key: str, window_seconds: int) -> int:
        window = int(time.time()) // window_seconds
        with self._lock:
            held, count = self._counts.get(key, (window, 0))
            count = count + 1 if held == window else 1
            self._counts[key] = (window, count)
            return count

    def count(self, key: str, window_seconds: int) -> int:
        window = int(time.time()) // window_seconds
        with self._lock:
            held, count = self._counts.get(key, (window, 0))
            return count if held == window else 0

    def clear(self, key: str, window_seconds: int) -> None:
        with self._lock:
            self._counts.pop(key, None)


class RedisCounter:
    """Fixed windows in Redis, shared by every web process: INCR and EXPIRE on one key per window."""

    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url, socket_timeout=2)

    def _key(self, key: str, window_seconds: int) -> str:
        return f"verity:limit:{key}:{int(time.time()) // window_seconds}"

    def add(self, key: str, window_seconds: int) -> int:
        name = self._key(key, window_seconds)
        with self.client.pipeline() as pipe:
            count, _ = pipe.incr(name).expire(name, window_seconds).execute()
        return int(count)

    def count(self, key: str, window_seconds: int) -> int:
        return int(self.client.get(self._key(key, window_seconds)) or 0)

    def clear(self, key: str, window_seconds: int) -> None:
        self.client.delete(self._key(key, window_seconds))


@dataclass
class AccountSignInLimit:
    """At most `failures` failed sign-ins of one account in `window_seconds`; a sign-in that succeeds starts over."""

    counter: Counter
    failures: int = 10
    window_seconds: int = 900

    @staticmethod
    def _key(email: str) -> str:
        return "sign-in:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]

    def refused(self, email: str) -> bool:
        return self.counter.count(self._key(email), self.window_seconds) >= self.failures

    def failed(self, email: str) -> None:
        self.counter.add(self._key(email), self.window_seconds)

    def succeeded(self, email: str) -> None:
        self.counter.clear(self._key(email), self.window_seconds)

    @property
    def words(self) -> str:
        minutes = max(1, self.window_seconds // 60)
        return (f"Too many failed sign-ins to this account: at most {self.failures} in {minutes} minutes. Wait, "
                "then try again, or ask an owner to set a new password.")


def counter_for(url: str | None) -> Counter:
    return RedisCounter(url) if url else MemoryCounter()


def shared_stores(url: str | None) -> dict[str, Any] | None:
    """The rate-limit middlewares' stores in Redis, shared by every web process; None: Litestar's in memory."""
    if not url:
        return None
    from litestar.stores.redis import RedisStore

    return {store: RedisStore.with_client(url, namespace=f"verity-{store}") for store in ("rate_limit", API_STORE)}
