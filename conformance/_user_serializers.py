"""Serializers and types written the way users write theirs, for the built-in subjects
(``conformance._builtins.subjects``): the built-in serializers alone never take these paths.

``Shape`` and its dataclass subclass ``Circle`` are a class hierarchy as users declare one
(plain annotations); ``pojo_with_subclasses`` certifies
``PojoSerializer(Shape, registered_subclasses=[Circle])``, so a ``Circle`` is written with its
registration tag. ``CircleWithColour`` is the next release's ``Circle`` (same module and
qualified name, ``Circle``; one field more, ``colour``, None by default): the registered
subclass evolves on its own, and the pojo migrates its circles.

``ReadingSerializer`` writes a ``Reading`` (a sensor's temperature as a 32-bit float, a sample
count, and from format 2 on a humidity) with nothing but the public ``DataOutputView`` /
``DataInputView`` calls (``write_float``/``read_float``, ``write_int``/``read_int``). It is
stateful, as many hand-written serializers are: each instance assembles a record in its own
scratch buffer before writing it whole (a refused value writes nothing), so ``duplicate()``
returns a new instance. ``Sample`` is a dataclass whose fields name a ``ReadingSerializer`` in
their metadata (as users give a POJO field a serializer of their own), so a
``PojoSerializer`` of it holds a stateful field serializer and must duplicate it.

Its snapshot, ``ReadingSerializerSnapshot``, is an older style that the contract still honours:

- it implements only the pre-1.19 resolution direction
  (``resolve_schema_compatibility_with_serializer``: the OLD snapshot judges the new
  serializer); restoring reaches it through the default ``resolve_schema_compatibility``;
- its ``migrate_element`` is FLIP-527's writing form (``target`` required, nothing returned):
  the migrated element is what it wrote, read back with the new serializer.

Format 1 writes (float celsius, int count); format 2 adds (float humidity). A format-1 record
migrates to format 2 with humidity 0.0. A serializer of a lower format than the snapshot's
cannot read it: incompatible.

``EpochMillisSerializer`` is a user's subclass of a built-in: ``LongSerializer``'s long of epoch
milliseconds (what Flink reads), read and written as a UTC ``datetime`` by overriding
``serialize`` and ``deserialize``; a row holding it must call those, never the inlined
``LongSerializer`` code. Its snapshot is a ``SimpleTypeSerializerSnapshot`` of its own class.

``TemperatureSerializer(unit)`` writes a temperature as a double in its unit (``"C"`` or
``"K"``), recorded by its snapshot; a Kelvin release reads Celsius records after migration.
``TemperatureSnapshot.migrate_element`` is FLIP-527's returning form
(``migrate_element(prior, new, element)``, no target), as plain user code writes it. Its
``read_snapshot`` checks the unit the way plain code does, through the ``TemperatureUnit`` enum:
a unit no release wrote raises the enum's ``ValueError``, which the reference reports as a
corrupt snapshot naming the class; its zero-argument form holds no unit until it has read one.

``CountSerializer(width)`` writes a count (an int, never negative) in ``width`` bytes: 2
(``write_short`` / ``read_short``), 4 (``write_int``) or 8 (``write_long``), refusing a count
that does not fit. Its snapshot records the width and overrides no migration: a wider release
resolves ``compatible_after_migration`` and leaves the rest to the defaults every snapshot
inherits (``migrate_state`` reads each record with the restored serializer, ``migrate_element``
keeps the count and writes it with the new one), the commonest migration users write; a
narrower one is incompatible.
"""

from __future__ import annotations

import datetime
import enum
import math
import struct
from dataclasses import dataclass, field, replace
from typing import Any

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    SerializationError,
    SimpleTypeSerializerSnapshot,
    SnapshotFormatError,
    TypeSerializer,
    TypeSerializerSnapshot,
)
from reference.serializers import LongSerializer

