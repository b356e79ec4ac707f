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

The savepoint layout (``_savepoint``) is public so that other engines (the Spark pipeline) can
read and write the same savepoints; docs/savepoint-format.md describes it.
"""

from ._bytes import BytesStateBackend
from ._descriptors import ListStateDescriptor, MapStateDescriptor, StateDescriptor, ValueStateDescriptor
from ._heap import HeapStateBackend
from ._murmur import murmur3_32
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
from ._savepoint import (
    LIST_DELIMITER,
    METADATA_FILE,
    SAVEPOINT_COLUMNS,
    SAVEPOINT_FORMAT_VERSION,
    STATE_KINDS,
    DataFile,
    SavepointFormatError,
    SavepointMetadata,
    SavepointOutput,
    StateMetadata,
    atomic_directory,
    check_state_files,
    data_file_name,
    decode_list_value,
    encode_list_value,
    key_group_for,
    key_groups_for,
    list_element_ends,
    open_data_file,
    owned_temp_name,
    read_savepoint_content,
    read_savepoint_metadata,
    read_state_rows,
    remove_abandoned,
    remove_abandoned_attempts,
    remove_abandoned_objects,
    savepoint_arrow_schema,
    savepoint_exists,
    savepoint_output,
    state_data_dir,
    state_data_files,
    state_row_groups,
    write_savepoint_metadata,
    write_savepoint_rows,
    write_state_rows,
)
from ._states import ListState, MapState, State, ValueState
from ._storage import Location, StorageError, is_uri, locate, same_bytes, shown, store_environment

__all__ = [
    "AccessPlan",
    "MigrationPlan",
    "migration_plan",
    "list_element_ends",
    "SCHEMA_EVOLUTION_ENABLED",
    "normalize_config",
    "plan_access",
    "resolve_key_serializer",
    "snapshot_unpickles",
    "pickle_allowed",
    "descriptor_unpickles",
    "BytesStateBackend",
    "HeapStateBackend",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "SCHEMA_EVOLUTION_OPTION",
    "State",
    "StateDescriptor",
    "ValueState",
    "ValueStateDescriptor",
    "LIST_DELIMITER",
    "METADATA_FILE",
    "SAVEPOINT_COLUMNS",
    "SAVEPOINT_FORMAT_VERSION",
    "STATE_KINDS",
    "DataFile",
    "Location",
    "SavepointFormatError",
    "SavepointMetadata",
    "SavepointOutput",
    "StateMetadata",
    "StorageError",
    "atomic_directory",
    "is_uri",
    "locate",
    "open_data_file",
    "remove_abandoned_objects",
    "savepoint_exists",
    "savepoint_output",
    "same_bytes",
    "shown",
    "store_environment",
    "check_state_files",
    "data_file_name",
    "owned_temp_name",
    "remove_abandoned",
    "remove_abandoned_attempts",
    "decode_list_value",
    "encode_list_value",
    "key_group_for",
    "key_groups_for",
    "murmur3_32",
    "read_savepoint_content",
    "read_savepoint_metadata",
    "read_state_rows",
    "savepoint_arrow_schema",
    "state_data_dir",
    "state_data_files",
    "state_row_groups",
    "write_savepoint_metadata",
    "write_savepoint_rows",
    "write_state_rows",
]
