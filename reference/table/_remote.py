"""The remote table: a table over a ``TableReadFunction`` / ``TableWriteFunction`` pair, with
optional rate limiting, retries and batching composed around it (in that order, innermost
first: every attempt of a retry takes rate-limiter credits; a batch is retried as one call)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._api import DelegatingTable, K, ReadWriteTable, U, V
from ._batching import BatchingTable, CompactBatching, CompleteBatching
from ._errors import UnsupportedTableOperationError
from ._functions import TableReadFunction, TableWriteFunction
from ._rate import RateLimitedTable, RateLimiter
from ._retry import RetriableTable, RetryMetrics, RetryPolicy

__all__ = ["RemoteTable", "FunctionTable"]


class FunctionTable(ReadWriteTable[K, V, U]):
    """The bare remote table: each operation is one call of the read or write function."""

    def __init__(self, read_function: TableReadFunction[K, V],
                 write_function: TableWriteFunction[K, V, U] | None = None,
                 name: str = "remote") -> None:
        super().__init__(name)
        if read_function is None:
            raise TypeError(f"table {name!r}: a remote table needs a read function")
        self.read_function = read_function
        self.write_function = write_function
        self.supports_updates = write_function is not None

    def _writer(self) -> TableWriteFunction[K, V, U]:
        if self.write_function is None:
            raise _read_only(self.name)
        return self.write_function

    def _refuse_updates(self) -> UnsupportedTableOperationError:
        if self.write_function is None:
            return _read_only(self.name)
        return super()._refuse_updates()

    async def _get(self, key: K) -> V | None:
        return await self.read_function.get_async(key)

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        return await self.read_function.get_all_async(keys)

    async def _put(self, key: K, value: V) -> None:
        await self._writer().put_async(key, value)

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        await self._writer().put_all_async(entries)

    async def _delete(self, key: K) -> None:
        await self._writer().delete_async(key)

    async def _delete_all(self, keys: list[K]) -> None:
        await self._writer().delete_all_async(keys)

    async def _update(self, key: K, update: U) -> None:
        await self._writer().update_async(key, update)

    async def _update_all(self, entries: list[tuple[K, U]]) -> None:
        await self._writer().update_all_async(entries)

    async def _flush(self) -> None:
        if self.write_function is not None:
            await self.write_function.flush_async()


def _read_only(name: str) -> UnsupportedTableOperationError:
    return UnsupportedTableOperationError(
        f"table {name!r} is read-only (no write function); give the remote table a "
        f"TableWriteFunction to write to it"
    )


class RemoteTable(DelegatingTable[K, V, U]):
    """A table over pluggable I/O functions, optionally rate-limited, retried and batched.

    ``write_retry_policy`` applies to puts, deletes *and updates*, which are counted in the same
    ``write_metrics``; ``write_rate_limiter`` credits are taken by puts, deletes and updates
    alike (``credit_function(key, value_or_update)``, default 1 per entry). A
    ``CompactBatching`` table refuses updates; ``CompleteBatching`` batches them with the rest.
    """

    def __init__(
        self,
        read_function: TableReadFunction[K, V],
        write_function: TableWriteFunction[K, V, U] | None = None,
        *,
        name: str = "remote",
        batching: CompleteBatching | CompactBatching | None = None,
        read_retry_policy: RetryPolicy | None = None,
        write_retry_policy: RetryPolicy | None = None,
        read_rate_limiter: RateLimiter | None = None,
        write_rate_limiter: RateLimiter | None = None,
        credit_function: Callable[[Any, Any], int] | None = None,
    ) -> None:
        table: ReadWriteTable[K, V, U] = FunctionTable(read_function, write_function, name)
        if read_rate_limiter is not None or write_rate_limiter is not None:
            table = RateLimitedTable(table, read_rate_limiter, write_rate_limiter, credit_function)
        self.read_metrics: RetryMetrics | None = None
        self.write_metrics: RetryMetrics | None = None
        if read_retry_policy is not None or write_retry_policy is not None:
            retriable = RetriableTable(
                table, read_retry_policy, write_retry_policy,
                read_function=read_function, write_function=write_function,
            )
            self.read_metrics = retriable.read_metrics
            self.write_metrics = retriable.write_metrics
            table = retriable
        if batching is not None:
            table = BatchingTable(table, batching)
        super().__init__(table, name)
        self.keeps_order = table.keeps_order  # only batching promises it
        self.read_function = read_function
        self.write_function = write_function
        self.batching = batching
