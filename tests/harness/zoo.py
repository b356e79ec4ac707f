"""The zoo: deliberately broken serializers, one realistic bug each, and the check that must
catch it. ``ZOO`` maps an entry name to (the check id that must fail, a zero-argument function
building the Subject); ``GOLDEN`` entries need a release recorded first; ``BUILTIN_BREAKS``
entries break a built-in serializer while the check runs. Every check of the serializer
families is named by at least one entry (tests/harness/test_harness_zoo.py). Correct twins live
in zoo_base.py.
"""

from __future__ import annotations

import dataclasses
import datetime
import math
import pickle
import struct
import threading
import time
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from zoo_base import (
    DICT_RECORD_VALUES,
    INT32,
    INT_PAIRS,
    LABELS,
    MATRIX,
    OFFSET_TIMES,
    PERCENTS,
    PRICES,
    RECORD_VALUES,
    SHADES,
    TAGS,
    TEXT,
    TICKETS,
    ZONED_TIMES,
    ConfigFreeSnapshot,
    DecimalText,
    DictRecordSerializer,
    DictRecordSnapshot,
    FixedIntSerializer,
    FixedIntSnapshot,
    IntPairSerializer,
    IntPairSnapshot,
    LabelsSerializer,
    LabelsSnapshot,
    Matrix,
    MatrixSnapshot,
    NamedEnumSerializer,
    NamedEnumSnapshot,
    OffsetTimestamps,
    PaddedKeyText,
    PairSerializer,
    PercentSerializer,
    RecordSerializer,
    RecordSnapshot,
    TagSetSerializer,
    TextSerializer,
    TextSnapshot,
    Ticket,
    TicketSerializer,
    ZonedWallClock,
    by_name,
    dict_by_name,
    fixed_int_values,
)

from conformance import Evolution, Subject
from reference import (
    DataInputView,
    DataOutputView,
    PickledSerializerSnapshot,
    SchemaCompatibility,
    SerializationError,
    SimpleTypeSerializerSnapshot,
    SnapshotFormatError,
    TypeSerializer,
    TypeSerializerSnapshot,
    register_type,
)
from reference import types as t
from reference.serializers import (
    AvroSerializer,
    DoubleSerializer,
    IntSerializer,
    LongSerializer,
    NullableSerializer,
    NullableSerializerSnapshot,
    Row,
    RowSerializer,
    RowSerializerSnapshot,
    StringSerializer,
    TupleSerializer,
    TupleSerializerSnapshot,
)

# == roundtrip ==================================================================================


class CharCountText(TextSerializer):
    """Length prefix counts characters, but UTF-8 bytes are written."""

    def serialize(self, value: str, target: DataOutputView) -> None:
        target.write_int(len(value))
        target.write(value.encode("utf-8", "surrogatepass"))


class CountedText(TextSerializer):
    """Release 2 of TextSerializer (its own snapshot; reads release 1's records as is), whose
    writer counts characters in the length prefix while its reader, kept from release 1,
    expects bytes: fine on every restore, broken for the first record a fresh job writes."""

    def serialize(self, value: str, target: DataOutputView) -> None:
        target.write_int(len(value))
        target.write(value.encode("utf-8", "surrogatepass"))

    def snapshot_configuration(self) -> CountedTextSnapshot:
        return CountedTextSnapshot()


class CountedTextSnapshot(TextSnapshot):
    def restore_serializer(self) -> CountedText:
        return CountedText()


class CheckpointAdaptiveInt(FixedIntSerializer):
    """An "adaptive" encoding whose statistics restart at every checkpoint (every
    ``snapshot_configuration()``): the first 90 records after it are written as a tag and a
    fixed 8-byte long, later ones as a tag and a zigzag varint. Every record decodes, but a
    value's bytes depend on when it was written, so state written record by record (the bytes
    backend) and state written at savepoint time (the heap backend) end in different savepoints."""

    WARM_UP = 90

    def __init__(self) -> None:
        super().__init__(8)
        self.written = 0

    def serialize(self, value: int, target: DataOutputView) -> None:
        self.written += 1
        if self.written <= self.WARM_UP:
            target.write_byte(0)
            target.write_long(value)
            return
        target.write_byte(1)
        zigzag = (value << 1) ^ (value >> 63)
        while zigzag >= 0x80:
            target.write_byte((zigzag & 0x7F) | 0x80)
            zigzag >>= 7
        target.write_byte(zigzag)

    def deserialize(self, source: DataInputView) -> int:
        if source.read_byte() == 0:
            return source.read_long()
        zigzag, shift = 0, 0
        while True:
            byte = source.read_unsigned_byte()
            zigzag |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80 or shift > 70:
                break
        return (zigzag >> 1) ^ -(zigzag & 1)

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        # Copies the record's bytes as they are (a copy must not re-encode them).
        tag = source.read_byte()
        target.write_byte(tag)
        if tag == 0:
            target.write_long(source.read_long())
            return
        while True:
            byte = source.read_unsigned_byte()
            target.write_byte(byte)
            if byte < 0x80:
                return

    @property
    def length(self) -> int:
        return -1

    def duplicate(self) -> CheckpointAdaptiveInt:
        return CheckpointAdaptiveInt()

    def __eq__(self, other: object) -> bool:
        return type(other) is CheckpointAdaptiveInt

    def __hash__(self) -> int:
        return hash(CheckpointAdaptiveInt)

    def snapshot_configuration(self) -> CheckpointAdaptiveSnapshot:
        self.written = 0  # a new checkpoint: the statistics start again
        return CheckpointAdaptiveSnapshot()


class CheckpointAdaptiveSnapshot(ConfigFreeSnapshot[int]):
    def restore_serializer(self) -> CheckpointAdaptiveInt:
        return CheckpointAdaptiveInt()

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[int]) -> SchemaCompatibility[int]:
        if type(old_snapshot) is CheckpointAdaptiveSnapshot:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("not a checkpoint-adaptive int")


class NormalisingMatrix(Matrix):
    """Sorts each row in place before writing it ("canonical order on disk"): what it reads back
    equals the value it was given, which is no longer the value the caller holds."""

    def serialize(self, value: list, target: DataOutputView) -> None:
        for row in value:
            row.sort()
        super().serialize(value, target)


class ShallowMatrix(Matrix):
    """copy() copies the outer list only: rows are shared with the original."""

    def copy(self, value: list) -> list:
        return list(value)


class ClaimsImmutableMatrix(Matrix):
    """Declares its (mutable) values immutable, so copy() hands out the original."""

    def copy(self, value: list) -> list:
        return value

    @property
    def is_immutable_type(self) -> bool:
        return True


class GreedyText(TextSerializer):
    """Writes raw UTF-8 with no length and reads everything that is left."""

    def serialize(self, value: str, target: DataOutputView) -> None:
        target.write(value.encode("utf-8", "surrogatepass"))

    def deserialize(self, source: DataInputView) -> str:
        return source.read_fully(source.available()).decode("utf-8", "surrogatepass")

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(source.available()))


class ShortCopyText(TextSerializer):
    """copy_serialized copies the length prefix but forgets the bytes after it."""

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        size = source.read_int()
        target.write_int(size)
        source.skip_bytes(size)


class LongCopyText(TextSerializer):
    """copy_serialized copies everything left in the source, not one record."""

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(source.available()))


class LastRecordCopyText(TextSerializer):
    """copy_serialized bounds the length by the bytes left less a length prefix it expects to
    follow: the input's last record is refused."""

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        size = source.read_int()
        if size + 4 > source.available():
            raise SerializationError(f"text of {size} bytes with {source.available()} left: truncated")
        target.write_int(size)
        target.write(source.read_fully(size))


class PeekingLengthText(TextSerializer):
    """Reads its length prefix with ``struct`` over ``peek(4)``: a record cut inside the prefix
    raises struct.error instead of the view's EndOfDataError."""

    def deserialize(self, source: DataInputView) -> str:
        (size,) = struct.unpack(">i", source.peek(4))
        source.skip_bytes(4)
        return source.read_fully(size).decode("utf-8", "surrogatepass")


class LenientCutInt(FixedIntSerializer):
    """Reads a record cut short as the bytes that are there: a damaged savepoint's value
    silently becomes another number."""

    def deserialize(self, source: DataInputView) -> int:
        return int.from_bytes(source.read_fully(min(self.width, source.available())), "big", signed=True)


class IdentityHashedTicket(Ticket):
    """Equal by number and seat, but hashed by identity (``__hash__ = object.__hash__``, kept so
    that tickets can go in a set): the ticket read back is == to the one written, yet a set or
    dict holding one never finds the other."""

    __hash__ = object.__hash__


class WriteCheckedPercent(PercentSerializer):
    """Checks the range when writing only: a corrupt byte restores as a percentage of -28 that
    the next checkpoint refuses to write."""

    def deserialize(self, source: DataInputView) -> int:
        return FixedIntSerializer.deserialize(self, source)


class WrongLengthInt(FixedIntSerializer):
    """Claims 4 bytes per value but writes 8."""

    @property
    def length(self) -> int:
        return 4


class ForgetfulDuplicate(FixedIntSerializer):
    """duplicate() builds a serializer with the default configuration."""

    def duplicate(self) -> FixedIntSerializer:
        return ForgetfulDuplicate()

    def snapshot_configuration(self) -> FixedIntSnapshot:
        return ForgetfulDuplicateSnapshot(self.width)


class ForgetfulDuplicateSnapshot(FixedIntSnapshot):
    def restore_serializer(self) -> FixedIntSerializer:
        return ForgetfulDuplicate(self.width)


class SharedBufferText(TextSerializer):
    """Encodes through a buffer kept on the instance, and duplicate() returns self."""

    def __init__(self) -> None:
        self._cache_buffer = bytearray()

    def serialize(self, value: str, target: DataOutputView) -> None:
        self._cache_buffer.clear()
        for ch in value.encode("utf-8", "surrogatepass"):
            self._cache_buffer.append(ch)
        data = bytes(self._cache_buffer)
        target.write_int(len(data))
        target.write(data)

    def __reduce__(self) -> Any:
        return (SharedBufferText, ())


class BufferedText(TextSerializer):
    """Assembles each record in its own scratch buffer, and duplicate() returns a new instance:
    correct on its own."""

    def __init__(self) -> None:
        self._cache_buffer = bytearray()

    def serialize(self, value: str, target: DataOutputView) -> None:
        buffer = self._cache_buffer
        buffer.clear()
        data = value.encode("utf-8", "surrogatepass")
        buffer += len(data).to_bytes(4, "big")
        buffer += data
        target.write(bytes(buffer))

    def duplicate(self) -> BufferedText:
        return BufferedText()


class NestedBufferText(TextSerializer):
    """Writes through a nested ``BufferedText`` and keeps the inherited duplicate() (itself):
    its duplicates share the nested serializer's buffer."""

    def __init__(self) -> None:
        self.inner = BufferedText()

    def serialize(self, value: str, target: DataOutputView) -> None:
        self.inner.serialize(value, target)

    def __reduce__(self) -> Any:
        return (NestedBufferText, ())


class LockedText(TextSerializer):
    """Keeps a lock for 'thread safety': the serializer no longer pickles."""

    def __init__(self) -> None:
        self.lock = threading.Lock()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return 1


class IdentityEqualityInt(FixedIntSerializer):
    """Inherits object identity as equality: a restored or unpickled copy is 'different'."""

    __eq__ = object.__eq__
    __hash__ = object.__hash__


class WidthBlindInt(FixedIntSerializer):
    """Equality by class only: the 8-byte release it migrates to compares equal to it."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))


class InsertionOrderTags(TagSetSerializer):
    """Writes tags in set iteration order: equal keys, different bytes."""

    def ordered(self, value: frozenset) -> list[str]:
        return list(value)


class NanLosingDouble(DoubleSerializer):
    """Writes every NaN as Java's canonical NaN, losing the payload."""

    def serialize(self, value: Any, target: DataOutputView) -> None:
        super().serialize(float("nan") if isinstance(value, float) and math.isnan(value) else value, target)


class NegativeZeroLosingDouble(DoubleSerializer):
    """'Normalizes' values by adding 0.0, which turns -0.0 into 0.0."""

    def serialize(self, value: Any, target: DataOutputView) -> None:
        super().serialize(value + 0.0 if isinstance(value, float) else value, target)


