"""Keyed state backends (heap and bytes), savepoints and migration, as Flink defines them.

The savepoint layout (``_savepoint``) is public so that other engines (the Spark pipeline) can
read and write the same savepoints; docs/savepoint-format.md describes it.
"""

from ._bytes import BytesStateBackend
from ._descriptors import ListStateDescriptor, MapStateDescriptor, StateDescriptor, ValueStateDescriptor
from ._heap import HeapStateBackend
from ._resolve import (
    SCHEMA_EVOLUTION_OPTION,
    AccessPlan,
    normalize_config,
    plan_access,
    resolve_key_serializer,
)
from ._savepoint import (
    LIST_DELIMITER,
    METADATA_FILE,
    SAVEPOINT_COLUMNS,
    SAVEPOINT_FORMAT_VERSION,
    STATE_KINDS,
    SavepointFormatError,
    SavepointMetadata,
    StateMetadata,
    atomic_directory,
    data_file_name,
    decode_list_value,
    encode_list_value,
    key_group_for,
    read_savepoint_content,
    read_savepoint_metadata,
    read_state_rows,
    savepoint_arrow_schema,
    state_data_dir,
    state_data_files,
    write_savepoint_metadata,
    write_state_rows,
)
from ._states import ListState, MapState, State, ValueState

__all__ = [
    "AccessPlan",
    "normalize_config",
    "plan_access",
    "resolve_key_serializer",
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
    "SavepointFormatError",
    "SavepointMetadata",
    "StateMetadata",
    "atomic_directory",
    "data_file_name",
    "decode_list_value",
    "encode_list_value",
    "key_group_for",
    "read_savepoint_content",
    "read_savepoint_metadata",
    "read_state_rows",
    "savepoint_arrow_schema",
    "state_data_dir",
    "state_data_files",
    "write_savepoint_metadata",
    "write_state_rows",
]
