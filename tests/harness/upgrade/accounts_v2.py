"""Release 2.0.0 of the AccountKey serializer: the snapshot gets version 2, which records the
region's maximum length (version 1 reads as the old limit), and the key's bytes stay as they
were. ``BUG`` (set by the tests before import) plants one realistic mistake of a key's release;
"none" is the correct release (tests copy this file to ``accounts.py``):

- ``compact_numbers``: numbers are written as a marker byte and a varint ("keys 6 bytes
  smaller"), and records without the marker are still read as release 1 wrote them: every value
  reads and round-trips, but a key written by release 1 is written differently now;
- ``number_became_text``: the account number is written as text (readable in RocksDB's tools),
  declared as a change that needs migration, which Flink refuses for a key.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    SerializationError,
    TypeSerializer,
    TypeSerializerSnapshot,
)

BUG = "none"
NUMBER_FORMAT = "text" if BUG == "number_became_text" else "long"
MARKER = 0xFF  # never the first byte of release 1's records (a region is shorter than 65,280 bytes)


@dataclass(frozen=True)
class AccountKey:
    region: str
    number: int


def _write_varint(target: DataOutputView, value: int) -> None:
    value = (value << 1) ^ (value >> 63)  # zigzag
    while value >= 0x80:
        target.write_byte((value & 0x7F) | 0x80)
        value >>= 7
    target.write_byte(value)


def _read_varint(source: DataInputView) -> int:
    value, shift = 0, 0
    while True:
        byte = source.read_unsigned_byte()
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            break
    return (value >> 1) ^ -(value & 1)


class AccountKeySerializer(TypeSerializer[AccountKey]):
    def __init__(self, max_region: int = 64, number_format: str = NUMBER_FORMAT) -> None:
        self.max_region = max_region
        self.number_format = number_format

    def serialize(self, value: AccountKey, target: DataOutputView) -> None:
        if len(value.region) > self.max_region:
            raise SerializationError(f"region {value.region[:20]!r}... is longer than {self.max_region} characters")
        if BUG == "compact_numbers":
            target.write_byte(MARKER)
            target.write_utf(value.region)
            _write_varint(target, value.number)
        elif self.number_format == "text":
            target.write_utf(value.region)
            target.write_utf(str(value.number))
        else:
            target.write_utf(value.region)
            target.write_long(value.number)

    def deserialize(self, source: DataInputView) -> AccountKey:
        if BUG == "compact_numbers" and source.peek(1) == bytes([MARKER]):
            source.read_byte()
            return AccountKey(source.read_utf(), _read_varint(source))
        if self.number_format == "text":
            return AccountKey(source.read_utf(), int(source.read_utf()))
        return AccountKey(source.read_utf(), source.read_long())

    def copy(self, value: AccountKey) -> AccountKey:
        return value

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        self.serialize(self.deserialize(source), target)

    def duplicate(self) -> AccountKeySerializer:
        return self

    def create_instance(self) -> AccountKey:
        return AccountKey("", 0)

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return -1

    def snapshot_configuration(self) -> AccountKeySnapshot:
        return AccountKeySnapshot(self.max_region, self.number_format)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AccountKeySerializer) and other.max_region == self.max_region
                and other.number_format == self.number_format)

    def __hash__(self) -> int:
        return hash((self.max_region, self.number_format))


class AccountKeySnapshot(TypeSerializerSnapshot[AccountKey]):
    def __init__(self, max_region: int = 64, number_format: str = NUMBER_FORMAT) -> None:
        self.max_region = max_region
        self.number_format = number_format

    def get_current_version(self) -> int:
        return 2

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(self.max_region)
        target.write_utf(self.number_format)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version >= 2:
            self.max_region, self.number_format = source.read_int(), source.read_utf()
        else:
            self.max_region, self.number_format = 64, "long"

    def restore_serializer(self) -> AccountKeySerializer:
        return AccountKeySerializer(self.max_region, self.number_format)

    def resolve_schema_compatibility(
            self, old_snapshot: TypeSerializerSnapshot[AccountKey]) -> SchemaCompatibility[AccountKey]:
        if not isinstance(old_snapshot, AccountKeySnapshot):
            return SchemaCompatibility.incompatible("not an AccountKey snapshot")
        if old_snapshot.number_format != self.number_format:
            return SchemaCompatibility.compatible_after_migration()
        return SchemaCompatibility.compatible_as_is()