# == snapshot ===================================================================================


class ForgetfulSnapshotInt(FixedIntSerializer):
    """Its snapshot records nothing: a restore always gets the default width."""

    def snapshot_configuration(self) -> TypeSerializerSnapshot[int]:
        return ForgetfulSnapshot()


class ForgetfulSnapshot(ConfigFreeSnapshot[int]):
    def restore_serializer(self) -> FixedIntSerializer:
        return ForgetfulSnapshotInt()

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[int]:
        return SchemaCompatibility.compatible_as_is()


class IgnoringRestoreInt(FixedIntSerializer):
    """The snapshot records the width, but restore_serializer() ignores it."""

    def snapshot_configuration(self) -> FixedIntSnapshot:
        return IgnoringRestoreSnapshot(self.width)


class IgnoringRestoreSnapshot(FixedIntSnapshot):
    def restore_serializer(self) -> FixedIntSerializer:
        return IgnoringRestoreInt()


class PicklingSnapshotInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return PicklingSnapshot(self.width)


class PicklingSnapshot(FixedIntSnapshot):
    """Stores its configuration as a pickle."""

    def write_snapshot(self, target: DataOutputView) -> None:
        payload = pickle.dumps({"width": self.width})
        target.write_int(len(payload))
        target.write(payload)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        self.width = pickle.loads(source.read_fully(source.read_int()))["width"]

    def restore_serializer(self) -> FixedIntSerializer:
        return PicklingSnapshotInt(self.width)


class NestedSnapshotInt(FixedIntSerializer):
    """Defines its snapshot class inside the serializer class."""

    class Snapshot(FixedIntSnapshot):
        def restore_serializer(self) -> FixedIntSerializer:
            return NestedSnapshotInt(self.width)

    def snapshot_configuration(self) -> FixedIntSnapshot:
        return NestedSnapshotInt.Snapshot(self.width)


class NeedsArgumentSnapshotInt(FixedIntSerializer):
    def snapshot_configuration(self) -> TypeSerializerSnapshot[int]:
        return NeedsArgumentSnapshot(self)


class NeedsArgumentSnapshot(FixedIntSnapshot):
    """Requires the serializer in its constructor (restores cannot build it)."""

    def __init__(self, serializer: FixedIntSerializer) -> None:
        super().__init__(serializer.width)

    def restore_serializer(self) -> FixedIntSerializer:
        return NeedsArgumentSnapshotInt(self.width)


class LeftoverSnapshotInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return LeftoverSnapshot(self.width)


class LeftoverSnapshot(FixedIntSnapshot):
    """Writes a 'flags' int it never reads back."""

    def write_snapshot(self, target: DataOutputView) -> None:
        super().write_snapshot(target)
        target.write_int(0)

    def restore_serializer(self) -> FixedIntSerializer:
        return LeftoverSnapshotInt(self.width)


class GreedySnapshotInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return GreedySnapshot(self.width)


class GreedySnapshot(FixedIntSnapshot):
    """Reads 'the rest' as optional extensions, eating whatever follows the snapshot."""

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        super().read_snapshot(read_version, source)
        source.skip_bytes(source.available())

    def restore_serializer(self) -> FixedIntSerializer:
        return GreedySnapshotInt(self.width)


_COUNTER = iter(range(10**9))


class UnstableSnapshotInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return UnstableSnapshot(self.width)


class UnstableSnapshot(FixedIntSnapshot):
    """Stamps every snapshot with a sequence number: the same configuration, different bytes."""

    def write_snapshot(self, target: DataOutputView) -> None:
        super().write_snapshot(target)
        target.write_long(next(_COUNTER))

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        super().read_snapshot(read_version, source)
        source.read_long()

    def restore_serializer(self) -> FixedIntSerializer:
        return UnstableSnapshotInt(self.width)


class CrashingSnapshotInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return CrashingSnapshot(self.width)


class CrashingSnapshot(FixedIntSnapshot):
    """Unpacks its width with struct straight from the bytes left, unchecked."""

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        (self.width,) = struct.unpack(">i", source.peek(4))
        source.skip_bytes(4)

    def restore_serializer(self) -> FixedIntSerializer:
        return CrashingSnapshotInt(self.width)


class KindBlindEnum(NamedEnumSerializer):
    def __init__(self, enum_type: Any = None) -> None:
        from zoo_base import Shade

        # No check of the kind: the class a snapshot names is trusted.
        self.enum_type = register_type(Shade if enum_type is None else enum_type)

    def snapshot_configuration(self) -> NamedEnumSnapshot:
        return KindBlindEnumSnapshot(super().snapshot_configuration().class_name)


class KindBlindEnumSnapshot(NamedEnumSnapshot):
    """Restores with whatever the registry resolves its class name to, unchecked: a name that
    resolves to a dataclass (or any registered object) is used as an Enum class."""

    def restore_serializer(self) -> NamedEnumSerializer:
        return KindBlindEnum(self.enum_type())


class LegacyPickledInt(FixedIntSerializer):
    """Snapshots itself the pre-1.7 way: the pickled serializer."""

    def snapshot_configuration(self) -> TypeSerializerSnapshot[int]:
        return PickledSerializerSnapshot(self)


class OldDirectionInt(FixedIntSerializer):
    def snapshot_configuration(self) -> TypeSerializerSnapshot[int]:
        return OldDirectionSnapshot(self.width)


class OldDirectionSnapshot(TypeSerializerSnapshot[int]):
    """Only implements the pre-1.19 direction (the old snapshot judges the new serializer)."""

    def __init__(self, width: int = 0) -> None:
        self.width = width

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(self.width)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        self.width = source.read_int()

    def restore_serializer(self) -> FixedIntSerializer:
        return OldDirectionInt(self.width)

    def resolve_schema_compatibility_with_serializer(self, new_serializer: Any) -> SchemaCompatibility[int]:
        if getattr(new_serializer, "width", None) == self.width:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("width changed")


class SelfDoubtingInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return SelfDoubtingSnapshot(self.width, self)


class SelfDoubtingSnapshot(FixedIntSnapshot):
    """Compares the serializer objects it was made from, which a read snapshot does not have."""

    def __init__(self, width: int = 0, serializer: Any = None) -> None:
        super().__init__(width)
        self.serializer = serializer

    def restore_serializer(self) -> FixedIntSerializer:
        return SelfDoubtingInt(self.width)

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[int]:
        if getattr(old_snapshot, "serializer", None) is self.serializer and self.serializer is not None:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("a different serializer instance wrote this state")


class DigitsInt(TypeSerializer[int]):
    """Ints as decimal text; shares BlindSnapshot with BinaryInt."""

    def serialize(self, value: int, target: DataOutputView) -> None:
        target.write_utf(str(value))

    def deserialize(self, source: DataInputView) -> int:
        return int(source.read_utf())

    @property
    def is_immutable_type(self) -> bool:
        return True

    def snapshot_configuration(self) -> TypeSerializerSnapshot[int]:
        return BlindSnapshot()


class BinaryInt(IntSerializer):
    def snapshot_configuration(self) -> TypeSerializerSnapshot[int]:
        return BlindSnapshot()


class BlindSnapshot(ConfigFreeSnapshot[int]):
    """One snapshot class for two layouts, recording neither."""

    def restore_serializer(self) -> TypeSerializer[int]:
        return DigitsInt()

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[int]:
        return SchemaCompatibility.compatible_as_is()


# == migration ==================================================================================


class PositionalRecord(RecordSerializer):
    def snapshot_configuration(self) -> RecordSnapshot:
        return PositionalRecordSnapshot(self.fields)


class PositionalRecordSnapshot(RecordSnapshot):
    """Migrates records by position instead of by field name."""

    def restore_serializer(self) -> RecordSerializer:
        return PositionalRecord(*self.fields)

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        migrated = tuple(element[i] if i < len(element) else None for i in range(len(new.fields)))
        if target is not None:
            new.serialize(migrated, target)
        return migrated


class ZeroFillRecord(RecordSerializer):
    def snapshot_configuration(self) -> RecordSnapshot:
        return ZeroFillRecordSnapshot(self.fields)


class ZeroFillRecordSnapshot(RecordSnapshot):
    """Fills added fields with 0 instead of null."""

    def restore_serializer(self) -> RecordSerializer:
        return ZeroFillRecord(*self.fields)

    def fill(self, by_name: dict[str, Any], name: str) -> Any:
        return by_name.get(name, 0)


class ElementlessRecord(RecordSerializer):
    def snapshot_configuration(self) -> RecordSnapshot:
        return ElementlessRecordSnapshot(self.fields)


class ElementlessRecordSnapshot(RecordSnapshot):
    """Migrates bytes correctly but returns heap objects unmigrated from migrate_element."""

    def restore_serializer(self) -> RecordSerializer:
        return ElementlessRecord(*self.fields)

    def migrate_state(self, prior: Any, new: Any, source: DataInputView, target: DataOutputView) -> None:
        new.serialize(super().migrate_element(prior, new, prior.deserialize(source)), target)

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        if target is not None:
            target.write(b"")
        return element


class FlagOneCopyRecord(RecordSerializer):
    """copy_serialized takes only 01 as a field's null mark, where deserialize (read_boolean)
    takes any byte but 00: a damaged mark reads as null, and is copied with a long after it."""

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        for _ in self.fields:
            mark = source.read_unsigned_byte()
            target.write_byte(mark)
            if mark != 1:
                target.write(source.read_fully(8))

    def snapshot_configuration(self) -> RecordSnapshot:
        return FlagOneCopyRecordSnapshot(self.fields)


class FlagOneCopyRecordSnapshot(RecordSnapshot):
    def restore_serializer(self) -> RecordSerializer:
        return FlagOneCopyRecord(*self.fields)


class HalfReadRecord(RecordSerializer):
    def snapshot_configuration(self) -> RecordSnapshot:
        return HalfReadRecordSnapshot(self.fields)


class HalfReadRecordSnapshot(RecordSnapshot):
    """migrate_state copies the first field's bytes and 'skips' the rest by not reading it."""

    def restore_serializer(self) -> RecordSerializer:
        return HalfReadRecord(*self.fields)

    def migrate_state(self, prior: Any, new: Any, source: DataInputView, target: DataOutputView) -> None:
        first = None if source.read_boolean() else source.read_long()
        by_name = {prior.fields[0]: first}
        new.serialize(tuple(by_name.get(name) for name in new.fields), target)


class VersionBlindInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return VersionBlindSnapshot(self.width)


class VersionBlindSnapshot(FixedIntSnapshot):
    """Says 'as is' to any width: widening is never migrated."""

    def restore_serializer(self) -> FixedIntSerializer:
        return VersionBlindInt(self.width)

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[int]:
        return SchemaCompatibility.compatible_as_is()


class NestedBlindPair(PairSerializer):
    def snapshot_configuration(self) -> TypeSerializerSnapshot[tuple]:
        return NestedBlindPairSnapshot(self)


class NestedBlindPairSnapshot(FixedIntSnapshot.__mro__[1]):  # TypeSerializerSnapshot
    """A composite whose snapshot only compares its own class, ignoring the nested verdicts."""

    def __init__(self, serializer: Any = None) -> None:
        self.serializer = serializer
        self.widths = (serializer.first.width, serializer.second.width) if serializer is not None else (0, 0)

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(self.widths[0])
        target.write_int(self.widths[1])

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        self.widths = (source.read_int(), source.read_int())
        if not set(self.widths) <= {1, 2, 4, 8}:
            raise SnapshotFormatError(f"NestedBlindPairSnapshot: widths {self.widths} are not 1, 2, 4 or 8")

    def restore_serializer(self) -> Any:
        return NestedBlindPair(FixedIntSerializer(self.widths[0]), FixedIntSerializer(self.widths[1]))

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[tuple]:
        if isinstance(old_snapshot, NestedBlindPairSnapshot):
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("not a pair")


class ReadsOldWithNewInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return ReadsOldWithNewSnapshot(self.width)


