"""Keyed state backends (heap and bytes), savepoints and migration, as Flink defines them.

    backend = BytesStateBackend(key_serializer=StringSerializer(), store="rocksdb")
    backend.set_current_key("user-1")
    count = backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    count.update(3)
    path = backend.savepoint("/savepoints/sp-1")      # atomic; the directory must not exist
    backend.close()
    restored = HeapStateBackend.restore(path, key_serializer=StringSerializer(),
                                        config=SCHEMA_EVOLUTION_ENABLED)

A restored state is judged on its first ``get_*_state``: as is, reconfigured, migrated, or
refused with a ``StateMigrationError`` that leaves it untouched. A migration follows the
state's ``MigrationPlan`` (``migration_plan(old_snapshot, new_serializer)``, computed once per
pair; ``str(plan)`` shows it): the bytes backend rewrites every entry eagerly, copying the
unchanged parts as bytes; the heap backend brings every object to the new shape.

``migrate_flink_savepoint`` brings the values of a Flink canonical savepoint to a new job's
descriptors through the same verdicts and plans, writing a new Flink savepoint.

Flink's canonical savepoints (docs/flink-savepoints.md, "State backends and Flink savepoints"):
``restore`` also takes one (``operator_uid=`` names the operator whose keyed states are restored,
``states=`` optionally which), and ``backend.savepoint(path, format="flink",
operator_uid=..., max_parallelism=...)`` writes one, keys in the key groups Flink assigns;
``convert_to_flink_savepoint`` converts a savepoint of this project's format.

Savepoints themselves (their layout, storage, commit protocol and key groups) are the
``reference.savepoint`` package's; the backends write and restore them through it.
"""

from ._bytes import BytesStateBackend
from ._descriptors import ListStateDescriptor, MapStateDescriptor, StateDescriptor, ValueStateDescriptor
from ._flink_migrate import convert_to_flink_savepoint, migrate_flink_savepoint
from ._flink_rows import flink_row_as_named
from ._heap import HeapStateBackend
from ._plan import MigrationPlan, migration_plan
from ._resolve import (
    SCHEMA_EVOLUTION_ENABLED,
    SCHEMA_EVOLUTION_OPTION,
    AccessPlan,
    descriptor_unpickles,
    normalize_config,
    pickle_allowed,
    plan_access,
    resolve_key_serializer,
    snapshot_unpickles,
)
from ._states import ListState, MapState, State, ValueState

__all__ = [
    "BytesStateBackend",
    "HeapStateBackend",
    "StateDescriptor",
    "ValueStateDescriptor",
    "ListStateDescriptor",
    "MapStateDescriptor",
    "State",
    "ValueState",
    "ListState",
    "MapState",
    "MigrationPlan",
    "migration_plan",
    "migrate_flink_savepoint",
    "convert_to_flink_savepoint",
    "flink_row_as_named",
    "AccessPlan",
    "plan_access",
    "SCHEMA_EVOLUTION_ENABLED",
    "SCHEMA_EVOLUTION_OPTION",
    "normalize_config",
    "resolve_key_serializer",
    "snapshot_unpickles",
    "pickle_allowed",
    "descriptor_unpickles",
]
