"""The bytes backend (Flink's RocksDB backend): state stays serialized; migration is eager."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from .._errors import StateError
from .._serializer import TypeSerializer
from ._base import KeyedStateBackend, SavepointRow, StateEntry, StateHandle, read_list_elements
from ._resolve import AccessPlan
from ._stores import Table, open_store

__all__ = ["BytesStateBackend"]

_NULL = b"\x01"
_NOT_NULL = b"\x00"


class _BytesState(StateHandle):
    __slots__ = ()

    @property
    def _table(self) -> Table:
        return self._entry.storage  # type: ignore[no-any-return]


class BytesValueState(_BytesState):
    """``ValueState``: ``value()`` (None when empty), ``update(v)`` (None clears), ``clear()``."""

    __slots__ = ()

    def value(self) -> Any:
        raw = self._table.get(self._primary())
        return None if raw is None else self._entry.value_serializer.from_bytes(raw)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
            return
        self._table.put(self._primary(), self._entry.value_serializer.to_bytes(value))

    def clear(self) -> None:
        self._table.delete(self._primary())


def _check_element(name: str, element: Any) -> None:
    if element is None:
        raise StateError(f"list state {name!r}: None cannot be added to a list state")


class BytesListState(_BytesState):
    """``ListState``: ``get()`` ([] when empty), ``add``, ``add_all``, ``update``, ``clear``."""

    __slots__ = ()

    def get(self) -> list[Any]:
        raw = self._table.get(self._primary())
        return [] if raw is None else read_list_elements(raw, self._entry.value_serializer)

    def add(self, element: Any) -> None:
        self.add_all([element])

    def add_all(self, elements: Iterable[Any]) -> None:
        elements = list(elements)
        for element in elements:
            _check_element(self._entry.name, element)
        if not elements:
            return
        primary = self._primary()
        to_bytes = self._entry.value_serializer.to_bytes
        parts = [to_bytes(e) for e in elements]
        raw = self._table.get(primary)
        if raw is not None:
            parts.insert(0, raw)
        self._table.put(primary, b",".join(parts))

    def update(self, elements: Iterable[Any]) -> None:
        elements = list(elements)
        for element in elements:
            _check_element(self._entry.name, element)
        if not elements:
            self.clear()
            return
        to_bytes = self._entry.value_serializer.to_bytes
        self._table.put(self._primary(), b",".join(to_bytes(e) for e in elements))

    def clear(self) -> None:
        self._table.delete(self._primary())


class BytesMapState(_BytesState):
    """``MapState``: values may be None (a null map value); user keys may not."""

    __slots__ = ()

    def _user_key(self, key: Any) -> bytes:
        if key is None:
            raise StateError(f"map state {self._entry.name!r}: user keys may not be None")
        return self._entry.user_key_serializer.to_bytes(key)  # type: ignore[union-attr]

    def _value(self, stored: bytes) -> Any:
        return None if stored[0] else self._entry.value_serializer.from_bytes(stored[1:])

    def get(self, key: Any) -> Any:
        stored = self._table.map_get(self._primary(), self._user_key(key))
        return None if stored is None else self._value(stored)

    def contains(self, key: Any) -> bool:
        return self._table.map_get(self._primary(), self._user_key(key)) is not None

    def put(self, key: Any, value: Any) -> None:
        stored = _NULL if value is None else _NOT_NULL + self._entry.value_serializer.to_bytes(value)
        self._table.map_put(self._primary(), self._user_key(key), stored)

    def put_all(self, entries: Mapping[Any, Any]) -> None:
        for key, value in entries.items():
            self.put(key, value)

    def remove(self, key: Any) -> None:
        self._table.map_delete(self._primary(), self._user_key(key))

    def items(self) -> list[tuple[Any, Any]]:
        read_key = self._entry.user_key_serializer.from_bytes  # type: ignore[union-attr]
        return [(read_key(uk), self._value(v)) for uk, v in self._table.map_items(self._primary())]

    def keys(self) -> list[Any]:
        read_key = self._entry.user_key_serializer.from_bytes  # type: ignore[union-attr]
        return [read_key(uk) for uk, _ in self._table.map_items(self._primary())]

    def values(self) -> list[Any]:
        return [self._value(v) for _, v in self._table.map_items(self._primary())]

    def is_empty(self) -> bool:
        return not any(True for _ in self._table.map_items(self._primary()))

    def clear(self) -> None:
        self._table.map_clear(self._primary())


class BytesStateBackend(KeyedStateBackend):
    """Keyed state kept as bytes, in a dict (``store="memory"``) or an embedded RocksDB
    (``store="rocksdb"``, one column family per state, working files under ``path``).

    A restore loads bytes without deserializing them. The first ``get_*_state`` of a restored
    state judges the descriptor's serializers against the savepoint's snapshots; a state that
    needs migration is rewritten eagerly and completely by the state's migration plan
    (``MigrationPlan``: unchanged parts copied as bytes, only what changes re-encoded), into a
    staging area that replaces the old data only when every entry succeeded.
    """

    _value_state_class = BytesValueState
    _list_state_class = BytesListState
    _map_state_class = BytesMapState

    def __init__(
        self,
        key_serializer: TypeSerializer[Any],
        store: str = "memory",
        path: str | os.PathLike[str] | None = None,
        max_parallelism: int = 128,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(key_serializer, max_parallelism=max_parallelism, config=config)
        self.store = store
        self._store = open_store(store, path)

    @classmethod
    def restore(
        cls,
        directory: str | os.PathLike[str],
        key_serializer: TypeSerializer[Any],
        config: Mapping[str, Any] | None = None,
        store: str = "memory",
        path: str | os.PathLike[str] | None = None,
        allow_pickle: bool | Iterable[str] = (),
        migrate_equal_values_once: bool = False,
        *,
        operator_uid: str | None = None,
        states: Iterable[str] | None = None,
        old_row_types: Mapping[str, Any] | None = None,
    ) -> BytesStateBackend:
        """A new backend holding the savepoint's bytes (nothing is deserialized yet). A state
        whose serializers unpickle (a snapshot names ``PickleSerializer``) is accessed only if
        named in ``allow_pickle`` (True: every state) or with a descriptor that uses
        ``PickleSerializer``; otherwise ``get_*_state`` raises ``PickleNotAllowedError``.

        ``migrate_equal_values_once``: a migration rewrites each distinct stored value once and
        reuses the result for every entry holding the same bytes (up to 64 MiB of inputs and
        results kept per state). The savepoint is the same for deterministic
        serializers (equal bytes migrate to equal bytes, which the conformance harness demands);
        it pays off when many entries share few values (flags, enums, repeated test data).

        ``directory`` may be this project's savepoint or a Flink canonical savepoint (told apart
        by its files); from a Flink savepoint the keyed states of the operator ``operator_uid``
        (required) are restored, all of them or those named in ``states`` (timers are not);
        ``old_row_types`` (``{state name: old row type}``) names the fields of a flink-core Row
        state, which Flink's snapshot does not (else ``f0..fN``; see
        ``reference.backends.flink_row_as_named``)."""
        backend = cls._restore(directory, key_serializer, config, allow_pickle, store=store, path=path,
                               operator_uid=operator_uid, states=states, old_row_types=old_row_types)
        backend._migrate_equal_values_once = migrate_equal_values_once
        return backend  # type: ignore[no-any-return]

    def close(self) -> None:
        if not self._closed:
            super().close()
            self._store.close()

    # -- storage ------------------------------------------------------------------------------
    def _new_storage(self, entry: StateEntry) -> Table:
        return self._store.table(entry.kind)

    def _primaries(self, entry: StateEntry) -> Iterable[tuple[int, bytes, bytes]]:
        return ((kg, key, ns) for kg, key, ns, _uk, _v in entry.storage.rows())

    def _savepoint_rows(self, entry: StateEntry) -> Iterator[SavepointRow]:
        if entry.kind == "map":
            return iter([(kg, key, ns, uk, None if stored[0] else stored[1:])
                         for kg, key, ns, uk, stored in entry.storage.rows()])
        return entry.storage.rows()

    def _load(self, entry: StateEntry, rows: Iterator[SavepointRow]) -> None:
        if entry.kind == "map":
            entry.storage.load(
                (kg, key, ns, uk, _NULL if v is None else _NOT_NULL + v) for kg, key, ns, uk, v in rows
            )
        else:
            entry.storage.load(rows)  # type: ignore[arg-type]

    _migrate_equal_values_once = False

    def _migrate(self, entry: StateEntry, plan: AccessPlan) -> None:
        migrate = _migration_function(entry.kind, plan)
        entry.storage.transform(_once_per_value(migrate) if self._migrate_equal_values_once else migrate)


#: Bytes of inputs and results a migration with ``migrate_equal_values_once`` keeps for reuse.
MIGRATION_MEMO_BYTES = 64 << 20


def _once_per_value(migrate: Callable[[bytes], bytes]) -> Callable[[bytes], bytes]:
    """``migrate`` run once per distinct input while the results kept stay under
    ``MIGRATION_MEMO_BYTES`` (then each further new input is migrated as it comes)."""
    done: dict[bytes, bytes] = {}
    room = MIGRATION_MEMO_BYTES

    def once(raw: bytes) -> bytes:
        nonlocal room
        out = done.get(raw)
        if out is None:
            out = migrate(raw)
            cost = len(raw) + len(out)
            if cost <= room:
                done[raw] = out
                room -= cost
        return out

    return once


def _migration_function(kind: str, plan: AccessPlan) -> Callable[[bytes], bytes]:
    """Rewrites one stored value through the state's migration plan: the whole value for
    value state, element by element for list state, the value after the null flag for map
    state (a null map value stays null)."""
    migration = plan.migration
    if kind == "list":
        return migration.migrate_list
    migrate = migration.migrate
    if kind == "value":
        return migrate

    def map_value(raw: bytes) -> bytes:
        return raw if raw[0] else _NOT_NULL + migrate(raw[1:])  # a null map value stays null

    return map_value
