"""RowDataSerializer without Flink: what it refuses to write, what it refuses to read (corrupt
BinaryRowData), and records whose bytes Flink 2.3 wrote (recorded from RowDataCheck.java, the
generator tests/flink/test_flink_rowdata.py runs against the real jars)."""

from __future__ import annotations

import struct
from decimal import Decimal

import pytest

from reference import (
    DataInputView,
    DataOutputView,
    SerializationError,
    SnapshotFormatError,
    read_versioned_snapshot,
    snapshot_from_bytes,
    snapshot_to_bytes,
    values_equal,
    write_versioned_snapshot,
)
from reference import sqltypes as sql
from reference._javaser import MAX_DEPTH, graph_difference, read_java_object, write_java_object
from reference.serializers import Row, RowDataSerializer, RowKind, TimestampData

EVENT = sql.RowType([("a", sql.IntType()), ("b", sql.VarCharType()), ("c", sql.DecimalType(20, 2))])
#: Flink 2.3's RowDataSerializer on GenericRowData.of(5, "abc", 123.45 as DECIMAL(20, 2)).
EVENT_BYTES = bytes.fromhex(
    "00000030000000000000000005000000000000006162630000000083020000002000000030390000000000000000000000000000")
NESTED = sql.RowType([("a", sql.IntType(False)), ("b", sql.VarCharType()), ("c", sql.ArrayType(sql.VarCharType()))])
#: Flink 2.3: an UPDATE_BEFORE row (5, "abcdefgh", ["A", null]): an 8-byte string in the variable part.
NESTED_BYTES = bytes.fromhex(
    "0000004001000000000000000500000000000000080000002000000018000000280000006162636465666768020000000200000041"
    "000000000000810000000000000000")


@pytest.mark.parametrize(("row_type", "value", "data"), [
    (EVENT, (5, "abc", Decimal("123.45")), EVENT_BYTES),
    (NESTED, Row((5, "abcdefgh", ["A", None]), RowKind.UPDATE_BEFORE), NESTED_BYTES),
])
def test_flink_records_read_and_write(row_type, value, data):
    serializer = RowDataSerializer(row_type)
    assert serializer.to_bytes(value) == data
    assert values_equal(serializer.from_bytes(data), value)


@pytest.mark.parametrize(("value", "message"), [
    ((None, "x", Decimal("1.00")), None),
    ((1, "x", Decimal("1.0")), "scale 2"),
    ((1, "x", Decimal("-0.00")), "negative zero"),
    ((1, "x\ud800", Decimal("1.00")), "lone surrogates"),
    ((2 ** 31, "x", Decimal("1.00")), "32 bits"),
    ((True, "x", Decimal("1.00")), "32 bits"),
    ((1, b"x", Decimal("1.00")), "a str"),
    ((1, "x", Decimal("1" * 19 + ".00")), "at most 20 digits"),
    ((1, "x"), "3 values"),
])
def test_values_outside_the_type_are_refused(value, message):
    serializer = RowDataSerializer(EVENT)
    if message is None:  # a nullable field takes None
        assert values_equal(serializer.from_bytes(serializer.to_bytes(value)), value)
        return
    with pytest.raises(SerializationError, match=message):
        serializer.to_bytes(value)


def test_not_null_and_timestamp_precision_are_enforced():
    serializer = RowDataSerializer(sql.RowType([("a", sql.IntType(False)), ("t", sql.TimestampType(3))]))
    with pytest.raises(SerializationError, match="NOT NULL"):
        serializer.to_bytes((None, None))
    with pytest.raises(SerializationError, match="without nanoseconds"):
        serializer.to_bytes((1, TimestampData(5, 1)))


def _patched(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new):]