class ReadsOldWithNewSnapshot(FixedIntSnapshot):
    """migrate_state reads the old record with the NEW serializer (fine only when widths match)."""

    def restore_serializer(self) -> FixedIntSerializer:
        return ReadsOldWithNewInt(self.width)

    def migrate_state(self, prior: Any, new: Any, source: DataInputView, target: DataOutputView) -> None:
        if prior.width == 2:  # the first widening step was written and tested; later ones were not
            new.serialize(prior.deserialize(source), target)
        else:
            new.serialize(new.deserialize(source), target)


# == versioning / backends ======================================================================


class ReleasedInt(FixedIntSerializer):
    """A serializer whose byte order a later release 'optimised' without a new snapshot
    version (the test switches ``byte_order`` between recording and certifying)."""

    byte_order = "big"

    def serialize(self, value: int, target: DataOutputView) -> None:
        target.write(value.to_bytes(self.width, self.byte_order, signed=True))  # type: ignore[arg-type]

    def deserialize(self, source: DataInputView) -> int:
        return int.from_bytes(source.read_fully(self.width), self.byte_order, signed=True)  # type: ignore[arg-type]

    def snapshot_configuration(self) -> FixedIntSnapshot:
        return ReleasedIntSnapshot(self.width)


class ReleasedIntSnapshot(FixedIntSnapshot):
    def restore_serializer(self) -> FixedIntSerializer:
        return ReleasedInt(self.width)


class InterningText(TextSerializer):
    """Writes each distinct string once per process and then only its number: the numbers mean
    nothing to another process."""

    _table: dict[str, int] = {}
    _strings: list[str] = []

    def serialize(self, value: str, target: DataOutputView) -> None:
        number = self._table.get(value)
        if number is None:
            number = self._table[value] = len(self._strings)
            self._strings.append(value)
        target.write_int(number)

    def deserialize(self, source: DataInputView) -> str:
        number = source.read_int()
        if not 0 <= number < len(self._strings):
            from reference import SerializationError

            raise SerializationError(f"unknown string number {number}")
        return self._strings[number]

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(4))

    def snapshot_configuration(self) -> TextSnapshot:
        return InterningSnapshot()


class InterningSnapshot(TextSnapshot):
    def restore_serializer(self) -> TextSerializer:
        return InterningText()


# == api / backends / generated: checks that only the harness's full path can catch =============


class ZeroLengthText(TextSerializer):
    """Declares ``length`` 0 meaning "not fixed" (Flink spells variable length -1)."""

    @property
    def length(self) -> int:
        return 0


class ReusingMatrix(Matrix):
    """Object reuse: deserialize fills and returns one list kept on the instance, to spare an
    allocation per record. A caller that compares each record at once never notices; a heap
    backend that keeps every restored object holds the same list under every key."""

    def __init__(self) -> None:
        self._cache_result: list = []

    def deserialize(self, source: DataInputView) -> list:
        rows = super().deserialize(source)
        self._cache_result.clear()
        self._cache_result.extend(rows)
        return self._cache_result

    def duplicate(self) -> ReusingMatrix:
        return ReusingMatrix()  # one reuse buffer per thread: the author knew that much

    def snapshot_configuration(self) -> MatrixSnapshot:
        return ReusingMatrixSnapshot()


class ReusingMatrixSnapshot(MatrixSnapshot):
    def restore_serializer(self) -> Matrix:
        return ReusingMatrix()

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[list]) -> SchemaCompatibility[list]:
        if type(old_snapshot) is ReusingMatrixSnapshot:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("not a reusing matrix")


class ReusingMigrationRecord(DictRecordSerializer):
    def snapshot_configuration(self) -> DictRecordSnapshot:
        return ReusingMigrationSnapshot(self.fields)


class ReusingMigrationSnapshot(DictRecordSnapshot):
    """migrate_element fills and returns one dict kept on the snapshot (object reuse): each
    result is right when used at once, as migrate_state and a one-element test use it, but
    the heap backend migrates every stored object with one snapshot and keeps the results."""

    def __init__(self, fields: tuple[str, ...] = ()) -> None:
        super().__init__(fields)
        self._reuse: dict = {}

    def restore_serializer(self) -> DictRecordSerializer:
        return ReusingMigrationRecord(*self.fields)

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[tuple]:
        if not isinstance(old_snapshot, ReusingMigrationSnapshot):
            return SchemaCompatibility.incompatible("not the same record serializer")
        return RecordSnapshot.resolve_schema_compatibility(self, old_snapshot)

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        migrated = self._reuse
        migrated.clear()
        for name in new.fields:
            migrated[name] = element.get(name)
        if target is not None:
            new.serialize(migrated, target)
        return migrated


class ConsumingIntPair(IntPairSerializer):
    def snapshot_configuration(self) -> TypeSerializerSnapshot[tuple]:
        return ConsumingIntPairSnapshot([self.first.snapshot_configuration(), self.second.snapshot_configuration()])


class ConsumingIntPairSnapshot(IntPairSnapshot):
    """restore_serializer pops the nested snapshots off its list as it builds the pair (and
    keeps the pair for later calls). Judged fresh, the snapshot refuses a narrowed element;
    judged after a restore built its serializer, as a backend judges it, it has no nested
    snapshots left to compare and says "as is"."""

    def __init__(self, nested: list[FixedIntSnapshot] | None = None) -> None:
        super().__init__(nested)
        self._restored: IntPairSerializer | None = None

    def restore_serializer(self) -> IntPairSerializer:
        if self._restored is None:
            serializers = []
            while self.nested:
                serializers.append(self.nested.pop(0).restore_serializer())
            self._restored = ConsumingIntPair(*serializers)
        return self._restored


class VersionForgettingLabels(LabelsSerializer):
    def snapshot_configuration(self) -> TypeSerializerSnapshot[dict]:
        return VersionForgettingLabelsSnapshot()


class LegacyLabels(VersionForgettingLabels):
    """Release 1's writer: entries in insertion order (it reads the same layout)."""

    def ordered(self, value: dict) -> list[str]:
        return list(value)


class VersionForgettingLabelsSnapshot(LabelsSnapshot):
    """Release 2 sorts the entries and answers release 1's snapshots with the reconfigured
    legacy writer, telling them apart by ``version``, which read_snapshot never records: every
    restored snapshot looks like release 1's. Values read and write fine either way; keys
    written in another order after a restore land elsewhere."""

    def __init__(self) -> None:
        self.version = 1

    def get_current_version(self) -> int:
        return 2

    def restore_serializer(self) -> LabelsSerializer:
        return VersionForgettingLabels()

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[dict]) -> SchemaCompatibility[dict]:
        if not isinstance(old_snapshot, VersionForgettingLabelsSnapshot):
            return SchemaCompatibility.incompatible("not a label set")
        if old_snapshot.version == 1:
            return SchemaCompatibility.compatible_with_reconfigured_serializer(LegacyLabels())
        return SchemaCompatibility.compatible_as_is()


def positional_row_migrate_state(self: Any, prior: Any, new: Any, source: DataInputView,
                                 target: DataOutputView) -> None:
    """A "fast path" for RowSerializerSnapshot.migrate_state that keeps the old field order
    and appends nulls for added fields: right when fields are only appended, wrong when a
    field is inserted before others or the fields are reordered."""
    old = prior.deserialize(source)
    values = list(old)[: len(new.fields)] + [None] * (len(new.fields) - len(old))
    new.serialize(tuple(values) if type(old) is tuple else type(old)(values, old.kind), target)


# == the catalogue ==============================================================================
#: Doubles including NaNs with payloads (valid values the serializer must keep bit for bit).
NAN_PAYLOADS = st.integers(1, 2**51 - 1).map(lambda m: struct.unpack(">d", struct.pack(">Q", 0x7FF8000000000000 | m))[0])
DOUBLES = st.floats() | NAN_PAYLOADS
_LONG = st.integers(-(2**63), 2**63 - 1)


class LocalTimeStamps(TypeSerializer[datetime.datetime]):
    """A naive timestamp written as epoch seconds of the process's local time (``time.mktime``)
    and read back with ``datetime.fromtimestamp``: exact on one machine, every value shifted on a
    TaskManager in another time zone."""

    def serialize(self, value: datetime.datetime, target: DataOutputView) -> None:
        if value.fold:  # epoch seconds hold no fold: the second of a repeated local time is refused
            raise SerializationError(f"LocalTimeStamps: {value!r} has fold=1, which epoch seconds cannot hold")
        target.write_long(int(time.mktime(value.timetuple())))

    def deserialize(self, source: DataInputView) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(source.read_long())

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write_long(source.read_long())

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 8

    def create_instance(self) -> datetime.datetime:
        return datetime.datetime(1970, 1, 2)

    def duplicate(self) -> LocalTimeStamps:
        return self

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self))

    def snapshot_configuration(self) -> LocalTimeStampsSnapshot:
        return LocalTimeStampsSnapshot()


class LocalTimeStampsSnapshot(ConfigFreeSnapshot[datetime.datetime]):
    def restore_serializer(self) -> LocalTimeStamps:
        return LocalTimeStamps()

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[datetime.datetime]:
        if type(old_snapshot) is LocalTimeStampsSnapshot:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("not local-time stamps")


#: Whole-second naive timestamps, fold 0 (the writer runs in UTC, where local time has no gaps or folds).
LOCAL_TIMES = st.datetimes(datetime.datetime(1971, 1, 1), datetime.datetime(2037, 12, 31)).map(
    lambda d: d.replace(microsecond=0, fold=0))



class NormalisingDecimal(DecimalText):
    """Writes ``value.normalize()``: the same number, shorter text, but 21.00 comes back as 21
    (the scale a price keeps is lost)."""

    def serialize(self, value: Any, target: DataOutputView) -> None:
        TextSerializer.serialize(self, str(value.normalize()), target)


class UtcTimestamps(OffsetTimestamps):
    """Stores the instant only and reads it back in UTC: the same instant, but a value written
    at +09:00 comes back in another time zone (its local date and hour changed)."""

    def deserialize(self, source: DataInputView) -> datetime.datetime:
        instant = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        instant += source.read_long() * datetime.timedelta(microseconds=1)
        source.read_int()
        return instant


class FoldlessWallClock(ZonedWallClock):
    """Writes fold 0 always (the wall clock and the zone look like the whole value): the second
    of a wall time a fall-back repeats, 01:30 on the night a zone leaves summer time, comes back
    as the first, an hour earlier."""

    @staticmethod
    def fold_of(value: datetime.datetime) -> int:
        return 0


class StaleScratchKeyText(PaddedKeyText):
    """PaddedKeyText through a scratch buffer kept per instance (duplicate() makes a new one)
    that grows but is never cleared: a key's padding holds the tail of a longer key written
    before, so one key gets other bytes, and another key group, after a longer one."""

    def __init__(self) -> None:
        self._scratch = bytearray()

    def serialize(self, value: str, target: DataOutputView) -> None:
        data = value.encode("utf-8", "surrogatepass")
        size = len(data) + -len(data) % 8
        if len(self._scratch) < size:
            self._scratch.extend(bytes(size - len(self._scratch)))
        self._scratch[:len(data)] = data
        target.write_int(len(data))
        target.write(bytes(self._scratch[:size]))

    def duplicate(self) -> StaleScratchKeyText:
        return StaleScratchKeyText()

    def __reduce__(self) -> Any:
        return (StaleScratchKeyText, ())


class VarintText(TextSerializer):
    """UTF-8 after its byte length as a varint (7 bits a byte, high bit: more follow), read
    back by a loop that takes at most ``READ_BYTES`` of them: any text of 2**(7 * READ_BYTES)
    bytes or more is misread. No schema: ``st.text()`` never draws such a text."""

    READ_BYTES = 2

    def serialize(self, value: str, target: DataOutputView) -> None:
        data = value.encode("utf-8", "surrogatepass")
        self._write_size(len(data), target)
        target.write(data)

    def _write_size(self, size: int, target: DataOutputView) -> None:
        while size >= 0x80:
            target.write_byte((size & 0x7F) | 0x80)
            size >>= 7
        target.write_byte(size)

    def _size(self, source: DataInputView) -> int:
        size = 0
        for shift in range(0, 7 * self.READ_BYTES, 7):
            byte = source.read_unsigned_byte()
            size |= (byte & 0x7F) << shift
            if not byte & 0x80:
                break
        return size

    def deserialize(self, source: DataInputView) -> str:
        return source.read_fully(self._size(source)).decode("utf-8", "surrogatepass")

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        size = self._size(source)
        self._write_size(size, target)
        target.write(source.read_fully(size))


