"""Retries for table I/O, and the retry metrics (defined exactly in docs/tables.md).

One *operation* is one call into the retriable table (``put``, ``put_all`` of a whole list, a
whole batch from a batching table above, ``update``, ...). For each operation:

- ``retry_count`` +1 for every attempt after the first;
- ``success_count`` +1 if the first attempt ended without an I/O failure (a
  ``RecordNotFoundError`` is the store's answer, not an I/O failure);
- ``perm_failure_count`` +1 if the operation ended with an I/O failure (retries exhausted, the
  error is not retriable, or retries are disabled) — counted once per operation;
- ``retry_timer`` gets one sample (seconds from the first attempt to the end) for every
  operation that made at least one retry, however it ended.

So every operation lands in exactly one of: ``success_count``; a ``retry_timer`` sample; or
``perm_failure_count`` without a timer sample (failed on its first and only attempt).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ._api import DelegatingTable, K, ReadWriteTable, U, V
from ._errors import (
    BatchWriteError,
    InvalidTableArgumentError,
    RecordNotFoundError,
    RetriesExhaustedError,
    TransientTableError,
    UnsupportedTableOperationError,
)

__all__ = ["RetryPolicy", "RetryMetrics", "TimerMetric", "RetriableTable"]


def _transient(exc: BaseException) -> bool:
    return isinstance(exc, TransientTableError)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and when to retry a failed table I/O call.

    ``max_retries``: attempts after the first (0 disables retries: a retriable failure is then
    a permanent failure at once). ``backoff``: seconds before the first retry, multiplied by
    ``backoff_factor`` for each further one, capped at ``max_backoff``. ``max_duration``: a
    failure seen this many seconds or more after the first attempt is not retried. ``retry_on``: which
    errors are retriable (default: ``TransientTableError``); the I/O function's
    ``is_retriable`` is consulted too. ``RecordNotFoundError`` is never retried: it is an answer.
    """

    max_retries: int = 3
    backoff: float = 0.0
    backoff_factor: float = 1.0
    max_backoff: float | None = None
    max_duration: float | None = None
    retry_on: Callable[[BaseException], bool] = _transient

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise InvalidTableArgumentError(
                f"RetryPolicy: max_retries is {self.max_retries}; give 0 (no retries) or more"
            )

    def delay(self, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (1 for the first retry)."""
        seconds = self.backoff * (self.backoff_factor ** (retry - 1))
        return min(seconds, self.max_backoff) if self.max_backoff is not None else seconds


@dataclass
class TimerMetric:
    """Durations in seconds: how many samples, their total and the largest."""

    count: int = 0
    total_seconds: float = 0.0
    max_seconds: float = 0.0

    def update(self, seconds: float) -> None:
        self.count += 1
        self.total_seconds += seconds
        self.max_seconds = max(self.max_seconds, seconds)


@dataclass
class RetryMetrics:
    """Counters of one direction (reader or writer) of a retriable table; see module doc."""

    retry_count: int = 0
    success_count: int = 0
    perm_failure_count: int = 0
    retry_timer: TimerMetric = field(default_factory=TimerMetric)


_NEVER_RETRIED = (RecordNotFoundError, InvalidTableArgumentError, UnsupportedTableOperationError)


def _is_io_failure(exc: BaseException) -> bool:
    if isinstance(exc, RecordNotFoundError):
        return False
    if isinstance(exc, BatchWriteError):
        return any(_is_io_failure(e) for e in exc.failures.values())
    return True


class RetriableTable(DelegatingTable[K, V, U]):
    """Retries reads with ``read_policy`` and puts, deletes and updates with ``write_policy``
    (``None``: that direction is not retried and has no metrics).

    A bulk call that fails as a whole is retried as a whole. A bulk call that fails partly
    (``BatchWriteError``) is retried for its retriable failed entries only, and only when none
    of their keys appears again in the call (else retrying would reorder that key's writes;
    those entries then fail permanently).
    """

    def __init__(
        self,
        table: ReadWriteTable[K, V, U],
        read_policy: RetryPolicy | None = None,
        write_policy: RetryPolicy | None = None,
        *,
        read_function: Any = None,
        write_function: Any = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    ) -> None:
        super().__init__(table)
        self.read_policy = read_policy
        self.write_policy = write_policy
        self.read_metrics = RetryMetrics() if read_policy is not None else None
        self.write_metrics = RetryMetrics() if write_policy is not None else None
        self._read_function = read_function
        self._write_function = write_function
        self._clock = clock
        self._sleep = sleep

    # ---- operations -------------------------------------------------------------------
    async def _get(self, key: K) -> V | None:
        return await self._read(f"get of key {key!r}", lambda: self.table.get_async(key))

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        return await self._read(f"get_all of {len(keys)} keys", lambda: self.table.get_all_async(keys))

    async def _put(self, key: K, value: V) -> None:
        await self._write_one(f"put of key {key!r}", lambda: self.table.put_async(key, value))

    async def _delete(self, key: K) -> None:
        await self._write_one(f"delete of key {key!r}", lambda: self.table.delete_async(key))

    async def _update(self, key: K, update: U) -> None:
        await self._write_one(f"update of key {key!r}", lambda: self.table.update_async(key, update))

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        await self._write_bulk("put_all", entries, lambda e: e[0], self.table.put_all_async)

    async def _delete_all(self, keys: list[K]) -> None:
        await self._write_bulk("delete_all", keys, lambda k: k, self.table.delete_all_async)

    async def _update_all(self, entries: list[tuple[K, U]]) -> None:
        await self._write_bulk("update_all", entries, lambda e: e[0], self.table.update_all_async)

    # ---- machinery --------------------------------------------------------------------
    def _retriable(self, policy: RetryPolicy, function: Any, exc: BaseException) -> bool:
        if isinstance(exc, _NEVER_RETRIED) or not isinstance(exc, Exception):
            return False
        if policy.retry_on(exc):
            return True
        return bool(function is not None and function.is_retriable(exc))

    def _may_retry(self, policy: RetryPolicy, retries: int, started: float) -> bool:
        if retries >= policy.max_retries:
            return False
        return policy.max_duration is None or self._clock() - started < policy.max_duration

    async def _read(self, what: str, call: Callable[[], Awaitable[Any]]) -> Any:
        if self.read_policy is None:
            return await call()
        return await self._one(self.read_policy, self.read_metrics, self._read_function, what, call)

    async def _write_one(self, what: str, call: Callable[[], Awaitable[Any]]) -> Any:
        if self.write_policy is None:
            return await call()
        return await self._one(self.write_policy, self.write_metrics, self._write_function, what, call)

    async def _one(self, policy: RetryPolicy, metrics: Any, function: Any, what: str,
                   call: Callable[[], Awaitable[Any]]) -> Any:
        started = self._clock()
        retries = 0
        while True:
            try:
                result = await call()
            except Exception as exc:
                if self._retriable(policy, function, exc) and self._may_retry(policy, retries, started):
                    retries += 1
                    metrics.retry_count += 1
                    await self._sleep(policy.delay(retries))
                    continue
                self._end(metrics, retries, started, failed=_is_io_failure(exc))
                if self._retriable(policy, function, exc):
                    raise RetriesExhaustedError(
                        f"table {self.name!r}: {what} still failed after {retries + 1} attempt(s) "
                        f"({type(exc).__name__}: {exc}); the store keeps failing: check it, or "
                        f"allow more retries in the RetryPolicy"
                    ) from exc
                raise
            self._end(metrics, retries, started, failed=False)
            return result

    async def _write_bulk(self, what: str, items: list[Any], key_of: Callable[[Any], Any],
                          call: Callable[[list[Any]], Awaitable[Any]]) -> None:
        policy, metrics, function = self.write_policy, self.write_metrics, self._write_function
        if policy is None or metrics is None:
            await call(items)
            return
        started = self._clock()
        retries = 0
        remaining = list(range(len(items)))  # positions (in ``items``) still to write
        final: dict[int, BaseException] = {}
        whole: BaseException | None = None  # the call failed as a whole, for every entry
        while True:
            whole = None
            try:
                await call([items[i] for i in remaining])
                failed: dict[int, BaseException] = {}
            except BatchWriteError as exc:
                failed = {remaining[j]: e for j, e in exc.failures.items() if j < len(remaining)}
            except Exception as exc:
                failed = {i: exc for i in remaining}
                whole = exc
            retry = {i: e for i, e in failed.items() if self._retriable(policy, function, e)}
            final.update({i: e for i, e in failed.items() if i not in retry})
            if retry and len(retry) < len(remaining):
                # retrying only some entries must not move them after a later write of the same key
                succeeded_keys = [key_of(items[i]) for i in remaining if i not in failed]
                if any(key_of(items[i]) in succeeded_keys for i in retry):
                    final.update(retry)
                    retry = {}
            if retry and self._may_retry(policy, retries, started):
                retries += 1
                metrics.retry_count += 1
                remaining = sorted(retry)
                await self._sleep(policy.delay(retries))
                continue
            final.update(retry)
            break
        self._end(metrics, retries, started, failed=any(_is_io_failure(e) for e in final.values()))
        if not final:
            return
        if whole is not None and len(final) == len(items) and all(e is whole for e in final.values()):
            only = whole
            if self._retriable(policy, function, only):
                raise RetriesExhaustedError(
                    f"table {self.name!r}: {what} of {len(items)} entries still failed after "
                    f"{retries + 1} attempt(s) ({type(only).__name__}: {only}); check the store "
                    f"or allow more retries"
                ) from only
            raise only
        raise BatchWriteError.of(f"table {self.name!r}: {what}", final, len(items))

    def _end(self, metrics: RetryMetrics, retries: int, started: float, failed: bool) -> None:
        if retries:
            metrics.retry_timer.update(self._clock() - started)
        elif not failed:
            metrics.success_count += 1
        if failed:
            metrics.perm_failure_count += 1