@pytest.mark.parametrize(("row_type", "data", "message"), [
    # the slot of "abc" (row offset 16, record offset 20) claims an inline length of 8
    (EVENT, _patched(EVENT_BYTES, 20 + 7, b"\x88"), "inline string of 8 bytes"),
    # the decimal's offset points past the row
    (EVENT, _patched(EVENT_BYTES, 28 + 4, struct.pack("<I", 0x40)), "outside"),
    (EVENT, _patched(EVENT_BYTES, 4, b"\x09"), "row kind byte 9"),
    (EVENT, struct.pack(">i", 16) + EVENT_BYTES[4:20], "32 needed"),
    (EVENT, struct.pack(">i", 1000) + EVENT_BYTES[4:], "corrupt"),
    # field "a" (NOT NULL) marked null
    (NESTED, _patched(NESTED_BYTES, 5, b"\x01"), "NOT NULL field is marked null"),
    # the array claims 2**30 elements
    (NESTED, _patched(NESTED_BYTES, 4 + 0x28, struct.pack("<i", 1 << 30)), "array of 1073741824 elements"),
])
def test_corrupt_records_are_refused(row_type, data, message):
    with pytest.raises(SerializationError, match=message):
        RowDataSerializer(row_type).from_bytes(data)


def test_reused_writer_bytes_read_the_same():
    # a Flink writer reused across records may leave an older record's bytes after a narrower value
    data = _patched(EVENT_BYTES, 4 + 8 + 4, b"\xde\xad\xbe\xef")
    assert values_equal(RowDataSerializer(EVENT).from_bytes(data), (5, "abc", Decimal("123.45")))
    assert RowDataSerializer(EVENT).to_bytes((5, "abc", Decimal("123.45"))) == EVENT_BYTES


def test_java_stream_reader_is_bounded_and_refuses_what_it_does_not_model():
    snapshot = RowDataSerializer(EVENT).snapshot_configuration()
    out = DataOutputView()
    snapshot.write_snapshot(out)
    data = out.getvalue()
    start = data.index(b"\xac\xed\x00\x05")
    obj, end = read_java_object(data, start)
    assert write_java_object(obj) == data[start:end]
    with pytest.raises(SnapshotFormatError, match="outside the subset"):
        read_java_object(b"\xac\xed\x00\x05\x7b")  # TC_EXCEPTION
    int_array = b"\x75\x72\x00\x02[I" + bytes(8) + b"\x02\x00\x00\x78\x70"  # TC_ARRAY of class [I
    with pytest.raises(SnapshotFormatError, match="only arrays of objects"):
        read_java_object(b"\xac\xed\x00\x05" + int_array + b"\x00\x00\x00\x01\x00\x00\x00\x07")
    objects = b"\x75\x72\x00\x13[Ljava.lang.Object;" + bytes(8) + b"\x02\x00\x00\x78\x70"
    with pytest.raises(SnapshotFormatError, match="items with 1 bytes left"):
        read_java_object(b"\xac\xed\x00\x05" + objects + b"\x7f\xff\xff\xff\x70")
    not_serializable = b"\x72\x00\x01N" + bytes(8) + b"\x00\x00\x00\x78\x70"
    with pytest.raises(SnapshotFormatError, match="not Serializable"):
        read_java_object(b"\xac\xed\x00\x05\x73" + not_serializable)
    with pytest.raises(SnapshotFormatError, match="not assigned"):
        read_java_object(b"\xac\xed\x00\x05\x71\x00\x7e\x00\x05")
    with pytest.raises(SnapshotFormatError, match="bytes needed"):
        read_java_object(data[start:end - 3])
    # objects nested past MAX_DEPTH: an object of class N whose field "next" is another N ...
    desc = b"\x72\x00\x01N" + bytes(8) + b"\x02\x00\x01L\x00\x04next\x74\x00\x03LN;\x78\x70"
    deep = b"\xac\xed\x00\x05\x73" + desc + b"\x73\x71\x00\x7e\x00\x00" * (MAX_DEPTH + 5)
    with pytest.raises(SnapshotFormatError, match="nested deeper than"):
        read_java_object(deep)


