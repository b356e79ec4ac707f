"""Reading state without the user's classes: plain records for POJOs and enums.

``PojoSerializerSnapshot.restore_serializer()`` and ``EnumSerializerSnapshot.restore_serializer()``
need the class the snapshot names (registered with ``reference.register_type``, or already
imported): a restored serializer builds instances of it, and nothing is imported on a snapshot's
behalf. That rule stays. ``record_serializer(snapshot)`` is the other path, for *reading* what a
snapshot's serializer wrote when those classes are not at hand (a savepoint written by a Java job):

- a POJO whose class (or one of whose subclasses) is not known here reads as a ``Record``: a dict
  of field name -> value, in the snapshot's field order, with the Java class name in
  ``.java_class`` (a subclass's record carries the subclass's name and fields);
- an enum whose class is not known reads as the constant's name (a ``str``);
- every composite (List, Map, Tuple, Row, Nullable, TTL, timers, a POJO whose class is known)
  is rebuilt from its snapshot around the nested record serializers;
- everything else is the snapshot's own ``restore_serializer()``.

A snapshot of ``PickleSerializer`` (or the pre-1.7 pickled form) is refused with a ``StateError``:
reading data named by a savepoint never unpickles. A record serializer writes what it reads (so
bytes can be re-encoded), and its ``snapshot_configuration()`` is the snapshot it was made from.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import Any

from .._classes import lookup_type
from .._errors import SerializationError, StateError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import CompositeTypeSerializerSnapshot, PickledSerializerSnapshot, TypeSerializerSnapshot
from ._enum import EnumSerializerSnapshot
from ._pickle import PickleSerializerSnapshot
from ._pojo import FLAG_NO_SUBCLASS, FLAG_NULL, FLAG_SUBCLASS, FLAG_TAGGED_SUBCLASS, PojoSerializerSnapshot

__all__ = ["EnumNameSerializer", "PojoRecordSerializer", "Record", "record_serializer"]


class Record(dict):  # type: ignore[type-arg]
    """A POJO read without its class: field name -> value, and the Java class it was an
    instance of (``java_class``). Compares equal to a plain dict of the same fields."""

    __slots__ = ("java_class",)

    def __init__(self, java_class: str, fields: dict[str, Any] | None = None) -> None:
        super().__init__(fields or {})
        self.java_class = java_class

    def __repr__(self) -> str:
        return f"Record({self.java_class!r}, {dict.__repr__(self)})"


class EnumNameSerializer(TypeSerializer[str]):
    """An enum read without its class: the int ordinal as the constant's name."""

    __module__ = "reference.serializers"  # stable identity

    def __init__(self, snapshot: EnumSerializerSnapshot) -> None:
        self.class_name = snapshot.class_name
        self.symbols = tuple(snapshot.symbols)
        self._cache_snapshot: TypeSerializerSnapshot[Any] = snapshot  # an enum's, read as constant names

    def serialize(self, value: str, target: DataOutputView) -> None:
        if value not in self.symbols:
            raise SerializationError(f"enum {self.class_name}: {value!r} is not one of {list(self.symbols)}")
        target.write_int(self.symbols.index(value))

    def deserialize(self, source: DataInputView) -> str:
        ordinal = source.read_int()
        if not 0 <= ordinal < len(self.symbols):
            raise SerializationError(
                f"enum {self.class_name}: ordinal {ordinal} is outside 0..{len(self.symbols) - 1}; "
                "the data is corrupt or was written with other constants"
            )
        return self.symbols[ordinal]

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 4

    def snapshot_configuration(self) -> TypeSerializerSnapshot[str]:
        return self._cache_snapshot


