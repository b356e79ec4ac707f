"""Batching of table writes.

``CompleteBatching``: every put, delete and update is kept and sent in bulk calls when the batch
is full (``max_batch_size`` operations) or ``max_batch_delay`` seconds after its first
operation, or on ``flush``. Unlike Samza, the order of operations on the same key is kept across
types: a batch is cut into rounds so that a key's operations of different types land in
successive rounds (bulk calls run round after round; within a round each key appears under one
type only). Only the operations that failed fail (a ``BatchWriteError`` from the bulk call says
which). Batches run one after another, never overlapping.

``CompactBatching``: only the last put/delete per key is sent; updates cannot be compacted
(two partial updates do not combine into one), so a compact-batching table refuses them.

Reads take their turn in the order of issue: a get sees every write issued before it and none
issued after it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from ._api import DelegatingTable, K, ReadWriteTable, U, V
from ._errors import BatchWriteError, InvalidTableArgumentError, TableError, UnsupportedTableOperationError

__all__ = ["CompleteBatching", "CompactBatching", "BatchingTable"]


@dataclass(frozen=True)
class CompleteBatching:
    """Keep every operation; ``max_batch_size`` operations per batch, sent at the latest
    ``max_batch_delay`` seconds after the batch's first operation."""

    max_batch_size: int = 100
    max_batch_delay: float = 0.01
    compact = False

    def __post_init__(self) -> None:
        if self.max_batch_size < 1:
            raise InvalidTableArgumentError(
                f"{type(self).__name__}: max_batch_size is {self.max_batch_size}; give 1 or more"
            )
        if self.max_batch_delay < 0:
            raise InvalidTableArgumentError(
                f"{type(self).__name__}: max_batch_delay is {self.max_batch_delay}; give 0 or more seconds"
            )


@dataclass(frozen=True)
class CompactBatching(CompleteBatching):
    """Keep only the last put/delete per key; refuses updates."""

    compact = True


_ORDER = ("put", "update", "delete")


@dataclass
class _Op:
    kind: str
    key: Any
    value: Any
    future: asyncio.Future[None]
    followers: list[asyncio.Future[None]] = field(default_factory=list)

    def settle(self, error: BaseException | None) -> None:
        for fut in [self.future, *self.followers]:
            if fut.done():
                continue
            if error is None:
                fut.set_result(None)
            else:
                fut.set_exception(error)


