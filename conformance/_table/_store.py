"""The harness's own store behind a subject's table: instrumented read/write functions.

It counts what reaches it (PUT entries applied, update entries applied, write calls and how
each ended, the entries of every call, every entry applied) and can fail calls on purpose:
*transient* failures (retriable, any write call) and *fatal* ones (not retriable, for one kind
of write, optionally after letting some calls of that kind through); and single *entries*
(``fail_entry``: the writes of one key, transiently or permanently, in single calls or in the
middle of a bulk call, whose other entries are applied and the failed ones listed in a
``BatchWriteError``, as a store answering row by row does). Each method yields to the event loop before
acting (``read_yields`` / ``write_yields`` times, once by default; concurrent histories draw
them, so a call's latency varies), so concurrent operations really interleave. A read may also
answer ``answer_yields`` yields *after* taking its value (0 by default; concurrent histories draw
it): as a remote store reads when the request arrives and its answer travels back, a write can
land between the read's value and its answer, so a caller caching what it read may cache a
record older than a write that has already completed.

The table writes through a *boundary*: the store itself, or, when the subject brings its own
write function (built over the store), an ``ObservedWriteFunction`` around it. The boundary is
where calls are counted for the retry metrics and the rate-limiter credits (one call there is
one attempt of the table's retry layer, however the write function reaches the store) and where
transient failures are injected (a whole attempt fails). ``CountingRateLimiter`` is the limiter
the harness gives a rate-limited table.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reference import canonical
from reference.table import (
    BatchWriteError,
    InvalidTableArgumentError,
    RecordNotFoundError,
    TableError,
    TableReadFunction,
    TableWriteFunction,
    TransientTableError,
)

__all__ = ["HarnessStore", "InjectedTransientError", "InjectedStoreError", "ObservedWriteFunction",
           "CountingRateLimiter"]


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
    #: (key, value or update; None for a delete) of every write call, in order, with its outcome
    entries: list[tuple[list[tuple[Any, Any]], str]] = field(default_factory=list)

    def record(self, method: str, entries: list[tuple[Any, Any]], outcome: str) -> None:
        self.write_calls += 1
        if outcome == "transient":
            self.transient_failed += 1
        elif outcome == "fatal":
            self.fatal_failed += 1
        else:
            self.clean_calls += 1
        self.calls.append((method, len(entries), outcome))
        self.entries.append((entries, outcome))


def _single(method: str, args: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """The (key, value-or-update) entries of one write call."""
    if method in ("put_async", "update_async"):
        return [(args[0], args[1])]
    if method == "delete_async":
        return [(args[0], None)]
    if method == "delete_all_async":
        return [(k, None) for k in args[0]]
    return [tuple(e) for e in args[0]]  # type: ignore[misc]


class CountingRateLimiter:
    """The rate limiter the harness gives a table: never makes it wait (it yields once), and
    counts every credit taken."""

    def __init__(self) -> None:
        self.taken = 0
        self.requests: list[int] = []

    async def acquire(self, credits: int) -> None:
        if not isinstance(credits, int) or isinstance(credits, bool) or credits < 0:
            raise InvalidTableArgumentError(
                f"harness rate limiter: asked for {credits!r} credits; give a whole number >= 0"
            )
        self.taken += credits
        self.requests.append(credits)
        await asyncio.sleep(0)


class HarnessStore(TableReadFunction[Any, Any], TableWriteFunction[Any, Any, Any]):
    """A dict-backed store that is both the read and the write function of a subject's table."""

    def __init__(self, apply_update: Callable[[Any, Any], Any]) -> None:
        self.data: dict[Any, Any] = {}
        self.apply_update = apply_update
        self.counts = IoCounts()
        self.transient_pending = 0
        self.fatal_pending: dict[str, int] = {}
        self.fatal_skip: dict[str, int] = {}
        self.limiter = CountingRateLimiter()
        #: (kind, key, value or update; None for a delete) of every entry applied, in order
        self.applied: list[tuple[str, Any, Any]] = []
        #: an entry fault: (kind, key, failures left, permanent); see ``fail_entry``
        self.entry_fault: tuple[str, Any, int, bool] | None = None
        self.entry_failures = 0
        #: how many times a read / a write call yields to the event loop before acting
        self.read_yields = 1
        self.write_yields = 1
        #: how many times a read yields after taking its value, before answering
        self.answer_yields = 0
        #: where the table's writes enter (see module doc); set by ``writer``
        self.boundary: HarnessStore | ObservedWriteFunction = self

    # ---- what a subject's factory is given ---------------------------------------------
    def reader(self, read_function: Callable[[Any], Any] | None = None) -> Any:
        """The read function to give the table: the store, or the subject's own over it."""
        return self if read_function is None else read_function(self)

    def writer(self, write_function: Callable[[Any], Any] | None = None) -> Any:
        """The write function to give the table: the store, or the subject's own over it,
        observed (it becomes the boundary)."""
        if write_function is None:
            self.boundary = self
            return self
        self.boundary = ObservedWriteFunction(write_function(self))
        return self.boundary

    # ---- faults -----------------------------------------------------------------------
    def fail_next_writes(self, transient: int) -> None:
        self.transient_pending = transient

    def fail_next(self, kind: str, skip: int = 0) -> None:
        """The next write call of ``kind`` (put, update, delete) fails permanently, after
        ``skip`` calls of that kind went through."""
        self.fatal_pending[kind] = self.fatal_pending.get(kind, 0) + 1
        self.fatal_skip[kind] = skip

    def fail_entry(self, kind: str, key: Any, times: int, permanent: bool) -> None:
        """The next ``times`` entries of ``kind`` for ``key`` that reach the store fail, in
        whatever call they come (single or bulk; in a bulk call the other entries are applied
        and the failed ones listed in a ``BatchWriteError``), before being applied: transiently
        (``InjectedTransientError``, retriable) or permanently (``InjectedStoreError``)."""
        self.entry_fault = (kind, key, times, permanent)

    def clear_faults(self) -> None:
        self.entry_fault = None
        self.transient_pending = 0
        self.fatal_pending.clear()
        self.fatal_skip.clear()
        if self.boundary is not self:
            self.boundary.clear_faults()

    async def _enter(self, method: str, kind: str, entries: list[tuple[Any, Any]]) -> None:
        """One write call of ``kind`` with these (key, value-or-update) entries arrives."""
        for _ in range(self.write_yields):
            await asyncio.sleep(0)
        listed = [tuple(e) for e in entries]
        if self.transient_pending:
            self.transient_pending -= 1
            self.counts.record(method, listed, "transient")
            raise InjectedTransientError(f"harness store: injected transient failure of {method}")
        if self.fatal_pending.get(kind):
            if self.fatal_skip.get(kind):
                self.fatal_skip[kind] -= 1
            else:
                self.fatal_pending[kind] -= 1
                self.counts.record(method, listed, "fatal")
                raise InjectedStoreError(f"harness store: injected permanent failure of {method}")
        self.counts.record(method, listed, "ok")

    def is_retriable(self, exc: BaseException) -> bool:
        return isinstance(exc, InjectedTransientError)

    # ---- reads ------------------------------------------------------------------------
    async def _read(self, take: Callable[[], Any]) -> Any:
        """A read: ``read_yields`` yields, the value taken, ``answer_yields`` yields, answered."""
        for _ in range(self.read_yields):
            await asyncio.sleep(0)
        value = take()
        for _ in range(self.answer_yields):
            await asyncio.sleep(0)
        return value

    async def get_async(self, key: Any) -> Any:
        return await self._read(lambda: copy.deepcopy(self.data.get(key)))

    async def get_all_async(self, keys: list[Any]) -> dict[Any, Any]:
        return await self._read(lambda: {k: copy.deepcopy(self.data[k]) for k in keys if k in self.data})

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

    def _entry(self, kind: str, key: Any, payload: Any, apply: Callable[[Any, Any], None]) -> None:
        """One entry of a write call reaches the store: it fails if an entry fault is armed
        for it, else it is applied (and logged in ``applied``)."""
        fault = self.entry_fault
        if fault is not None and fault[0] == kind and canonical(fault[1]) == canonical(key) and fault[2] > 0:
            self.entry_fault = (fault[0], fault[1], fault[2] - 1, fault[3])
            self.entry_failures += 1
            if fault[3]:
                raise InjectedStoreError(f"harness store: injected permanent failure of the {kind} of key {key!r}")
            raise InjectedTransientError(f"harness store: injected transient failure of the {kind} of key {key!r}")
        apply(key, payload)
        self.applied.append((kind, key, copy.deepcopy(payload)))

    def _bulk(self, what: str, kind: str, entries: list[tuple[Any, Any]],
              apply: Callable[[Any, Any], None]) -> None:
        """A bulk call applies its entries in order; the ones that fail (a missing record, an
        entry fault) are listed in one ``BatchWriteError``, the others are applied."""
        failures: dict[int, BaseException] = {}
        for i, (key, payload) in enumerate(entries):
            try:
                self._entry(kind, key, payload, apply)
            except (RecordNotFoundError, InjectedTransientError, InjectedStoreError) as exc:
                failures[i] = exc
        if failures:
            raise BatchWriteError.of(f"harness store: {what}", failures, len(entries))

    async def put_async(self, key: Any, value: Any) -> None:
        await self._enter("put_async", "put", [(key, value)])
        self._entry("put", key, value, self._put)

    async def put_all_async(self, entries: list[tuple[Any, Any]]) -> None:
        await self._enter("put_all_async", "put", entries)
        self._bulk("put_all_async", "put", [tuple(e) for e in entries], self._put)  # type: ignore[misc]

    async def delete_async(self, key: Any) -> None:
        await self._enter("delete_async", "delete", [(key, None)])
        self._entry("delete", key, None, lambda k, _: self._delete(k))

    async def delete_all_async(self, keys: list[Any]) -> None:
        await self._enter("delete_all_async", "delete", [(k, None) for k in keys])
        self._bulk("delete_all_async", "delete", [(k, None) for k in keys], lambda k, _: self._delete(k))

    async def update_async(self, key: Any, update: Any) -> None:
        await self._enter("update_async", "update", [(key, update)])
        self._entry("update", key, update, self._update)

    async def update_all_async(self, entries: list[tuple[Any, Any]]) -> None:
        await self._enter("update_all_async", "update", entries)
        self._bulk("update_all_async", "update", [tuple(e) for e in entries], self._update)  # type: ignore[misc]


