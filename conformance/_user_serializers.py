"""Serializers and types written the way users write theirs, for the built-in subjects
(``conformance._builtins``): the built-in serializers alone never take these paths.

``Shape`` and its dataclass subclass ``Circle`` are a class hierarchy as users declare one
(plain annotations); ``pojo_with_subclasses`` certifies
``PojoSerializer(Shape, registered_subclasses=[Circle])``, so a ``Circle`` is written with its
registration tag.

``ReadingSerializer`` writes a ``Reading`` (a sensor's temperature as a 32-bit float, a sample
count, and from format 2 on a humidity) with nothing but the public ``DataOutputView`` /
``DataInputView`` calls (``write_float``/``read_float``, ``write_int``/``read_int``). It is
stateful, as many hand-written serializers are: each instance assembles a record in its own
scratch buffer before writing it whole (a refused value writes nothing), so ``duplicate()``
returns a new instance.

Its snapshot, ``ReadingSerializerSnapshot``, is an older style that the contract still honours:

- it implements only the pre-1.19 resolution direction
  (``resolve_schema_compatibility_with_serializer``: the OLD snapshot judges the new
  serializer); restoring reaches it through the default ``resolve_schema_compatibility``;
- its ``migrate_element`` is FLIP-527's writing form (``target`` required), and it also
  returns the migrated element it wrote.

Format 1 writes (float celsius, int count); format 2 adds (float humidity). A format-1 record
migrates to format 2 with humidity 0.0. A serializer of a lower format than the snapshot's
cannot read it: incompatible.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, replace
from typing import Any

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    SerializationError,
    TypeSerializer,
    TypeSerializerSnapshot,
)

__all__ = ["Reading", "ReadingSerializer", "ReadingSerializerSnapshot", "Shape", "Circle"]

_INT_RANGE = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class Reading:
    """A sensor reading; ``humidity`` is None for records of format 1."""

    celsius: float
    count: int
    humidity: float | None = None


@dataclass
class Shape:
    name: str


@dataclass
class Circle(Shape):
    radius: float


def _float32(value: Any, field: str) -> float:
    if type(value) is not float or math.isnan(value):
        raise SerializationError(f"Reading.{field}: {value!r} is not a float (NaN is refused)")
    try:
        exact = struct.unpack(">f", struct.pack(">f", value))[0]
    except OverflowError:
        exact = None
    if exact != value:
        raise SerializationError(f"Reading.{field}: {value!r} does not fit a 32-bit float exactly")
    return value


class ReadingSerializer(TypeSerializer[Reading]):
    """Reads and writes ``Reading`` in format 1 or 2 (see the module's docstring)."""

    def __init__(self, format_version: int = 1) -> None:
        if format_version not in (1, 2):
            raise ValueError(f"ReadingSerializer: format {format_version} is unknown, use 1 or 2")
        self.format_version = format_version
        self._scratch = DataOutputView()

    @property
    def record_length(self) -> int:
        return 8 if self.format_version == 1 else 12

    def serialize(self, value: Reading, target: DataOutputView) -> None:
        if type(value) is not Reading:
            raise SerializationError(f"ReadingSerializer: {value!r} is not a Reading")
        celsius = _float32(value.celsius, "celsius")
        if type(value.count) is not int or not _INT_RANGE[0] <= value.count <= _INT_RANGE[1]:
            raise SerializationError(f"Reading.count: {value.count!r} is not a 32-bit int")
        if self.format_version == 1 and value.humidity is not None:
            raise SerializationError(f"Reading.humidity: {value.humidity!r} has no place in format 1, should be None")
        humidity = _float32(value.humidity, "humidity") if self.format_version == 2 else 0.0
        scratch = self._scratch
        scratch.clear()
        scratch.write_float(celsius)
        scratch.write_int(value.count)
        if self.format_version == 2:
            scratch.write_float(humidity)
        target.write(scratch.getvalue())

    def deserialize(self, source: DataInputView) -> Reading:
        celsius = source.read_float()
        count = source.read_int()
        humidity = source.read_float() if self.format_version == 2 else None
        return Reading(celsius, count, humidity)

    def copy(self, value: Reading) -> Reading:
        return value  # immutable

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(self.record_length))

    def duplicate(self) -> ReadingSerializer:
        return ReadingSerializer(self.format_version)  # the scratch buffer is per instance

    def create_instance(self) -> Reading:
        return Reading(0.0, 0, None if self.format_version == 1 else 0.0)

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return self.record_length

    def snapshot_configuration(self) -> ReadingSerializerSnapshot:
        return ReadingSerializerSnapshot(self.format_version)

    def __eq__(self, other: object) -> bool:
        return type(other) is ReadingSerializer and other.format_version == self.format_version

    def __hash__(self) -> int:
        return hash((ReadingSerializer, self.format_version))

    def __repr__(self) -> str:
        return f"ReadingSerializer(format_version={self.format_version})"


class ReadingSerializerSnapshot(TypeSerializerSnapshot[Reading]):
    """The format a ``ReadingSerializer`` wrote (see the module's docstring)."""

    def __init__(self, format_version: int = 1) -> None:
        self.format_version = format_version

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(self.format_version)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version != 1:
            raise SerializationError(f"ReadingSerializerSnapshot: unknown snapshot version {read_version}")
        self.format_version = source.read_int()
        if self.format_version not in (1, 2):
            raise SerializationError(f"ReadingSerializerSnapshot: unknown format {self.format_version}")

    def restore_serializer(self) -> ReadingSerializer:
        return ReadingSerializer(self.format_version)

    def resolve_schema_compatibility_with_serializer(self, new_serializer: Any) -> SchemaCompatibility[Reading]:
        if type(new_serializer) is not ReadingSerializer:
            return SchemaCompatibility.incompatible(f"{new_serializer!r} is not a ReadingSerializer")
        if new_serializer.format_version == self.format_version:
            return SchemaCompatibility.compatible_as_is()
        if new_serializer.format_version > self.format_version:
            return SchemaCompatibility.compatible_after_migration()
        return SchemaCompatibility.incompatible(
            f"format {new_serializer.format_version} cannot read records of format {self.format_version}")

    def migrate_element(self, prior_serializer: Any, new_serializer: Any, element: Any,
                        target: DataOutputView) -> Reading:
        migrated = element
        if new_serializer.format_version == 2 and element.humidity is None:
            migrated = replace(element, humidity=0.0)
        new_serializer.serialize(migrated, target)
        return migrated

    def __repr__(self) -> str:
        return f"ReadingSerializerSnapshot(format_version={self.format_version})"
