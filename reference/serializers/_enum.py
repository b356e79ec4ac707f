"""Enum serializer: an int ordinal taken from the serializer's own symbol order.

The symbol order is part of the serializer's configuration (not the class's declaration order,
which may change between releases): a serializer restored from a snapshot keeps the ordinals the
data was written with, and members added since are appended after them.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from typing import Any

from .._classes import class_key, lookup_type, not_known_hint, qualified_name, register_type
from .._compat import SchemaCompatibility
from .._errors import SerializationError, SnapshotFormatError, StateError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import TypeSerializerSnapshot, snapshot_dialect

__all__ = ["EnumSerializer", "EnumSerializerSnapshot"]


class EnumSerializer(TypeSerializer[enum.Enum]):
    """Writes a member of ``enum_type`` as a big-endian int: its index in ``symbols``.

    ``symbols`` (member names) defaults to the declaration order; members of the class that
    ``symbols`` leaves out are appended in declaration order, so every member can be written.
    The class is registered with ``reference.register_type`` so that snapshots naming it can
    be restored without importing anything.
    """

    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self, enum_type: type[enum.Enum], symbols: Iterable[str] | None = None) -> None:
        if not (isinstance(enum_type, type) and issubclass(enum_type, enum.Enum)):
            raise TypeError(f"EnumSerializer needs an Enum class, got {enum_type!r}")
        members = list(enum_type.__members__)
        canonical = [m.name for m in enum_type]
        given = list(symbols) if symbols is not None else canonical
        unknown = [s for s in given if s not in members]
        if unknown:
            raise ValueError(
                f"EnumSerializer({enum_type.__qualname__}): {unknown} are not members of the "
                f"class (members: {canonical})"
            )
        order = [enum_type[s].name for s in given]  # an alias names its canonical member
        if len(set(order)) != len(order):
            raise ValueError(
                f"EnumSerializer({enum_type.__qualname__}): symbols {given} name a member twice"
            )
        order += [name for name in canonical if name not in order]
        self._init(enum_type, order)

    def _init(self, enum_type: type[enum.Enum], symbols: Sequence[str]) -> None:
        self.enum_type = enum_type
        self.symbols = tuple(symbols)
        register_type(enum_type)
        # A symbol the class no longer has (restored from an old snapshot) maps to None: its
        # ordinal stays reserved, and reading it is an error that names the member.
        self._cache_members = tuple(enum_type.__members__.get(s) for s in self.symbols)
        self._cache_ordinals = {
            m.name: i for i, m in enumerate(self._cache_members) if m is not None
        }

    @classmethod
    def _restored(cls, enum_type: type[enum.Enum], symbols: Sequence[str]) -> EnumSerializer:
        """A serializer with exactly ``symbols`` as its order (names may be missing)."""
        serializer = cls.__new__(cls)
        serializer._init(enum_type, symbols)
        return serializer

    def __reduce__(self) -> Any:
        return (EnumSerializer._restored, (self.enum_type, self.symbols))

    def serialize(self, value: enum.Enum, target: DataOutputView) -> None:
        if not isinstance(value, self.enum_type):
            raise SerializationError(
                f"EnumSerializer({qualified_name(self.enum_type)}) got {type(value).__name__} "
                f"{value!r}; it writes members of {self.enum_type.__qualname__} only"
            )
        target.write_int(self._cache_ordinals[value.name])

    def deserialize(self, source: DataInputView) -> enum.Enum:
        ordinal = source.read_int()
        if not 0 <= ordinal < len(self.symbols):
            raise SerializationError(
                f"EnumSerializer({qualified_name(self.enum_type)}): ordinal {ordinal} is outside "
                f"0..{len(self.symbols) - 1}; the data is corrupt or was written with other symbols"
            )
        member = self._cache_members[ordinal]
        if member is None:
            raise SerializationError(
                f"EnumSerializer({qualified_name(self.enum_type)}): ordinal {ordinal} is member "
                f"{self.symbols[ordinal]!r}, which the class no longer has; restore with a "
                "version of the class that still defines it"
            )
        return member

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        # Refuses what deserialize refuses (an ordinal outside the symbols or of a removed
        # member): migration plans copy unchanged enums as bytes.
        start = source.position
        self.deserialize(source)
        target.write(source.slice_from(start))

    def copy(self, value: enum.Enum) -> enum.Enum:
        return value

    def create_instance(self) -> enum.Enum:
        for member in self._cache_members:
            if member is not None:
                return member
        raise StateError(
            f"EnumSerializer({qualified_name(self.enum_type)}): the class has none of the "
            f"members {list(self.symbols)} any more; there is no instance to create"
        )

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 4

    def __hash__(self) -> int:
        return hash((self.enum_type, self.symbols))

    def __repr__(self) -> str:
        return f"EnumSerializer({self.enum_type.__qualname__}, symbols={list(self.symbols)})"

    def snapshot_configuration(self) -> EnumSerializerSnapshot:
        return EnumSerializerSnapshot(self)


class EnumSerializerSnapshot(
    TypeSerializerSnapshot[enum.Enum],
    java_name="org.apache.flink.api.common.typeutils.base.EnumSerializer$EnumSerializerSnapshot",
):
    """Version 3: UTF enum class (``module:qualname``), int n, n x UTF symbol.

    Resolution (the new snapshot judges the old): another enum class is incompatible; a member
    of the old symbols that is gone is incompatible; the same symbols are as-is; appended or
    reordered members give a reconfigured serializer that keeps the old ordinals.
    """

    __module__ = "reference.serializers"  # stable identity in savepoints

    VERSION = 3

    def __init__(self, serializer: EnumSerializer | None = None) -> None:
        self._serializer = serializer
        self.class_name = qualified_name(serializer.enum_type) if serializer else ""
        self.symbols: tuple[str, ...] = serializer.symbols if serializer else ()

    def get_current_version(self) -> int:
        return self.VERSION

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_utf(class_key(self.class_name) if snapshot_dialect() == "flink" else self.class_name)
        target.write_int(len(self.symbols))
        for symbol in self.symbols:
            target.write_utf(symbol)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version != self.VERSION:
            raise SnapshotFormatError(
                f"EnumSerializerSnapshot: unsupported snapshot version {read_version} (this "
                f"reader knows {self.VERSION})"
            )
        class_name = source.read_utf()
        count = source.read_int()
        # Each symbol takes at least its 2-byte length: refuse counts the bytes cannot hold.
        if count < 0 or count * 2 > source.available():
            raise SnapshotFormatError(
                f"EnumSerializerSnapshot of {class_name!r}: symbol count {count} does not fit "
                f"the {source.available()} remaining bytes; the snapshot is corrupt"
            )
        symbols = tuple(source.read_utf() for _ in range(count))
        if len(set(symbols)) != len(symbols):
            raise SnapshotFormatError(
                f"EnumSerializerSnapshot of {class_name!r}: repeated symbols {list(symbols)}; "
                "the snapshot is corrupt"
            )
        self.class_name, self.symbols, self._serializer = class_name, symbols, None

    def _enum_type(self) -> type[enum.Enum]:
        if self._serializer is not None:
            return self._serializer.enum_type
        found = lookup_type(self.class_name)
        if found is None:
            raise StateError(
                f"enum class {self.class_name!r} of an EnumSerializer snapshot is not known: "
                f"{not_known_hint(self.class_name)}"
            )
        if not (isinstance(found, type) and issubclass(found, enum.Enum)):
            raise StateError(f"{self.class_name!r} names {found!r}, which is not an Enum class")
        return found

    def restore_serializer(self) -> EnumSerializer:
        if self._serializer is not None:
            return self._serializer
        return EnumSerializer._restored(self._enum_type(), self.symbols)

    def resolve_schema_compatibility(
        self, old_snapshot: TypeSerializerSnapshot[enum.Enum]
    ) -> SchemaCompatibility[enum.Enum]:
        if not isinstance(old_snapshot, EnumSerializerSnapshot):
            return SchemaCompatibility.incompatible(
                f"{type(old_snapshot).__name__} cannot become EnumSerializerSnapshot"
            )
        if class_key(old_snapshot.class_name) != class_key(self.class_name):
            return SchemaCompatibility.incompatible(
                f"enum class changed from {old_snapshot.class_name} to {self.class_name}"
            )
        removed = [s for s in old_snapshot.symbols if s not in self.symbols]
        if removed:
            return SchemaCompatibility.incompatible(
                f"enum {self.class_name}: member(s) {', '.join(removed)} were removed; stored "
                "values may hold them, so removing a member is not allowed"
            )
        if old_snapshot.symbols == self.symbols:
            return SchemaCompatibility.compatible_as_is()
        added = [s for s in self.symbols if s not in old_snapshot.symbols]
        return SchemaCompatibility.compatible_with_reconfigured_serializer(
            EnumSerializer._restored(self._enum_type(), old_snapshot.symbols + tuple(added))
        )
