"""Reference implementation of Flink's serializer, snapshot and schema-migration semantics.

Importing ``reference`` imports neither pytest, hypothesis nor pyspark. ``canonical`` /
``values_equal`` / ``value_tree`` are the one rule for when two state values are the same
(exact types, float bits, order where the type has one).
"""

from ._classes import class_identity, lookup_type, register_type
from ._compat import OuterSchemaCompatibility, SchemaCompatibility, Verdict
from ._errors import (
    ClassNotAllowedError,
    EndOfDataError,
    NoFlinkFormError,
    PickleNotAllowedError,
    RecordNotFoundError,
    SerializationError,
    SnapshotFormatError,
    StateError,
    StateMigrationError,
    UnknownSnapshotClassError,
)
from ._io import DataInputView, DataOutputView
from ._serializer import TypeSerializer
from ._snapshot import (
    CompositeTypeSerializerSnapshot,
    PickledSerializerSnapshot,
    SimpleTypeSerializerSnapshot,
    TypeSerializerSnapshot,
    migrate_element_form,
    migrated_element,
    read_serializer_snapshot,
    read_versioned_snapshot,
    resolve_compatibility,
    snapshot_aliases,
    snapshot_class,
    snapshot_dialect,
    snapshot_from_bytes,
    snapshot_to_bytes,
    write_serializer_snapshot,
    write_versioned_snapshot,
)
from ._values import TREE_FORM, canonical, value_tree, values_equal

__all__ = [
    "ClassNotAllowedError",
    "CompositeTypeSerializerSnapshot",
    "DataInputView",
    "DataOutputView",
    "EndOfDataError",
    "OuterSchemaCompatibility",
    "PickleNotAllowedError",
    "PickledSerializerSnapshot",
    "RecordNotFoundError",
    "SchemaCompatibility",
    "SerializationError",
    "SimpleTypeSerializerSnapshot",
    "SnapshotFormatError",
    "NoFlinkFormError",
    "StateError",
    "StateMigrationError",
    "TypeSerializer",
    "TypeSerializerSnapshot",
    "UnknownSnapshotClassError",
    "Verdict",
    "canonical",
    "TREE_FORM",
    "class_identity",
    "lookup_type",
    "migrate_element_form",
    "migrated_element",
    "read_serializer_snapshot",
    "read_versioned_snapshot",
    "register_type",
    "resolve_compatibility",
    "snapshot_aliases",
    "snapshot_class",
    "snapshot_from_bytes",
    "snapshot_dialect",
    "snapshot_to_bytes",
    "value_tree",
    "values_equal",
    "write_serializer_snapshot",
    "write_versioned_snapshot",
]
