"""The one error hierarchy of the project: everything raised on purpose is a ``StateError``."""

from __future__ import annotations

__all__ = [
    "StateError",
    "SerializationError",
    "EndOfDataError",
    "SnapshotFormatError",
    "UnknownSnapshotClassError",
    "NoFlinkFormError",
    "StateMigrationError",
    "RecordNotFoundError",
    "PickleNotAllowedError",
    "ClassNotAllowedError",
]


class StateError(Exception):
    """Root of every error this project raises deliberately."""


class SerializationError(StateError):
    """Bytes could not be written or read as the serializer's format says."""


class EndOfDataError(SerializationError, EOFError):
    """A read needed more bytes than the input holds (truncated data or a wrong length)."""


class SnapshotFormatError(StateError):
    """Serializer-snapshot bytes are corrupt, truncated, or of an unsupported version."""


class UnknownSnapshotClassError(SnapshotFormatError):
    """A snapshot names a class that is not in the snapshot registry; nothing was imported."""


class NoFlinkFormError(SnapshotFormatError):
    """A snapshot was asked for its form in Flink's dialect and has none: it describes a format
    no Flink serializer reads (e.g. Avro's standard binary encoding). Any other error while
    writing in Flink's dialect is a fault of the writer, not the absence of a form."""


class StateMigrationError(StateError):
    """A state cannot be brought to the new serializer (an incompatible change)."""


class RecordNotFoundError(StateError):
    """An update addressed a record that does not exist in the table."""


class PickleNotAllowedError(StateError):
    """Reading data would unpickle it, and the caller has not opted in: for a state of a
    savepoint (``restore(..., allow_pickle={name})`` or a descriptor that uses
    ``PickleSerializer``), or for a ``PickleSerializer`` restored from a snapshot read from
    bytes (``snapshot_from_bytes(..., allow_pickle=True)``); nothing was unpickled."""


class ClassNotAllowedError(StateError):
    """A snapshot or record names a class it may not name: one of an imported module that is
    neither registered (``reference.register_type``), a dataclass nor an enum. Nothing was
    resolved or imported."""