class PojoRecordSerializer(TypeSerializer[Record]):
    """A POJO read without its class, in Flink's ``PojoSerializer`` layout (a flags byte: 1 null,
    2 the class itself with per field a null flag and the value, 8 a registered subclass by tag,
    4 another subclass by name)."""

    __module__ = "reference.serializers"  # stable identity

    def __init__(
        self,
        snapshot: PojoSerializerSnapshot,
        fields: Sequence[TypeSerializer[Any]],
        registered: Sequence[TypeSerializer[Any]],
        non_registered: dict[str, TypeSerializer[Any]],
    ) -> None:
        self.class_name = snapshot.class_name
        self.fields = tuple(zip(snapshot.field_names, fields, strict=True))
        self.registered = tuple(zip((n for n, _ in snapshot.registered_subclasses), registered, strict=True))
        self.non_registered = dict(non_registered)
        self._cache_snapshot = snapshot

    def serialize(self, value: Record, target: DataOutputView) -> None:
        if value is None:
            target.write_byte(FLAG_NULL)
            return
        java_class = getattr(value, "java_class", self.class_name)
        if java_class != self.class_name:
            for tag, (name, serializer) in enumerate(self.registered):
                if name == java_class:
                    target.write_byte(FLAG_TAGGED_SUBCLASS)
                    target.write_byte(tag)
                    serializer.serialize(value, target)
                    return
            other = self.non_registered.get(java_class)
            if other is None:
                raise SerializationError(
                    f"POJO record of {java_class} is not {self.class_name} nor one of its known subclasses"
                )
            target.write_byte(FLAG_SUBCLASS)
            target.write_utf(java_class)
            other.serialize(value, target)
            return
        target.write_byte(FLAG_NO_SUBCLASS)
        for name, serializer in self.fields:
            field = value.get(name)
            target.write_boolean(field is None)
            if field is not None:
                serializer.serialize(field, target)

    def deserialize(self, source: DataInputView) -> Record:
        flags = source.read_unsigned_byte()
        if flags & FLAG_NULL:
            return None  # type: ignore[return-value]
        if flags & FLAG_SUBCLASS:
            name = source.read_utf()
            serializer = self.non_registered.get(name)
            if serializer is None:
                raise SerializationError(
                    f"POJO of {self.class_name}: a record of subclass {name}, which the snapshot "
                    "does not list; the data is corrupt or was written by another serializer"
                )
            return serializer.deserialize(source)  # type: ignore[no-any-return]
        if flags & FLAG_TAGGED_SUBCLASS:
            tag = source.read_unsigned_byte()
            if tag >= len(self.registered):
                raise SerializationError(
                    f"POJO of {self.class_name}: subclass tag {tag} with {len(self.registered)} "
                    "registered subclasses; the data is corrupt"
                )
            return self.registered[tag][1].deserialize(source)  # type: ignore[no-any-return]
        if flags != FLAG_NO_SUBCLASS:
            raise SerializationError(f"POJO of {self.class_name}: flags byte {flags:#04x} is not 1, 2, 4 or 8")
        record = Record(self.class_name)
        for name, serializer in self.fields:
            record[name] = None if source.read_boolean() else serializer.deserialize(source)
        return record

    def snapshot_configuration(self) -> PojoSerializerSnapshot:
        return self._cache_snapshot


def _known_dataclass(name: str) -> bool:
    found = lookup_type(name)
    return found is not None and dataclasses.is_dataclass(found)


def record_serializer(snapshot: TypeSerializerSnapshot[Any]) -> TypeSerializer[Any]:
    """A serializer that reads what ``snapshot``'s serializer wrote, with plain records for
    POJO and enum classes that are not known here (this module's docstring). Raises a
    ``StateError`` for what cannot be read without running code from the savepoint (pickle) or
    a snapshot whose serializer cannot be restored."""
    if isinstance(snapshot, (PickleSerializerSnapshot, PickledSerializerSnapshot)):
        raise StateError(
            "state written by PickleSerializer is not read from a savepoint by record_serializer "
            "(unpickling would run code named by the data); restore it with its descriptor instead"
        )
    if isinstance(snapshot, EnumSerializerSnapshot):
        found = lookup_type(snapshot.class_name)
        if isinstance(found, type) and issubclass(found, enum.Enum):
            return snapshot.restore_serializer()
        return EnumNameSerializer(snapshot)
    if isinstance(snapshot, PojoSerializerSnapshot):
        fields = [record_serializer(nested) for nested in snapshot.nested_snapshots]
        registered = [record_serializer(s) for _, s in snapshot.registered_subclasses]
        others = {name: record_serializer(s) for name, s in snapshot.non_registered_subclasses}
        names = [snapshot.class_name, *(n for n, _ in snapshot.registered_subclasses), *others]
        if all(_known_dataclass(name) for name in names) and all(
            not isinstance(s, PojoRecordSerializer) for s in (*registered, *others.values())
        ):
            return snapshot.create_outer_serializer_with_nested_serializers(fields)
        return PojoRecordSerializer(snapshot, fields, registered, others)
    if isinstance(snapshot, CompositeTypeSerializerSnapshot):
        return snapshot.create_outer_serializer_with_nested_serializers(
            [record_serializer(nested) for nested in snapshot.nested_snapshots]
        )
    return snapshot.restore_serializer()