__all__ = ["Reading", "ReadingSerializer", "ReadingSerializerSnapshot", "Sample", "Shape", "Circle", "CircleWithColour", "CircleWithTextRadius", "Square", "EpochMillisSerializer",
           "EpochMillisSnapshot", "TemperatureSerializer", "TemperatureSnapshot", "CountSerializer", "CountSnapshot"]

@dataclass(frozen=True)
class Reading:
    """A sensor reading; ``humidity`` is None for records of format 1."""

    celsius: float
    count: int
    humidity: float | None = None


def _released_as(name: str) -> Any:
    """A class decorator: the class takes ``name`` as its name and qualified name, so that
    savepoints (module and qualified name) see it as a later release of the class of that name."""

    def rename(cls: Any) -> Any:
        cls.__name__ = cls.__qualname__ = name
        return cls

    return rename


@dataclass
class Shape:
    name: str


@dataclass
class Circle(Shape):
    radius: float


@_released_as("Circle")
@dataclass
class CircleWithColour(Shape):
    """``Circle`` of the next release: the same class for savepoints (module and qualified name)."""

    radius: float
    colour: str | None = None


@_released_as("Circle")
@dataclass
class CircleWithTextRadius(Shape):
    """A ``Circle`` of another next release whose radius became text: the same class for
    savepoints, and a change of its field's type Flink refuses."""

    radius: str


class Shade(enum.Enum):
    """How a ``CircleWithShade`` is shaded."""

    LIGHT = 1
    DARK = 2


@_released_as("Shade")
class ShadeWithPale(enum.Enum):
    """``Shade`` of a later release, with a member more: the same enum for savepoints."""

    LIGHT = 1
    DARK = 2
    PALE = 3


@_released_as("Circle")
@dataclass
class CircleWithShade(Shape):
    """A ``Circle`` of a next release with an enum field: the same class for savepoints."""

    radius: float
    shade: Shade | None = None


@_released_as("Circle")
@dataclass
class CircleWithPaleShade(Shape):
    """The ``Circle`` of the release after ``CircleWithShade``'s, whose shade enum gained a member
    (``ShadeWithPale``): its snapshot judges the earlier one reconfigured, while the earlier one
    would judge it incompatible (a member it lacks)."""

    radius: float
    shade: ShadeWithPale | None = None



@dataclass
class Square(Shape):
    """A subclass a next release registers beside ``Circle``."""

    side: int = 0


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
        if type(value.count) is not int:
            raise SerializationError(f"Reading.count: {value.count!r} is not an int")
        if self.format_version == 1 and value.humidity is not None:
            raise SerializationError(f"Reading.humidity: {value.humidity!r} has no place in format 1, should be None")
        humidity = _float32(value.humidity, "humidity") if self.format_version == 2 else 0.0
        scratch = self._scratch
        scratch.clear()
        scratch.write_float(celsius)
        scratch.write_int(value.count)  # a count past 32 bits is refused by write_int (SerializationError)
        if self.format_version == 2:
            scratch.write_float(humidity)
        target.write(scratch.getvalue())

    def deserialize(self, source: DataInputView) -> Reading:
        # What serialize refuses (a NaN) is refused here too: a reading restored from corrupt
        # bytes could not be written at the next checkpoint.
        celsius = _float32(source.read_float(), "celsius")
        count = source.read_int()
        humidity = _float32(source.read_float(), "humidity") if self.format_version == 2 else None
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


@dataclass
class Sample:
    """The reading a sensor sent last, and the one before it."""

    reading: Reading | None = field(default=None, metadata={"serializer": ReadingSerializer(1)})
    previous: Reading | None = field(default=None, metadata={"serializer": ReadingSerializer(1)})


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

    def migrate_element(self, prior_serializer: Any, new_serializer: Any, element: Any,  # type: ignore[override]
                        target: DataOutputView) -> None:  # the writing form, target required: as users write it
        migrated = element
        if new_serializer.format_version == 2 and element.humidity is None:
            migrated = replace(element, humidity=0.0)
        new_serializer.serialize(migrated, target)

    def __repr__(self) -> str:
        return f"ReadingSerializerSnapshot(format_version={self.format_version})"


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_MILLISECOND = datetime.timedelta(milliseconds=1)


