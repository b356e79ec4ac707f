"""The heap backend (Flink's HashMap backend): state is held as objects.

A restore deserializes everything with the restored serializers, except the data of a state
whose serializers unpickle (a snapshot names ``PickleSerializer``) and that the restore did not
name in ``allow_pickle``: its rows stay as bytes until an access opts in (a descriptor that uses
``PickleSerializer``); any other access is refused (``PickleNotAllowedError``), and a savepoint
writes such rows back verbatim. The first ``get_*_state`` of
a restored state judges the descriptor's serializers against the savepoint's snapshots; when
migration is needed every object is brought to the new shape by the state's migration plan
(``MigrationPlan.migrate_object``: ``new_snapshot.migrate_element`` in either FLIP-527 form);
the next savepoint writes with the new serializer.
Keys, namespaces and map user keys are indexed by their serialized bytes (which never change,
since they never migrate), so that two keys are the same key exactly when the bytes backend
says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .._errors import StateError
from .._serializer import TypeSerializer
from ..savepoint import encode_list_value
from ._base import KeyedStateBackend, SavepointRow, StateEntry, StateHandle, read_list_elements
from ._resolve import AccessPlan
from ._stores import Primary, bulk

__all__ = ["HeapStateBackend"]


class _HeapState(StateHandle):
    __slots__ = ()

    @property
    def _data(self) -> dict[Primary, Any]:
        return self._entry.storage  # type: ignore[no-any-return]


class HeapValueState(_HeapState):
    """``ValueState``: ``value()`` (None when empty), ``update(v)`` (None clears), ``clear()``."""

    __slots__ = ()

    def value(self) -> Any:
        return self._data.get(self._primary())

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._data[self._primary()] = value

    def clear(self) -> None:
        self._data.pop(self._primary(), None)


def _checked(name: str, elements: Iterable[Any]) -> list[Any]:
    elements = list(elements)
    if any(e is None for e in elements):
        raise StateError(f"list state {name!r}: None cannot be added to a list state")
    return elements


class HeapListState(_HeapState):
    """``ListState``: ``get()`` ([] when empty), ``add``, ``add_all``, ``update``, ``clear``."""

    __slots__ = ()

    def get(self) -> list[Any]:
        return list(self._data.get(self._primary(), ()))

    def add(self, element: Any) -> None:
        self.add_all([element])

    def add_all(self, elements: Iterable[Any]) -> None:
        elements = _checked(self._entry.name, elements)
        if elements:
            self._data.setdefault(self._primary(), []).extend(elements)

    def update(self, elements: Iterable[Any]) -> None:
        elements = _checked(self._entry.name, elements)
        if elements:
            self._data[self._primary()] = elements
        else:
            self.clear()

    def clear(self) -> None:
        self._data.pop(self._primary(), None)


class HeapMapState(_HeapState):
    """``MapState``: values may be None (a null map value); user keys may not."""

    __slots__ = ()

    def _user_key(self, key: Any) -> bytes:
        if key is None:
            raise StateError(f"map state {self._entry.name!r}: user keys may not be None")
        return self._entry.user_key_serializer.to_bytes(key)  # type: ignore[union-attr]

    def _entries(self) -> dict[bytes, tuple[Any, Any]]:
        return self._data.get(self._primary(), {})  # type: ignore[no-any-return]

    def get(self, key: Any) -> Any:
        found = self._entries().get(self._user_key(key))
        return None if found is None else found[1]

    def contains(self, key: Any) -> bool:
        return self._user_key(key) in self._entries()

    def put(self, key: Any, value: Any) -> None:
        user_key = self._user_key(key)
        self._data.setdefault(self._primary(), {})[user_key] = (key, value)

    def put_all(self, entries: Mapping[Any, Any]) -> None:
        for key, value in entries.items():
            self.put(key, value)

    def remove(self, key: Any) -> None:
        primary = self._primary()
        entries = self._data.get(primary)
        if entries is not None:
            entries.pop(self._user_key(key), None)
            if not entries:
                del self._data[primary]

    def _sorted(self) -> list[tuple[Any, Any]]:
        return [pair for _uk, pair in sorted(self._entries().items(), key=lambda item: item[0])]

    def items(self) -> list[tuple[Any, Any]]:
        return self._sorted()

    def keys(self) -> list[Any]:
        return [k for k, _ in self._sorted()]

    def values(self) -> list[Any]:
        return [v for _, v in self._sorted()]

    def is_empty(self) -> bool:
        return not self._entries()

    def clear(self) -> None:
        self._data.pop(self._primary(), None)


class HeapStateBackend(KeyedStateBackend):
    """Keyed state held as Python objects (Flink's HashMap state backend)."""

    _value_state_class = HeapValueState
    _list_state_class = HeapListState
    _map_state_class = HeapMapState

    def __init__(
        self,
        key_serializer: TypeSerializer[Any],
        max_parallelism: int = 128,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(key_serializer, max_parallelism=max_parallelism, config=config)

    @classmethod
    def restore(
        cls,
        directory: Any,
        key_serializer: TypeSerializer[Any],
        config: Mapping[str, Any] | None = None,
        allow_pickle: bool | Iterable[str] = (),
        *,
        operator_uid: str | None = None,
        states: Iterable[str] | None = None,
        old_row_types: Mapping[str, Any] | None = None,
    ) -> HeapStateBackend:
        """A new backend holding the savepoint's state as objects read with the restored
        serializers. States whose serializers unpickle are read only if named in
        ``allow_pickle`` (True: every state); the others wait, as bytes, for an access with a
        descriptor that uses ``PickleSerializer``.

        ``directory`` may be this project's savepoint or a Flink canonical savepoint (told apart
        by its files); from a Flink savepoint the keyed states of the operator ``operator_uid``
        (required) are restored, all of them or those named in ``states`` (timers are not);
        ``old_row_types`` (``{state name: old row type}``) names the fields of a flink-core Row
        state, which Flink's snapshot does not (else ``f0..fN``; see
        ``reference.backends.flink_row_as_named``)."""
        return cls._restore(directory, key_serializer, config, allow_pickle,  # type: ignore[no-any-return]
                            operator_uid=operator_uid, states=states, old_row_types=old_row_types)

    def close(self) -> None:
        if not self._closed:
            super().close()
            for entry in self._states.values():
                entry.storage = {}
                entry.deferred_rows = None

    # -- storage ------------------------------------------------------------------------------
    def _new_storage(self, entry: StateEntry) -> dict[Primary, Any]:
        return {}

    def _primaries(self, entry: StateEntry) -> Iterable[tuple[int, bytes, bytes]]:
        if entry.deferred_rows is not None:
            return [(kg, key, ns) for kg, key, ns, _uk, _v in entry.deferred_rows]
        return list(entry.storage)

    def _savepoint_rows(self, entry: StateEntry) -> Iterator[SavepointRow]:
        deferred = entry.deferred_rows
        if deferred is not None:
            yield from deferred  # never read: written back as the savepoint held them
            return
        to_bytes = entry.value_serializer.to_bytes
        data: dict[Primary, Any] = entry.storage
        if entry.kind == "value":
            for (kg, key, ns), value in data.items():
                yield kg, key, ns, None, to_bytes(value)
        elif entry.kind == "list":
            for (kg, key, ns), elements in data.items():
                yield kg, key, ns, None, encode_list_value(to_bytes(e) for e in elements)
        else:
            for (kg, key, ns), entries in data.items():
                for user_key, (_key, value) in entries.items():
                    yield kg, key, ns, user_key, (None if value is None else to_bytes(value))

    def _load(self, entry: StateEntry, rows: Iterator[SavepointRow]) -> None:
        if entry.unpickles and not self._pickle_allowed(entry.name):
            entry.deferred_rows = list(rows)  # read on the first access that opts in
            return
        with bulk():
            self._load_rows(entry, rows)

    def _before_access(self, entry: StateEntry) -> None:
        deferred = entry.deferred_rows
        if deferred is not None:
            entry.deferred_rows = None
            entry.unpickles = False
            try:
                self._load_checked(entry, iter(deferred))
            except BaseException:
                entry.storage, entry.deferred_rows, entry.unpickles = {}, deferred, True
                raise

    def _load_rows(self, entry: StateEntry, rows: Iterator[SavepointRow]) -> None:
        data: dict[Primary, Any] = entry.storage
        from_bytes = entry.value_serializer.from_bytes
        if entry.kind == "value":
            for kg, key, ns, _uk, value in rows:
                data[(kg, key, ns)] = from_bytes(value)  # type: ignore[arg-type]
        elif entry.kind == "list":
            element = entry.value_serializer
            for kg, key, ns, _uk, value in rows:
                data[(kg, key, ns)] = read_list_elements(value, element)  # type: ignore[arg-type]
        else:
            read_key = entry.user_key_serializer.from_bytes  # type: ignore[union-attr]
            for kg, key, ns, user_key, value in rows:
                data.setdefault((kg, key, ns), {})[user_key] = (
                    read_key(user_key),  # type: ignore[arg-type]
                    None if value is None else from_bytes(value),
                )

    def _migrate(self, entry: StateEntry, plan: AccessPlan) -> None:
        with bulk():
            self._migrate_objects(entry, plan)

    def _migrate_objects(self, entry: StateEntry, plan: AccessPlan) -> None:
        # Build the migrated objects aside and swap them in at the end: all or nothing.
        migrate = plan.migration.migrate_object
        data: dict[Primary, Any] = entry.storage
        if entry.kind == "value":
            migrated: dict[Primary, Any] = {p: migrate(v) for p, v in data.items()}
        elif entry.kind == "list":
            migrated = {p: [migrate(e) for e in elements] for p, elements in data.items()}
        else:
            migrated = {
                p: {uk: (k, None if v is None else migrate(v)) for uk, (k, v) in entries.items()}
                for p, entries in data.items()
            }
        entry.storage = migrated
