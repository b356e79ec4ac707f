"""Release 1.0.0 of a user's AccountKey serializer: the key of a keyed stream (a region and an
account number), hand-written (tests copy this file to ``accounts.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    TypeSerializer,
    TypeSerializerSnapshot,
)


@dataclass(frozen=True)
class AccountKey:
    region: str
    number: int


class AccountKeySerializer(TypeSerializer[AccountKey]):
    def serialize(self, value: AccountKey, target: DataOutputView) -> None:
        target.write_utf(value.region)
        target.write_long(value.number)

    def deserialize(self, source: DataInputView) -> AccountKey:
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
        return AccountKeySnapshot()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AccountKeySerializer)

    def __hash__(self) -> int:
        return hash(AccountKeySerializer)


class AccountKeySnapshot(TypeSerializerSnapshot[AccountKey]):
    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        pass

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        pass

    def restore_serializer(self) -> AccountKeySerializer:
        return AccountKeySerializer()

    def resolve_schema_compatibility(
            self, old_snapshot: TypeSerializerSnapshot[AccountKey]) -> SchemaCompatibility[AccountKey]:
        if not isinstance(old_snapshot, AccountKeySnapshot):
            return SchemaCompatibility.incompatible("not an AccountKey snapshot")
        return SchemaCompatibility.compatible_as_is()
