"""Tables without partial updates: a local in-memory table and a caching table.

Both refuse ``update``/``update_all`` when the method is called (as in Samza, where only remote
tables take updates): a local store has no merge function, and a cache cannot know what an
update does to the cached record.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from ._api import DelegatingTable, K, ReadWriteTable, U, V

__all__ = ["LocalTable", "CachingTable"]


class LocalTable(ReadWriteTable[K, V, U]):
    """A table over a local mapping (a dict unless ``store`` is given); no partial updates."""

    supports_updates = False

    def __init__(self, store: MutableMapping[Any, Any] | None = None, name: str = "local") -> None:
        super().__init__(name)
        self.store: MutableMapping[Any, Any] = {} if store is None else store

    async def _get(self, key: K) -> V | None:
        return self.store.get(key)

    async def _put(self, key: K, value: V) -> None:
        self.store[key] = value

    async def _delete(self, key: K) -> None:
        self.store.pop(key, None)


class CachingTable(DelegatingTable[K, V, U]):
    """A read-through, write-through cache in front of ``table``; no partial updates."""

    def __init__(self, table: ReadWriteTable[K, V, U], cache: MutableMapping[Any, Any] | None = None,
                 name: str | None = None) -> None:
        super().__init__(table, name)
        self.cache: MutableMapping[Any, Any] = {} if cache is None else cache
        self.supports_updates = False

    async def _get(self, key: K) -> V | None:
        if key in self.cache:
            return self.cache[key]
        value = await self.table.get_async(key)
        if value is not None:
            self.cache[key] = value
        return value

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        missing = [k for k in keys if k not in self.cache]
        fetched = await self.table.get_all_async(missing) if missing else {}
        self.cache.update(fetched)
        return {k: self.cache[k] for k in keys if k in self.cache}

    async def _put(self, key: K, value: V) -> None:
        self.cache.pop(key, None)  # a failed write must not leave a record the store lacks
        await self.table.put_async(key, value)
        self.cache[key] = value

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        for key, _ in entries:
            self.cache.pop(key, None)
        await self.table.put_all_async(entries)
        for key, value in entries:
            self.cache[key] = value

    async def _delete(self, key: K) -> None:
        self.cache.pop(key, None)
        await self.table.delete_async(key)

    async def _delete_all(self, keys: list[K]) -> None:
        for key in keys:
            self.cache.pop(key, None)
        await self.table.delete_all_async(keys)