class ThreeByteVarintText(VarintText):
    """VarintText whose reader stops after 3 bytes: the 4-byte length of a text of 2,097,152
    bytes (2**21) or more overflows it."""

    READ_BYTES = 3


class SignedShortLengthText(TextSerializer):
    """Its UTF-8 length in a short, refused past 65,535 bytes, but read back with read_short
    (signed): a text of 32,768 bytes or more reads as a negative length."""

    def serialize(self, value: str, target: DataOutputView) -> None:
        data = value.encode("utf-8", "surrogatepass")
        if len(data) > 0xFFFF:
            raise SerializationError(f"a text of {len(data)} bytes: at most 65,535")
        target.write_short(len(data))
        target.write(data)

    def deserialize(self, source: DataInputView) -> str:
        return source.read_fully(source.read_short()).decode("utf-8", "surrogatepass")

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        size = source.read_short()
        target.write_short(size)
        target.write(source.read_fully(size))

    def snapshot_configuration(self) -> TypeSerializerSnapshot[str]:
        return SignedShortLengthTextSnapshot()


class SignedShortLengthTextSnapshot(ConfigFreeSnapshot[str]):
    def restore_serializer(self) -> SignedShortLengthText:
        return SignedShortLengthText()


class ByteCountList(TypeSerializer[list]):
    """A list of longs after its element count in one signed byte: 128 elements read as -128."""

    def serialize(self, value: list, target: DataOutputView) -> None:
        target.write_byte(len(value))
        for item in value:
            target.write_long(item)

    def deserialize(self, source: DataInputView) -> list:
        return [source.read_long() for _ in range(source.read_byte())]

    def snapshot_configuration(self) -> TypeSerializerSnapshot[list]:
        return ByteCountListSnapshot()


class ByteCountListSnapshot(ConfigFreeSnapshot[list]):
    def restore_serializer(self) -> ByteCountList:
        return ByteCountList()

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[list]) -> SchemaCompatibility[list]:
        if type(old_snapshot) is ByteCountListSnapshot:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("not a byte-count list")


class ZigZagVarLong(TypeSerializer[int]):
    """A long as a zig-zag varint (Avro's and protobuf's encoding), read by a loop whose guard
    against runaway data stops at 63 bits instead of 64: a long of 2**62 or more (the tenth
    byte) is refused by the reader although the writer wrote it."""

    def serialize(self, value: int, target: DataOutputView) -> None:
        if type(value) is not int or not -(2**63) <= value < 2**63:
            raise SerializationError(f"ZigZagVarLong takes a signed 64-bit int, got {value!r}")
        n = (value << 1) ^ (value >> 63)
        while n >= 0x80:
            target.write_byte((n & 0x7F) | 0x80)
            n >>= 7
        target.write_byte(n)

    def deserialize(self, source: DataInputView) -> int:
        n = shift = 0
        while True:
            byte = source.read_unsigned_byte()
            n |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (n >> 1) ^ -(n & 1)
            shift += 7
            if shift >= 63:
                raise SerializationError("ZigZagVarLong: varint longer than 9 bytes; the data is corrupt")

    @property
    def is_immutable_type(self) -> bool:
        return True

    def create_instance(self) -> int:
        return 0

    def snapshot_configuration(self) -> TypeSerializerSnapshot[int]:
        return ZigZagVarLongSnapshot()


class EagerZigZagLong(ZigZagVarLong):
    """ZigZagVarLong (with a correct reader) whose writer loops ``while n > 0x80``: a value
    whose zig-zag form has a group of exactly 0x80 left (64, 8,192, ... and -65, ...) ends on
    a byte with its continuation bit set, and the reader runs into the next record."""

    def serialize(self, value: int, target: DataOutputView) -> None:
        if type(value) is not int or not -(2**63) <= value < 2**63:
            raise SerializationError(f"EagerZigZagLong takes a signed 64-bit int, got {value!r}")
        n = (value << 1) ^ (value >> 63)
        while n > 0x80:
            target.write_byte((n & 0x7F) | 0x80)
            n >>= 7
        target.write_byte(n)

    def deserialize(self, source: DataInputView) -> int:
        n = shift = 0
        while True:
            byte = source.read_unsigned_byte()
            n |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return (n >> 1) ^ -(n & 1)
            shift += 7
            if shift > 63:
                raise SerializationError("EagerZigZagLong: varint longer than 10 bytes; the data is corrupt")


class ZigZagVarLongSnapshot(ConfigFreeSnapshot[int]):
    def restore_serializer(self) -> ZigZagVarLong:
        return ZigZagVarLong()

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[int]) -> SchemaCompatibility[int]:
        if type(old_snapshot) is ZigZagVarLongSnapshot:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.incompatible("not a zig-zag varint long")


class UncheckedWidthInt(FixedIntSerializer):
    """FixedIntSerializer without the constructor's check: a width of 0 builds a serializer
    that writes nothing (every value reads back as 0), a negative one fails on the first record."""

    def __init__(self, width: int = 8) -> None:
        self.width = width


class EagerPair(PairSerializer):
    """PairSerializer that works out its fixed length in the constructor from the nested
    serializers it never checked: a None among them crashes with AttributeError, no refusal."""

    def __init__(self, first: TypeSerializer[Any], second: TypeSerializer[Any]) -> None:
        self.first, self.second = first, second
        self.fixed = first.length > 0 and second.length > 0


def _int(cls: type, **kw: Any) -> Callable[[], Subject]:
    return lambda: Subject(cls(4), fixed_int_values(4), **kw)


def _record(cls: type, expect_check: str) -> tuple[str, Callable[[], Subject]]:
    old, new = ("a", "b"), ("b", "c", "a")
    return expect_check, lambda: Subject(
        cls(*old), RECORD_VALUES,
        evolutions=[Evolution(cls(*new), "compatible_after_migration", migrate=by_name(old, new))],
    )


ZOO: dict[str, tuple[str, Callable[[], Subject]]] = {
    "length prefix counts characters": ("roundtrip.bit_exact", lambda: Subject(CharCountText(), TEXT)),
    "shallow copy": ("roundtrip.deep_copy", lambda: Subject(ShallowMatrix(), MATRIX)),
    "serialize sorts its argument in place": ("roundtrip.bit_exact", lambda: Subject(NormalisingMatrix(), MATRIX)),
    # Caught with the zoo's seed: how many records reach the warm-up depends on the values drawn.
    "encoding that restarts at every checkpoint": ("backends.identical_savepoints", lambda: Subject(
        CheckpointAdaptiveInt, st.integers(-(2**63), 2**63 - 1))),
    "mutable values declared immutable": ("roundtrip.deep_copy", lambda: Subject(ClaimsImmutableMatrix(), MATRIX)),
    "greedy deserialize": ("roundtrip.sequence", lambda: Subject(GreedyText(), TEXT)),
    "copy_serialized copies too little": ("roundtrip.copy_serialized", lambda: Subject(ShortCopyText(), TEXT)),
    "copy_serialized copies too much": ("roundtrip.copy_serialized", lambda: Subject(LongCopyText(), TEXT)),
    "copy_serialized refuses the input's last record": ("roundtrip.copy_serialized",
                                                         lambda: Subject(LastRecordCopyText(), TEXT)),
    "cut record raises struct.error": ("roundtrip.truncated", lambda: Subject(PeekingLengthText(), TEXT)),
    "cut record read as a value": ("roundtrip.truncated", lambda: Subject(LenientCutInt(8), _LONG)),
    "range checked on write only": ("roundtrip.corrupted", lambda: Subject(WriteCheckedPercent(), PERCENTS)),
    "copy taking only 01 as a null mark (deserialize takes any byte but 00)": (
        "roundtrip.corrupted", lambda: Subject(FlagOneCopyRecord("a", "b"), RECORD_VALUES)),
    "equal values hashed by identity": ("roundtrip.value_equality", lambda: Subject(
        TicketSerializer(IdentityHashedTicket), TICKETS.map(lambda t: IdentityHashedTicket(t.number, t.seat)))),
    "new release cannot read what it writes": ("migration.new_release", lambda: Subject(
        TextSerializer(), TEXT, evolutions=[Evolution(CountedText(), "compatible_as_is")])),
    "wrong fixed length": ("roundtrip.length", lambda: Subject(WrongLengthInt(8), _LONG)),
    "duplicate loses configuration": ("roundtrip.duplicate", _int(ForgetfulDuplicate)),
    "shared buffer across threads": ("roundtrip.concurrent", lambda: Subject(SharedBufferText(), st.text(min_size=20, max_size=60))),
    # Short texts: a race is then unlikely, and the nested stateful serializer the duplicates
    # share is what the check finds.
    "duplicate shares a stateful nested serializer": ("roundtrip.concurrent", lambda: Subject(
        NestedBufferText(), st.text(max_size=3))),
    "not picklable": ("roundtrip.pickle", lambda: Subject(LockedText(), TEXT)),
    "no __eq__": ("roundtrip.equality", _int(IdentityEqualityInt)),
    "__eq__ blind to the width": ("roundtrip.equality", _int(WidthBlindInt, evolutions=[
        Evolution(WidthBlindInt(8), "compatible_after_migration", migrate=lambda v: v)])),
    "non-deterministic keys": ("roundtrip.key_determinism", lambda: Subject(InsertionOrderTags(), TAGS, key=True)),
    "NaN payload lost": ("roundtrip.bit_exact", lambda: Subject(NanLosingDouble(), DOUBLES)),
    "-0.0 lost": ("roundtrip.bit_exact", lambda: Subject(NegativeZeroLosingDouble(), DOUBLES)),
    "snapshot forgets configuration": ("snapshot.restore", _int(ForgetfulSnapshotInt)),
    "restore ignores recorded configuration": ("snapshot.restore", _int(IgnoringRestoreInt)),
    "pickle in a snapshot": ("snapshot.no_pickle", _int(PicklingSnapshotInt)),
    "nested snapshot class": ("snapshot.top_level_class", _int(NestedSnapshotInt)),
    "snapshot without zero-argument constructor": ("snapshot.zero_arg_constructor", _int(NeedsArgumentSnapshotInt)),
    "snapshot read leaving bytes": ("snapshot.exact_read", _int(LeftoverSnapshotInt)),
    "snapshot read eating what follows": ("snapshot.exact_read", _int(GreedySnapshotInt)),
    "snapshot bytes not stable": ("snapshot.exact_read", _int(UnstableSnapshotInt)),
    "corrupt snapshot crashes with IndexError": ("snapshot.corrupt_bytes", _int(CrashingSnapshotInt)),
    "snapshot's class used without checking its kind": ("snapshot.class_confusion", lambda: Subject(
        KindBlindEnum(), SHADES)),
    "pre-1.7 pickled serializer as snapshot": ("snapshot.modern_form", _int(LegacyPickledInt)),
    "only the pre-1.19 resolution direction": ("snapshot.modern_form", _int(OldDirectionInt)),
    "own snapshot not judged as is": ("snapshot.self_resolution", _int(SelfDoubtingInt)),
    "one snapshot class for two layouts": ("snapshot.not_shared", lambda: Subject(
        DigitsInt(), INT32, evolutions=[Evolution(BinaryInt(), "incompatible")])),
    "positional row migration": _record(PositionalRecord, "migration.migrate_state"),
    "wrong fill for added fields": _record(ZeroFillRecord, "migration.migrate_state"),
    "migrate_element returns the old shape": _record(ElementlessRecord, "migration.migrate_element"),
    "migrate_state leaves bytes": _record(HalfReadRecord, "migration.migrate_state"),
    "snapshot version ignored": ("migration.verdict", lambda: Subject(
        VersionBlindInt(4), fixed_int_values(4),
        evolutions=[Evolution(VersionBlindInt(8), "compatible_after_migration", migrate=lambda v: v)])),
    "composite ignoring nested verdicts": ("migration.verdict", lambda: Subject(
        NestedBlindPair(FixedIntSerializer(4), FixedIntSerializer(4)), st.tuples(fixed_int_values(4), fixed_int_values(4)),
        evolutions=[Evolution(NestedBlindPair(FixedIntSerializer(4), FixedIntSerializer(2)), "incompatible")])),
    "chain step reads old bytes with the new serializer": ("migration.chain", lambda: Subject(
        ReadsOldWithNewInt(2), fixed_int_values(2),
        chains=[[Evolution(ReadsOldWithNewInt(4), "compatible_after_migration", migrate=lambda v: v),
                 Evolution(ReadsOldWithNewInt(8), "compatible_after_migration", migrate=lambda v: v)]])),
    "state that only lives in one process": ("backends.fresh_process", lambda: Subject(
        InterningText(), st.text(min_size=1, max_size=5), locator=None)),
    "timestamps in the process's local time": ("backends.fresh_process", lambda: Subject(
        LocalTimeStamps(), LOCAL_TIMES)),
    "decimal scale lost": ("roundtrip.bit_exact", lambda: Subject(NormalisingDecimal(), PRICES)),
    "aware datetime read back in another time zone": ("roundtrip.bit_exact", lambda: Subject(
        UtcTimestamps(), OFFSET_TIMES)),
    "key padding from a stale scratch buffer": ("roundtrip.key_determinism", lambda: Subject(
        StaleScratchKeyText(), TEXT, key=True)),
    # No schema: the sizes come from growing what the user's strategy draws.
    "varint length read with two bytes at most": ("roundtrip.size_boundaries", lambda: Subject(VarintText(), TEXT)),
    "varint length overflowing at 2**21": ("roundtrip.size_boundaries", lambda: Subject(ThreeByteVarintText(), TEXT)),
    # ASCII codes, as users draw them: 16,384 units are 16,384 bytes, under the signed short's end.
    "text length written as a short, read as a signed one": ("roundtrip.size_boundaries", lambda: Subject(
        SignedShortLengthText(), st.text("ABCXYZ", max_size=8))),
    # An optional part, absent from most draws: the few huge examples grow the values drawn
    # before that have it.
    "text length written as a short, read as a signed one, in an optional part": (
        "roundtrip.size_boundaries", lambda: Subject(
            NullableSerializer(SignedShortLengthText()), st.none() | st.none() | st.text("ABCXYZ", max_size=8))),
    "element count in one signed byte": ("roundtrip.size_boundaries", lambda: Subject(
        ByteCountList(), st.lists(_LONG, max_size=10))),
    # The user's strategy draws ids below 2**40; the varint edges reach the tenth byte.
    "varint reader guard one byte short": ("roundtrip.size_boundaries", lambda: Subject(
        ZigZagVarLong(), st.integers(0, 2**40))),
    "invalid width accepted": ("roundtrip.invalid_configuration", lambda: Subject(
        UncheckedWidthInt(4), fixed_int_values(4), invalid_configurations={
            "a width of 0": lambda: UncheckedWidthInt(0), "a negative width": lambda: UncheckedWidthInt(-4)})),
    "None nested serializer crashes the constructor": ("roundtrip.invalid_configuration", lambda: Subject(
        EagerPair(FixedIntSerializer(4), TextSerializer()), st.tuples(fixed_int_values(4), TEXT),
        invalid_configurations={"a pair whose first serializer is None": lambda: EagerPair(None, TextSerializer())})),
    # The user's strategy never draws fold=1; the transitions of each drawn zone (a stand-in for
    # UTC and Tokyo, which have none) are where a repeated wall time is grown with fold 1.
    "fold of a repeated wall time dropped": ("roundtrip.size_boundaries", lambda: Subject(
        FoldlessWallClock(), ZONED_TIMES, key=True)),
    # With a schema too, the longs are set to the varint edges.
    "varint writer continuing past an exact group": ("roundtrip.size_boundaries", lambda: Subject(
        EagerZigZagLong(), schema=t.LongType())),
}

