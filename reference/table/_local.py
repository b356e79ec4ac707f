"""Local tables (over a mapping, or over a backend's keyed ``MapState``) and a caching table.

As in Samza, they refuse ``update``/``update_all`` when the method is called: a cache cannot
know what an update does to the cached record, and a local store has no merge function, unless
one is given: ``LocalTable(merge=...)`` / ``MapStateTable(merge=...)`` apply an update as
``merge(record, update)`` to an existing record (a missing one fails with
``RecordNotFoundError``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

from .._errors import RecordNotFoundError
from ._api import DelegatingTable, K, ReadWriteTable, U, V
from ._errors import UnsupportedTableOperationError

__all__ = ["LocalTable", "MapStateTable", "CachingTable"]


class LocalTable(ReadWriteTable[K, V, U]):
    """A table over a local mapping (a dict unless ``store`` is given); partial updates only
    with a ``merge(record, update) -> record`` function."""

    def __init__(self, store: MutableMapping[Any, Any] | None = None, name: str = "local",
                 merge: Callable[[Any, Any], Any] | None = None) -> None:
        super().__init__(name)
        self.store: MutableMapping[Any, Any] = {} if store is None else store
        self.merge = merge
        self.supports_updates = merge is not None

    def _refuse_updates(self) -> UnsupportedTableOperationError:
        error = super()._refuse_updates()
        error.args = (f"{error.args[0]}; or give the local table a merge(record, update) function",)
        return error

    async def _update(self, key: K, update: U) -> None:
        if self.merge is None:
            raise self._refuse_updates()
        if key not in self.store or self.store[key] is None:
            raise RecordNotFoundError(
                f"table {self.name!r}: no record for key {key!r} to update; put it first, or send "
                f"the update with a default under UpdateContract.UPDATE_WITH_DEFAULTS"
            )
        self.store[key] = self.merge(self.store[key], update)

    async def _get(self, key: K) -> V | None:
        return self.store.get(key)

    async def _put(self, key: K, value: V) -> None:
        self.store[key] = value

    async def _delete(self, key: K) -> None:
        self.store.pop(key, None)


class _MapStateMapping(MutableMapping[Any, Any]):
    """A ``MapState`` (of the backend's current key and namespace) seen as a mapping."""

    def __init__(self, state: Any) -> None:
        self.state = state

    def __getitem__(self, key: Any) -> Any:
        if not self.state.contains(key):
            raise KeyError(key)
        return self.state.get(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.state.put(key, value)

    def __delitem__(self, key: Any) -> None:
        if not self.state.contains(key):
            raise KeyError(key)
        self.state.remove(key)

    def __contains__(self, key: object) -> bool:
        return bool(self.state.contains(key))

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self.state.keys()))

    def __len__(self) -> int:
        return len(list(self.state.keys()))


class MapStateTable(LocalTable[K, V, U]):
    """A local table over a reference backend's ``MapState`` (heap or bytes): table keys are the
    map's user keys, under the backend's current key and namespace (set them before use).
    Records are written with the state's serializers; a null map value reads as no record.
    Partial updates only with ``merge``."""

    def __init__(self, map_state: Any, name: str = "map_state",
                 merge: Callable[[Any, Any], Any] | None = None) -> None:
        super().__init__(_MapStateMapping(map_state), name, merge)
        self.map_state = map_state


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
        # what the cache holds now is the answer for those keys: a write issued after this read
        # may change the cache while the missing keys are fetched
        found = {k: self.cache[k] for k in keys if k in self.cache}
        missing = [k for k in keys if k not in found]
        versions = {k: self._versions.get(k, 0) for k in missing}
        fetched = await self.table.get_all_async(missing) if missing else {}
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