class ObservedWriteFunction(TableWriteFunction[Any, Any, Any]):
    """The subject's own write function, observed: every call into it is counted (with its
    entries and how it ended) and may be failed transiently before it runs. Every method is
    forwarded as called (a bulk call stays one bulk call, whatever the function does with it)."""

    def __init__(self, function: Any) -> None:
        self.function = function
        self.counts = IoCounts()
        self.transient_pending = 0

    def fail_next_writes(self, transient: int) -> None:
        self.transient_pending = transient

    def clear_faults(self) -> None:
        self.transient_pending = 0

    def is_retriable(self, exc: BaseException) -> bool:
        return isinstance(exc, InjectedTransientError) or bool(self.function.is_retriable(exc))

    async def _call(self, method: str, *args: Any) -> None:
        listed = _single(method, args)
        if self.transient_pending:
            self.transient_pending -= 1
            await asyncio.sleep(0)
            self.counts.record(method, listed, "transient")
            raise InjectedTransientError(f"harness: injected transient failure of {method}")
        try:
            await getattr(self.function, method)(*args)
        except Exception as exc:
            answer = isinstance(exc, RecordNotFoundError) or (
                isinstance(exc, BatchWriteError)
                and all(isinstance(e, RecordNotFoundError) for e in exc.failures.values()))
            self.counts.record(method, listed, "ok" if answer else "fatal")
            raise
        self.counts.record(method, listed, "ok")

    async def put_async(self, key: Any, value: Any) -> None:
        await self._call("put_async", key, value)

    async def put_all_async(self, entries: list[tuple[Any, Any]]) -> None:
        await self._call("put_all_async", entries)

    async def delete_async(self, key: Any) -> None:
        await self._call("delete_async", key)

    async def delete_all_async(self, keys: list[Any]) -> None:
        await self._call("delete_all_async", keys)

    async def update_async(self, key: Any, update: Any) -> None:
        await self._call("update_async", key, update)

    async def update_all_async(self, entries: list[tuple[Any, Any]]) -> None:
        await self._call("update_all_async", entries)

    async def flush_async(self) -> None:
        await self.function.flush_async()