def _flink_form(snapshot):
    out = DataOutputView()
    write_versioned_snapshot(out, snapshot, dialect="flink")
    return read_versioned_snapshot(DataInputView(out.getvalue()))


def test_snapshot_reads_back_in_both_forms():
    old = RowDataSerializer(EVENT).snapshot_configuration()
    read = snapshot_from_bytes(snapshot_to_bytes(old))
    assert read.row_type == EVENT and not read.positional
    flink = _flink_form(old)
    assert flink.positional and flink.row_type.field_names == ["f0", "f1", "f2"]
    assert flink.row_type.field_types == EVENT.field_types
    for snapshot in (read, flink):
        assert snapshot.resolve_schema_compatibility(old).is_compatible_as_is()


ADDRESS = sql.RowType([("street", sql.VarCharType()), ("zip", sql.IntType())])
USER = sql.RowType([("id", sql.BigIntType(False)), ("address", ADDRESS), ("tags", sql.ArrayType(ADDRESS))])


@pytest.mark.parametrize(("new", "verdict", "detail"), [
    (sql.RowType([*USER.fields, ("email", sql.VarCharType())]), "after", ["email"]),
    (sql.RowType([USER.fields[1], USER.fields[0], USER.fields[2]]), "after", ["address", "id"]),
    (sql.RowType([USER.fields[0], ("address", sql.RowType([("zip", sql.IntType()), ("street", sql.VarCharType()),
                                                        ("city", sql.VarCharType())])), USER.fields[2]]),
     "after", ["address.city", "address.street", "address.zip"]),
    (sql.RowType([("id", sql.BigIntType(True)), *USER.fields[1:]]), "as is", None),
    (sql.RowType([*USER.fields, ("email", sql.VarCharType(nullable=False))]), "incompatible", "added as NOT NULL"),
    (sql.RowType(USER.fields[:2]), "incompatible", "'tags' was removed"),
    (sql.RowType([("id", sql.IntType(False)), *USER.fields[1:]]), "incompatible", "changed its type"),
    (sql.RowType([*USER.fields[:2], ("tags", sql.ArrayType(sql.RowType([*ADDRESS.fields, ("x", sql.IntType())])))]),
     "incompatible", "inside an array"),
    (sql.RowType([USER.fields[0], ("address", sql.RowType([("street", sql.VarCharType(nullable=False)),
                                                        ("zip", sql.IntType())])), USER.fields[2]]),
     "incompatible", "'address.street' changed from nullable to NOT NULL"),
])
def test_flip_527_over_rowdata(new, verdict, detail):
    old_serializer, new_serializer = RowDataSerializer(USER), RowDataSerializer(new)
    result = new_serializer.snapshot_configuration().resolve_schema_compatibility(
        old_serializer.snapshot_configuration())
    if verdict == "incompatible":
        assert result.is_incompatible() and detail in result.reason, result
        return
    if verdict == "as is":
        assert result.is_compatible_as_is(), result
        return
    assert result.is_compatible_after_migration() and list(result.row_paths) == detail, result
    old_value = Row((7, ("Main St", 12345), [("a", 1), None]), RowKind.UPDATE_AFTER)
    migrated = new_serializer.snapshot_configuration().migrate_element(old_serializer, new_serializer, old_value)
    by_name = dict(zip(new.field_names, migrated, strict=True))
    assert migrated.kind is RowKind.UPDATE_AFTER
    assert by_name["id"] == 7 and by_name["tags"] == [("a", 1), None]
    if "address" in by_name:
        address = dict(zip(new.field_types[new.field_names.index("address")].field_names, by_name["address"],
                           strict=True))
        assert address["street"] == "Main St" and address["zip"] == 12345 and address.get("city") is None
    assert by_name.get("email") is None
    assert new_serializer.from_bytes(new_serializer.to_bytes(migrated)) == migrated