# == domain (values outside the serializer's domain) ============================================


class LenientInt(IntSerializer):
    """'Forgiving': writes int(value), so "7" and 7.9 are stored as numbers nobody wrote."""

    def serialize(self, value: Any, target: DataOutputView) -> None:
        try:
            target.write_int(int(value))
        except (TypeError, ValueError):
            raise SerializationError(f"LenientInt cannot write {value!r}") from None


class PartialTuple(TupleSerializer):
    """Writes field after field and lets a refused field's error through: the fields before it
    stay in the target, a partial record the next one is read against."""

    def serialize(self, value: Any, target: DataOutputView) -> None:
        if type(value) is not tuple or len(value) != len(self.fields):
            raise SerializationError(f"PartialTuple got {value!r}")
        for field, item in zip(self.fields, value, strict=True):
            field.serialize(item, target)


class AnonymousRefusalRow(RowSerializer):
    """Refuses cleanly but says only 'invalid row': which of the fields was wrong is lost."""

    def serialize(self, value: Any, target: DataOutputView) -> None:
        try:
            super().serialize(value, target)
        except SerializationError:
            raise SerializationError("invalid row") from None


class TypeErrorText(StringSerializer):
    """Encodes whatever it is given: bytes and numbers fail with AttributeError, not the
    project's SerializationError."""

    def serialize(self, value: Any, target: DataOutputView) -> None:
        value.encode("utf-8")  # 'validates' by encoding first
        super().serialize(value, target)


_PAIR = t.TupleType((t.LongType(), t.StringType()))
_USER = t.RowType((t.RowField("id", t.LongType(), nullable=False), t.RowField("name", t.StringType())))
_DOMAIN = {
    "out-of-domain values coerced": ("domain.refused", lambda: Subject(LenientInt(), schema=t.IntType())),
    "partial record left on refusal": ("domain.refused", lambda: Subject(
        PartialTuple(LongSerializer(), StringSerializer()), schema=_PAIR)),
    "refusal without the field name": ("domain.refused", lambda: Subject(
        AnonymousRefusalRow([("id", LongSerializer(), False), ("name", StringSerializer(), True)]), schema=_USER)),
    "refusal with a TypeError": ("domain.refused", lambda: Subject(
        TypeErrorText(), st.text(alphabet="abc", max_size=5), schema=t.StringType())),
}
ZOO.update(_DOMAIN)

#: Entries needing a golden directory recorded by the correct release first.
GOLDEN = {
    "golden file unreadable after a format change": ("upgrade.restore", ReleasedInt),
}

# == api / backends / generated =================================================================
ZOO.update({
    "zero length for variable-length values": ("api.valid", lambda: Subject(ZeroLengthText(), TEXT)),
    "deserialize reuses one result object": ("backends.history", lambda: Subject(ReusingMatrix(), MATRIX)),
    "migrate_element reuses one result object": ("backends.evolution", lambda: Subject(
        ReusingMigrationRecord("a", "b"), DICT_RECORD_VALUES,
        evolutions=[Evolution(ReusingMigrationRecord("b", "c", "a"), "compatible_after_migration",
                              migrate=dict_by_name(("b", "c", "a")))])),
    "restore_serializer consumes the nested snapshots": ("backends.incompatible", lambda: Subject(
        ConsumingIntPair(FixedIntSerializer(4), FixedIntSerializer(4)), INT_PAIRS,
        evolutions=[Evolution(ConsumingIntPair(FixedIntSerializer(4), FixedIntSerializer(2)), "incompatible")])),
    "restored key serializer reconfigured to an unsorted writer": ("backends.keyed", lambda: Subject(
        VersionForgettingLabels(), LABELS, key=True)),
    # The directory (relative to this file's folder) is never recorded: not committed, or
    # --update-golden never run.
    "golden directory never recorded": ("versioning.golden", _int(FixedIntSerializer, golden="golden-never-recorded")),
})


def _row_schema() -> Any:
    from reference import types as t

    return t.RowType((t.RowField("id", t.LongType(), nullable=False), t.RowField("name", t.StringType()),
                      t.RowField("score", t.DoubleType())))


def _builtin_row_serializer() -> TypeSerializer[Any]:
    from reference.types import serializer_for

    return serializer_for(_row_schema())


#: Entries that break a built-in serializer for the duration of the check: migration.generated
#: certifies the reference serializers of a subject's ``schema`` (built with
#: ``reference.types.serializer_for``), so only a broken built-in shows that it can fail.
#: name -> (check id, subject factory, (class, attribute, broken replacement)).
BUILTIN_BREAKS: dict[str, tuple[str, Callable[[], Subject], tuple[type, str, Any]]] = {
    "row migration keeps the old field order": ("migration.generated", lambda: Subject(
        _builtin_row_serializer, schema=_row_schema()), (RowSerializerSnapshot, "migrate_state",
                                                          positional_row_migrate_state)),
}


# == breaks of the reference itself that only the built-ins' own checks can see ================


def _builtin(name: str) -> Callable[[], Subject]:
    def make() -> Subject:
        from conformance._builtins.subjects import builtin_subject

        return builtin_subject(name)

    return make


def _reads_pre_17_by_default(data: bytes, *, allow_pickled_serializer: bool = True) -> Any:
    """snapshot_from_bytes with the opt-in turned into the default: savepoint bytes unpickled."""
    from reference import snapshot_from_bytes

    return snapshot_from_bytes(data, allow_pickled_serializer=allow_pickled_serializer)


def _resolves_against_the_stand_in(new: Any, old_snapshot: Any) -> Any:
    """resolve_compatibility without its pre-1.7 step: the new snapshot judges the pickled
    serializer's stand-in itself, not the snapshot of the serializer it carries (every
    evolution of a job started before 1.7 is then refused as a change of type)."""
    from reference import TypeSerializer

    if isinstance(new, TypeSerializer):
        new = new.snapshot_configuration()
    return new.resolve_schema_compatibility(old_snapshot)


def _reads_pre_17_stream_by_default(source: Any, *, allow_pickled_serializer: bool = True) -> Any:
    """read_serializer_snapshot with the opt-in turned into the default."""
    from reference import read_serializer_snapshot

    return read_serializer_snapshot(source, allow_pickled_serializer=allow_pickled_serializer)


def _three_byte_varint(out: bytearray, value: int) -> None:
    """A string length written in at most 3 varint bytes: 2,097,151 units and more wrap."""
    for _ in range(2):
        if value < 0x80:
            break
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value & 0x7F)


def _clear_then_put(self: Any, value: Any) -> None:
    """ValueState.update as 'delete the old entry, then write the new one': a refused value
    leaves the state empty."""
    self.clear()
    if value is not None:
        self._table.put(self._primary(), self._entry.value_serializer.to_bytes(value))


def _no_java_name(snapshot: Any) -> Any:
    """java_snapshot_name knowing no Java name: Flink's dialect then names every class as this
    project does (module:qualname), which no Flink job resolves."""
    return None


def _no_instance(self: Any) -> Any:
    return None


def _identity_equality(self: Any, other: object) -> bool:
    return self is other


def _entries_in_reverse(write_optional_map: Any) -> Any:
    """Flink's optional maps of a POJO snapshot written last entry first (field and subclass
    order lost in Flink's form only)."""

    def broken(target: Any, entries: Any) -> None:
        write_optional_map(target, list(reversed(entries)))

    return broken


def _flink_form_write_fails(target: Any, entries: Any) -> None:
    """Flink's optional map of a POJO snapshot that cannot be written (a nested snapshot's
    frame refused): the Flink form fails with a StateError, as a format without one would."""
    raise SnapshotFormatError(f"cannot frame the nested snapshot of {entries[0][0] if entries else 'no entry'!r}")


def _arity_from_flink_tuple_class(create: Any) -> Any:
    """TupleSerializerSnapshot rebuilding its serializer after checking the arity in Flink's
    tuple class name (``...TupleN``, read from Flink's form only) by parsing it, unguarded: a
    corrupted name raises IndexError or ValueError from restore_serializer, not a StateError."""

    def broken(self: Any, nested: Any) -> Any:
        if self.tuple_class is not None and int(self.tuple_class.rsplit("Tuple", 1)[1]) != len(nested):
            raise SnapshotFormatError(f"{self.tuple_class} does not have {len(nested)} fields")
        return create(self, nested)

    return broken


def _subclass_tag_unbounded(read_flags: Any) -> Any:
    """PojoSerializer._read_flags taking a registered subclass's tag without its bound (``<``
    turned into ``<=``): a corrupted tag one past the registered ones raises IndexError."""

    from reference.serializers._pojo import FLAG_TAGGED_SUBCLASS

    def broken(self: Any, source: Any) -> Any:
        mark = source.mark()
        if source.read_unsigned_byte() == FLAG_TAGGED_SUBCLASS and (tag := source.read_byte()) >= 0:
            return self.registered[tag][1]
        source.reset(mark)
        return read_flags(self, source)

    return broken


