"""Pluggable I/O of a remote table: ``TableReadFunction`` and ``TableWriteFunction``.

Implement the single-record coroutines; the bulk ones default to one call per entry, awaited
one after another in list order (so two entries for the same key apply in the order given), and
report the entries that failed in one ``BatchWriteError``. A missing record is signalled by
failing ``update_async`` with ``RecordNotFoundError``.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from ._api import each_entry
from ._errors import UnsupportedTableOperationError

__all__ = ["TableReadFunction", "TableWriteFunction"]

K = TypeVar("K")
V = TypeVar("V")
U = TypeVar("U")


class TableReadFunction(Generic[K, V]):
    """Reads records from a store: ``get_async(key)`` returns the record or ``None``."""

    async def get_async(self, key: K) -> V | None:
        raise NotImplementedError(f"{type(self).__name__} must implement get_async(key)")

    async def get_all_async(self, keys: list[K]) -> dict[K, V]:
        """The records of ``keys`` that exist (missing keys are absent from the dict)."""
        found: dict[K, V] = {}
        for key in keys:
            value = await self.get_async(key)
            if value is not None:
                found[key] = value
        return found

    def is_retriable(self, exc: BaseException) -> bool:
        """Whether ``exc`` (raised by this function) is worth retrying; adds to the policy's
        own predicate."""
        return False


class TableWriteFunction(Generic[K, V, U]):
    """Writes records to a store; ``update_async`` applies a partial update to an existing
    record or fails with ``RecordNotFoundError``."""

    async def put_async(self, key: K, value: V) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement put_async(key, value)")

    async def put_all_async(self, entries: list[tuple[K, V]]) -> None:
        await each_entry(f"{type(self).__name__}.put_all_async", entries,
                          lambda e: self.put_async(*e))

    async def delete_async(self, key: K) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement delete_async(key)")

    async def delete_all_async(self, keys: list[K]) -> None:
        await each_entry(f"{type(self).__name__}.delete_all_async", keys, self.delete_async)

    async def update_async(self, key: K, update: U) -> None:
        raise UnsupportedTableOperationError(
            f"{type(self).__name__} does not implement update_async(key, update); implement it "
            f"to support partial updates (fail with RecordNotFoundError for a missing record)"
        )

    async def update_all_async(self, entries: list[tuple[K, U]]) -> None:
        """Apply each (key, update) in list order; entries that fail (``RecordNotFoundError``
        for a missing record) are listed in one ``BatchWriteError``, the others are applied."""
        await each_entry(f"{type(self).__name__}.update_all_async", entries,
                          lambda e: self.update_async(*e))

    async def flush_async(self) -> None:
        return None

    def is_retriable(self, exc: BaseException) -> bool:
        """Whether ``exc`` (raised by this function) is worth retrying; adds to the policy's
        own predicate."""
        return False
