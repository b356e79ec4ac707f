"""Flink's dialect: Java class names in the registry, ``register_type(cls, java_name)``, and
snapshots written with ``dialect="flink"`` (Java names and Flink's layouts and versions)."""

from __future__ import annotations

import dataclasses
import enum
import struct

import pytest

import reference
from reference import (
    DataInputView,
    DataOutputView,
    NoFlinkFormError,
    SnapshotFormatError,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference._snapshot import registered_snapshot_class
from reference.serializers import (
    AvroSerializer,
    EnumSerializer,
    IntSerializer,
    IntSerializerSnapshot,
    ListSerializer,
    ListSerializerSnapshot,
    LongSerializer,
    NullableSerializer,
    PojoSerializer,
    RowSerializer,
    StringSerializer,
    TupleSerializer,
)

BASE = "org.apache.flink.api.common.typeutils.base."
RUNTIME = "org.apache.flink.api.java.typeutils.runtime."


def utf(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack(">H", len(data)) + data


def framed(name: str, version: int, body: bytes = b"") -> bytes:
    return struct.pack(">i", 2) + utf(name) + struct.pack(">i", version) + body


@pytest.mark.parametrize(
    ("java_name", "cls"),
    [
        (f"{BASE}IntSerializer$IntSerializerSnapshot", IntSerializerSnapshot),
        (f"{BASE}ListSerializerSnapshot", ListSerializerSnapshot),
        ("org.apache.flink.runtime.state.ArrayListSerializerSnapshot", ListSerializerSnapshot),
        (f"{RUNTIME}PojoSerializerSnapshot", reference.serializers.PojoSerializerSnapshot),
    ],
)
def test_java_names_resolve_through_the_registry(java_name: str, cls: type) -> None:
    assert registered_snapshot_class(java_name) is cls, f"got {registered_snapshot_class(java_name)}, should be {cls}"


def test_the_default_dialect_is_unchanged_and_flink_writes_java_names() -> None:
    snapshot = IntSerializer().snapshot_configuration()
    default = snapshot_to_bytes(snapshot)
    want = framed("reference.serializers:IntSerializerSnapshot", 3)
    assert default == want, f"got {default.hex()}, should be {want.hex()} (the default dialect)"
    flink = snapshot_to_bytes(snapshot, dialect="flink")
    want = framed(f"{BASE}IntSerializer$IntSerializerSnapshot", 3)
    assert flink == want, f"got {flink.hex()}, should be {want.hex()}"
    assert type(snapshot_from_bytes(flink)) is IntSerializerSnapshot, "the Java name should read back"
    with pytest.raises(ValueError, match="dialect"):
        snapshot_to_bytes(snapshot, dialect="java")


def test_write_versioned_snapshot_takes_the_dialect() -> None:
    out = DataOutputView()
    reference.write_versioned_snapshot(out, ListSerializer(IntSerializer()).snapshot_configuration(), dialect="flink")
    data = out.getvalue()
    assert data.startswith(utf(f"{BASE}ListSerializerSnapshot")), f"got {data[:60]!r}, should start with the Java name"
    assert utf(f"{BASE}IntSerializer$IntSerializerSnapshot") in data, "the nested snapshot should be in the dialect too"
    back = reference.read_versioned_snapshot(DataInputView(data))
    assert back.restore_serializer() == ListSerializer(IntSerializer()), f"got {back.restore_serializer()!r}"


def test_simple_snapshot_versions_as_flink_treats_them() -> None:
    name = f"{BASE}IntSerializer$IntSerializerSnapshot"
    # version 2 carried the serializer class name, read and dropped
    old = snapshot_from_bytes(framed(name, 2, utf("org.apache.flink.api.common.typeutils.base.IntSerializer")))
    assert type(old) is IntSerializerSnapshot, f"got {type(old)}, should be IntSerializerSnapshot"
    with pytest.raises(SnapshotFormatError, match="version 1"):
        snapshot_from_bytes(framed(name, 1))


def test_tuple_and_row_layouts_in_the_flink_dialect() -> None:
    tuple_snapshot = TupleSerializer(IntSerializer(), StringSerializer()).snapshot_configuration()
    flink = snapshot_to_bytes(tuple_snapshot, dialect="flink")
    # composite framing: magic, outer version 2, the tuple class
    outer = struct.pack(">ii", 911108, 2) + utf("org.apache.flink.api.java.tuple.Tuple2")
    assert outer in flink, f"got {flink.hex()}, should hold {outer.hex()}"
    assert struct.pack(">ii", 911108, 1) + struct.pack(">i", 1333245) in snapshot_to_bytes(tuple_snapshot), (
        "the default dialect should keep outer version 1 without a class"
    )
    row = RowSerializer([("a", IntSerializer(), True)]).snapshot_configuration()
    flink = snapshot_to_bytes(row, dialect="flink")
    outer = struct.pack(">ii", 911108, 4) + b"\x01" + struct.pack(">i", 1333245)
    assert outer in flink, f"got {flink.hex()}, should hold outer version 4 with only the row-kind flag"
    back = snapshot_from_bytes(flink).restore_serializer()
    assert back == RowSerializer([("f0", IntSerializer(), True)]), f"got {back!r}, should name the field f0 as Flink does"


class Mood(enum.Enum):
    SAD = 0
    HAPPY = 1


class MoodLater(enum.Enum):
    SAD = 0
    HAPPY = 1
    CALM = 2


def test_register_type_with_a_java_name_rebinds_and_enum_snapshots_use_it() -> None:
    reference.register_type(Mood, "com.example.Mood")
    snapshot = EnumSerializer(Mood).snapshot_configuration()
    flink = snapshot_to_bytes(snapshot, dialect="flink")
    assert utf("com.example.Mood") in flink, f"got {flink.hex()}, should name the Java class"
    assert utf("com.example.Mood") not in snapshot_to_bytes(snapshot), "the default dialect keeps module:qualname"
    assert reference.lookup_type("com.example.Mood") is Mood, "the Java name should resolve to the class"
    reference.register_type(MoodLater, "com.example.Mood")  # the class after an upgrade
    assert reference.lookup_type("com.example.Mood") is MoodLater, "registering again should rebind the name"
    restored = snapshot_from_bytes(flink)
    result = reference.resolve_compatibility(EnumSerializer(MoodLater), restored)
    assert result.is_compatible_with_reconfigured_serializer(), f"got {result!r}, should be reconfigured (a symbol was added)"
    with pytest.raises(ValueError, match="Java class name"):
        reference.register_type(Mood, "not:java")


@dataclasses.dataclass
class Shape:
    sides: int = 0


@dataclasses.dataclass
class Square(Shape):
    side: float = 0.0


def test_pojo_snapshot_in_the_flink_dialect_round_trips() -> None:
    reference.register_type(Shape, "com.example.Shape")
    reference.register_type(Square, "com.example.Square")
    serializer = PojoSerializer(Shape, registered_subclasses=[Square])
    snapshot = serializer.snapshot_configuration()
    flink = snapshot_to_bytes(snapshot, dialect="flink")
    # version 2, class name, then the optional map of fields with its header
    head = framed(f"{RUNTIME}PojoSerializerSnapshot", 2, utf("com.example.Shape") + struct.pack(">q", 0x4F2C69A3D70))
    assert flink.startswith(head), f"got {flink[:len(head)].hex()}, should be {head.hex()}"
    back = snapshot_from_bytes(flink)
    assert [n for n, _ in back.registered_subclasses] == ["com.example.Square"], f"got {back.registered_subclasses}"
    assert snapshot_to_bytes(back, dialect="flink") == flink, "the Flink form should re-serialize byte-identical"
    assert back.restore_serializer() == serializer, f"got {back.restore_serializer()!r}, should be {serializer!r}"
    again = snapshot_from_bytes(snapshot_to_bytes(snapshot)).restore_serializer()
    assert again == serializer, "the default dialect should carry the subclass registry too"
    value = Square(4, 2.5)
    assert again.from_bytes(serializer.to_bytes(value)) == value, "a registered subclass should round trip"


def test_nullable_and_avro_in_the_flink_dialect() -> None:
    nullable = snapshot_to_bytes(NullableSerializer(LongSerializer(), padded=True).snapshot_configuration(), dialect="flink")
    assert nullable.startswith(framed(f"{RUNTIME}NullableSerializer$NullableSerializerSnapshot", 3)), f"got {nullable[:90]!r}"
    avro = snapshot_to_bytes(AvroSerializer("int").snapshot_configuration(), dialect="flink")
    want = framed("org.apache.flink.formats.avro.typeutils.AvroSerializerSnapshot", 3)
    assert avro.startswith(want), f"got {avro.hex()}, should start with {want.hex()}"
    with pytest.raises(NoFlinkFormError, match="binary"):  # a SnapshotFormatError: "has none", not "broken"
        snapshot_to_bytes(AvroSerializer("int", encoding="binary").snapshot_configuration(), dialect="flink")
    assert issubclass(NoFlinkFormError, SnapshotFormatError), "should be a SnapshotFormatError (callers catching it)"


def test_rows_in_flinks_form_are_judged_by_position() -> None:
    old = RowSerializer([("a", IntSerializer(), True), ("b", StringSerializer(), True)], supports_row_kind=False)
    flink_form = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration(), dialect="flink"))
    renamed = RowSerializer([("id", IntSerializer(), True), ("name", StringSerializer(), True)])
    result = reference.resolve_compatibility(renamed, flink_form)
    # by position the fields are the same; only the row-kind flag changed: migration
    assert result.is_compatible_after_migration(), f"got {result!r}, should be after migration (row kind added)"
    out = DataOutputView()
    renamed.snapshot_configuration().migrate_state(
        flink_form.restore_serializer(), renamed, DataInputView(old.to_bytes((7, "x"))), out
    )
    back = renamed.from_bytes(out.getvalue())
    assert back == (7, "x"), f"got {back!r}, should be (7, 'x'): fields matched by position"
    wider = RowSerializer([("a", IntSerializer(), True), ("b", StringSerializer(), True), ("c", IntSerializer(), True)])
    result = reference.resolve_compatibility(wider, flink_form)
    assert result.is_incompatible() and "position" in (result.reason or ""), (
        f"got {result!r}, should be incompatible: Flink 2.3 matches fields by position"
    )
    own_form = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    result = reference.resolve_compatibility(wider, own_form)
    assert result.is_compatible_after_migration(), f"got {result!r}, should be FLIP-527's after migration by name"


