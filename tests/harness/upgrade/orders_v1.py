"""Release 1.0.0 of a user's Order serializer: a hand-written TypeSerializer for a dataclass,
whose snapshot records the field list (tests copy this file to ``orders.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    TypeSerializer,
    TypeSerializerSnapshot,
)


@dataclass
class Order:
    id: int
    amount: int


FIELDS = ("id", "amount")


class OrderSerializer(TypeSerializer[Order]):
    def __init__(self, fields: tuple[str, ...] = FIELDS) -> None:
        self.fields = tuple(fields)

    def serialize(self, value: Order, target: DataOutputView) -> None:
        target.write_long(value.id)
        target.write_long(value.amount)

    def deserialize(self, source: DataInputView) -> Order:
        return Order(source.read_long(), source.read_long())

    def copy(self, value: Order) -> Order:
        return Order(value.id, value.amount)

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(16))

    def duplicate(self) -> OrderSerializer:
        return self

    def create_instance(self) -> Order:
        return Order(0, 0)

    @property
    def is_immutable_type(self) -> bool:
        return False

    @property
    def length(self) -> int:
        return 16

    def snapshot_configuration(self) -> OrderSnapshot:
        return OrderSnapshot(self.fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OrderSerializer) and other.fields == self.fields

    def __hash__(self) -> int:
        return hash(self.fields)


class OrderSnapshot(TypeSerializerSnapshot[Order]):
    def __init__(self, fields: tuple[str, ...] = ()) -> None:
        self.fields = tuple(fields)

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(len(self.fields))
        for name in self.fields:
            target.write_utf(name)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        self.fields = tuple(source.read_utf() for _ in range(source.read_int()))

    def restore_serializer(self) -> OrderSerializer:
        return OrderSerializer(self.fields)

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Order]) -> SchemaCompatibility[Order]:
        if not isinstance(old_snapshot, OrderSnapshot):
            return SchemaCompatibility.incompatible("not an Order snapshot")
        if old_snapshot.fields == self.fields:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.compatible_after_migration()