def _minus_one_list_size_as_empty(check_size: Any) -> Any:
    """ListSerializer._check_size letting a size of -1 through (``size < 0`` turned into ``size <
    -1``): a corrupted size of -1 reads as an empty list, which writes back as size 0."""

    def broken(self: Any, size: int, source: Any, first_element_width: Any) -> None:
        if size != -1:
            check_size(self, size, source, first_element_width)

    return broken


def _tuple_fields_taking_none(prepare: Any) -> Any:
    """TupleSerializer taking None in every field, as if each were Nullable: a None in its
    string field is written as a null string and read back, where tuple fields are never null
    (its codecs are generated on first use, from what it takes)."""

    def broken(self: Any) -> None:
        prepare(self)
        self._cache_takes_none = tuple(True for _ in self.fields)

    return broken


def _row_equal_by_fields_alone(self: Any, other: object) -> bool:
    """Row.__eq__ comparing the fields only: a retraction (-D) equals the insertion it retracts."""
    return tuple.__eq__(self, other) if isinstance(other, tuple) else NotImplemented


def _struct_from_bytes_of_any_size(self: Any, data: bytes) -> Any:
    """A fixed-width primitive's from_bytes unpacking its struct when the record has its size
    *or* the class reads as the base does: a record cut short escapes as struct.error."""
    from reference.serializers._primitives import _FixedWidth

    if len(data) == self._struct.size or type(self).deserialize is _FixedWidth.deserialize:
        return self._struct.unpack(data)[0]
    return TypeSerializer.from_bytes(self, data)


def _map_copy_of_null_keys(self: Any, source: Any, target: Any) -> None:
    """MapSerializer.copy_serialized copying each key as it is, never reading it: a key whose
    bytes read as None (a null string) is copied, where deserialize refuses the record."""
    size = source.read_int()
    if size < 0 or size > source.available():
        raise SerializationError(f"MapSerializer: corrupt map size {size}")
    target.write_int(size)
    for _ in range(size):
        self.key.copy_serialized(source, target)
        is_null = source.read_boolean()
        target.write_boolean(is_null)
        if not is_null:
            self.value.copy_serialized(source, target)


def _map_copy_taking_minus_one_as_empty(copy_serialized: Any) -> Any:
    """MapSerializer.copy_serialized copying a size of -1 as it is and no entry after it (its
    guard without ``size < 0``): a copy of a corrupted record that no reader can read."""

    def broken(self: Any, source: Any, target: Any) -> None:
        mark = source.mark()
        if source.read_int() == -1:
            target.write_int(-1)
            return
        source.reset(mark)
        copy_serialized(self, source, target)

    return broken


def _tuple_fields_copied_as_they_are(byte_migration: Any) -> Any:
    """TupleSerializer.byte_migration copying each field's bytes as they are, its fields'
    migrations never run: a field whose serializer changed keeps the old layout."""

    def broken(self: Any, new: Any, fields: Any) -> Any:
        return byte_migration(self, new, [field.copy_serialized for field in self.fields])

    return broken


def _tuple_migration_writing_nothing(migrate_element: Any) -> Any:
    """TupleSerializerSnapshot.migrate_element in FLIP-527's writing form returning the migrated
    tuple but writing nothing to ``target``."""

    def broken(self: Any, prior: Any, new: Any, element: Any, target: Any = None) -> Any:
        return migrate_element(self, prior, new, element)

    return broken


def _row_plan_without_first_field(plan: Any) -> Any:
    """RowSerializerSnapshot._plan taking the prior row's first field for absent (an index test
    of ``j > 0`` where ``j >= 0`` belongs): that field is migrated against no prior field."""

    def broken(self: Any, prior: Any, new: Any) -> Any:
        return [(-1, snap, None, serializer) if j == 0 else (j, snap, prior_field, serializer)
                for j, snap, prior_field, serializer in plan(self, prior, new)]

    return broken


def _earlier_identity_kept_for_flink(read: Any) -> Any:
    """The snapshot reader keeping any name it read under but the class's own two, where only a
    Java alias is to be kept: a snapshot of an earlier release (under an earlier identity)
    written out in Flink's dialect names a Python class no Flink job can load."""
    from reference import _snapshot

    def broken(source: Any) -> Any:
        mark = source.mark()
        name = source.read_utf()
        source.reset(mark)
        snapshot = read(source)
        cls = type(snapshot)
        if name not in (_snapshot.class_identity(cls), _snapshot._JAVA_NAMES.get(cls)):
            snapshot.__dict__["_java_name_read"] = name
        return snapshot

    return broken


def _java_alias_forgotten(read: Any) -> Any:
    """The snapshot reader forgetting the Java alias it read under: Flink's list-state
    ArrayListSerializerSnapshot is written back as the ListSerializerSnapshot."""

    def broken(source: Any) -> Any:
        snapshot = read(source)
        snapshot.__dict__.pop("_java_name_read", None)
        return snapshot

    return broken


def _modified_utf8_taking_four_byte_sequences(decode: Any) -> Any:
    """The modified UTF-8 decoder reading standard UTF-8's 4-byte sequences too (Python's own
    decoder takes them), where Java's readUTF refuses them."""

    def broken(data: bytes) -> str:
        if data and max(data) >= 0xF0:
            return data.decode("utf-8", "surrogatepass")
        return decode(data)  # type: ignore[no-any-return]

    return broken


def _unread_short_of_the_start(self: Any, n: int) -> None:
    """DataInputView.unread refusing to step back over every byte read (``n >= pos`` where
    ``n > pos`` belongs): a serializer peeking at a record's first byte fails on it."""
    if n < 0 or n >= self._pos:
        raise ValueError(f"cannot step back {n} bytes from offset {self._pos}")
    self._pos -= n


def _map_duplicate_sharing_its_key(self: Any) -> Any:
    """MapSerializer.duplicate testing ``key is not self.key`` where ``is`` belongs: a map whose
    key serializer keeps state and whose value serializer does not returns itself, so its
    duplicates share one key serializer (and its scratch buffer) across threads."""
    key, value = self.key.duplicate(), self.value.duplicate()
    return self if key is not self.key and value is self.value else type(self)(key, value)


def _simple_snapshot_v2_without_its_class_name(self: Any, read_version: int, source: Any) -> None:
    """SimpleTypeSerializerSnapshot.read_snapshot taking version 2 (Flink 1.7's, which wrote
    the serializer's class name after it) as version 3, which writes nothing: the name is left
    unread, and a snapshot of Flink 1.7 does not restore."""
    if read_version not in (2, 3):
        raise SnapshotFormatError(f"unsupported snapshot version {read_version}")


def _avro_never_declining_generation(self: Any, kind: str) -> bool:
    """AvroSerializer taking generated code for every schema, a logical type's included: the
    generated read returns the underlying type's values (an int for a timestamp-millis) where
    fastavro converts them."""
    return False


def _switch_reaching_new_serializers_only(codegen: Any) -> Callable[[bool], bool]:
    """set_generated_codecs changing the setting without re-installing the codecs of the
    serializers already built: only serializers built afterwards follow it."""
    def switch(enabled: bool) -> bool:
        previous, codegen._enabled = codegen._enabled, bool(enabled)
        return previous  # type: ignore[no-any-return]
    return switch


def _aliases_without(listing: Callable[[], dict[str, tuple[str, str]]], alias: str) -> Callable[[], dict[str, tuple[str, str]]]:
    """reference.snapshot_aliases() leaving out ``alias``, which its class still answers to."""
    def aliases() -> dict[str, tuple[str, str]]:
        return {k: v for k, v in listing().items() if k != alias}
    return aliases


def _nullable_label_lost(self: Any) -> list[str]:
    """NullableSerializerSnapshot's place in an incompatibility reason lost: the reason says
    "nested serializer 0" where it must say the nullable value, so it does not say where."""
    return ["nested serializer 0"]


def _nested_reads_allowing_pickle(read: Any) -> Any:
    """The snapshot reader opting a nested snapshot in to unpickling whatever the enclosing
    read chose (``enclosing is False`` where ``enclosing is True`` belongs): a PickleSerializer
    inside a list, restored from a savepoint's bytes, unpickles what it reads."""
    from reference import _snapshot

    def broken(source: Any) -> Any:
        if getattr(_snapshot._depth, "value", 0) > 1:
            _snapshot._reading.allow_pickle = True
        return read(source)

    return broken


def _boolean_read_only_one(self: Any, g: Any, out: Any) -> None:
    """BooleanSerializer's generated read fragment testing ``== 1``, where its generic read
    (and Flink's readBoolean) takes any byte but 00 as true: every record a valid writer makes
    reads alike, so only a damaged byte tells."""
    g.emit("{out} = data[pos] == 1", out=out)
    g.emit("pos += 1")


def _legacy_direction_inverted(self: Any, new_serializer: Any) -> Any:
    """TypeSerializerSnapshot's deprecated pre-1.19 entry (the old snapshot given the new
    serializer) resolving with the old snapshot as the judge: a field added reads to it as a
    field removed."""
    return self.resolve_schema_compatibility(new_serializer.snapshot_configuration())


def _pojo_pairs_judged_backwards(original: Callable[..., Any]) -> Callable[..., Any]:
    """The POJO module's resolve_compatibility with the two snapshots swapped where both are
    POJO snapshots (a registered subclass's pair): only a pair whose verdict depends on the
    direction (an enum member added) tells."""
    from reference.serializers import PojoSerializerSnapshot

    def resolve(new: Any, old: Any) -> Any:
        if isinstance(new, PojoSerializerSnapshot) and isinstance(old, PojoSerializerSnapshot):
            return original(old, new)
        return original(new, old)

    return resolve


def _writes_any_dataclass(original: Callable[..., None]) -> Callable[..., None]:
    """PojoSerializer's write testing "an instance of the class *or* a dataclass" where both
    are needed: an unrelated dataclass's instance is written as a subclass the POJO never had."""
    import dataclasses

    from reference import class_identity
    from reference.serializers import PojoSerializer, _pojo

    def serialize(self: Any, value: Any, target: Any) -> None:
        if dataclasses.is_dataclass(value) and not isinstance(value, self.dataclass_type):
            target.write_byte(_pojo.FLAG_SUBCLASS)
            target.write_utf(class_identity(type(value)))
            PojoSerializer(type(value)).serialize(value, target)
            return
        original(self, value, target)

    return serialize


