"""Savepoints: their formats, where they are stored, how they are committed, and key groups.

This package owns everything a savepoint is on disk, for every engine that reads or writes one
(the state backends of ``reference.backends``, the Spark engine of ``conformance.spark``):

- **this project's layout** (``_format``; docs/savepoint-format.md): ``_metadata.json`` written
  last, listing every data file, and per state a Parquet dataset of (key_group, key, namespace,
  user_key, value) rows. ``read_savepoint_metadata`` / ``write_savepoint_metadata``,
  ``write_state_rows`` / ``read_state_rows``, ``savepoint_output`` (the commit protocol: a
  savepoint exists exactly when its metadata does), the list-value encoding shared with Flink's
  RocksDB list state (``encode_list_value``, ``decode_list_value``);
- **storage** (``_storage``): a local path or any URI ``pyarrow.fs`` accepts (``locate``,
  ``Location``), configured by the standard environment only; ``shown`` renders a path with no
  secret in it; ``file_tree`` reads every file under a path (to prove nothing changed);
- **key groups** (``_key_groups``): ``key_group_for`` a serialized key, the range each subtask
  owns (``key_group_range``), as Flink assigns them.

Every failure is a ``reference.StateError``: ``SavepointFormatError`` for what was read,
``StorageError`` for the store.
"""

from ._format import (
    ABANDONED_AFTER,
    LIST_DELIMITER,
    METADATA_FILE,
    SAVEPOINT_COLUMNS,
    SAVEPOINT_FORMAT_NAME,
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
from ._key_groups import (
    MAX_MAX_PARALLELISM,
    check_parallelism,
    key_group_for,
    key_group_range,
    key_groups_for,
    subtask_for_key_group,
)
from ._murmur import murmur3_32, murmur3_32_many
from ._storage import Location, StorageError, is_uri, locate, same_bytes, shown, store_environment
from ._tree import file_tree

__all__ = [
    # this project's savepoint layout
    "ABANDONED_AFTER",
    "LIST_DELIMITER",
    "METADATA_FILE",
    "SAVEPOINT_COLUMNS",
    "SAVEPOINT_FORMAT_NAME",
    "SAVEPOINT_FORMAT_VERSION",
    "STATE_KINDS",
    "DataFile",
    "SavepointFormatError",
    "SavepointMetadata",
    "SavepointOutput",
    "StateMetadata",
    "atomic_directory",
    "check_state_files",
    "data_file_name",
    "decode_list_value",
    "encode_list_value",
    "list_element_ends",
    "open_data_file",
    "owned_temp_name",
    "read_savepoint_content",
    "read_savepoint_metadata",
    "read_state_rows",
    "remove_abandoned",
    "remove_abandoned_attempts",
    "remove_abandoned_objects",
    "savepoint_arrow_schema",
    "savepoint_exists",
    "savepoint_output",
    "state_data_dir",
    "state_data_files",
    "state_row_groups",
    "write_savepoint_metadata",
    "write_savepoint_rows",
    "write_state_rows",
    # key groups
    "MAX_MAX_PARALLELISM",
    "check_parallelism",
    "key_group_for",
    "key_group_range",
    "key_groups_for",
    "murmur3_32",
    "murmur3_32_many",
    "subtask_for_key_group",
    # storage
    "file_tree",
    "Location",
    "StorageError",
    "is_uri",
    "locate",
    "same_bytes",
    "shown",
    "store_environment",
]