@dataclasses.dataclass
class Triangle(Shape):
    base: float = 0.0


def test_a_flink_pojo_snapshot_that_ends_with_a_subclass_met_by_name_reads_back() -> None:
    # The snapshot of the subclass met last is the last frame: it ends the input exactly.
    reference.register_type(Shape, "com.example.Shape")
    reference.register_type(Triangle, "com.example.Triangle")
    serializer = PojoSerializer(Shape)
    serializer.to_bytes(Triangle(3, 1.5))  # met by name: cached as a non-registered subclass
    flink = snapshot_to_bytes(serializer.snapshot_configuration(), dialect="flink")
    back = snapshot_from_bytes(flink)
    names = [n for n, _ in back.non_registered_subclasses]
    assert names == ["com.example.Triangle"], f"got {names}, should list the subclass met by name"
    assert snapshot_to_bytes(back, dialect="flink") == flink, "the Flink form should re-serialize byte-identical"


def test_a_snapshot_read_under_an_earlier_identity_is_written_under_flinks_name() -> None:
    """Release 0.1.0 wrote the Avro snapshot as reference.serializers._avro:AvroSerializerSnapshot.
    Read under that name and written in Flink's dialect, it names Flink's AvroSerializerSnapshot
    (the class a Flink job loads), and in the reference dialect the identity of today."""
    serializer = reference.serializers.AvroSerializer({"type": "record", "name": "R", "fields": [
        {"name": "a", "type": "long"}]})
    today = snapshot_to_bytes(serializer.snapshot_configuration())
    identity = "reference.serializers:AvroSerializerSnapshot"
    assert today.startswith(struct.pack(">i", 2) + utf(identity)), f"got {today[:60]!r}"
    earlier = struct.pack(">i", 2) + utf("reference.serializers._avro:AvroSerializerSnapshot") + today[6 + len(identity):]
    snapshot = snapshot_from_bytes(earlier)
    flink = snapshot_to_bytes(snapshot, dialect="flink")
    java = "org.apache.flink.formats.avro.typeutils.AvroSerializerSnapshot"
    assert flink.startswith(struct.pack(">i", 2) + utf(java)), f"got {flink[:80]!r}, should name {java}"
    again = snapshot_to_bytes(snapshot)
    assert again == today, f"got {again[:80]!r}, should be today's form {today[:80]!r}"


