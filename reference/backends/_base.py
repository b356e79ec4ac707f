"""What both keyed backends share: the current key, state registration and its compatibility
checks, ``keys``, savepoint writing and restoring. Subclasses decide how data is held.

Savepoints come in two formats (docs/flink-savepoints.md, "State backends and Flink
savepoints"): this project's (``format="reference"``, the default) and Flink's canonical one
(``format="flink"``, one operator's keyed states). A restore tells them apart by their files.
Each format has its own key-group rule: this project's hashes the key's bytes
(``key_group_for``), Flink's the key's Java ``hashCode`` (``flink_key_group``). A backend
restored from a Flink savepoint keeps Flink's key groups: a key read from the savepoint keeps the
group it was stored in, a new key gets the one Flink gives it (refused for a key type whose Java
``hashCode`` the reference does not have, ``java_hash_code``). A savepoint is written with its
format's rule: rows whose key groups follow the other rule are assigned again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from .._errors import (
    PickleNotAllowedError,
    SnapshotFormatError,
    StateError,
    StateMigrationError,
)
from .._io import DataInputView
from .._serializer import TypeSerializer
from .._snapshot import TypeSerializerSnapshot, snapshot_from_bytes, snapshot_to_bytes
from ..savepoint import (
    FlinkKeyedState,
    NewKeyedState,
    SavepointFormatError,
    SavepointMetadata,
    StateMetadata,
    flink_key_group,
    has_java_hash_code,
    is_flink_savepoint,
    key_group_for,
    list_element_ends,
    read_flink_savepoint,
    read_savepoint_metadata,
    read_state_rows,
    write_keyed_flink_savepoint,
    write_savepoint_rows,
)
from ._descriptors import ListStateDescriptor, MapStateDescriptor, StateDescriptor, ValueStateDescriptor
from ._flink_rows import flink_row_as_named
from ._resolve import (
    AccessPlan,
    descriptor_unpickles,
    normalize_allow_pickle,
    normalize_config,
    pickle_allowed,
    plan_access,
    resolve_key_serializer,
    snapshot_unpickles,
)
from ._stores import Primary

__all__ = ["KeyedStateBackend", "StateEntry", "StateHandle", "read_list_elements"]

_UNSET: Any = object()

#: A savepoint data row: (key_group, key, namespace, user_key or None, value or None).
SavepointRow = tuple[int, bytes, bytes, "bytes | None", "bytes | None"]


def read_list_elements(raw: bytes, serializer: TypeSerializer[Any]) -> list[Any]:
    """The elements of a delimited list value (Flink's RocksDB list layout)."""
    source = DataInputView(raw)
    elements: list[Any] = []
    read = serializer.deserialize

    def scan(source: DataInputView) -> None:
        elements.append(read(source))

    for _ in list_element_ends(source, scan, lambda: repr(serializer)):
        pass
    return elements


class StateEntry:
    """One registered or restored state."""

    def __init__(
        self,
        name: str,
        kind: str,
        value_serializer: TypeSerializer[Any],
        namespace_serializer: TypeSerializer[Any] | None,
        user_key_serializer: TypeSerializer[Any] | None,
    ) -> None:
        self.name = name
        self.kind = kind
        self.value_serializer = value_serializer
        self.namespace_serializer = namespace_serializer
        self.user_key_serializer = user_key_serializer
        #: True once a descriptor has been accepted for it (always true for a new state).
        self.registered = True
        #: The snapshots the stored data was written with while no descriptor has been
        #: accepted since the restore; written verbatim to savepoints (value, namespace, user key).
        self.restored_snapshots: tuple[TypeSerializerSnapshot[Any], TypeSerializerSnapshot[Any] | None, TypeSerializerSnapshot[Any] | None] | None = None
        self.restored_snapshot_bytes: tuple[bytes, bytes | None, bytes | None] | None = None
        #: True while the restored data would be read through pickle (a snapshot says so) and
        #: no access has opted in yet.
        self.unpickles = False
        #: Rows a backend keeps unread until an access opts in to unpickling them (heap).
        self.deferred_rows: list[SavepointRow] | None = None
        self.storage: Any = None
        #: Flink's ``KEYED_STATE_TYPE`` of a state restored from a Flink savepoint (a reducing or
        #: aggregating state is held as a value state and written back as what it was).
        self.flink_type: str | None = None

    def snapshots(self) -> tuple[TypeSerializerSnapshot[Any], TypeSerializerSnapshot[Any] | None, TypeSerializerSnapshot[Any] | None]:
        if self.restored_snapshots is not None:
            return self.restored_snapshots
        return (
            self.value_serializer.snapshot_configuration(),
            None if self.namespace_serializer is None else self.namespace_serializer.snapshot_configuration(),
            None if self.user_key_serializer is None else self.user_key_serializer.snapshot_configuration(),
        )

    def snapshot_bytes(self) -> tuple[bytes, bytes | None, bytes | None]:
        if self.restored_snapshot_bytes is not None:
            return self.restored_snapshot_bytes
        value, ns, uk = self.snapshots()
        return (
            snapshot_to_bytes(value),
            None if ns is None else snapshot_to_bytes(ns),
            None if uk is None else snapshot_to_bytes(uk),
        )

    def matches(self, descriptor: StateDescriptor) -> bool:
        return (
            self.registered
            and self.restored_snapshots is None
            and descriptor.kind == self.kind
            and descriptor.value_serializer == self.value_serializer
            and descriptor.namespace_serializer == self.namespace_serializer
            and descriptor.user_key_serializer == self.user_key_serializer
        )


class KeyedStateBackend:
    """Base of ``HeapStateBackend`` and ``BytesStateBackend``."""

    _value_state_class: ClassVar[type]
    _list_state_class: ClassVar[type]
    _map_state_class: ClassVar[type]

    def __init__(
        self,
        key_serializer: TypeSerializer[Any],
        max_parallelism: int = 128,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(key_serializer, TypeSerializer):
            raise TypeError(f"key_serializer must be a reference.TypeSerializer, got {type(key_serializer).__name__}")
        if not isinstance(max_parallelism, int) or not 1 <= max_parallelism <= 32768:
            raise ValueError(f"max_parallelism must be an int in [1, 32768], got {max_parallelism!r}")
        self.key_serializer = key_serializer
        self.max_parallelism = max_parallelism
        self.config = normalize_config(config)
        self._states: dict[str, StateEntry] = {}
        self._key: Any = None
        self._key_bytes: bytes | None = None
        self._key_group = 0
        self._closed = False
        #: States whose pickled data may be read without a pickle descriptor (see restore).
        self._allow_pickle: bool | frozenset[str] = frozenset()
        #: Key groups by Flink's rule (restored from a Flink savepoint), else this project's.
        self._flink_key_groups = False
        #: Flink's key groups of the restored keys, kept when the key type has no Java hashCode
        #: here (then only those keys can be used).
        self._known_key_groups: dict[bytes, int] | None = None

    # -- keys ---------------------------------------------------------------------------------
    def set_current_key(self, key: Any) -> None:
        """Make ``key`` the key every state object reads and writes."""
        self._check_open()
        if key is None:
            raise StateError("set_current_key(None): keys may not be None")
        key_bytes = self.key_serializer.to_bytes(key)
        if self._flink_key_groups:
            key_group = self._flink_key_group(key, key_bytes, self.max_parallelism)
        else:
            key_group = key_group_for(key_bytes, self.max_parallelism)
        self._key, self._key_bytes, self._key_group = key, key_bytes, key_group

    def _flink_key_group(self, key: Any, key_bytes: bytes, max_parallelism: int) -> int:
        known = self._known_key_groups
        if known is not None and max_parallelism == self.max_parallelism:
            found = known.get(key_bytes)
            if found is not None:
                return found
        return flink_key_group(key, self.key_serializer, max_parallelism)

    def get_current_key(self) -> Any:
        return self._key

    def keys(self, name: str, namespace: Any = _UNSET) -> list[Any]:
        """The keys that have state under ``name`` (in one namespace when given), in key-group
        then key-byte order."""
        self._check_open()
        entry = self._entry(name)
        ns_bytes = None
        if namespace is not _UNSET:
            ns_bytes = self._namespace_bytes(entry, namespace)
        seen = sorted(
            {(kg, key) for kg, key, ns in self._primaries(entry) if ns_bytes is None or ns == ns_bytes}
        )
        return [self.key_serializer.from_bytes(key) for _kg, key in seen]

    def state_names(self) -> list[str]:
        """Names of the registered and restored states, in savepoint order."""
        return list(self._states)

    # -- states -------------------------------------------------------------------------------
    def get_value_state(self, descriptor: ValueStateDescriptor) -> Any:
        return self._get_state(descriptor, ValueStateDescriptor, self._value_state_class)

    def get_list_state(self, descriptor: ListStateDescriptor) -> Any:
        return self._get_state(descriptor, ListStateDescriptor, self._list_state_class)

    def get_map_state(self, descriptor: MapStateDescriptor) -> Any:
        return self._get_state(descriptor, MapStateDescriptor, self._map_state_class)

    def _get_state(self, descriptor: StateDescriptor, expected: type, state_class: type) -> Any:
        self._check_open()
        if not isinstance(descriptor, expected):
            raise TypeError(
                f"get_{expected.kind}_state needs a {expected.__name__}, got {descriptor!r}"  # type: ignore[attr-defined]
            )
        entry = self._states.get(descriptor.name)
        if entry is None:
            entry = StateEntry(
                descriptor.name, descriptor.kind, descriptor.value_serializer,
                descriptor.namespace_serializer, descriptor.user_key_serializer,
            )
            entry.storage = self._new_storage(entry)
            self._states[descriptor.name] = entry
        elif not entry.matches(descriptor):
            if entry.unpickles and not (
                self._pickle_allowed(entry.name) or descriptor_unpickles(descriptor)
            ):
                raise PickleNotAllowedError(
                    f"state {entry.name!r} was written with PickleSerializer (its snapshot in the "
                    "savepoint says so), and unpickling runs code chosen by the savepoint; it is "
                    f"read only on request: pass allow_pickle={{{entry.name!r}}} to restore (for a "
                    "savepoint you trust) or access it with a descriptor that uses "
                    "PickleSerializer. Nothing was unpickled"
                )
            if entry.unpickles and not self._pickle_allowed(entry.name):
                # The descriptor opted in: the restored serializers may now unpickle.
                self._read_restored_snapshots(entry, allow_pickle=True)
            value_snap, ns_snap, uk_snap = entry.snapshots()
            plan = plan_access(entry.name, entry.kind, value_snap, ns_snap, uk_snap, descriptor, self.config)
            self._before_access(entry)
            entry.unpickles = False
            if plan.migrate:
                self._run_migration(entry, plan)
            entry.value_serializer = plan.value_serializer
            entry.namespace_serializer = plan.namespace_serializer
            entry.user_key_serializer = plan.user_key_serializer
            entry.restored_snapshots = None
            entry.restored_snapshot_bytes = None
            entry.registered = True
        return state_class(self, entry)

    def _run_migration(self, entry: StateEntry, plan: AccessPlan) -> None:
        try:
            self._migrate(entry, plan)
        except StateMigrationError:
            raise
        except Exception as exc:
            raise StateMigrationError(
                f"state {entry.name!r}: migrating the stored values from "
                f"{plan.prior_value_serializer!r} to {plan.value_serializer!r} failed "
                f"({type(exc).__name__}: {exc}); the stored state is untouched. Fix the new "
                "serializer's snapshot (migrate_state / migrate_element) or the data"
            ) from exc

    # -- savepoints ---------------------------------------------------------------------------
    def savepoint(self, directory: str | os.PathLike[str], format: str = "reference", *,
                  operator_uid: str | None = None, max_parallelism: int | None = None) -> str:
        """Write a savepoint to ``directory`` where none may be, atomically; returns its absolute
        path or URI.

        ``format="reference"``: this project's (a local path or a URI; commit protocol of
        ``savepoint_output``). ``format="flink"``: a Flink canonical savepoint (a local
        directory) holding every state of this backend as the keyed states of the operator
        ``operator_uid`` (required), with ``max_parallelism`` key groups (default: the
        backend's), each key in the key group Flink assigns it; every serializer must have a
        Flink identity (a Java snapshot class), else a ``StateError`` names the state and
        nothing is written."""
        self._check_open()
        if format == "flink":
            return self._flink_savepoint(directory, operator_uid, max_parallelism)
        if format != "reference":
            raise StateError(f"savepoint(format={format!r}): the formats are 'reference' (this project's) and 'flink'")
        if operator_uid is not None or max_parallelism is not None:
            raise StateError("savepoint(..., operator_uid=..., max_parallelism=...) applies to format='flink' only; "
                             "this project's savepoints keep the backend's max parallelism and have no operators")
        rule = key_group_for if self._flink_key_groups else None

        def states() -> Iterator[tuple[StateMetadata, list[SavepointRow]]]:
            for entry in self._states.values():
                value, ns, uk = entry.snapshot_bytes()
                rows = self._savepoint_rows(entry)
                if rule is not None:  # Flink's key groups: this project's rule instead
                    maxp = self.max_parallelism
                    rows = ((rule(key, maxp), key, n, u, v) for _kg, key, n, u, v in rows)
                yield (StateMetadata(name=entry.name, kind=entry.kind, value_serializer_snapshot=value,
                                     namespace_serializer_snapshot=ns, user_key_serializer_snapshot=uk),
                       sorted(rows))

        return write_savepoint_rows(
            directory, states(), max_parallelism=self.max_parallelism,
            key_serializer_snapshot=snapshot_to_bytes(self.key_serializer.snapshot_configuration()),
        )

    def _flink_savepoint(self, directory: str | os.PathLike[str], operator_uid: str | None,
                         max_parallelism: int | None) -> str:
        from ..serializers import ListSerializer, MapSerializer, VoidNamespaceSerializer

        if not isinstance(operator_uid, str) or not operator_uid:
            raise StateError("savepoint(..., format='flink') needs operator_uid='<uid>': the uid of the Flink operator "
                             f"whose keyed state it holds (got {operator_uid!r})")
        maxp = self.max_parallelism if max_parallelism is None else max_parallelism
        if not isinstance(maxp, int) or not 1 <= maxp <= 32768:
            raise StateError(f"savepoint(..., max_parallelism={maxp!r}): should be an int in [1, 32768]")
        same_groups = self._flink_key_groups and maxp == self.max_parallelism
        read_key = self.key_serializer.from_bytes
        void = VoidNamespaceSerializer()
        states = []
        for entry in self._states.values():
            value_snap, ns_snap, uk_snap = entry.snapshots()
            value_serializer = value_snap.restore_serializer()
            if entry.kind == "list":
                flink_value: TypeSerializerSnapshot[Any] = ListSerializer(value_serializer).snapshot_configuration()
            elif entry.kind == "map":
                assert uk_snap is not None
                flink_value = MapSerializer(uk_snap.restore_serializer(), value_serializer).snapshot_configuration()
            else:
                flink_value = value_snap
            flink_type = entry.flink_type or entry.kind.upper()
            namespace = void.snapshot_configuration() if ns_snap is None else ns_snap
            void_bytes = void.to_bytes(None)
            rows: Iterable[SavepointRow] = self._savepoint_rows(entry)
            if ns_snap is None:
                rows = ((kg, key, void_bytes, u, v) for kg, key, _ns, u, v in rows)
            if not same_groups:
                rows = ((self._flink_key_group(read_key(key), key, maxp), key, n, u, v) for _kg, key, n, u, v in rows)
            try:  # every key group is computed here, before anything is written
                states.append(NewKeyedState(entry.name, flink_type, flink_value, namespace, sorted(rows)))
            except StateError as exc:
                raise StateError(f"savepoint(..., format='flink'): state {entry.name!r}: {exc}") from None
        try:
            return write_keyed_flink_savepoint(
                directory, operator_uid=operator_uid, max_parallelism=maxp,
                key_serializer=self.key_serializer.snapshot_configuration(), states=states)
        except SnapshotFormatError as exc:
            raise SnapshotFormatError(f"savepoint(..., format='flink'): {exc}; nothing was written") from None

    @classmethod
    def _restore(
        cls, directory: str | os.PathLike[str], key_serializer: TypeSerializer[Any],
        config: Mapping[str, Any] | None, allow_pickle: bool | Iterable[str] = (),
        operator_uid: str | None = None, states: Iterable[str] | None = None,
        old_row_types: Mapping[str, Any] | None = None, **kwargs: Any,
    ) -> Any:
        allowed = normalize_allow_pickle(allow_pickle)
        if is_flink_savepoint(directory):
            return cls._restore_flink(directory, key_serializer, config, allowed, operator_uid, states,
                                      old_row_types or {}, **kwargs)
        if operator_uid is not None or states is not None or old_row_types is not None:
            raise StateError(f"restore(..., operator_uid=..., states=..., old_row_types=...) applies to Flink savepoints only; "
                             f"{os.fspath(directory) if not isinstance(directory, str) else directory} is this "
                             "project's savepoint, which holds one set of states: leave them out")
        metadata = read_savepoint_metadata(directory)
        key_snapshot = _parse_snapshot(metadata.key_serializer_snapshot, "the key serializer")
        backend = cls(
            resolve_key_serializer(key_serializer, key_snapshot),
            max_parallelism=metadata.max_parallelism, config=config, **kwargs,
        )
        backend._allow_pickle = allowed
        try:
            for state in metadata.states:
                backend._restore_state(directory, metadata, state)
        except BaseException:
            backend.close()
            raise
        return backend

    @classmethod
    def _restore_flink(cls, directory: Any, key_serializer: TypeSerializer[Any], config: Mapping[str, Any] | None,
                       allowed: bool | frozenset[str], operator_uid: str | None, names: Iterable[str] | None,
                       old_row_types: Mapping[str, Any], **kwargs: Any) -> Any:
        savepoint = read_flink_savepoint(directory)
        keyed_operators = [op.uid or op.operator_id for op in savepoint.operators
                           if any(s.kind != "timers" for s in op.keyed_states)]
        if operator_uid is None:
            raise StateError(
                f"{directory}: a Flink savepoint holds the state of every operator of the job; pass "
                f"operator_uid='<uid>' to restore one operator's keyed states (its operators with keyed "
                f"state: {keyed_operators})")
        try:
            op = savepoint.operator(operator_uid)
        except KeyError as exc:
            raise StateError(f"restore(..., operator_uid={operator_uid!r}): {exc.args[0]}") from None
        keyed = {s.name: s for s in op.keyed_states if s.kind != "timers"}
        if not keyed:
            raise StateError(f"operator {operator_uid!r} of {directory} holds no keyed state (operators with keyed "
                             f"state: {keyed_operators})")
        if names is not None:
            names = list(names) if not isinstance(names, str) else [names]
            missing = [n for n in names if n not in keyed]
            if missing:
                raise StateError(f"restore(..., states=...): operator {operator_uid!r} has no keyed state "
                                 f"{missing[0]!r}; its keyed states are {sorted(keyed)}")
            keyed = {n: keyed[n] for n in names}
        unknown = sorted(set(old_row_types) - set(keyed))
        if unknown:
            raise StateError(f"restore(..., old_row_types=...): names state {unknown[0]!r}, which is not among the "
                             f"states restored ({sorted(keyed)})")
        key_snapshot = next(iter(keyed.values())).key_serializer
        backend = cls(resolve_key_serializer(key_serializer, key_snapshot), max_parallelism=op.max_parallelism,
                      config=config, **kwargs)
        backend._allow_pickle = allowed
        backend._flink_key_groups = True
        try:
            if not has_java_hash_code(backend.key_serializer):  # remember the stored keys' groups
                backend._known_key_groups = {}
            for state in keyed.values():
                backend._restore_flink_state(state, operator_uid, old_row_types.get(state.name))
        except BaseException:
            backend.close()
            raise
        return backend

    def _restore_flink_state(self, state: FlinkKeyedState, operator_uid: str, old_row: Any) -> None:
        from ..serializers import (
            ListSerializerSnapshot,
            MapSerializerSnapshot,
            VoidNamespaceSerializerSnapshot,
        )

        where = f"operator {operator_uid!r}, state {state.name!r}"
        kind = {"value": "value", "reducing": "value", "aggregating": "value", "list": "list", "map": "map"}[state.kind]
        stored = state.value_serializer
        user_key: Any = None
        if kind == "list":
            value = stored.nested_snapshots[0] if isinstance(stored, ListSerializerSnapshot) else None
        elif kind == "map":
            value = stored.nested_snapshots[1] if isinstance(stored, MapSerializerSnapshot) else None
            user_key = stored.nested_snapshots[0] if isinstance(stored, MapSerializerSnapshot) else None
        else:
            value = stored
        void = isinstance(state.namespace_serializer, VoidNamespaceSerializerSnapshot)
        entry = StateEntry(state.name, kind, None, None, None)  # type: ignore[arg-type]
        entry.registered = False
        entry.flink_type = state.options.get("KEYED_STATE_TYPE")
        if not isinstance(value, TypeSerializerSnapshot) or (kind == "map" and not isinstance(user_key, TypeSerializerSnapshot)):
            unread = value if not isinstance(value, TypeSerializerSnapshot) else user_key
            raise SnapshotFormatError(
                f"{where}: the reference cannot restore its serializers (a snapshot of "
                f"{getattr(unread, 'java_class', type(unread).__name__)}, a class it does not know); leave it out "
                "with restore(..., states=[...]) naming the states to restore")
        # A flink-core Row has no field names in Flink's snapshot: f0..fN, or the old job's names.
        value = flink_row_as_named(value, old_row, f"{where} (old_row_types)")
        namespace = None if void else state.namespace_serializer
        if any(s is not None and snapshot_unpickles(s) for s in (value, namespace, user_key)):
            raise PickleNotAllowedError(f"{where}: its snapshots name PickleSerializer, which no Flink job writes; "
                                        "nothing is unpickled from a Flink savepoint. Leave it out with "
                                        "restore(..., states=[...])")
        try:  # the snapshots as read (Flink's dialect), not through this project's bytes
            entry.value_serializer = value.restore_serializer()
            entry.namespace_serializer = None if namespace is None else namespace.restore_serializer()
            entry.user_key_serializer = None if user_key is None else user_key.restore_serializer()
        except StateError as exc:
            raise SnapshotFormatError(
                f"{where}: the reference cannot restore its serializers ({exc}); leave it out with "
                f"restore(..., states=[...]) naming the states to restore") from None
        entry.restored_snapshots = (value, namespace, user_key)
        entry.storage = self._new_storage(entry)
        known = self._known_key_groups
        max_parallelism = self.max_parallelism

        def rows() -> Iterator[SavepointRow]:
            for kg, key, ns, uk, v in state.rows():
                if known is not None:
                    known[key] = kg
                yield kg, key, (b"" if void else ns), uk, v

        self._load_checked(entry, _checked_rows(rows(), state.name, kind, max_parallelism))
        self._states[state.name] = entry

    def _restore_state(self, directory: str | os.PathLike[str], metadata: SavepointMetadata, state: StateMetadata) -> None:
        entry = StateEntry(state.name, state.kind, None, None, None)  # type: ignore[arg-type]
        entry.registered = False
        entry.restored_snapshot_bytes = (
            state.value_serializer_snapshot, state.namespace_serializer_snapshot,
            state.user_key_serializer_snapshot,
        )
        self._read_restored_snapshots(entry, allow_pickle=self._pickle_allowed(state.name))
        entry.unpickles = any(snapshot_unpickles(s) for s in entry.snapshots())
        entry.storage = self._new_storage(entry)
        rows = _checked_rows(read_state_rows(directory, state), state.name, state.kind, metadata.max_parallelism)
        self._load_checked(entry, rows)
        self._states[state.name] = entry

    def _load_checked(self, entry: StateEntry, rows: Iterator[SavepointRow]) -> None:
        """``_load``, with every failure to read the data reported as a corrupt savepoint."""
        try:
            self._load(entry, rows)
        except SavepointFormatError:
            raise
        except (StateError, ValueError, TypeError, OverflowError, IndexError, KeyError,
                AttributeError, UnicodeError, RecursionError, MemoryError) as exc:
            raise SavepointFormatError(
                f"state {entry.name!r}: its data cannot be read with the restored serializers "
                f"({type(exc).__name__}: {exc}); the savepoint is corrupt or its serializers do "
                "not read what they wrote"
            ) from None

    @staticmethod
    def _read_restored_snapshots(entry: StateEntry, allow_pickle: bool) -> None:
        """Read a restored state's snapshots from the savepoint's bytes and restore its
        serializers from them; those of Pickle unpickle only with ``allow_pickle`` (the
        restore's ``allow_pickle`` naming the state, or an access that opted in)."""
        assert entry.restored_snapshot_bytes is not None
        what = f"state {entry.name!r}"
        value, ns, uk = entry.restored_snapshot_bytes
        value_snap = _parse_snapshot(value, f"{what} value serializer", allow_pickle)
        ns_snap = None if ns is None else _parse_snapshot(ns, f"{what} namespace serializer", allow_pickle)
        uk_snap = None if uk is None else _parse_snapshot(uk, f"{what} map key serializer", allow_pickle)
        entry.value_serializer = value_snap.restore_serializer()
        entry.namespace_serializer = None if ns_snap is None else ns_snap.restore_serializer()
        entry.user_key_serializer = None if uk_snap is None else uk_snap.restore_serializer()
        entry.restored_snapshots = (value_snap, ns_snap, uk_snap)

    def _pickle_allowed(self, name: str) -> bool:
        """Whether the restore opted in to reading state ``name`` through pickle."""
        return pickle_allowed(self._allow_pickle, name)

    def _before_access(self, entry: StateEntry) -> None:
        """Called on the first access of a restored state, once it is permitted (a backend
        that deferred reading the state's data reads it here)."""

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        """Release the backend's resources (idempotent); state is kept only by savepoints."""
        self._closed = True

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StateError(f"{type(self).__name__} is closed; restore a savepoint into a new backend")

    def _entry(self, name: str) -> StateEntry:
        try:
            return self._states[name]
        except KeyError:
            raise StateError(
                f"no state named {name!r} in this backend; its states are {sorted(self._states)}"
            ) from None

    @staticmethod
    def _namespace_bytes(entry: StateEntry, namespace: Any) -> bytes:
        serializer = entry.namespace_serializer
        if serializer is None:
            if namespace is None:
                return b""
            raise StateError(
                f"state {entry.name!r} has no namespace serializer, so it has only the default "
                f"namespace (None), got {namespace!r}; declare namespace_serializer on its descriptor"
            )
        if namespace is None:
            raise StateError(f"state {entry.name!r}: namespaces may not be None")
        return serializer.to_bytes(namespace)

    # -- what subclasses provide --------------------------------------------------------------
    def _new_storage(self, entry: StateEntry) -> Any:
        raise NotImplementedError

    def _primaries(self, entry: StateEntry) -> Iterable[tuple[int, bytes, bytes]]:
        raise NotImplementedError

    def _savepoint_rows(self, entry: StateEntry) -> Iterable[SavepointRow]:
        raise NotImplementedError

    def _load(self, entry: StateEntry, rows: Iterator[SavepointRow]) -> None:
        raise NotImplementedError

    def _migrate(self, entry: StateEntry, plan: AccessPlan) -> None:
        raise NotImplementedError


def _parse_snapshot(data: bytes, what: str, allow_pickle: bool = False) -> TypeSerializerSnapshot[Any]:
    try:
        return snapshot_from_bytes(data, allow_pickle=allow_pickle)
    except SnapshotFormatError as exc:
        raise type(exc)(f"savepoint: the snapshot of {what} cannot be read: {exc}") from None


def _checked_rows(rows: Iterator[SavepointRow], name: str, kind: str, max_parallelism: int) -> Iterator[SavepointRow]:
    is_map = kind == "map"
    for row in rows:
        kg, key, ns, user_key, value = row
        if not 0 <= kg < max_parallelism or key is None or ns is None:
            raise SavepointFormatError(
                f"state {name!r}: row with key group {kg} (max parallelism "
                f"{max_parallelism}) or a null key/namespace; the savepoint is corrupt"
            )
        if is_map != (user_key is not None) or (value is None and not is_map):
            raise SavepointFormatError(
                f"state {name!r} ({kind} state): a row has "
                f"{'no' if user_key is None else 'a'} user key and "
                f"{'a null' if value is None else 'a'} value; the savepoint is corrupt"
            )
        yield row


class StateHandle:
    """What every state object shares: the backend, its registered state, and the current
    namespace; ``_primary()`` gives the (key group, key bytes, namespace bytes) it addresses."""

    __slots__ = ("_backend", "_entry", "_ns")

    def __init__(self, backend: KeyedStateBackend, entry: StateEntry) -> None:
        self._backend = backend
        self._entry = entry
        self._ns: bytes | None = b"" if entry.namespace_serializer is None else None

    @property
    def name(self) -> str:
        return self._entry.name

    def set_current_namespace(self, namespace: Any) -> None:
        """Select the namespace (Flink: the window) this state object reads and writes."""
        self._ns = KeyedStateBackend._namespace_bytes(self._entry, namespace)

    def _primary(self) -> Primary:
        backend = self._backend
        if backend._closed:
            backend._check_open()
        if backend._key_bytes is None:
            raise StateError(f"state {self._entry.name!r}: no current key; call set_current_key(key) first")
        if self._ns is None:
            raise StateError(
                f"state {self._entry.name!r} has a namespace serializer; call "
                "set_current_namespace(ns) before using it"
            )
        return backend._key_group, backend._key_bytes, self._ns