def _typing_hints_or_nothing() -> Any:
    """The typing module as PojoSerializer sees it, with a get_type_hints that gives no hints
    where an annotation cannot be resolved: every field then falls back to Any (pickled), and
    a misspelt annotation is found only when a record fails to pickle."""
    import types
    import typing

    def get_type_hints(obj: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return typing.get_type_hints(obj, *args, **kwargs)
        except NameError:
            return {}

    return types.SimpleNamespace(**{**vars(typing), "get_type_hints": get_type_hints})


def _migrate_state_without_migration(self: Any, prior: Any, new: Any, source: Any, target: Any) -> None:
    """TypeSerializerSnapshot.migrate_state (what Flink's runtime calls per record) writing the
    element the prior serializer read with the new serializer, skipping migrate_element: the
    backends' plan calls migrate_element itself, so only a direct call tells."""
    new.serialize(prior.deserialize(source), target)


def _old_class_object_kept(self: Any, prior: Any, new: Any, element: Any) -> Any:
    """PojoSerializerSnapshot taking an object of the old release's class for a current one:
    the object keeps the old class and lacks the fields the new release added."""
    return element


def _old_subclass_object_as_the_pojo(self: Any, prior: Any, new: Any, element: Any) -> Any:
    """An object of the old release's classes rebuilt by field name as the POJO's own class,
    whatever registered subclass it was (a Circle comes back a Shape, its radius dropped)."""
    return new._instance_from_object(element)


def _byte_migration_giving_up(self: Any, new: Any, order: Any, migrated: Any) -> Any:
    """RowSerializer.byte_migration whose part fails on every record, as one that writes the
    null mask with its arguments swapped does: the plan redoes each record on the object path,
    so every value is right and every record is decoded and encoded again."""

    def part(source: Any) -> bytes:
        raise TypeError("'tuple' object cannot be interpreted as an integer")

    return part


def _snapshot_class_without_module(lookup: Any) -> Any:
    """reference._snapshot.registered_snapshot_class whose refusal says only "import the module
    that defines it", not which."""

    def without_module(name: str) -> Any:
        from reference import UnknownSnapshotClassError

        try:
            return lookup(name)
        except UnknownSnapshotClassError:
            raise UnknownSnapshotClassError(f"snapshot class {name.rpartition(':')[2]} is not registered; import "
                                            "the module that defines it before restoring") from None

    return without_module


def _reads_any_outer_version(read_snapshot: Any) -> Any:
    """A composite snapshot's read_snapshot that skips the refusal of an outer version the class
    does not declare (as a reader that checks it in its own code, and forgot to, would)."""

    def read(self: Any, read_version: int, source: DataInputView) -> None:
        self.READ_OUTER_VERSIONS = None  # this object only: the class still declares its versions
        read_snapshot(self, read_version, source)

    return read


def _reads_any_version(self: Any, read_version: int, source: DataInputView) -> None:
    """SimpleTypeSerializerSnapshot.read_snapshot without its refusal of versions other than 2
    and 3: a later release's layout would be read as this one's."""
    if read_version == 2:
        source.read_utf()


def _plan_of_changed_fields_only(plan: Any) -> Any:
    """PojoSerializerSnapshot._plan that migrates only the fields whose type changed, also for an
    object rebuilt by field name: its unchanged nested POJO stays an object of the earlier class
    version, which compares equal by name but which the new serializer cannot write."""

    def changed_only(self: Any, prior: Any, new: Any, every: bool = False) -> Any:
        return plan(self, prior, new)

    return changed_only


def _rebuilt_without_plain_defaults(rebuild: Any) -> Any:
    """PojoSerializer._instance_from_object that leaves a field the earlier object lacks unset
    when its default is a plain value (a factory's still runs): a dataclass's plain default is a
    class attribute, so this shows only on a class with slots."""

    def rebuilt(self: Any, obj: Any) -> Any:
        instance = rebuild(self, obj)
        for f in dataclasses.fields(self.dataclass_type):
            if not hasattr(obj, f.name) and f.default is not dataclasses.MISSING:
                object.__delattr__(instance, f.name)
        return instance

    return rebuilt


def _padding_of_the_inner_serializer(cls: Any, inner: Any, padding_length: int) -> Any:
    """NullableSerializer._with_padding_length taking the inner serializer's length as the
    padding instead of the restored snapshot's."""
    return cls(inner, padded=padding_length > 0)


def _negative_map_count_read_as_none(read_map: Any) -> Any:
    """reference.serializers._pojo._read_optional_map reading a negative entry count of Flink's
    POJO form as no entries (the header and the count consumed), instead of refusing it."""

    def read(source: Any, class_name: str, what: str) -> Any:
        ahead = source.peek(12)
        if len(ahead) == 12 and int.from_bytes(ahead[8:], "big", signed=True) < 0:
            source.read_long()
            source.read_int()
            return []
        return read_map(source, class_name, what)

    return read


def _map_migration_taking_null_keys(self: Any, new: Any, key: Any, value: Any) -> Any:
    """MapSerializer.byte_migration without its null-key refusal: a damaged record whose key
    reads as null is migrated on the byte path, where the object path refuses it."""

    from reference.serializers import _composites

    def run(source: Any, target: Any) -> None:
        size = _composites._read_size(source, "MapSerializer: map size")
        target.write_int(size)
        for _ in range(size):
            key(source, target)
            absent = source.read_boolean()
            target.write(b"\x01" if absent else b"\x00")
            if not absent:
                value(source, target)

    return run


def _map_of_pojo_with_an_empty_key() -> Subject:
    """The built-in map_of_pojo whose maps begin with an empty key (its length byte, flipped by
    0x01, makes a key that reads as null)."""
    from conformance._builtins.subjects import builtin_subject

    base = builtin_subject("map_of_pojo")
    values = base.values.map(lambda d: {"": next(iter(d.values())), **d} if d else d)
    return Subject(base.serializer, values, base.evolutions, schema=base.schema, name="map_of_pojo_with_an_empty_key")


def _hint_without_module(name: str, doing: str = "restoring") -> str:
    """reference._classes.not_known_hint as the enum snapshot's reader once worded it wrongly:
    the class is named whole, the module to import is not."""
    return f"import the module of {name!r} before {doing}"


class ViewInt(FixedIntSerializer):
    """A correct 4-byte int, written as users write one: ``write_int``, whose refusal of an int
    past 32 bits (a SerializationError) is the serializer's."""

    def __init__(self) -> None:
        super().__init__(4)

    def serialize(self, value: int, target: DataOutputView) -> None:
        if type(value) is not int:
            raise SerializationError(f"ViewInt: {value!r} is not an int")
        target.write_int(value)


def _no_range_error(what: str, value: object, bits: int) -> Any:
    """reference._io._range_error returning nothing where the error was due: ``raise None`` in
    ``write_int`` is a TypeError, not the SerializationError a user's serializer relies on."""
    return None


def _tuple_of_pojo() -> Subject:
    """A tuple whose second field is a POJO: only its flag byte set to the null mark (0x02, "no
    subclass", to 0x01), which no flip of one bit group gives, reads that field as null."""
    import strategies
    from reference.types import serializer_for

    schema = t.TupleType((t.IntType(), strategies.pojo_type((strategies.PojoField("w", t.LongType()),),
                                                             qualname="ZooPaar")))
    strategies.activate(schema)
    return Subject(lambda: serializer_for(schema), strategies.values(schema), schema=schema, name="tuple_of_pojo")


def _magic_read_unchecked(source: Any, magic: int, what: str) -> None:
    """reference._snapshot._read_magic reading the number without comparing it: a composite
    snapshot whose layout is damaged there is read as if it were whole."""
    source.read_int()


def _map_header_read_unchecked(source: Any, where: str) -> None:
    """reference.serializers._pojo._read_map_header reading the header without comparing it: a
    POJO snapshot of Flink's form damaged there is read as if it were whole."""
    source.read_long()


def _reads_no_null_ahead(serializer: Any) -> Any:
    """reference.serializers._composites._none_reader answering "never null" for every part: a
    copy of a tuple whose POJO field reads as null (its flag byte set to the null mark) takes
    the record, which deserialize refuses (a tuple field may not be null)."""
    return None


def _list_migration_giving_up(self: Any, new: Any, element: Any) -> Any:
    """ListSerializer.byte_migration that returns nothing, as one whose ``return`` was lost:
    the plan's list step is no function, so each list of POJOs is redone on the object path
    (every value right, every record decoded and encoded again)."""
    return None


def _pickles_without_positional(row: Any) -> dict[str, Any]:
    """RowSerializer.__getstate__ that leaves out that the row was restored from Flink's form:
    a copy sent to a Spark executor matches fields by Flink's placeholder names f0..fn-1."""
    return {"fields": row.fields, "supports_row_kind": row.supports_row_kind}


def _forgets_flink_form(read_outer_snapshot: Any) -> Any:
    """RowSerializerSnapshot.read_outer_snapshot that reads Flink's form but forgets it was
    positional: the restored row matches fields by Flink's placeholder names f0..fn-1."""

    def broken(self: Any, read_outer_version: int, source: Any) -> None:
        read_outer_snapshot(self, read_outer_version, source)
        self.positional = False

    return broken


def _enum_taking_any_symbols(self: Any, enum_type: Any, symbols: Any = None) -> None:
    """EnumSerializer.__init__ without its checks: symbols the class lacks are kept (reading
    their ordinals fails only when a record holds one)."""
    self._init(enum_type, list(symbols) if symbols is not None else [m.name for m in enum_type])


def _enum_type_of_any_kind(self: Any) -> Any:
    """EnumSerializerSnapshot._enum_type taking whatever the registry resolves the name to (an
    ``and`` turned into ``or``: any class passes as an Enum class)."""
    from reference import StateError, lookup_type

    if self._serializer is not None:
        return self._serializer.enum_type
    found = lookup_type(self.class_name)
    if found is None:
        raise StateError(f"enum class {self.class_name!r} is not known")
    return found


def _pickle_restored_trusting(cls: Any, allow_pickle: bool) -> Any:
    """PickleSerializer._restored ignoring allow_pickle: a PickleSerializer restored from a
    savepoint's snapshot unpickles its records unasked."""
    return cls()


_VIEW_INIT = DataInputView.__init__


def _view_taking_memoryviews_as_they_are(self: Any, data: Any) -> None:
    """DataInputView.__init__ that keeps a memoryview as it is: one of 8-byte items reads items."""
    _VIEW_INIT(self, data)
    if isinstance(data, memoryview):
        self._data, self._end = data, len(data)


_VIEW_RESET = DataInputView.reset


def _view_not_resetting_to_its_end(self: Any, mark: Any) -> None:
    """DataInputView.reset refusing a mark taken at the end of the view (an off-by-one bound)."""
    if mark[0] >= self.position + self.available():
        raise ValueError(f"cannot reset to offset {mark[0]}: past the view")
    _VIEW_RESET(self, mark)


def _breaks() -> dict[str, tuple[str, Callable[[], Subject], tuple[Any, str, Any]]]:
    from conformance._checks import snapshot as snapshot_checks
    from conformance._checks import versioning
    from reference import _io, _snapshot, read_serializer_snapshot
    from reference.backends._bytes import BytesValueState
    from reference.serializers import (
        EnumSerializer,
        EnumSerializerSnapshot,
        ListSerializer,
        MapSerializer,
        PickleSerializer,
        _codegen,
        _composites,
        _enum,
        _pojo,
        _primitives,
    )

    return {
        "a row restored from Flink's form matched by name": (
            "migration.verdict", _builtin("flink_row"),
            (RowSerializerSnapshot, "read_outer_snapshot", _forgets_flink_form(RowSerializerSnapshot.read_outer_snapshot))),
        "a composite snapshot's magic numbers read unchecked": (
            "snapshot.corrupt_bytes", _builtin("nullable"), (_snapshot, "_read_magic", _magic_read_unchecked)),
        "a POJO snapshot's optional-map header read unchecked": (
            "snapshot.corrupt_bytes", _builtin("pojo"), (_pojo, "_read_map_header", _map_header_read_unchecked)),
        "a copy taking a tuple whose POJO field reads as null": (
            "roundtrip.corrupted", _tuple_of_pojo, (_composites, "_none_reader", _reads_no_null_ahead)),
        "a view over a memoryview of wide items reading items": (
            "roundtrip.sequence", _builtin("long"), (DataInputView, "__init__", _view_taking_memoryviews_as_they_are)),
        "a view refusing to reset to its end": (
            "roundtrip.sequence", _builtin("long"), (DataInputView, "reset", _view_not_resetting_to_its_end)),
        "enum serializer taking symbols its class lacks": ("roundtrip.invalid_configuration", _builtin("enum"),
                                                           (EnumSerializer, "__init__", _enum_taking_any_symbols)),
        "pre-1.7 snapshots unpickled by default": ("versioning.legacy_form", _builtin("long"),
                                                   (versioning, "snapshot_from_bytes", _reads_pre_17_by_default)),
        "pre-1.7 snapshots judged as the stand-in, not the serializer it carries": (
            "versioning.legacy_form", _builtin("row"),
            (versioning, "resolve_compatibility", _resolves_against_the_stand_in)),
        "pre-1.7 snapshots unpickled by default when read from a stream": (
            "versioning.legacy_form", _builtin("long"),
            (versioning, "read_serializer_snapshot", _reads_pre_17_stream_by_default)),
        "pre-1.7 snapshots unpickled by read_serializer_snapshot's default": (
            "snapshot.untrusted_form", _builtin("long"),
            (read_serializer_snapshot, "__kwdefaults__",
             {"allow_pickled_serializer": True, "allow_pickle": False})),
        "a PickleSerializer restored from a savepoint's snapshot unpickling": (
            "snapshot.untrusted_form", _builtin("long"),
            (PickleSerializer, "_restored", classmethod(_pickle_restored_trusting))),
        "enum snapshot taking a registered class of any kind": ("snapshot.class_confusion", _builtin("enum"),
                                                                (EnumSerializerSnapshot, "_enum_type",
                                                                 _enum_type_of_any_kind)),
        "string lengths capped at a 3-byte varint": ("roundtrip.size_boundaries", _builtin("string"),
                                                     (_primitives, "_write_varint", _three_byte_varint)),
        "value state cleared before the new value is written": ("domain.state_untouched", _builtin("long"),
                                                                 (BytesValueState, "update", _clear_then_put)),
        "compatibility results compared by identity": ("migration.verdict_values", _builtin("row"),
                                                       (SchemaCompatibility, "__eq__", _identity_equality)),
        "create_instance() without a zero": ("api.create_instance", _builtin("long"),
                                             (LongSerializer, "create_instance", _no_instance)),
        "Flink's form written under this project's class names instead of Flink's Java ones": (
            "snapshot.flink_dialect", _builtin("long"), (_snapshot, "java_snapshot_name", _no_java_name)),
        "Flink's POJO snapshot written with its fields in reverse": (
            "snapshot.flink_dialect", _builtin("pojo"),
            (_pojo, "_write_optional_map", _entries_in_reverse(_pojo._write_optional_map))),
        "Flink's tuple class name parsed without a guard (a corrupted one crashes the reader)": (
            "snapshot.corrupt_bytes", _builtin("tuple"),
            (TupleSerializerSnapshot, "create_outer_serializer_with_nested_serializers",
             _arity_from_flink_tuple_class(TupleSerializerSnapshot.create_outer_serializer_with_nested_serializers))),
        "a row's byte migration failing on every record (each redone on the object path)": (
            "migration.byte_path", _builtin("row"), (RowSerializer, "byte_migration", _byte_migration_giving_up)),
        "an unregistered snapshot class refused without naming the module to import": (
            "snapshot.corrupt_bytes", _builtin("long"),
            (_snapshot, "registered_snapshot_class", _snapshot_class_without_module(_snapshot.registered_snapshot_class))),
        "a nullable snapshot reading an outer version it does not know as its own": (
            "snapshot.corrupt_bytes", _builtin("nullable"),
            (NullableSerializerSnapshot, "read_snapshot", _reads_any_outer_version(NullableSerializerSnapshot.read_snapshot))),
        "a simple snapshot reading a version it does not know as its own": (
            "snapshot.corrupt_bytes", _builtin("long"),
            (SimpleTypeSerializerSnapshot, "read_snapshot", _reads_any_version)),
        "a POJO rebuilt by field name keeping its nested objects of the earlier class version": (
            "migration.migrate_element", _builtin("local_pojo"),
            (_pojo.PojoSerializerSnapshot, "_plan", _plan_of_changed_fields_only(_pojo.PojoSerializerSnapshot._plan))),
        "a POJO rebuilt by field name leaving a field of a plain default unset (a class with slots)": (
            "migration.migrate_element", _builtin("local_pojo"),
            (_pojo.PojoSerializer, "_instance_from_object",
             _rebuilt_without_plain_defaults(_pojo.PojoSerializer._instance_from_object))),
        "a nullable snapshot restoring the inner serializer's length as its padding, not its own": (
            "snapshot.corrupt_bytes", _builtin("nullable_padded"),
            (NullableSerializer, "_with_padding_length", classmethod(_padding_of_the_inner_serializer))),
        "a POJO snapshot's negative optional-map entry count read as no entries": (
            "snapshot.corrupt_bytes", _builtin("pojo"),
            (_pojo, "_read_optional_map", _negative_map_count_read_as_none(_pojo._read_optional_map))),
        "a map's byte migration passing a key that reads as null (the object path refuses it)": (
            "migration.byte_path", _map_of_pojo_with_an_empty_key,
            (MapSerializer, "byte_migration", _map_migration_taking_null_keys)),
        "an enum snapshot of a class not known saying to import its module without naming it": (
            "snapshot.class_confusion", _builtin("enum"), (_enum, "not_known_hint", _hint_without_module)),
        "DataOutputView.write_int refusing an int past 32 bits with a TypeError": (
            "roundtrip.size_boundaries", lambda: Subject(ViewInt(), fixed_int_values(4)),
            (_io, "_range_error", _no_range_error)),
        "a list's byte migration returning nothing (each list of POJOs redone on the object path)": (
            "migration.byte_path", _builtin("list_of_pojo"), (ListSerializer, "byte_migration", _list_migration_giving_up)),
        "a row restored from Flink's form pickled without its positional flag": (
            "migration.shipped", _builtin("flink_row"), (RowSerializer, "__getstate__", _pickles_without_positional)),
        "a registered subclass's tag read without its bound (a corrupted tag raises IndexError)": (
            "roundtrip.corrupted", _builtin("pojo_with_subclasses"),
            (_pojo.PojoSerializer, "_read_flags", _subclass_tag_unbounded(_pojo.PojoSerializer._read_flags))),
        "a list size of -1 read as an empty list": (
            "roundtrip.corrupted", _builtin("list"),
            (ListSerializer, "_check_size", _minus_one_list_size_as_empty(ListSerializer._check_size))),
        "a map size of -1 copied as it is, with no entry after it": (
            "roundtrip.corrupted", _builtin("map_of_pojo"),
            (MapSerializer, "copy_serialized", _map_copy_taking_minus_one_as_empty(MapSerializer.copy_serialized))),
        "a tuple writing None in a field that is not Nullable (a string field's null string)": (
            "roundtrip.domain_refused", _builtin("tuple"), (TupleSerializer, "_cache_prepare", _tuple_fields_taking_none(TupleSerializer._cache_prepare))),
        "Row equality ignoring the row kind": (
            "roundtrip.value_equality", _builtin("row"), (Row, "__eq__", _row_equal_by_fields_alone)),
        "a fixed-width from_bytes unpacking records of any size (a cut record escapes as struct.error)": (
            "roundtrip.truncated", _builtin("long"), (_primitives._FixedWidth, "from_bytes", _struct_from_bytes_of_any_size)),
        "a map's copy taking a key that reads as None, which deserialize refuses": (
            "roundtrip.corrupted", _builtin("map"), (MapSerializer, "copy_serialized", _map_copy_of_null_keys)),
        "Flink's POJO snapshot failing to write, taken for a format without a Flink form": (
            "snapshot.flink_dialect", _builtin("pojo"), (_pojo, "_write_optional_map", _flink_form_write_fails)),
        "a generated boolean read taking only 01 for true (Flink reads any byte but 00 as true)": (
            "roundtrip.generated_codecs", _builtin("nested_row"),
            (_primitives.BooleanSerializer, "_gen_read", _boolean_read_only_one)),
        "the pre-1.19 direction judging the new snapshot by the old one's rules": (
            "migration.verdict", _builtin("row"),
            (TypeSerializerSnapshot, "resolve_schema_compatibility_with_serializer", _legacy_direction_inverted)),
        "registered subclasses judged the other way round (the old subclass snapshot judging the new)": (
            "migration.verdict", _builtin("pojo_with_subclasses"),
            (_pojo, "resolve_compatibility", _pojo_pairs_judged_backwards(_pojo.resolve_compatibility))),
        "a POJO writing an instance of any other dataclass as a non-registered subclass": (
            "roundtrip.domain_refused", _builtin("pojo"),
            (_pojo.PojoSerializer, "_serialize_generic", _writes_any_dataclass(_pojo.PojoSerializer._serialize_generic))),
        "a POJO field whose annotation names nothing defined taken as Any (pickled)": (
            "roundtrip.invalid_configuration", _builtin("pojo"), (_pojo, "typing", _typing_hints_or_nothing())),
        "the default migrate_state writing the record's element as read, never migrated": (
            "migration.migrate_state", _builtin("row"),
            (TypeSerializerSnapshot, "migrate_state", _migrate_state_without_migration)),
        "a POJO object of the old release's class migrated as it is (its new fields never added)": (
            "migration.migrate_element", _builtin("pojo"),
            (_pojo.PojoSerializerSnapshot, "_as_current", _old_class_object_kept)),
        "a registered subclass's object of the old release rebuilt as the POJO's own class": (
            "migration.migrate_element", _builtin("pojo_with_subclasses"),
            (_pojo.PojoSerializerSnapshot, "_as_current", _old_subclass_object_as_the_pojo)),
        "a modified UTF-8 reader taking standard UTF-8's 4-byte sequences (Java's readUTF refuses them)": (
            "snapshot.corrupt_bytes", _builtin("nested_row"),
            (_io, "decode_modified_utf8", _modified_utf8_taking_four_byte_sequences(_io.decode_modified_utf8))),
        "a map's duplicate sharing its stateful key serializer when its value serializer is stateless": (
            "roundtrip.concurrent", _builtin("map_of_readings"), (MapSerializer, "duplicate", _map_duplicate_sharing_its_key)),
        "DataInputView.unread refusing to step back to a record's first byte": (
            "roundtrip.copy_serialized", _builtin("counter"), (DataInputView, "unread", _unread_short_of_the_start)),
        "a snapshot read under an earlier identity written under it in Flink's dialect": (
            "snapshot.flink_dialect", _builtin("avro"),
            (_snapshot, "_read_versioned_snapshot", _earlier_identity_kept_for_flink(_snapshot._read_versioned_snapshot))),
        "a snapshot read under a Java alias written back under its class's own Java name": (
            "snapshot.flink_dialect", _builtin("list"),
            (_snapshot, "_read_versioned_snapshot", _java_alias_forgotten(_snapshot._read_versioned_snapshot))),
        "a tuple's byte migration copying its fields as they are (their migrations never run)": (
            "migration.migrate_state", _builtin("tuple_of_row"),
            (TupleSerializer, "byte_migration", _tuple_fields_copied_as_they_are(TupleSerializer.byte_migration))),
        "a tuple snapshot's migrate_element writing nothing in FLIP-527's writing form": (
            "migration.migrate_state", _builtin("tuple_of_row"),
            (TupleSerializerSnapshot, "migrate_element", _tuple_migration_writing_nothing(TupleSerializerSnapshot.migrate_element))),
        "a simple snapshot of version 2 (Flink 1.7's) read without the class name it carries": (
            "versioning.upgrade_snapshot", _builtin("string"),
            (SimpleTypeSerializerSnapshot, "read_snapshot", _simple_snapshot_v2_without_its_class_name)),
        "an Avro serializer generating code for a schema with logical types (fastavro converts them)": (
            "roundtrip.bit_exact", _builtin("avro_logical"), (AvroSerializer, "_gen_declines", _avro_never_declining_generation)),
        "a Nullable's place lost from incompatibility reasons (they no longer say where)": (
            "migration.verdict", _builtin("nullable"), (NullableSerializerSnapshot, "nested_labels", _nullable_label_lost)),
        "a nested snapshot read from bytes allowed to unpickle without the caller's opt-in": (
            "snapshot.untrusted_form", _builtin("int"),
            (_snapshot, "_read_versioned_snapshot", _nested_reads_allowing_pickle(_snapshot._read_versioned_snapshot))),
        "the codecs switch not reaching serializers already built (they keep their generated code)": (
            "roundtrip.generated_codecs", _builtin("tuple_of_row"),
            (_codegen, "set_generated_codecs", _switch_reaching_new_serializers_only(_codegen))),
        "reference.snapshot_aliases() not listing the Java alias of the list's snapshot (Flink's ArrayListSerializerSnapshot)": (
            "snapshot.flink_dialect", _builtin("list"),
            (snapshot_checks, "snapshot_aliases", _aliases_without(snapshot_checks.snapshot_aliases,
                                                                   "org.apache.flink.runtime.state.ArrayListSerializerSnapshot"))),
        "an enum serializer saying its members are mutable (is_immutable_type False)": (
            "roundtrip.api_valid", _builtin("enum"), (EnumSerializer, "is_immutable_type", property(lambda self: False))),
        "a row's migration taking the prior row's first field for absent": (
            "migration.migrate_state", _builtin("tuple_of_row"),
            (RowSerializerSnapshot, "_plan", _row_plan_without_first_field(RowSerializerSnapshot._plan))),
    }


BUILTIN_BREAKS.update(_breaks())
