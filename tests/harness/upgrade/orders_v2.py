"""Release 2.0.0 of the Order serializer: ``currency`` is added, the snapshot gets version 2
(field names and types) and still reads version 1. ``BUG`` (set by the tests before import)
plants one realistic upgrade mistake; "none" is the correct release (tests copy this file to
``orders.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    TypeSerializer,
    TypeSerializerSnapshot,
)

BUG = "none"


@dataclass
class Order:
    id: int
    amount: int
    currency: str | None = None


FIELDS = ("amount", "id", "currency") if BUG == "migrates_by_position" else ("id", "amount", "currency")
TYPES = {"id": "long", "amount": "long", "currency": "string?"}


class OrderSerializer(TypeSerializer[Order]):
    def __init__(self, fields: tuple[str, ...] = FIELDS) -> None:
        self.fields = tuple(fields)

    def serialize(self, value: Order, target: DataOutputView) -> None:
        for name in self.fields:
            field = getattr(value, name)
            if name == "currency":
                target.write_boolean(field is not None)
                if field is not None:
                    target.write_utf(field)
            elif name == "amount" and BUG == "format_changed_without_version":
                target.write(field.to_bytes(8, "little", signed=True))  # "faster" on x86
            else:
                target.write_long(field)

    def deserialize(self, source: DataInputView) -> Order:
        values = {}
        for name in self.fields:
            if name == "currency":
                values[name] = source.read_utf() if source.read_boolean() else None
            elif name == "amount" and BUG == "format_changed_without_version":
                values[name] = int.from_bytes(source.read_fully(8), "little", signed=True)
            else:
                values[name] = source.read_long()
        return Order(**values)

    def copy(self, value: Order) -> Order:
        return Order(value.id, value.amount, value.currency)

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        self.serialize(self.deserialize(source), target)

    def duplicate(self) -> OrderSerializer:
        return self

    def create_instance(self) -> Order:
        return Order(0, 0)

    @property
    def is_immutable_type(self) -> bool:
        return False

    @property
    def length(self) -> int:
        return -1

    def snapshot_configuration(self) -> OrderSnapshot:
        if BUG == "restored_snapshot_forgets_config":
            return OrderSnapshot(FIELDS)
        return OrderSnapshot(self.fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OrderSerializer) and other.fields == self.fields

    def __hash__(self) -> int:
        return hash(self.fields)


class OrderSnapshot(TypeSerializerSnapshot[Order]):
    if BUG == "snapshot_needs_argument":
        def __init__(self, fields: tuple[str, ...]) -> None:
            self.fields = tuple(fields)
    else:
        def __init__(self, fields: tuple[str, ...] = ()) -> None:
            self.fields = tuple(fields)

    def get_current_version(self) -> int:
        return 2

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_int(len(self.fields))
        for name in self.fields:
            target.write_utf(name)
            target.write_utf(TYPES[name])

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        count = source.read_int()
        if read_version == 1 and BUG != "read_snapshot_ignores_version":
            self.fields = tuple(source.read_utf() for _ in range(count))
            return
        fields = []
        for _ in range(count):
            fields.append(source.read_utf())
            source.read_utf()  # the type: implied by the name in this release
        self.fields = tuple(fields)

    def restore_serializer(self) -> OrderSerializer:
        if BUG == "restore_ignores_config":
            return OrderSerializer()
        return OrderSerializer(self.fields)

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Order]) -> SchemaCompatibility[Order]:
        if not isinstance(old_snapshot, OrderSnapshot):
            return SchemaCompatibility.incompatible("not an Order snapshot")
        if old_snapshot.fields == self.fields or BUG == "verdict_by_class_only":
            return SchemaCompatibility.compatible_as_is()
        if set(old_snapshot.fields) <= set(self.fields):
            return SchemaCompatibility.compatible_after_migration()
        return SchemaCompatibility.incompatible(f"fields {set(old_snapshot.fields) - set(self.fields)} were removed")

    def migrate_state(self, prior: TypeSerializer[Order], new: TypeSerializer[Order], source: DataInputView,
                      target: DataOutputView) -> None:
        if BUG == "migrates_by_position":
            target.write(source.read_fully(16))  # the old longs, in the old order
            target.write_boolean(False)
            return
        super().migrate_state(prior, new, source, target)
