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
        # bumped by every write of a key: a read that started before a write must not cache the
        # value it fetched (it may be older than the write)
        self._versions: dict[Any, int] = {}

    def _invalidate(self, key: Any) -> None:
        self.cache.pop(key, None)
        self._versions[key] = self._versions.get(key, 0) + 1

    async def _get(self, key: K) -> V | None:
        if key in self.cache:
            return self.cache[key]
        version = self._versions.get(key, 0)
        value = await self.table.get_async(key)
        if value is not None and self._versions.get(key, 0) == version:
            self.cache[key] = value
        return value

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        missing = [k for k in keys if k not in self.cache]
        versions = {k: self._versions.get(k, 0) for k in missing}
        fetched = await self.table.get_all_async(missing) if missing else {}
        found = {k: self.cache[k] for k in keys if k in self.cache}
        for key, value in fetched.items():
            found[key] = value
            if self._versions.get(key, 0) == versions[key]:
                self.cache[key] = value
        return {k: found[k] for k in keys if k in found}

    async def _put(self, key: K, value: V) -> None:
        self._invalidate(key)  # a failed write must not leave a record the store lacks
        await self.table.put_async(key, value)
        self._invalidate(key)
        self.cache[key] = value

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        for key, _ in entries:
            self._invalidate(key)
        await self.table.put_all_async(entries)
        for key, value in entries:
            self._invalidate(key)
            self.cache[key] = value

    async def _delete(self, key: K) -> None:
        self._invalidate(key)
        await self.table.delete_async(key)
        self._invalidate(key)

    async def _delete_all(self, keys: list[K]) -> None:
        for key in keys:
            self._invalidate(key)
        await self.table.delete_all_async(keys)
        for key in keys:
            self._invalidate(key)