class EpochMillisSerializer(LongSerializer):
    """A UTC ``datetime`` of whole milliseconds, stored as ``LongSerializer``'s epoch-millisecond
    long (see the module's docstring)."""

    def serialize(self, value: datetime.datetime, target: DataOutputView) -> None:
        if type(value) is not datetime.datetime or value.tzinfo is not datetime.timezone.utc:
            raise SerializationError(f"EpochMillisSerializer: {value!r} is not a UTC datetime")
        millis, rest = divmod(value - _EPOCH, _MILLISECOND)
        if rest:
            raise SerializationError(f"EpochMillisSerializer: {value!r} is not a whole millisecond")
        super().serialize(millis, target)

    def deserialize(self, source: DataInputView) -> datetime.datetime:
        millis = super().deserialize(source)
        try:
            return _EPOCH + millis * _MILLISECOND
        except OverflowError:
            raise SerializationError(f"EpochMillisSerializer: {millis} ms is outside datetime's years 1-9999") from None

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        # LongSerializer's copy takes any 8 bytes; a copy must refuse what deserialize refuses.
        self.serialize(self.deserialize(source), target)

    def create_instance(self) -> datetime.datetime:
        return _EPOCH

    def snapshot_configuration(self) -> EpochMillisSnapshot:  # type: ignore[override]  # its own snapshot, not Long's: as users write it
        return EpochMillisSnapshot()

    def __repr__(self) -> str:
        return "EpochMillisSerializer()"


class EpochMillisSnapshot(SimpleTypeSerializerSnapshot[datetime.datetime]):
    def __init__(self) -> None:
        super().__init__(EpochMillisSerializer)


class TemperatureUnit(enum.Enum):
    CELSIUS = "C"
    KELVIN = "K"


_UNITS = tuple(unit.value for unit in TemperatureUnit)


class TemperatureSerializer(TypeSerializer[float]):
    """A temperature as a double in ``unit`` (see the module's docstring)."""

    def __init__(self, unit: str = "C") -> None:
        if unit not in _UNITS:
            raise ValueError(f"TemperatureSerializer: unit {unit!r} is unknown, use 'C' or 'K'")
        self.unit = unit

    def serialize(self, value: float, target: DataOutputView) -> None:
        if type(value) is not float:
            raise SerializationError(f"TemperatureSerializer: {value!r} is not a float")
        target.write_double(value)

    def deserialize(self, source: DataInputView) -> float:
        return source.read_double()

    def copy(self, value: float) -> float:
        return value

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(8))

    def create_instance(self) -> float:
        return 0.0

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 8

    def snapshot_configuration(self) -> TemperatureSnapshot:
        return TemperatureSnapshot(self.unit)

    def __eq__(self, other: object) -> bool:
        return type(other) is TemperatureSerializer and other.unit == self.unit

    def __hash__(self) -> int:
        return hash((TemperatureSerializer, self.unit))

    def __repr__(self) -> str:
        return f"TemperatureSerializer({self.unit!r})"


class TemperatureSnapshot(TypeSerializerSnapshot[float]):
    """The unit a ``TemperatureSerializer`` wrote in."""

    def __init__(self, unit: str | None = None) -> None:
        self.unit = unit  # None until read_snapshot has read it

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_utf(self.unit)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version != 1:
            raise SnapshotFormatError(f"TemperatureSnapshot: unknown snapshot version {read_version}")
        self.unit = TemperatureUnit(source.read_utf()).value  # another unit: the enum's ValueError

    def restore_serializer(self) -> TemperatureSerializer:
        return TemperatureSerializer(self.unit)

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> SchemaCompatibility[float]:
        if not isinstance(old_snapshot, TemperatureSnapshot):
            return SchemaCompatibility.incompatible(f"{type(old_snapshot).__name__} is not a temperature")
        if old_snapshot.unit == self.unit:
            return SchemaCompatibility.compatible_as_is()
        if (old_snapshot.unit, self.unit) == ("C", "K"):
            return SchemaCompatibility.compatible_after_migration()
        return SchemaCompatibility.incompatible(f"temperatures in {old_snapshot.unit} cannot become {self.unit}")

    def migrate_element(self, prior_serializer: Any, new_serializer: Any, element: float) -> float:  # type: ignore[override]  # the reading form, no target: as users write it
        return element + 273.15  # Celsius to Kelvin, the only migration resolved above

    def __repr__(self) -> str:
        return f"TemperatureSnapshot({self.unit!r})"