class BatchingTable(DelegatingTable[K, V, U]):
    """Batches the writes of ``table`` (see module doc)."""

    def __init__(self, table: ReadWriteTable[K, V, U], batching: CompleteBatching) -> None:
        super().__init__(table)
        self.batching = batching
        self.keeps_order = True  # batches run one after another, each key's order kept in rounds
        if batching.compact:
            self.supports_updates = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: list[_Op] = []
        self._timer: asyncio.TimerHandle | None = None
        self._tail: asyncio.Future[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def _refuse_updates(self) -> UnsupportedTableOperationError:
        if self.batching.compact:
            return UnsupportedTableOperationError(
                f"table {self.name!r}: compact batching cannot carry partial updates (they do not "
                f"combine into one); use CompleteBatching for a table that receives updates"
            )
        return super()._refuse_updates()

    # ---- writes ---------------------------------------------------------------------
    async def _put(self, key: K, value: V) -> None:
        await self._submit("put", key, value)

    async def _delete(self, key: K) -> None:
        await self._submit("delete", key, None)

    async def _update(self, key: K, update: U) -> None:
        await self._submit("update", key, update)

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        await self._gather("put_all", [self._submit("put", k, v) for k, v in entries])

    async def _delete_all(self, keys: list[K]) -> None:
        await self._gather("delete_all", [self._submit("delete", k, None) for k in keys])

    async def _update_all(self, entries: list[tuple[K, U]]) -> None:
        await self._gather("update_all", [self._submit("update", k, u) for k, u in entries])

    async def _gather(self, what: str, futures: list[asyncio.Future[None]]) -> None:
        outcomes = await asyncio.gather(*futures, return_exceptions=True)
        failures = {i: o for i, o in enumerate(outcomes) if isinstance(o, BaseException)}
        if failures:
            raise BatchWriteError.of(f"table {self.name!r}: {what}", failures, len(outcomes))

    # ---- reads see earlier writes ---------------------------------------------------
    async def _get(self, key: K) -> V | None:
        return await self._in_turn(lambda: self.table.get_async(key))

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        return await self._in_turn(lambda: self.table.get_all_async(keys))

    async def _in_turn(self, read: Any) -> Any:
        """Run a read in its place in the order of issue: after every write issued before it
        (pending ones are sent now) and before any write issued after it."""
        loop = self._bind()
        self._start_all()
        previous, done = self._tail, loop.create_future()
        self._tail = done
        try:
            if previous is not None:
                await asyncio.shield(previous)
            return await read()
        finally:
            if not done.done():
                done.set_result(None)
            if self._tail is done:
                self._tail = None

    async def _flush(self) -> None:
        await self._drain()
        await self.table.flush_async()

    # ---- machinery ------------------------------------------------------------------
    def _bind(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            if self._pending or self._tail is not None:
                raise TableError(
                    f"table {self.name!r}: used from a second event loop while writes from the "
                    f"first are still pending; flush the table before switching loops"
                )
            self._loop = loop
        return loop

    def _submit(self, kind: str, key: Any, value: Any) -> asyncio.Future[None]:
        """Queue one write now (order is the order of calls) and return its future."""
        loop = self._bind()
        future: asyncio.Future[None] = loop.create_future()
        if self.batching.compact:
            for i, queued in enumerate(self._pending):
                if queued.key == key:
                    # the later write wins; the earlier one completes when the later one does
                    del self._pending[i]
                    self._pending.append(_Op(kind, key, value, future,
                                             [queued.future, *queued.followers]))
                    break
            else:
                self._pending.append(_Op(kind, key, value, future))
        else:
            self._pending.append(_Op(kind, key, value, future))
        size = self.batching.max_batch_size
        while len(self._pending) >= size:
            self._start(self._pending[:size])
            del self._pending[:size]
        if self._pending and self._timer is None:
            self._timer = loop.call_later(self.batching.max_batch_delay, self._on_timer)
        elif not self._pending:
            self._cancel_timer()
        return future

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_timer(self) -> None:
        self._timer = None
        self._start_all()

    def _start_all(self) -> None:
        size = self.batching.max_batch_size
        while self._pending:
            self._start(self._pending[:size])
            del self._pending[:size]
        self._cancel_timer()

    def _start(self, batch: list[_Op]) -> None:
        loop = self._bind()
        previous, done = self._tail, loop.create_future()
        self._tail = done
        task = loop.create_task(self._run_batch(batch, previous, done))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self) -> None:
        """Wait for every write issued before this call (not for later ones: a read must not
        see a write issued after it)."""
        self._bind()
        self._start_all()
        tail = self._tail  # batches run in order: this one ends after all earlier ones
        if tail is not None:
            await asyncio.shield(tail)

    async def _run_batch(self, batch: list[_Op], previous: asyncio.Future[None] | None,
                   done: asyncio.Future[None]) -> None:
        try:
            if previous is not None:
                await asyncio.shield(previous)
            for round_ in _rounds(batch):
                for kind in _ORDER:
                    ops = round_.get(kind)
                    if ops:
                        await self._send(kind, ops)
        except BaseException as exc:  # never leave callers waiting
            for op in batch:
                op.settle(exc if isinstance(exc, Exception) else TableError(f"batch aborted: {exc!r}"))
            if not isinstance(exc, Exception):
                raise
        finally:
            if not done.done():
                done.set_result(None)
            if self._tail is done:
                self._tail = None

    async def _send(self, kind: str, ops: list[_Op]) -> None:
        try:
            if kind == "put":
                await self.table.put_all_async([(op.key, op.value) for op in ops])
            elif kind == "update":
                await self.table.update_all_async([(op.key, op.value) for op in ops])
            else:
                await self.table.delete_all_async([op.key for op in ops])
        except BatchWriteError as exc:
            for i, op in enumerate(ops):
                op.settle(exc.failures.get(i))
        except Exception as exc:
            for op in ops:
                op.settle(exc)
        else:
            for op in ops:
                op.settle(None)


def _rounds(batch: list[_Op]) -> list[dict[str, list[_Op]]]:
    """Cut a batch so each key's operations keep their order: a key's next operation of the
    same type may share the round of its previous one, of another type goes one round later."""
    rounds: list[dict[str, list[_Op]]] = []
    last: dict[Any, tuple[int, str]] = {}
    for op in batch:
        seen = last.get(op.key)
        index = 0 if seen is None else (seen[0] if seen[1] == op.kind else seen[0] + 1)
        while len(rounds) <= index:
            rounds.append({})
        rounds[index].setdefault(op.kind, []).append(op)
        last[op.key] = (index, op.kind)
    return rounds
