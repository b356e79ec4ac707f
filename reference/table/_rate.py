"""Rate limiting of table I/O: reads take credits from the read limiter; puts, deletes and
updates all take credits from the one write limiter (updates have no limiter of their own)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ._api import DelegatingTable, K, ReadWriteTable, U, V
from ._errors import InvalidTableArgumentError

__all__ = ["RateLimiter", "TokenBucketRateLimiter", "RateLimitedTable"]


class RateLimiter(Protocol):
    """Anything with ``async acquire(credits)`` that returns once the credits may be spent."""

    async def acquire(self, credits: int) -> None: ...


class TokenBucketRateLimiter:
    """``rate`` credits per second, at most ``capacity`` (default: one second's worth) saved up.

    A request larger than what is available waits for the difference; a request larger than the
    capacity is allowed (it puts the bucket in debt) so it can never wait forever.
    ``acquired`` counts every credit handed out.
    """

    def __init__(self, rate: float, capacity: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        if not rate > 0:
            raise InvalidTableArgumentError(f"TokenBucketRateLimiter: rate is {rate}; give credits per second > 0")
        self.rate = float(rate)
        self.capacity = float(capacity if capacity is not None else rate)
        self._clock = clock
        self._sleep = sleep
        self._tokens = self.capacity
        self._stamp = clock()
        self.acquired = 0

    async def acquire(self, credits: int) -> None:
        if credits < 0:
            raise InvalidTableArgumentError(f"rate limiter: asked for {credits} credits; give 0 or more")
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        self._tokens -= credits
        self.acquired += credits
        if self._tokens < 0:
            await self._sleep(-self._tokens / self.rate)


def _one_credit(key: Any, value: Any) -> int:
    return 1


class RateLimitedTable(DelegatingTable[K, V, U]):
    """Takes ``credit_function(key, value_or_update)`` credits (default 1) per entry before each
    call: reads from ``read_limiter``, puts/deletes/updates from ``write_limiter`` (a ``None``
    limiter does not limit that direction)."""

    def __init__(self, table: ReadWriteTable[K, V, U], read_limiter: RateLimiter | None = None,
                 write_limiter: RateLimiter | None = None,
                 credit_function: Callable[[Any, Any], int] | None = None) -> None:
        super().__init__(table)
        self.read_limiter = read_limiter
        self.write_limiter = write_limiter
        self.credit_function = credit_function or _one_credit

    async def _take(self, limiter: RateLimiter | None, entries: list[tuple[Any, Any]]) -> None:
        if limiter is not None:
            await limiter.acquire(sum(self.credit_function(k, v) for k, v in entries))

    async def _get(self, key: K) -> V | None:
        await self._take(self.read_limiter, [(key, None)])
        return await self.table.get_async(key)

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        await self._take(self.read_limiter, [(k, None) for k in keys])
        return await self.table.get_all_async(keys)

    async def _put(self, key: K, value: V) -> None:
        await self._take(self.write_limiter, [(key, value)])
        await self.table.put_async(key, value)

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        await self._take(self.write_limiter, entries)
        await self.table.put_all_async(entries)

    async def _delete(self, key: K) -> None:
        await self._take(self.write_limiter, [(key, None)])
        await self.table.delete_async(key)

    async def _delete_all(self, keys: list[K]) -> None:
        await self._take(self.write_limiter, [(k, None) for k in keys])
        await self.table.delete_all_async(keys)

    async def _update(self, key: K, update: U) -> None:
        await self._take(self.write_limiter, [(key, update)])
        await self.table.update_async(key, update)

    async def _update_all(self, entries: list[tuple[K, U]]) -> None:
        await self._take(self.write_limiter, entries)
        await self.table.update_all_async(entries)