def test_a_snapshot_read_under_a_java_alias_is_written_back_under_it() -> None:
    """Flink's heap list state names its serializer's snapshot ArrayListSerializerSnapshot (the
    same layout as ListSerializerSnapshot): read under that name, it is written back under it."""
    flink = snapshot_to_bytes(ListSerializer(IntSerializer()).snapshot_configuration(), dialect="flink")
    name = f"{BASE}ListSerializerSnapshot"
    assert flink.startswith(struct.pack(">i", 2) + utf(name)), f"got {flink[:80]!r}"
    alias = struct.pack(">i", 2) + utf("org.apache.flink.runtime.state.ArrayListSerializerSnapshot") + flink[6 + len(name):]
    again = snapshot_to_bytes(snapshot_from_bytes(alias), dialect="flink")
    assert again == alias, f"got {again[:80]!r}, should be the bytes read {alias[:80]!r}"


def test_snapshot_aliases_say_what_each_alias_stands_for() -> None:
    aliases = reference.snapshot_aliases()
    got = aliases.get("org.apache.flink.runtime.state.ArrayListSerializerSnapshot")
    want = (f"{BASE}ListSerializerSnapshot", "flink")
    assert got == want, f"got {got}, should be {want} (a Java alias, written back as read in Flink's dialect)"
    got = aliases.get("reference.serializers._avro:AvroSerializerSnapshot")
    want = ("reference.serializers:AvroSerializerSnapshot", "reference")
    assert got == want, f"got {got}, should be {want} (release 0.1.0's identity of the Avro snapshot)"
    own = {f"{BASE}ListSerializerSnapshot", "reference.serializers:ListSerializerSnapshot"}
    assert not own & set(aliases), f"got {sorted(own & set(aliases))} among the aliases, should be a class's own names only"
