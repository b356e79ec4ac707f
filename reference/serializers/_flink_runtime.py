"""Serializers of Flink's state runtime, read from Flink's own savepoints: the void namespace,
TTL values and timers.

They exist so that a Flink savepoint's serializer snapshots can be read and its state decoded;
none of them is a serializer a user picks for a state of their own.

- ``VoidNamespaceSerializer`` (Flink's ``org.apache.flink.runtime.state.VoidNamespaceSerializer``):
  the namespace of every state outside a window, written as one 0x00 byte and read as None.
- ``TtlSerializer`` (Flink's ``TtlStateFactory$TtlSerializer``): a state with a time-to-live
  keeps ``long lastAccessTimestamp | value``, read as a ``TtlValue``. Its snapshot
  (``TtlStateFactory$TtlSerializerSnapshot``) is a composite, outer version 2 with no outer
  body, nesting the timestamp's serializer and the value's.
- ``TimerSerializer`` (Flink's ``org.apache.flink.streaming.api.operators.TimerSerializer``): a
  timer is ``long (timestamp XOR Long.MIN_VALUE) | key | namespace`` (the sign bit flipped so
  that unsigned byte order is timestamp order), read as a ``Timer``. Its snapshot
  (``TimerSerializerSnapshot``) is a composite, outer version 2 with no outer body, nesting the
  key's serializer and the namespace's.
- ``TimeWindowSerializer`` (Flink's ``TimeWindow$Serializer``): a window namespace, ``long start |
  long end``, read as a ``TimeWindow``; ``GlobalWindowSerializer``: one 0x00 byte, read as None.
- ``KryoSerializerSnapshot`` (Flink's ``kryo.KryoSerializerSnapshot``, version 2): the type's
  class name and three ``LinkedOptionalMap``s (Kryo registrations, default serializers, default
  serializer classes), whose keys and values are length-framed: the snapshot is read and kept as
  bytes (never deserialized: they hold Java-serialized objects). It restores no serializer: Kryo
  data has no layout the reference knows, so such values stay bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple

from .._errors import SerializationError, SnapshotFormatError, StateError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import CompositeTypeSerializerSnapshot, SimpleTypeSerializerSnapshot, TypeSerializerSnapshot
from ._pojo import _OPTIONAL_MAP_HEADER, _read_frame

__all__ = [
    "GlobalWindowSerializer",
    "GlobalWindowSerializerSnapshot",
    "KryoSerializerSnapshot",
    "TimeWindow",
    "TimeWindowSerializer",
    "TimeWindowSerializerSnapshot",
    "Timer",
    "TimerSerializer",
    "TimerSerializerSnapshot",
    "TtlSerializer",
    "TtlSerializerSnapshot",
    "TtlValue",
    "VoidNamespaceSerializer",
    "VoidNamespaceSerializerSnapshot",
]

_LONG_MIN = -(1 << 63)
_RUNTIME = "org.apache.flink.runtime.state."


def _check_nested(owner: str, **nested: Any) -> None:
    """A TypeError naming the nested serializer that is not one (refused at construction)."""
    for name, serializer in nested.items():
        if not isinstance(serializer, TypeSerializer):
            raise TypeError(f"{owner}'s {name} serializer must be a TypeSerializer, got {type(serializer).__name__}")


class _OneByteNone(TypeSerializer[None]):
    """A namespace Flink writes as one 0x00 byte and reads as None (void, global window)."""

    def deserialize(self, source: DataInputView) -> None:
        source.read_byte()
        return None

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 1


class VoidNamespaceSerializer(_OneByteNone):
    """Flink's void namespace: one 0x00 byte, read as None."""

    __module__ = "reference.serializers"  # stable identity

    def serialize(self, value: None, target: DataOutputView) -> None:
        if value is not None:
            raise SerializationError(f"VoidNamespaceSerializer writes None only, got {value!r}")
        target.write_byte(0)

    def snapshot_configuration(self) -> VoidNamespaceSerializerSnapshot:
        return VoidNamespaceSerializerSnapshot()


