"""The table API: ``ReadWriteTable`` (sync and ``*_async``), ``UpdateMessage``, ``UpdateContract``.

Every ``*_async`` method checks its arguments when it is *called* (a null key or update, or an
operation the table cannot do at all, raises right there, before any coroutine exists) and then
returns a coroutine. The sync methods run that coroutine to completion on a private event loop
owned by the table, so they must not be called from inside a running loop.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Awaitable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._errors import (
    BatchWriteError,
    InvalidTableArgumentError,
    TableError,
    UnsupportedTableOperationError,
)

__all__ = ["ReadWriteTable", "UpdateMessage", "UpdateContract", "UpdateOptions"]

K = TypeVar("K")
V = TypeVar("V")
U = TypeVar("U")


class UpdateContract(enum.Enum):
    """What the send-to-table-with-update operator does when the record is missing.

    ``UPDATE_ONLY``: fail (even if the message carries a default).
    ``UPDATE_WITH_DEFAULTS``: put the message's default, then apply the update on top of it.
    """

    UPDATE_ONLY = "UPDATE_ONLY"
    UPDATE_WITH_DEFAULTS = "UPDATE_WITH_DEFAULTS"


#: The name Samza shipped for ``UpdateContract``.
UpdateOptions = UpdateContract


@dataclass(frozen=True)
class UpdateMessage(Generic[U, V]):
    """A partial update (type U) for one record, with an optional default record (type V)
    to create it when it does not exist yet."""

    update: Any
    default: Any = None

    def __post_init__(self) -> None:
        if self.update is None:
            raise InvalidTableArgumentError(
                "UpdateMessage: the update is None; an update message needs an update "
                "(to create a record without updating it, put the record instead)"
            )

    @classmethod
    def of(cls, update: Any, default: Any = None) -> UpdateMessage[Any, Any]:
        """An update message; ``default`` (a full record) is used only for a missing record
        under ``UpdateContract.UPDATE_WITH_DEFAULTS``."""
        return cls(update, default)

    @property
    def has_default(self) -> bool:
        """True when the message carries a default record (``default is not None``)."""
        return self.default is not None


def check_key(table: str, what: str, key: Any) -> None:
    if key is None:
        raise InvalidTableArgumentError(
            f"table {table!r}: {what} was given a None key; tables do not store null keys, "
            f"give a real key"
        )


def check_keys(table: str, what: str, keys: Any) -> list[Any]:
    if keys is None or isinstance(keys, (str, bytes)) or not isinstance(keys, Iterable):
        raise InvalidTableArgumentError(
            f"table {table!r}: {what} needs a list of keys, got {type(keys).__name__}"
        )
    keys = list(keys)
    for i, key in enumerate(keys):
        if key is None:
            raise InvalidTableArgumentError(
                f"table {table!r}: {what} was given a None key at position {i}; tables do not "
                f"store null keys, remove it"
            )
    return keys


def check_entries(table: str, what: str, entries: Any, *, updates: bool) -> list[tuple[Any, Any]]:
    if entries is None or isinstance(entries, (str, bytes)) or not isinstance(entries, Iterable):
        raise InvalidTableArgumentError(
            f"table {table!r}: {what} needs a list of (key, value) entries, got {type(entries).__name__}"
        )
    if isinstance(entries, dict):
        entries = entries.items()
    checked = []
    for i, entry in enumerate(entries):
        try:
            key, value = entry
        except (TypeError, ValueError):
            raise InvalidTableArgumentError(
                f"table {table!r}: {what} entry {i} is {entry!r}, not a (key, value) pair"
            ) from None
        if key is None:
            raise InvalidTableArgumentError(
                f"table {table!r}: {what} entry {i} has a None key; tables do not store null "
                f"keys, remove the entry"
            )
        if updates and value is None:
            raise InvalidTableArgumentError(
                f"table {table!r}: {what} entry {i} (key {key!r}) has a None update; give an "
                f"update or drop the entry"
            )
        checked.append((key, value))
    return checked


class ReadWriteTable(Generic[K, V, U]):
    """A table of records V by key K that also accepts partial updates U.

    Subclasses implement the coroutines ``_get, _put, _delete, _update``; the bulk ones
    (``_get_all, _put_all, _delete_all, _update_all``) default to calling the single ones one
    entry at a time, in list order. ``DelegatingTable`` is different: it hands bulk calls to the
    inner table's bulk methods, so a decorator that adds something per entry (credits, a cache,
    a log) must override the bulk methods as well as the single ones. The public methods are
    the same for every table:

    - ``get(key)`` → the record or ``None``; ``get_all(keys)`` → dict of the keys that exist;
    - ``put(key, value)`` (a ``None`` value deletes the record, as in Samza), ``put_all(entries)``;
    - ``delete(key)``, ``delete_all(keys)``;
    - ``update(key, update)``: apply a partial update to an existing record; a missing record
      fails with ``RecordNotFoundError``; ``update_all(entries)`` applies each entry in order
      and raises ``BatchWriteError`` listing the entries that failed;
    - ``flush()``; ``close()``; each also as ``*_async`` returning an awaitable.
    """

    #: False for tables that refuse updates (local, caching, compact batching).
    supports_updates: bool = True
    #: True when operations on one key issued together (not awaited one by one) take effect in
    #: the order they were issued: a batching or local table promises it; a bare remote table
    #: does not (concurrent calls reach the write function as they come).
    keeps_order: bool = False

    def __init__(self, name: str = "table") -> None:
        self.name = name
        self._sync_loop: asyncio.AbstractEventLoop | None = None

    # ---- what implementations provide -------------------------------------------------
    async def _get(self, key: K) -> V | None:
        raise UnsupportedTableOperationError(f"table {self.name!r} cannot read records")

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        found: dict[K, V] = {}
        for key in keys:
            value = await self._get(key)
            if value is not None:
                found[key] = value
        return found

    async def _put(self, key: K, value: V) -> None:
        raise UnsupportedTableOperationError(
            f"table {self.name!r} is read-only: it cannot put records; give it a write function"
        )

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        await each_entry(f"table {self.name!r}: put_all", entries, lambda e: self._put(*e))

    async def _delete(self, key: K) -> None:
        raise UnsupportedTableOperationError(
            f"table {self.name!r} is read-only: it cannot delete records; give it a write function"
        )

    async def _delete_all(self, keys: list[K]) -> None:
        await each_entry(f"table {self.name!r}: delete_all", keys, self._delete)

    async def _update(self, key: K, update: U) -> None:
        raise self._refuse_updates()

    async def _update_all(self, entries: list[tuple[K, U]]) -> None:
        await each_entry(f"table {self.name!r}: update_all", entries, lambda e: self._update(*e))

    async def _flush(self) -> None:
        return None

    def _refuse_updates(self) -> UnsupportedTableOperationError:
        return UnsupportedTableOperationError(
            f"table {self.name!r} ({type(self).__name__}) does not support partial updates; "
            f"use a remote table whose write function implements update_async (without compact "
            f"batching), or read, modify and put the record yourself"
        )

    # ---- public async API: arguments are checked when called ------------------------
    def get_async(self, key: K) -> Awaitable[V | None]:
        check_key(self.name, "get", key)
        return self._get(key)

    def get_all_async(self, keys: Iterable[K]) -> Awaitable[dict[K, V]]:
        return self._get_all(check_keys(self.name, "get_all", keys))

    def put_async(self, key: K, value: V | None) -> Awaitable[None]:
        check_key(self.name, "put", key)
        if value is None:
            return self._delete(key)
        return self._put(key, value)

    def put_all_async(self, entries: Iterable[tuple[K, V | None]]) -> Awaitable[None]:
        checked = check_entries(self.name, "put_all", entries, updates=False)
        if all(v is not None for _, v in checked):
            return self._put_all(checked)
        return self._put_all_with_deletes(checked)

    def delete_async(self, key: K) -> Awaitable[None]:
        check_key(self.name, "delete", key)
        return self._delete(key)

    def delete_all_async(self, keys: Iterable[K]) -> Awaitable[None]:
        return self._delete_all(check_keys(self.name, "delete_all", keys))

    def update_async(self, key: K, update: U) -> Awaitable[None]:
        check_key(self.name, "update", key)
        if update is None:
            raise InvalidTableArgumentError(
                f"table {self.name!r}: update of key {key!r} was given a None update; give an "
                f"update (to remove the record, delete it)"
            )
        if not self.supports_updates:
            raise self._refuse_updates()
        return self._update(key, update)

    def update_all_async(self, entries: Iterable[tuple[K, U]]) -> Awaitable[None]:
        checked = check_entries(self.name, "update_all", entries, updates=True)
        if not self.supports_updates:
            raise self._refuse_updates()
        return self._update_all(checked)

    def flush_async(self) -> Awaitable[None]:
        return self._flush()

    # ---- public sync API ------------------------------------------------------------
    def get(self, key: K) -> V | None:
        return self._run(self.get_async(key))

    def get_all(self, keys: Iterable[K]) -> dict[K, V]:
        return self._run(self.get_all_async(keys))

    def put(self, key: K, value: V | None) -> None:
        self._run(self.put_async(key, value))

    def put_all(self, entries: Iterable[tuple[K, V | None]]) -> None:
        self._run(self.put_all_async(entries))

    def delete(self, key: K) -> None:
        self._run(self.delete_async(key))

    def delete_all(self, keys: Iterable[K]) -> None:
        self._run(self.delete_all_async(keys))

    def update(self, key: K, update: U) -> None:
        self._run(self.update_async(key, update))

    def update_all(self, entries: Iterable[tuple[K, U]]) -> None:
        self._run(self.update_all_async(entries))

    def flush(self) -> None:
        self._run(self.flush_async())

    def close(self) -> None:
        """Release the private event loop of the sync API (the table stays usable)."""
        loop, self._sync_loop = self._sync_loop, None
        if loop is not None and not loop.is_closed():
            loop.close()

    # ---- helpers --------------------------------------------------------------------
    async def _put_all_with_deletes(self, entries: list[tuple[K, V | None]]) -> None:
        # Samza turns None values into deletes; runs keep list order so a put and a delete of
        # the same key apply in the order given.
        failures: dict[int, BaseException] = {}
        start = 0
        while start < len(entries):
            deleting = entries[start][1] is None
            end = start
            while end < len(entries) and (entries[end][1] is None) == deleting:
                end += 1
            run = entries[start:end]
            try:
                if deleting:
                    await self._delete_all([k for k, _ in run])
                else:
                    await self._put_all(run)  # type: ignore[arg-type]
            except BatchWriteError as exc:
                failures.update({start + i: e for i, e in exc.failures.items()})
            except Exception as exc:
                failures.update({i: exc for i in range(start, end)})
            start = end
        if failures:
            raise BatchWriteError.of(f"table {self.name!r}: put_all", failures, len(entries))

    def _run(self, awaitable: Awaitable[Any]) -> Any:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            if isinstance(awaitable, Coroutine):
                awaitable.close()
            raise TableError(
                f"table {self.name!r}: a sync method was called inside a running event loop; "
                f"await the *_async method instead"
            )
        if self._sync_loop is None or self._sync_loop.is_closed():
            self._sync_loop = asyncio.new_event_loop()
        return self._sync_loop.run_until_complete(_as_coroutine(awaitable))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


async def _as_coroutine(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


async def each_entry(what: str, items: list[Any], call: Any) -> None:
    """Apply ``call`` to each item in order; collect failures into one ``BatchWriteError``."""
    failures: dict[int, BaseException] = {}
    for i, item in enumerate(items):
        try:
            await call(item)
        except Exception as exc:
            failures[i] = exc
    if failures:
        raise BatchWriteError.of(what, failures, len(items))


class DelegatingTable(ReadWriteTable[K, V, U]):
    """A table decorator: every operation goes to ``self.table`` unless overridden.

    Bulk calls go to the inner table's bulk methods as they are (they are *not* split into
    single calls as in ``ReadWriteTable``): override ``_put_all``, ``_delete_all`` and
    ``_update_all`` too when the decorator does something per entry. ``supports_updates`` is the
    inner table's; ``keeps_order`` is False (a decorator that awaits something, credits say,
    before passing some operations on may reorder them): set it to the inner table's when every
    operation is passed on at once.
    """

    def __init__(self, table: ReadWriteTable[K, V, U], name: str | None = None) -> None:
        super().__init__(name or table.name)
        self.table = table
        self.supports_updates = table.supports_updates

    def _refuse_updates(self) -> UnsupportedTableOperationError:
        # the layer that refuses knows why (compact batching, read-only, ...)
        inner = self.table
        if not getattr(inner, "supports_updates", True) and hasattr(inner, "_refuse_updates"):
            return inner._refuse_updates()  # type: ignore[no-any-return]
        return super()._refuse_updates()

    async def _get(self, key: K) -> V | None:
        return await self.table.get_async(key)

    async def _get_all(self, keys: list[K]) -> dict[K, V]:
        return await self.table.get_all_async(keys)

    async def _put(self, key: K, value: V) -> None:
        await self.table.put_async(key, value)

    async def _put_all(self, entries: list[tuple[K, V]]) -> None:
        await self.table.put_all_async(entries)

    async def _delete(self, key: K) -> None:
        await self.table.delete_async(key)

    async def _delete_all(self, keys: list[K]) -> None:
        await self.table.delete_all_async(keys)

    async def _update(self, key: K, update: U) -> None:
        await self.table.update_async(key, update)

    async def _update_all(self, entries: list[tuple[K, U]]) -> None:
        await self.table.update_all_async(entries)

    async def _flush(self) -> None:
        await self.table.flush_async()

    def close(self) -> None:
        super().close()
        self.table.close()
