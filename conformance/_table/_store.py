"""The harness's own store behind a subject's table: instrumented read/write functions.

It counts what reaches it (PUT entries applied, update entries applied, write calls and how
each ended) and can fail calls on purpose: *transient* failures (retriable, any write call) and
*fatal* ones (not retriable, for one kind of write). Each method yields to the event loop once
before acting, so concurrent operations really interleave.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reference.table import (
    BatchWriteError,
    RecordNotFoundError,
    TableError,
    TableReadFunction,
    TableWriteFunction,
    TransientTableError,
)

__all__ = ["HarnessStore", "InjectedTransientError", "InjectedStoreError"]


class InjectedTransientError(TransientTableError):
    """A retriable failure the harness injected on purpose."""


class InjectedStoreError(TableError):
    """A non-retriable store failure the harness injected on purpose."""


@dataclass
class IoCounts:
    puts: int = 0  # put entries applied
    updates: int = 0  # update entries applied
    deletes: int = 0  # delete entries applied
    write_calls: int = 0
    clean_calls: int = 0  # write calls not failed by an injected fault
    transient_failed: int = 0
    fatal_failed: int = 0
    calls: list[tuple[str, int, str]] = field(default_factory=list)  # (method, entries, outcome)


class HarnessStore(TableReadFunction[Any, Any], TableWriteFunction[Any, Any, Any]):
    """A dict-backed store that is both the read and the write function of a subject's table."""

    def __init__(self, apply_update: Callable[[Any, Any], Any]) -> None:
        self.data: dict[Any, Any] = {}
        self.apply_update = apply_update
        self.counts = IoCounts()
        self.transient_pending = 0
        self.fatal_pending: dict[str, int] = {}

    # ---- faults -----------------------------------------------------------------------
    def fail_next_writes(self, transient: int) -> None:
        self.transient_pending = transient

    def fail_next(self, kind: str) -> None:
        self.fatal_pending[kind] = self.fatal_pending.get(kind, 0) + 1

    def clear_faults(self) -> None:
        self.transient_pending = 0
        self.fatal_pending.clear()

    async def _enter(self, method: str, kind: str, entries: int) -> None:
        await asyncio.sleep(0)
        self.counts.write_calls += 1
        if self.transient_pending:
            self.transient_pending -= 1
            self.counts.transient_failed += 1
            self.counts.calls.append((method, entries, "transient"))
            raise InjectedTransientError(f"harness store: injected transient failure of {method}")
        if self.fatal_pending.get(kind):
            self.fatal_pending[kind] -= 1
            self.counts.fatal_failed += 1
            self.counts.calls.append((method, entries, "fatal"))
            raise InjectedStoreError(f"harness store: injected permanent failure of {method}")
        self.counts.clean_calls += 1
        self.counts.calls.append((method, entries, "ok"))

    def is_retriable(self, exc: BaseException) -> bool:
        return isinstance(exc, InjectedTransientError)

    # ---- reads ------------------------------------------------------------------------
    async def get_async(self, key: Any) -> Any:
        await asyncio.sleep(0)
        return copy.deepcopy(self.data.get(key))

    async def get_all_async(self, keys: list[Any]) -> dict[Any, Any]:
        await asyncio.sleep(0)
        return {k: copy.deepcopy(self.data[k]) for k in keys if k in self.data}

    # ---- writes -----------------------------------------------------------------------
    def _put(self, key: Any, value: Any) -> None:
        self.data[key] = copy.deepcopy(value)
        self.counts.puts += 1

    def _delete(self, key: Any) -> None:
        self.data.pop(key, None)
        self.counts.deletes += 1

    def _update(self, key: Any, update: Any) -> None:
        if key not in self.data:
            raise RecordNotFoundError(f"harness store: no record for key {key!r} to update")
        self.data[key] = self.apply_update(self.data[key], copy.deepcopy(update))
        self.counts.updates += 1

    async def put_async(self, key: Any, value: Any) -> None:
        await self._enter("put_async", "put", 1)
        self._put(key, value)

    async def put_all_async(self, entries: list[tuple[Any, Any]]) -> None:
        await self._enter("put_all_async", "put", len(entries))
        for key, value in entries:
            self._put(key, value)

    async def delete_async(self, key: Any) -> None:
        await self._enter("delete_async", "delete", 1)
        self._delete(key)

    async def delete_all_async(self, keys: list[Any]) -> None:
        await self._enter("delete_all_async", "delete", len(keys))
        for key in keys:
            self._delete(key)

    async def update_async(self, key: Any, update: Any) -> None:
        await self._enter("update_async", "update", 1)
        self._update(key, update)

    async def update_all_async(self, entries: list[tuple[Any, Any]]) -> None:
        await self._enter("update_all_async", "update", len(entries))
        failures: dict[int, BaseException] = {}
        for i, (key, update) in enumerate(entries):
            try:
                self._update(key, update)
            except RecordNotFoundError as exc:
                failures[i] = exc
        if failures:
            raise BatchWriteError.of("harness store: update_all_async", failures, len(entries))
