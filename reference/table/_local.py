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
        self.keeps_order = True  # every operation completes without yielding to the event loop

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
    """A read-through, write-through cache in front of ``table``; no partial updates.

    Every write of a key bumps the key's version when it is issued. A read caches what it
    fetched only if no write of the key was issued meanwhile and none is still in flight (a
    write issued before the read may land after the store answered it: the fetched value is
    then about to be overwritten); a write caches its value when it completes only if no later
    write of the key was issued meanwhile (a write that completes late must not cache a value
    the store no longer holds). A failed write leaves the key uncached, so the next read asks
    the store.
    """

    def __init__(self, table: ReadWriteTable[K, V, U], cache: MutableMapping[Any, Any] | None = None,
                 name: str | None = None) -> None:
        super().__init__(table, name)
        self.cache: MutableMapping[Any, Any] = {} if cache is None else cache
        self.supports_updates = False
        self.keeps_order = bool(getattr(table, "keeps_order", False))  # every call is passed on at once
        self._versions: dict[Any, int] = {}
        self._in_flight: dict[Any, int] = {}  # key -> writes issued and not yet completed

    def _issue(self, key: Any) -> int:
        """A write of ``key`` is issued: uncache it and return the write's version."""
        self.cache.pop(key, None)
        version = self._versions[key] = self._versions.get(key, 0) + 1
        return version

    def _written(self, key: Any, version: int, value: Any) -> None:
        """The write of ``key`` at ``version`` completed: cache ``value`` (``None``: uncached)
        unless a later write of the key was issued, which then decides what is cached."""
        if self._versions.get(key) != version:
            return
        self._versions[key] = version + 1  # a read in flight may hold an older value: it must not cache it
        if value is None:
            self.cache.pop(key, None)
        else:
            self.cache[key] = value

    async def _get(self, key: K) -> V | None:
        if key in self.cache:
            return self.cache[key]
        version = self._versions.get(key, 0)
        value = await self.table.get_async(key)
        if value is not None and self._cacheable(key, version):
            self.cache[key] = value
        return value

    def _cacheable(self, key: Any, version: int) -> bool:
        """A value fetched from the store since ``version`` may be cached: no write of the key
        was issued meanwhile, and none is in flight."""
        return self._versions.get(key, 0) == version and not self._in_flight.get(key)

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        # what the cache holds now is the answer for those keys: a write issued after this read
        # may change the cache while the missing keys are fetched
        found = {k: self.cache[k] for k in keys if k in self.cache}
        missing = [k for k in keys if k not in found]
        versions = {k: self._versions.get(k, 0) for k in missing}
        fetched = await self.table.get_all_async(missing) if missing else {}
        for key, value in fetched.items():
            found[key] = value
            if self._cacheable(key, versions[key]):
                self.cache[key] = value
        return {k: found[k] for k in keys if k in found}

    async def _write(self, entries: list[tuple[Any, Any]], write: Callable[[], Any]) -> None:
        # issued in list order, so a key listed twice ends at its last entry's version and value
        issued = {key: (self._issue(key), value) for key, value in entries}
        for key in issued:
            self._in_flight[key] = self._in_flight.get(key, 0) + 1
        try:
            await write()
        finally:
            for key in issued:
                left = self._in_flight[key] - 1
                if left:
                    self._in_flight[key] = left
                else:
                    del self._in_flight[key]
        for key, (version, value) in issued.items():
            self._written(key, version, value)

    async def _put(self, key: K, value: V) -> None:
        await self._write([(key, value)], lambda: self.table.put_async(key, value))

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        await self._write(entries, lambda: self.table.put_all_async(entries))

    async def _delete(self, key: K) -> None:
        await self._write([(key, None)], lambda: self.table.delete_async(key))

    async def _delete_all(self, keys: list[K]) -> None:
        await self._write([(k, None) for k in keys], lambda: self.table.delete_all_async(keys))