def test_flink_form_is_judged_as_flink_2_3_and_by_name_once_named():
    user = sql.RowType([*USER.fields[:2], ("tags", sql.ArrayType(sql.VarCharType()))])
    old = _flink_form(RowDataSerializer(user).snapshot_configuration())
    # Flink 2.3: any change of the field types is incompatible, even relaxing NOT NULL
    for changed in (sql.RowType([*user.fields, ("email", sql.VarCharType())]),
                    sql.RowType([("id", sql.BigIntType()), *user.fields[1:]])):
        result = RowDataSerializer(changed).snapshot_configuration().resolve_schema_compatibility(old)
        assert result.is_incompatible() and "Flink 2.3" in result.reason, result
    # named: top-level fields f0..fN, nested rows by the names Flink's form keeps
    named = old.named()
    assert not named.positional and named.row_type.field_names == ["f0", "f1", "f2"]
    evolved = RowDataSerializer(sql.RowType([("f0", user.fields[0][1]),
                                             ("f1", sql.RowType([*ADDRESS.fields, ("city", sql.VarCharType())])),
                                             ("f2", user.fields[2][1])]))
    result = evolved.snapshot_configuration().resolve_schema_compatibility(named)
    assert result.is_compatible_after_migration() and list(result.row_paths) == ["f1.city"], result
    migrated = evolved.snapshot_configuration().migrate_element(named.restore_serializer(), evolved,
                                                                (7, ("Main St", 1), []))
    assert migrated == (7, ("Main St", 1, None), [])


COLLECTIONS = sql.RowType([
    ("rows", sql.ArrayType(sql.RowType([("x", sql.DecimalType(12, 2)), ("y", sql.ArrayType(sql.IntType()))]))),
    ("maps", sql.MultisetType(sql.MapType(sql.VarCharType(), sql.RowType([("t", sql.TimestampType(3))])))),
])


def test_collections_of_rows_arrays_and_maps_snapshot_in_flink_s_form():
    # Flink 2.3's bytes are checked in tests/flink/test_flink_rowdata.py; here: the element
    # serializers' Java graphs (arrays, a class, lambdas, shared types) read back, and a
    # changed byte inside one is refused rather than misread
    out = DataOutputView()
    write_versioned_snapshot(out, RowDataSerializer(COLLECTIONS).snapshot_configuration(), dialect="flink")
    data = out.getvalue()
    assert b"java.lang.invoke.SerializedLambda" in data and b"\x76\x72\x00\x25org.apache.flink.table.data.ArrayData" in data
    read = read_versioned_snapshot(DataInputView(data))
    assert read.row_type.field_types == COLLECTIONS.field_types and read.positional
    at = data.index(b"lambda$createElementGetter$95d74a6c$1")
    corrupt = data[:at] + b"L" + data[at + 1:]
    with pytest.raises(SnapshotFormatError, match="not those Flink's RowDataSerializer derives"):
        read_versioned_snapshot(DataInputView(corrupt))


def test_java_graphs_compare_as_the_values_they_unfold_to():
    from reference.serializers._rowdata import _java_serializer, _java_type

    row = COLLECTIONS.fields[0][1].children[0]
    built = _java_serializer(row, _java_type(row))
    data = write_java_object(built)
    read, end = read_java_object(data)
    assert end == len(data) and graph_difference(read, built) is None
    # the same types as copies where the stream shares them: the same value
    unshared = _java_serializer(row, _java_type(row))
    types = unshared.values[unshared.desc.name]["types"]
    types.items = [_java_type(t) for _, t, _ in row.fields]
    assert write_java_object(unshared) != data and graph_difference(unshared, built) is None
    other = _java_serializer(sql.RowType([("x", sql.DecimalType(12, 3)), ("y", sql.ArrayType(sql.IntType()))]),
                             _java_type(row))
    assert "precision" in (graph_difference(read, other) or "") or "scale" in (graph_difference(read, other) or "")