class VoidNamespaceSerializerSnapshot(
    SimpleTypeSerializerSnapshot[None],
    java_name=f"{_RUNTIME}VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity

    def __init__(self) -> None:
        super().__init__(VoidNamespaceSerializer)


class TtlValue(NamedTuple):
    """A value of a state with a time-to-live, and when it was last written or read (epoch
    milliseconds, as Flink's TTL clock gives it)."""

    value: Any
    last_access: int


class TtlSerializer(TypeSerializer[TtlValue]):
    """``long lastAccessTimestamp | value`` (Flink's ``CompositeSerializer`` layout of its
    ``TtlValue``: the fields one after the other, no null flags)."""

    __module__ = "reference.serializers"  # stable identity

    def __init__(self, timestamp: TypeSerializer[int], value: TypeSerializer[Any]) -> None:
        _check_nested("TtlSerializer", timestamp=timestamp, value=value)
        self.timestamp = timestamp
        self.value = value

    def serialize(self, value: TtlValue, target: DataOutputView) -> None:
        self.timestamp.serialize(value.last_access, target)
        self.value.serialize(value.value, target)

    def deserialize(self, source: DataInputView) -> TtlValue:
        last_access = self.timestamp.deserialize(source)
        return TtlValue(self.value.deserialize(source), last_access)

    @property
    def length(self) -> int:
        parts = (self.timestamp.length, self.value.length)
        return -1 if min(parts) < 0 else sum(parts)

    def snapshot_configuration(self) -> TtlSerializerSnapshot:
        return TtlSerializerSnapshot(self)


class _OuterVersion2:
    """What Flink's TTL and timer snapshots share: a composite of outer version 2 with no outer
    body and two nested snapshots (a mixin: it is no snapshot class of its own)."""

    NESTED_ARITY: ClassVar[int | None] = 2
    OUTER_VERSION = 2
    READ_OUTER_VERSIONS: ClassVar[tuple[int, ...] | None] = (2,)

    def get_current_outer_snapshot_version(self) -> int:
        return self.OUTER_VERSION



class TtlSerializerSnapshot(_OuterVersion2, CompositeTypeSerializerSnapshot[Any], java_name=f"{_RUNTIME}ttl.TtlStateFactory$TtlSerializerSnapshot"):
    """Flink's ``TtlSerializerSnapshot``: nested [timestamp serializer, value serializer]."""

    __module__ = "reference.serializers"  # stable identity

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return [outer_serializer.timestamp, outer_serializer.value]

    def create_outer_serializer_with_nested_serializers(self, nested: Sequence[TypeSerializer[Any]]) -> TtlSerializer:
        return TtlSerializer(nested[0], nested[1])

    def nested_labels(self) -> list[str]:
        return ["TTL timestamp", "value"]


class Timer(NamedTuple):
    """A timer of a keyed operator: when it fires (epoch milliseconds for event and processing
    time alike), for which key and namespace."""

    timestamp: int
    key: Any
    namespace: Any


class TimerSerializer(TypeSerializer[Timer]):
    """``long (timestamp XOR Long.MIN_VALUE) | key | namespace``."""

    __module__ = "reference.serializers"  # stable identity

    def __init__(self, key: TypeSerializer[Any], namespace: TypeSerializer[Any]) -> None:
        _check_nested("TimerSerializer", key=key, namespace=namespace)
        self.key = key
        self.namespace = namespace

    def serialize(self, value: Timer, target: DataOutputView) -> None:
        target.write_long(value.timestamp ^ _LONG_MIN)
        self.key.serialize(value.key, target)
        self.namespace.serialize(value.namespace, target)

    def deserialize(self, source: DataInputView) -> Timer:
        timestamp = source.read_long() ^ _LONG_MIN
        key = self.key.deserialize(source)
        return Timer(timestamp, key, self.namespace.deserialize(source))

    @property
    def length(self) -> int:
        parts = (self.key.length, self.namespace.length)
        return -1 if min(parts) < 0 else 8 + sum(parts)

    def snapshot_configuration(self) -> TimerSerializerSnapshot:
        return TimerSerializerSnapshot(self)


class TimerSerializerSnapshot(
    _OuterVersion2, CompositeTypeSerializerSnapshot[Any],
    java_name="org.apache.flink.streaming.api.operators.TimerSerializerSnapshot",
):
    """Flink's ``TimerSerializerSnapshot``: nested [key serializer, namespace serializer]."""

    __module__ = "reference.serializers"  # stable identity

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return [outer_serializer.key, outer_serializer.namespace]

    def create_outer_serializer_with_nested_serializers(self, nested: Sequence[TypeSerializer[Any]]) -> TimerSerializer:
        return TimerSerializer(nested[0], nested[1])

    def nested_labels(self) -> list[str]:
        return ["key", "namespace"]


_WINDOWS = "org.apache.flink.streaming.api.windowing.windows."


class TimeWindow(NamedTuple):
    """A time window namespace: ``start`` inclusive, ``end`` exclusive (epoch milliseconds)."""

    start: int
    end: int


class TimeWindowSerializer(TypeSerializer[TimeWindow]):
    """``long start | long end``."""

    __module__ = "reference.serializers"  # stable identity

    def serialize(self, value: TimeWindow, target: DataOutputView) -> None:
        target.write_long(value.start)
        target.write_long(value.end)

    def deserialize(self, source: DataInputView) -> TimeWindow:
        start = source.read_long()
        return TimeWindow(start, source.read_long())

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 16

    def snapshot_configuration(self) -> TimeWindowSerializerSnapshot:
        return TimeWindowSerializerSnapshot()


class TimeWindowSerializerSnapshot(
    SimpleTypeSerializerSnapshot[TimeWindow],
    java_name=f"{_WINDOWS}TimeWindow$Serializer$TimeWindowSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity

    def __init__(self) -> None:
        super().__init__(TimeWindowSerializer)


class GlobalWindowSerializer(_OneByteNone):
    """The global window namespace: one 0x00 byte, read as None."""

    __module__ = "reference.serializers"  # stable identity

    def serialize(self, value: None, target: DataOutputView) -> None:
        target.write_byte(0)

    def snapshot_configuration(self) -> GlobalWindowSerializerSnapshot:
        return GlobalWindowSerializerSnapshot()


class GlobalWindowSerializerSnapshot(
    SimpleTypeSerializerSnapshot[None],
    java_name=f"{_WINDOWS}GlobalWindow$Serializer$GlobalWindowSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity

    def __init__(self) -> None:
        super().__init__(GlobalWindowSerializer)


class KryoSerializerSnapshot(
    TypeSerializerSnapshot[Any],
    java_name="org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot",
):
    """Flink's Kryo snapshot, read and kept as bytes (``type_class``: the Java class it
    serializes). Restoring a serializer from it is refused: Kryo data stays bytes."""

    __module__ = "reference.serializers"  # stable identity

    VERSION = 2

    def __init__(self) -> None:
        self.type_class = ""
        self.body = b""

    def get_current_version(self) -> int:
        return self.VERSION

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write(self.body)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version != self.VERSION:
            raise SnapshotFormatError(
                f"KryoSerializerSnapshot: version {read_version}, this reader knows {self.VERSION}"
            )
        start = source.position
        self.type_class = source.read_utf()
        where = f"KryoSerializerSnapshot of {self.type_class}"
        for _ in range(3):
            header = source.read_long()
            if header != _OPTIONAL_MAP_HEADER:
                raise SnapshotFormatError(f"{where}: optional map header {header:#x}, should be {_OPTIONAL_MAP_HEADER:#x}")
            count = source.read_int()
            if count < 0 or count * 4 > source.available():
                raise SnapshotFormatError(f"{where}: {count} map entries do not fit the {source.available()} bytes left")
            for _ in range(count):
                source.read_utf()
                for _present in range(2):
                    if source.read_boolean():
                        _read_frame(source, where)
        self.body = source.slice_from(start)

    def restore_serializer(self) -> TypeSerializer[Any]:
        raise StateError(
            f"values of {self.type_class} were written by Flink's KryoSerializer, whose bytes the "
            "reference cannot decode; they are kept as bytes"
        )

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> Any:
        from .._compat import SchemaCompatibility

        if isinstance(old_snapshot, KryoSerializerSnapshot) and old_snapshot.type_class == self.type_class:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible(f"a {type(old_snapshot).__name__} cannot become Kryo of {self.type_class}")
