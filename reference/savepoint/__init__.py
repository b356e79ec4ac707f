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
- **key groups** (``_key_groups``): ``key_group_for`` a serialized key (this project's
  savepoints), ``flink_key_group`` of a key as Flink assigns it (Java's ``hashCode``:
  ``java_hash_code``), the range each subtask owns (``key_group_range``), as Flink assigns them;
- **Flink's own canonical savepoints** (``_flink_metadata``, ``_flink_keyed``, ``_snappy``;
  docs/flink-savepoints.md), read without any user class: ``read_flink_savepoint`` (operators,
  keyed states, their entries decoded or raw, streamed), ``read_flink_metadata`` (the
  ``_metadata`` file alone), ``operator_id_for_uid`` (Guava's ``murmur3_128`` of a uid),
  ``snappy_decompress`` / ``SnappyFramedReader`` (Snappy, as Flink compresses key groups);
  and written (``_flink_writer``): ``write_flink_savepoint`` (a savepoint read, some keyed
  states replaced through ``StateReplacement``, written anew with the commit protocol to a
  local directory or a URI, its tasks run in this process or wherever a ``TaskRunner`` sends
  them), ``snappy_frame`` (the framing format's compressor side); ``write_keyed_flink_savepoint``
  (one operator's keyed states from scratch, ``NewKeyedState``: what a state backend writes),
  the inverse of ``FlinkKeyedState.rows``.
- **inspecting and exporting** either kind of savepoint (``_export``, ``_arrow_types``):
  ``savepoint_kind`` tells them apart by their files, ``inspect_savepoint`` /
  ``format_inspection`` (what ``conformance savepoint inspect`` shows), ``plan_export`` /
  ``write_units`` / ``export_savepoint`` (keyed state as typed Parquet datasets), and the one
  rule from a serializer snapshot to an Arrow type (``arrow_form``, ``arrow_type``).

Every failure is a ``reference.StateError``: ``SavepointFormatError`` for what was read,
``StorageError`` for the store.
"""

from ._arrow_types import ArrowForm, arrow_form, arrow_type
from ._export import (
    EXPORT_MANIFEST,
    ExportReport,
    ExportState,
    commit_export,
    export_datasets,
    export_groups,
    export_savepoint,
    format_inspection,
    inspect_savepoint,
    plan_export,
    savepoint_kind,
    write_units,
)
from ._flink_keyed import (
    FlinkEntry,
    FlinkKeyedState,
    FlinkOperator,
    FlinkOperatorState,
    FlinkSavepoint,
    FlinkStateMeta,
    OperatorStateValue,
    RawEntry,
    Undecoded,
    UnreadSnapshot,
    read_flink_savepoint,
)
from ._flink_metadata import (
    FlinkMetadata,
    FlinkOperatorMetadata,
    FlinkSubtaskState,
    KeyGroupsHandle,
    MasterState,
    OperatorStateEntry,
    OperatorStateHandle,
    StreamHandle,
    is_flink_savepoint,
    operator_id_for_uid,
    parse_flink_metadata,
    read_flink_metadata,
)
from ._flink_writer import (
    INLINE_THRESHOLD,
    PIECE_BYTES,
    NewKeyedState,
    StateReplacement,
    TaskRunner,
    renamed_operators,
    write_flink_savepoint,
    write_keyed_flink_savepoint,
)
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
    new_owned_directory,
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
    flink_key_group,
    flink_key_group_for_hash,
    has_java_hash_code,
    java_hash_code,
    key_group_for,
    key_group_range,
    key_groups_for,
    subtask_for_key_group,
)
from ._murmur import murmur3_32, murmur3_32_many, murmur3_128
from ._snappy import FramedReader as SnappyFramedReader
from ._snappy import decompress as snappy_decompress
from ._snappy import frame as snappy_frame
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
    "new_owned_directory",
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
    "flink_key_group",
    "flink_key_group_for_hash",
    "has_java_hash_code",
    "java_hash_code",
    "key_group_for",
    "key_group_range",
    "key_groups_for",
    "murmur3_32",
    "murmur3_32_many",
    "murmur3_128",
    "subtask_for_key_group",
    # Flink's canonical savepoints
    "FlinkEntry",
    "FlinkKeyedState",
    "FlinkMetadata",
    "FlinkOperator",
    "FlinkOperatorMetadata",
    "FlinkOperatorState",
    "FlinkSavepoint",
    "FlinkStateMeta",
    "FlinkSubtaskState",
    "KeyGroupsHandle",
    "MasterState",
    "OperatorStateEntry",
    "OperatorStateHandle",
    "OperatorStateValue",
    "RawEntry",
    "StreamHandle",
    "Undecoded",
    "UnreadSnapshot",
    "is_flink_savepoint",
    "operator_id_for_uid",
    "parse_flink_metadata",
    "read_flink_metadata",
    "read_flink_savepoint",
    "SnappyFramedReader",
    "snappy_decompress",
    # inspecting and exporting either kind of savepoint; Arrow types of serializer snapshots
    "ArrowForm",
    "arrow_form",
    "arrow_type",
    "EXPORT_MANIFEST",
    "ExportReport",
    "ExportState",
    "commit_export",
    "export_datasets",
    "export_groups",
    "export_savepoint",
    "format_inspection",
    "inspect_savepoint",
    "plan_export",
    "savepoint_kind",
    "write_units",
    "snappy_frame",
    "INLINE_THRESHOLD",
    "StateReplacement",
    "renamed_operators",
    "write_flink_savepoint",
    "NewKeyedState",
    "write_keyed_flink_savepoint",
    "PIECE_BYTES",
    "TaskRunner",
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