#: Each width a count may take, with the view methods that write and read it.
_COUNT_WIDTHS = {
    2: (DataOutputView.write_short, DataInputView.read_short),
    4: (DataOutputView.write_int, DataInputView.read_int),
    8: (DataOutputView.write_long, DataInputView.read_long),
}


class CountSerializer(TypeSerializer[int]):
    """A count in ``width`` bytes (see the module's docstring)."""

    def __init__(self, width: int = 2) -> None:
        if width not in _COUNT_WIDTHS:
            raise ValueError(f"CountSerializer: a width of {width!r} bytes is unknown, use 2, 4 or 8")
        self.width = width

    def serialize(self, value: int, target: DataOutputView) -> None:
        if type(value) is not int or not 0 <= value < 1 << (8 * self.width - 1):
            raise SerializationError(f"CountSerializer: {value!r} is not a count that fits {self.width} bytes")
        _COUNT_WIDTHS[self.width][0](target, value)

    def deserialize(self, source: DataInputView) -> int:
        value: int = _COUNT_WIDTHS[self.width][1](source)
        if value < 0:
            raise SerializationError(f"CountSerializer: a negative count ({value}); the data is corrupt")
        return value

    def copy(self, value: int) -> int:
        return value

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        # A copy refuses what deserialize refuses: the sign bit is looked at first (read and
        # stepped back over), before the count is copied whole.
        first = source.read_unsigned_byte()
        if first & 0x80:
            raise SerializationError(f"CountSerializer: a negative count (first byte {first:#04x}); the data is corrupt")
        source.unread(1)
        target.write(source.read_fully(self.width))

    def create_instance(self) -> int:
        return 0

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return self.width

    def snapshot_configuration(self) -> CountSnapshot:
        return CountSnapshot(self.width)

    def __eq__(self, other: object) -> bool:
        return type(other) is CountSerializer and other.width == self.width

    def __hash__(self) -> int:
        return hash((CountSerializer, self.width))

    def __repr__(self) -> str:
        return f"CountSerializer({self.width})"


class CountSnapshot(TypeSerializerSnapshot[int]):
    """The width a ``CountSerializer`` wrote (see the module's docstring)."""

    def __init__(self, width: int = 2) -> None:
        self.width = width

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_byte(self.width)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version != 1:
            raise SnapshotFormatError(f"CountSnapshot: unknown snapshot version {read_version}")
        self.width = source.read_unsigned_byte()
        if self.width not in _COUNT_WIDTHS:
            raise SnapshotFormatError(f"CountSnapshot: a width of {self.width} bytes is unknown")

    def restore_serializer(self) -> CountSerializer:
        return CountSerializer(self.width)

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> SchemaCompatibility[int]:
        if not isinstance(old_snapshot, CountSnapshot):
            return SchemaCompatibility.incompatible(f"{type(old_snapshot).__name__} is not a count")
        if old_snapshot.width == self.width:
            return SchemaCompatibility.compatible_as_is()
        if old_snapshot.width < self.width:
            return SchemaCompatibility.compatible_after_migration()
        return SchemaCompatibility.incompatible(
            f"a count of {old_snapshot.width} bytes may not fit {self.width}")

    def __repr__(self) -> str:
        return f"CountSnapshot({self.width})"
