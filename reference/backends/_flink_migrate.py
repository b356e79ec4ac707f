"""Migrating the values of a Flink canonical savepoint to a new job's serializers
(docs/flink-savepoints.md).

``migrate_flink_savepoint(path, out, descriptors, *, schema_evolution=False)`` reads the Flink
savepoint at ``path`` and writes a new one at ``out``, a local directory or a URI
(``reference.savepoint.write_flink_savepoint``: same ``_metadata`` version, the commit
protocol, the input only read; its tasks run in this process, or wherever ``run_tasks`` sends
them: ``conformance.spark.migrate_flink_savepoint_spark`` runs them on Spark executors).
``plan_flink_migration(savepoint, descriptors)`` is its judgement alone: the replacements to
write. ``descriptors`` is
``{operator uid (or 32-hex-digit id): {state name: StateDescriptor}}``; operators and states not
named are carried over unchanged.

Each named state is judged as a restore judges it (``plan_access``: the descriptor's kind against
the stored one, value / reducing / aggregating state taking a ``ValueStateDescriptor``; the new
value serializer against the stored snapshot; a map state's user keys may not migrate; a row
whose fields change needs ``schema_evolution=True``, FLIP-527's rules), every state before
anything is written: an incompatible one is a ``StateMigrationError`` naming the operator, the
state and why. The snapshots judged are the stored ones unwrapped: a list state's element, a map
state's user key and value, and inside a state with a time-to-live the value the TTL wrapper
holds (the wrapper and its timestamp stay).

A state compatible as is (or with a reconfigured serializer) keeps its stored snapshots and
bytes. A state that needs migration gets every value through its ``MigrationPlan`` (a list
element by element, a map value by value with null values kept, a TTL value after its 8-byte
timestamp) and its ``VALUE_SERIALIZER`` snapshot replaced by the new serializer's (list and map
snapshots rebuilt around the new element or value serializer, the TTL wrapper around the new
value serializer), written in Flink's dialect. Keys, namespaces, user keys, key groups and
timers stay byte for byte.

Flink's ``RowSerializer`` snapshot keeps no field names: a flink-core Row stored as a state's
value (top level; not one nested in another type) is judged as a row of fields ``f0..fN``, so
FLIP-527's name-based rules apply to those names (adding a nullable field at the end, with
``schema_evolution=True``), where Flink itself, matching by position, refuses any arity change.
``old_row_types={operator uid: {state name: old row type}}`` gives the old job's field names
instead (``flink_row_as_named``: a ``RowSerializer``, a ``reference.types.RowType`` or the field
names in order, which must read the stored row as is), so that a reordered or added field is
matched by its name. The migrated row's snapshot is written in Flink's form again (no names). A
Table runtime row (``RowDataSerializer``, the state of SQL jobs) is judged the same way: its
top-level fields are ``f0..fN`` (or the old row type's), its nested rows keep the names Flink's
snapshot holds.

``operator_uids={old uid or id: new uid or id}`` moves operators whose uid the new job changed
(a SQL job planned with ``table.exec.uid.generation=ALWAYS`` numbers its uids per JVM, see
docs/flink-savepoints.md) to their new uids (``reference.savepoint.renamed_operators``); the
descriptors then name the operators as the new job does.

``convert_to_flink_savepoint(path, out, *, operator_uid, max_parallelism=None)`` converts a
savepoint of this project's format into a Flink canonical savepoint holding its states as the
keyed states of the operator ``operator_uid``: the savepoint is restored (key serializer from its
own snapshot, ``BytesStateBackend``, nothing deserialized but the keys) and written with
``savepoint(out, format="flink", ...)``; every serializer must have a Flink identity and the key
type a Java ``hashCode`` the reference knows (``reference.savepoint.java_hash_code``), else a
``StateError`` says which and nothing is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from .._errors import StateError, StateMigrationError
from .._snapshot import TypeSerializerSnapshot
from ..savepoint import (
    PIECE_BYTES,
    FlinkKeyedState,
    FlinkSavepoint,
    StateReplacement,
    TaskRunner,
    read_flink_savepoint,
    renamed_operators,
    write_flink_savepoint,
)
from ..serializers import (
    ListSerializer,
    ListSerializerSnapshot,
    MapSerializer,
    MapSerializerSnapshot,
    TtlSerializer,
    TtlSerializerSnapshot,
)
from ._descriptors import StateDescriptor
from ._flink_rows import flink_row_as_named
from ._plan import MigrationPlan
from ._resolve import SCHEMA_EVOLUTION_ENABLED, plan_access

__all__ = ["convert_to_flink_savepoint", "flink_row_as_named", "migrate_flink_savepoint", "plan_flink_migration"]

_AS_DESCRIPTOR = {"value": "value", "reducing": "value", "aggregating": "value", "list": "list", "map": "map"}
_TTL_TIMESTAMP_BYTES = 8


def _nested(snapshot: Any, index: int) -> Any:
    nested = getattr(snapshot, "nested_snapshots", None)
    return nested[index] if nested and index < len(nested) else None


def _unwrap_ttl(snapshot: Any, ttl: bool) -> Any:
    return _nested(snapshot, 1) if ttl and isinstance(snapshot, TtlSerializerSnapshot) else snapshot


def _rewrap_ttl(stored: Any, ttl: bool, new: Any) -> Any:
    """The serializer to store: ``new`` inside the stored TTL wrapper when there is one."""
    if not ttl:
        return new
    return TtlSerializer(stored.restore_serializer().timestamp, new)


def _replacement(operator: str, state: FlinkKeyedState, descriptor: StateDescriptor,
                 schema_evolution: bool, old_row: Any = None) -> StateReplacement | None:
    """The replacement of one state, or None when it stays as stored; raises for a refusal."""
    where = f"operator {operator!r}, state {state.name!r}"
    kind = _AS_DESCRIPTOR.get(state.kind)
    if kind is None:
        raise StateMigrationError(f"{where}: a {state.kind} state cannot be migrated; leave it out of the descriptors")
    stored = state.value_serializer
    if state.kind == "list":
        if not isinstance(stored, ListSerializerSnapshot):
            raise StateMigrationError(f"{where}: a list state whose value snapshot is {type(stored).__name__}, "
                                      "not a list serializer's; it cannot be migrated here")
        inner = _nested(stored, 0)
        value_snapshot, user_key_snapshot = _unwrap_ttl(inner, state.ttl), None
    elif state.kind == "map":
        if not isinstance(stored, MapSerializerSnapshot):
            raise StateMigrationError(f"{where}: a map state whose value snapshot is {type(stored).__name__}, "
                                      "not a map serializer's; it cannot be migrated here")
        inner = _nested(stored, 1)
        value_snapshot, user_key_snapshot = _unwrap_ttl(inner, state.ttl), _nested(stored, 0)
    else:
        inner = stored
        value_snapshot, user_key_snapshot = _unwrap_ttl(stored, state.ttl), None
    if not isinstance(value_snapshot, TypeSerializerSnapshot):
        raise StateMigrationError(
            f"{where}: the stored value serializer snapshot is "
            f"{getattr(value_snapshot, 'java_class', type(value_snapshot).__name__)}, which the reference cannot "
            "judge (a class it does not know); it cannot be migrated")
    try:
        value_snapshot = flink_row_as_named(value_snapshot, old_row, where)
    except StateError as exc:
        raise StateError(f"old_row_types: {exc}") from None
    namespace = state.namespace_serializer if descriptor.namespace_serializer is not None else None
    try:
        access = plan_access(descriptor.name, kind, value_snapshot, namespace, user_key_snapshot, descriptor,
                             SCHEMA_EVOLUTION_ENABLED if schema_evolution else {})
    except StateMigrationError as exc:
        hint = " (here: migrate_flink_savepoint(..., schema_evolution=True))" if "schema evolution is disabled" in str(exc) else ""
        raise StateMigrationError(f"operator {operator!r}: {exc}{hint}") from None
    if not access.migrate:
        return None
    plan = access.migration
    value = _rewrap_ttl(inner, state.ttl, plan.reader)
    new_snapshot: TypeSerializerSnapshot[Any]
    if state.kind == "list":
        new_snapshot = ListSerializer(value).snapshot_configuration()
        change = _list_function(plan, state.ttl)
    elif state.kind == "map":
        assert access.user_key_serializer is not None
        new_snapshot = MapSerializer(access.user_key_serializer, value).snapshot_configuration()
        change = _map_function(plan, state.ttl)
    else:
        new_snapshot = value.snapshot_configuration()
        change = _value_function(plan, state.ttl)
    return StateReplacement({"VALUE_SERIALIZER": new_snapshot}, change)


def _value_function(plan: MigrationPlan, ttl: bool) -> Callable[[bytes], bytes]:
    if not ttl:
        return plan.migrate
    cut = _TTL_TIMESTAMP_BYTES

    def migrate(raw: bytes) -> bytes:
        return raw[:cut] + plan.migrate(raw[cut:])

    return migrate


def _map_function(plan: MigrationPlan, ttl: bool) -> Callable[[bytes], bytes]:
    value = _value_function(plan, ttl)

    def migrate(raw: bytes) -> bytes:
        if raw[:1] != b"\x00":  # a null map value (is-null true) stays
            return raw
        return raw[:1] + value(raw[1:])

    return migrate


def _list_function(plan: MigrationPlan, ttl: bool) -> Callable[[bytes], bytes]:
    if not ttl:
        return plan.migrate_list
    from .._io import DataInputView, DataOutputView
    from ..savepoint import LIST_DELIMITER, list_element_ends

    def migrate(raw: bytes) -> bytes:
        source, target = DataInputView(raw), DataOutputView()

        def element(src: DataInputView) -> None:
            target.write(src.read_fully(_TTL_TIMESTAMP_BYTES))
            plan.run(src, target)

        for _ in list_element_ends(source, element, lambda: repr(plan.prior)):
            if source.available():
                target.write_byte(LIST_DELIMITER)
        return target.getvalue()

    return migrate


def plan_flink_migration(savepoint: FlinkSavepoint, descriptors: Mapping[str, Mapping[str, StateDescriptor]], *,
                         schema_evolution: bool = False,
                         old_row_types: Mapping[str, Mapping[str, Any]] | None = None,
                         ) -> dict[str, dict[str, StateReplacement]]:
    """Judge every named state of ``savepoint`` against ``descriptors`` (see the module
    docstring): the replacements to write (``{operator: {state name: StateReplacement}}``,
    states compatible as is left out); raises ``StateMigrationError`` for a refusal.
    ``old_row_types``: ``{operator uid: {state name: old row type}}`` naming the fields of a
    flink-core Row state (``flink_row_as_named``)."""
    old_rows: dict[tuple[str, str], Any] = {}
    for operator_name, rows in (old_row_types or {}).items():
        try:
            op = savepoint.operator(operator_name)
        except KeyError as exc:
            raise StateError(f"old_row_types name {exc.args[0]}") from None
        for state_name, row in rows.items():
            try:
                op.keyed_state(state_name)
            except KeyError as exc:
                raise StateError(f"old_row_types, operator {operator_name!r}: {exc.args[0]}") from None
            if state_name not in descriptors.get(operator_name, {}):
                raise StateError(f"old_row_types names operator {operator_name!r}, state {state_name!r}, which the "
                                 "descriptors do not name (an old row type only matters for a state being migrated)")
            old_rows[(operator_name, state_name)] = row
    replacements: dict[str, dict[str, StateReplacement]] = {}
    for operator_name, states in descriptors.items():
        try:
            op = savepoint.operator(operator_name)
        except KeyError as exc:
            raise StateMigrationError(f"descriptors name {exc.args[0]}") from None
        for state_name, descriptor in states.items():
            where = f"operator {operator_name!r}, state {state_name!r}"
            if not isinstance(descriptor, StateDescriptor):
                raise StateError(f"{where}: got {type(descriptor).__name__}, should be a reference.backends "
                                 "StateDescriptor (ValueStateDescriptor, ListStateDescriptor, MapStateDescriptor)")
            if descriptor.name != state_name:
                raise StateError(f"{where}: the descriptor is named {descriptor.name!r}, should be {state_name!r}")
            try:
                state = op.keyed_state(state_name)
            except KeyError as exc:
                raise StateMigrationError(f"{where}: {exc.args[0]}") from None
            replacement = _replacement(operator_name, state, descriptor, schema_evolution,
                                       old_rows.get((operator_name, state_name)))
            if replacement is not None:
                replacements.setdefault(operator_name, {})[state_name] = replacement
    return replacements


def _under_old_names(savepoint: FlinkSavepoint, named: Mapping[str, Any], operator_uids: Mapping[str, str],
                     what: str) -> dict[str, Any]:
    """``named`` (keyed by the new job's operators) keyed by the savepoint's operators: a new
    name of ``operator_uids`` becomes its old one; an old name of a renamed operator is refused."""
    old_of = {new: old for old, new in operator_uids.items()}
    renamed = renamed_operators(savepoint, operator_uids)
    out: dict[str, Any] = {}
    for name, value in named.items():
        if name in old_of:
            out[old_of[name]] = value
            continue
        try:
            op = savepoint.operator(name)
        except KeyError:
            out[name] = value  # judged (and refused, naming what exists) where it is used
            continue
        if op.operator_id in renamed:
            new = next(n for o, n in operator_uids.items() if savepoint.operator(o) is op)
            raise StateError(f"{what} name operator {name!r}, which operator_uids renames to {new!r}: name it "
                             f"{new!r}, as the new job does")
        out[name] = value
    return out


def migrate_flink_savepoint(path: Any, out: str | os.PathLike[str],
                            descriptors: Mapping[str, Mapping[str, StateDescriptor]], *,
                            schema_evolution: bool = False, allow_external_files: bool = False,
                            old_row_types: Mapping[str, Mapping[str, Any]] | None = None,
                            operator_uids: Mapping[str, str] | None = None,
                            run_tasks: TaskRunner | None = None, piece_bytes: int = PIECE_BYTES,
                            _fault: Callable[[int], None] | None = None) -> str:
    """Migrate the Flink savepoint at ``path`` to the new job's ``descriptors``, writing a new
    Flink savepoint at ``out`` (a local directory or a URI; see the module docstring); returns
    its path. ``run_tasks`` and ``piece_bytes`` as for ``write_flink_savepoint`` (by default
    the work runs in this process; ``conformance.spark`` runs it on Spark executors);
    ``old_row_types`` as for ``plan_flink_migration``. ``operator_uids`` (``{old uid or id: new
    uid or id}``, ``reference.savepoint.renamed_operators``) moves operators to the uids the new
    job gives them; ``descriptors`` and ``old_row_types`` then name them by their new uids."""
    savepoint = read_flink_savepoint(path, allow_external_files=allow_external_files)
    if operator_uids:
        descriptors = _under_old_names(savepoint, descriptors, operator_uids, "descriptors")
        old_row_types = _under_old_names(savepoint, old_row_types or {}, operator_uids, "old_row_types")
    replacements = plan_flink_migration(savepoint, descriptors, schema_evolution=schema_evolution,
                                        old_row_types=old_row_types)
    return write_flink_savepoint(savepoint, out, replacements, allow_external_files=allow_external_files,
                                 run_tasks=run_tasks, piece_bytes=piece_bytes, operator_uids=operator_uids,
                                 _fault=_fault)


def convert_to_flink_savepoint(path: Any, out: str | os.PathLike[str], *, operator_uid: str,
                               max_parallelism: int | None = None) -> str:
    """Convert this project's savepoint at ``path`` into a Flink canonical savepoint at the
    local directory ``out`` (see the module docstring); returns its path."""
    from .._snapshot import snapshot_from_bytes
    from ..savepoint import is_flink_savepoint, read_savepoint_metadata
    from ._bytes import BytesStateBackend

    if is_flink_savepoint(path):
        raise StateError(f"{path} is a Flink savepoint already; convert_to_flink_savepoint takes this project's "
                         "savepoints (use migrate_flink_savepoint to change a Flink savepoint's serializers)")
    metadata = read_savepoint_metadata(path)
    key_serializer = snapshot_from_bytes(metadata.key_serializer_snapshot).restore_serializer()
    backend = BytesStateBackend.restore(path, key_serializer)
    try:
        return backend.savepoint(out, format="flink", operator_uid=operator_uid, max_parallelism=max_parallelism)
    finally:
        backend.close()
