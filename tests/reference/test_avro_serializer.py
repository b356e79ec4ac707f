"""AvroSerializer: round trips, identity, snapshots, bad schemas, corrupt bytes, composites."""

from __future__ import annotations

import copy
import json
import pickle
import struct
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    EndOfDataError,
    SerializationError,
    SnapshotFormatError,
    StateError,
    StateMigrationError,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.serializers import (
    AvroSchemaError,
    AvroSerializer,
    AvroSerializerSnapshot,
    IntSerializer,
    ListSerializer,
    MapSerializer,
    StringSerializer,
)
from reference.serializers._avro import MAX_NESTING, MAX_ZERO_WIDTH_ITEMS

USER = {
    "type": "record", "name": "User", "namespace": "com.acme",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"},
        {"name": "score", "type": "double"},
        {"name": "ratio", "type": "float"},
        {"name": "active", "type": "boolean"},
        {"name": "avatar", "type": ["null", "bytes"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "int"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
    ],
}
USER_VALUE = {
    "id": -(1 << 62), "name": "n\u00e9\U0001f600", "score": -0.0, "ratio": 1.5, "active": True,
    "avatar": b"\x00\xff", "tags": ["x", ""], "attrs": {"k": -1}, "kind": "B", "hash": b"abcd",
}
LIST = {
    "type": "record", "name": "Node",
    "fields": [{"name": "v", "type": "int"}, {"name": "next", "type": ["null", "Node"]}],
}


def bits(value: object) -> object:
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, dict):
        return ("dict", tuple((k, bits(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("list", tuple(bits(v) for v in value))
    return (type(value).__name__, value)


def chain(depth: int) -> dict:
    value = None
    for i in range(depth):
        value = {"v": i, "next": value}
    return value  # type: ignore[return-value]


# -- data ----------------------------------------------------------------------------------------
def test_record_round_trip_is_exact() -> None:
    serializer = AvroSerializer(USER)
    data = serializer.to_bytes(USER_VALUE)
    back = serializer.from_bytes(data)
    assert bits(back) == bits(USER_VALUE), f"got {back!r}, should be {USER_VALUE!r}"


def test_double_nan_payload_and_negative_zero_survive() -> None:
    serializer = AvroSerializer("double")
    for pattern in (0x7FF8000000000001, 0xFFF0000000000123, 0x8000000000000000):
        value = struct.unpack(">d", struct.pack(">Q", pattern))[0]
        back = serializer.from_bytes(serializer.to_bytes(value))
        got = struct.unpack(">Q", struct.pack(">d", back))[0]
        assert got == pattern, f"got bits {got:#x}, should be {pattern:#x}"


def test_binary_encoding_is_avro_binary_without_framing() -> None:
    serializer = AvroSerializer({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "s", "type": "string"}]}, encoding="binary")
    data = serializer.to_bytes({"a": -2, "s": "hi"})
    assert data == b"\x03\x04hi", f"got {data!r}, should be Avro's zigzag varint 03 then length 04 and 'hi'"


FLINK_ENCODED = {
    "type": "record", "name": "R", "fields": [
        {"name": "a", "type": "int"}, {"name": "l", "type": "long"}, {"name": "s", "type": "string"},
        {"name": "f", "type": "float"}, {"name": "d", "type": "double"}, {"name": "b", "type": "bytes"},
        {"name": "x", "type": {"type": "fixed", "name": "X", "size": 2}},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["P", "Q"]}},
        {"name": "u", "type": ["null", "string"]}, {"name": "t", "type": "boolean"},
        {"name": "arr", "type": {"type": "array", "items": "int"}},
        {"name": "m", "type": {"type": "map", "values": "long"}},
    ],
}


def test_default_encoding_is_flinks_data_output_encoder() -> None:
    # Flink's DataOutputEncoder: ints and longs big-endian fixed width, floats big-endian,
    # strings and bytes int length + bytes, fixed as is, enum and union indexes as ints,
    # arrays and maps one block with an unsigned varint count and a 0 byte at the end.
    value = {
        "a": -2, "l": 300, "s": "hi", "f": 1.5, "d": -2.0, "b": b"\x01", "x": b"zz", "e": "Q",
        "u": "ok", "t": True, "arr": [1, 2], "m": {"k": 7},
    }
    want = bytes.fromhex(
        "fffffffe" "000000000000012c" "00000002" "6869" "3fc00000" "c000000000000000" "00000001" "01"
        "7a7a" "00000001" "00000001" "00000002" "6f6b" "01" "02" "00000001" "00000002" "00"
        "01" "00000001" "6b" "0000000000000007" "00"
    )
    serializer = AvroSerializer(FLINK_ENCODED)
    got = serializer.to_bytes(value)
    assert got == want, f"got {got.hex()}, should be {want.hex()}"
    assert serializer.from_bytes(want) == value, f"got {serializer.from_bytes(want)!r}, should be {value!r}"
    binary = AvroSerializer(FLINK_ENCODED, encoding="binary")
    assert binary.from_bytes(binary.to_bytes(value)) == value, "the binary encoding should round-trip too"
    assert binary.to_bytes(value) != got, "the two encodings should differ"


def test_a_change_of_encoding_migrates() -> None:
    old = AvroSerializer(FLINK_ENCODED, encoding="binary")
    new = AvroSerializer(FLINK_ENCODED)
    result = resolve_compatibility(new.snapshot_configuration(), old.snapshot_configuration())
    assert result.is_compatible_after_migration(), f"got {result!r}, should be after migration"
    value = {
        "a": 1, "l": 2, "s": "s", "f": 0.5, "d": 0.25, "b": b"", "x": b"ab", "e": "P", "u": None,
        "t": False, "arr": [], "m": {},
    }
    target = DataOutputView()
    new.snapshot_configuration().migrate_state(old, new, DataInputView(old.to_bytes(value)), target)
    assert target.getvalue() == new.to_bytes(value), f"got {target.getvalue().hex()}, should be {new.to_bytes(value).hex()}"
    restored = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration())).restore_serializer()
    assert restored.encoding == "binary", f"got {restored.encoding}, should be binary (version 1 of this project)"


def test_records_back_to_back_and_copy_serialized() -> None:
    serializer = AvroSerializer(USER)
    one = serializer.to_bytes(USER_VALUE)
    source = DataInputView(one + one + b"tail")
    first = serializer.deserialize(source)
    assert bits(first) == bits(USER_VALUE), f"got {first!r}, should be {USER_VALUE!r}"
    target = DataOutputView()
    serializer.copy_serialized(source, target)
    assert target.getvalue() == one, f"got {target.getvalue()!r}, should be exactly one record {one!r}"
    assert source.read_fully(4) == b"tail", "should leave the bytes after two records unread"


def test_logical_types_round_trip() -> None:
    serializer = AvroSerializer({
        "type": "record", "name": "L", "fields": [
            {"name": "d", "type": {"type": "int", "logicalType": "date"}},
            {"name": "m", "type": {"type": "bytes", "logicalType": "decimal", "precision": 6, "scale": 2}},
        ],
    })
    value = {"d": date(2024, 2, 29), "m": Decimal("-12.34")}
    back = serializer.from_bytes(serializer.to_bytes(value))
    assert back == value and type(back["d"]) is date, f"got {back!r}, should be {value!r}"


def test_value_not_matching_the_schema_is_a_serialization_error() -> None:
    serializer = AvroSerializer(USER)
    with pytest.raises(SerializationError, match="User"):
        serializer.to_bytes({"id": "not a long"})


def test_copy_is_deep() -> None:
    serializer = AvroSerializer(USER)
    original = copy.deepcopy(USER_VALUE)
    duplicate = serializer.copy(original)
    duplicate["tags"].append("new")
    duplicate["attrs"]["k"] = 99
    assert original == USER_VALUE, f"got {original!r} after mutating the copy, should be unchanged {USER_VALUE!r}"


# -- identity ------------------------------------------------------------------------------------
def test_equality_and_hash_follow_the_canonical_schema() -> None:
    a = AvroSerializer({"type": "record", "name": "a.R", "fields": [{"name": "x", "type": {"type": "int"}}]})
    b = AvroSerializer.from_json('{"type": "record", "namespace": "a", "name": "R", "fields": [{"type": "int", "name": "x"}]}')
    c = AvroSerializer({"type": "record", "name": "a.R", "fields": [{"name": "x", "type": "long"}]})
    assert a == b and hash(a) == hash(b), f"got {a.schema_json} vs {b.schema_json}, should be equal"
    assert a != c, f"got {a!r} == {c!r}, should differ (int vs long)"
    assert a.schema == json.loads(a.schema_json), "schema should be the canonical JSON as objects"


def test_pickle_and_deepcopy_keep_the_serializer() -> None:
    serializer = AvroSerializer(LIST)
    for clone in (pickle.loads(pickle.dumps(serializer)), copy.deepcopy(serializer)):
        assert clone == serializer, f"got {clone!r}, should equal {serializer!r}"
        value = chain(3)
        assert clone.from_bytes(serializer.to_bytes(value)) == value, "a clone should read the original's bytes"


# -- snapshots -----------------------------------------------------------------------------------
def test_snapshot_round_trip_restores_the_same_schema() -> None:
    serializer = AvroSerializer(USER)
    data = snapshot_to_bytes(serializer.snapshot_configuration())
    assert b"\x80\x04" not in data and b"pickle" not in data, "the snapshot should hold no pickle"
    assert serializer.schema_json.encode() in data, "the snapshot should hold the canonical schema JSON"
    restored = snapshot_from_bytes(data)
    assert type(restored) is AvroSerializerSnapshot, f"got {type(restored).__name__}, should be AvroSerializerSnapshot"
    assert restored.restore_serializer() == serializer, "restored serializer should equal the original"
    assert snapshot_to_bytes(restored) == data, "writing the restored snapshot should give the same bytes"
    result = resolve_compatibility(serializer.snapshot_configuration(), restored)
    assert result.is_compatible_as_is(), f"got {result!r}, should be compatible as is"


def test_snapshot_holds_schemas_beyond_64_kib() -> None:
    fields = [{"name": f"field_{i:05d}", "type": "int", "doc": "d" * 40} for i in range(1500)]
    serializer = AvroSerializer({"type": "record", "name": "Wide", "fields": fields})
    assert len(serializer.schema_json.encode()) > 65535, "the schema should be larger than write_utf allows"
    restored = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration())).restore_serializer()
    assert restored == serializer, "a >64 KiB schema should survive its snapshot"


def test_an_empty_snapshot_says_so() -> None:
    with pytest.raises(SnapshotFormatError, match="holds no schema"):
        AvroSerializerSnapshot().restore_serializer()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (struct.pack(">i", 100) + b"{}", "length 100"),
        # ff ff: not this project's version 1 (a length below 64 KiB) but Flink's (writeUTF)
        (struct.pack(">i", -1), "needs 65535 bytes"),
        (struct.pack(">i", 2) + b"\xff\xfe", "not UTF-8"),
        (struct.pack(">i", 3) + b"{x}", "not valid JSON"),
        (struct.pack(">i", 5) + b'"foo"', "unknown type"),
    ],
    ids=["length_past_end", "negative_length", "not_utf8", "not_json", "invalid_schema"],
)
def test_corrupt_snapshot_bodies_are_snapshot_format_errors(body: bytes, message: str) -> None:
    good = snapshot_to_bytes(AvroSerializer("int", encoding="binary").snapshot_configuration())
    header = good[: len(good) - len(b'"int"') - 4]
    with pytest.raises(SnapshotFormatError, match=message):
        snapshot_from_bytes(header + body)


def test_truncated_snapshots_are_snapshot_format_errors() -> None:
    good = snapshot_to_bytes(AvroSerializer(USER).snapshot_configuration())
    for cut in range(0, len(good), 37):
        with pytest.raises(SnapshotFormatError):
            snapshot_from_bytes(good[:cut])


def test_other_snapshot_classes_are_incompatible() -> None:
    result = resolve_compatibility(AvroSerializer("int").snapshot_configuration(), IntSerializer().snapshot_configuration())
    assert result.is_incompatible() and "IntSerializerSnapshot" in (result.reason or ""), f"got {result!r}, should be incompatible naming the old class"


def test_migrating_an_incompatible_pair_is_a_state_migration_error() -> None:
    old, new = AvroSerializer("long"), AvroSerializer("int")
    with pytest.raises(StateMigrationError, match="type_mismatch at /"):
        new.snapshot_configuration().migrate_state(old, new, DataInputView(old.to_bytes(1)), DataOutputView())


# -- invalid schemas -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ("foo", "unknown type 'foo'"),
        ({"type": "record", "name": "1R", "fields": []}, "not a valid Avro name"),
        ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "int"}]}, "defined twice"),
        (["null", ["int"]], "another union"),
        (["int", "int"], "already has a 'int' branch"),
        ({"type": "fixed", "name": "F", "size": -1}, "non-negative"),
        ({"type": "enum", "name": "E", "symbols": ["A"], "default": "B"}, "not one of its symbols"),
        ({"type": "enum", "name": "E", "symbols": ["A", "A"]}, "unique"),
        ({"type": "record", "name": "R", "fields": [{"name": "a", "type": "int", "default": "x"}]}, "default 'x'"),
        ({"type": "record", "name": "R", "fields": [{"name": "a", "type": {"type": "record", "name": "R", "fields": []}}]}, "defined twice"),
        ({"type": "record", "name": "R"}, '"fields" list'),
        ({"type": "array"}, '"items"'),
        ({"type": {"type": "int"}}, "string"),
        ({"type": "record", "name": "int", "fields": []}, "redefines the primitive"),
        (42, "not int"),
        ({"type": "bytes", "logicalType": "decimal"}, "positive integer precision"),
    ],
    ids=[
        "unknown_type", "bad_name", "duplicate_field", "nested_union", "duplicate_branch",
        "negative_fixed", "enum_default", "duplicate_symbol", "bad_default", "redefined_type",
        "no_fields", "no_items", "type_not_string", "primitive_name", "not_a_schema",
        "decimal_without_precision",
    ],
)
def test_invalid_schemas_are_rejected_at_construction(schema: object, message: str) -> None:
    with pytest.raises(AvroSchemaError, match=message) as info:
        AvroSerializer(schema)
    assert isinstance(info.value, StateError) and isinstance(info.value, ValueError), (
        f"got {type(info.value).__mro__}, should be a StateError and a ValueError"
    )


def test_invalid_json_text_is_rejected() -> None:
    with pytest.raises(AvroSchemaError, match="not valid JSON"):
        AvroSerializer.from_json("{")


def test_schemas_nested_too_deeply_are_rejected() -> None:
    schema: object = "int"
    for _ in range(150):
        schema = {"type": "array", "items": schema}
    with pytest.raises(AvroSchemaError, match="deeper than"):
        AvroSerializer(schema)


# -- corrupt bytes -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("schema", "data", "error"),
    [
        ("long", b"\x80", SerializationError),
        ("string", b"\x06ab", EndOfDataError),
        ("string", b"\x02\xff", SerializationError),
        (["null", "int"], b"\x06", SerializationError),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, b"\x04", SerializationError),
        ({"type": "fixed", "name": "F", "size": 4}, b"ab", EndOfDataError),
        ({"type": "array", "items": "long"}, b"\xfe\xff\xff\xff\x0f\x02", EndOfDataError),
        ("bytes", b"\x01", SerializationError),
        (["null", "int"], b"\x01\x0a", SerializationError),
        ({"type": "enum", "name": "E", "symbols": ["A", "B"]}, b"\x01", SerializationError),
        ({"type": "record", "name": "R", "fields": [{"name": "u", "type": ["null", "string"]}]}, b"\x01\x02a", SerializationError),
    ],
    ids=[
        "varint_cut", "string_cut", "bad_utf8", "union_index", "enum_index", "fixed_cut", "huge_count",
        "negative_length", "negative_union_index", "negative_enum_index", "negative_index_in_record",
    ],
)
def test_corrupt_bytes_raise_state_errors(schema: object, data: bytes, error: type) -> None:
    with pytest.raises(error):
        AvroSerializer(schema, encoding="binary").from_bytes(data)


@pytest.mark.parametrize(
    ("schema", "data", "error"),
    [
        ("long", b"\x00\x01", EndOfDataError),
        ("string", b"\x00\x00\x00\x03ab", EndOfDataError),
        ("string", b"\x00\x00\x00\x01\xff", SerializationError),
        (["null", "int"], b"\x00\x00\x00\x02", SerializationError),
        (["null", "int"], b"\xff\xff\xff\xff", SerializationError),
        ({"type": "enum", "name": "E", "symbols": ["A"]}, b"\x00\x00\x00\x01", SerializationError),
        ({"type": "array", "items": "long"}, b"\xff\xff\xff\x0f\x02", SerializationError),
        ("bytes", b"\xff\xff\xff\xff", SerializationError),
    ],
    ids=["long_cut", "string_cut", "bad_utf8", "union_index", "negative_union_index", "enum_index", "huge_count", "negative_length"],
)
def test_corrupt_flink_encoded_bytes_raise_state_errors(schema: object, data: bytes, error: type) -> None:
    with pytest.raises(error):
        AvroSerializer(schema).from_bytes(data)


def test_the_negative_index_guard_is_active() -> None:
    from reference.serializers._avro import _index_guard_works

    assert _index_guard_works(), (
        "got the guard disabled, should be active: fastavro's reader no longer behaves as the "
        "guard expects; negative union/enum indices in corrupt data would read as valid"
    )


def test_deep_recursive_data_is_refused_not_a_crash() -> None:
    serializer = AvroSerializer(LIST, encoding="binary")
    # fastavro's C reader would overflow the stack (a segfault) on 10000 levels
    with pytest.raises(SerializationError, match="nested deeper"):
        serializer.from_bytes(b"\x00\x02" * 10000 + b"\x00\x00")
    with pytest.raises(SerializationError, match="deeper than"):
        serializer.to_bytes(chain(10000))
    value = chain(MAX_NESTING - 1)
    assert serializer.from_bytes(serializer.to_bytes(value)) == value, f"a chain of {MAX_NESTING - 1} should round-trip"


def test_corrupt_count_of_empty_items_is_bounded() -> None:
    flink = AvroSerializer({"type": "array", "items": "null"})
    with pytest.raises(SerializationError, match=str(MAX_ZERO_WIDTH_ITEMS)):
        flink.from_bytes(b"\xff\xff\xff\xff\xff\xff\xff\xff\x7f\x00")
    assert flink.from_bytes(b"\x03\x00") == [None, None, None], "three nulls should read back"
    serializer = AvroSerializer({"type": "array", "items": "null"}, encoding="binary")
    huge = 1 << 60
    zigzag = huge << 1
    varint = bytearray()
    while zigzag >= 0x80:
        varint.append((zigzag & 0x7F) | 0x80)
        zigzag >>= 7
    varint.append(zigzag)
    with pytest.raises(SerializationError, match=str(MAX_ZERO_WIDTH_ITEMS)):
        serializer.from_bytes(bytes(varint) + b"\x00")
    assert serializer.from_bytes(b"\x06\x00") == [None, None, None], "three nulls should read back"


@given(st.binary(max_size=40))
def test_random_bytes_give_a_value_or_a_state_error(data: bytes) -> None:
    for schema in (USER, LIST, {"type": "map", "values": ["null", "double", {"type": "array", "items": "null"}]}):
        try:
            AvroSerializer(schema).from_bytes(data)
        except StateError:
            pass


# -- inside composites ---------------------------------------------------------------------------
V1 = {"type": "record", "name": "P", "fields": [{"name": "x", "type": "int"}]}
V2 = {"type": "record", "name": "P", "fields": [{"name": "x", "type": "long"}, {"name": "y", "type": "string", "default": "?"}]}
V3 = {"type": "record", "name": "P", "fields": [{"name": "x", "type": "string"}]}


def test_avro_in_a_list_migrates_through_the_composite_rule() -> None:
    old, new = ListSerializer(AvroSerializer(V1)), ListSerializer(AvroSerializer(V2))
    snapshot = new.snapshot_configuration()
    result = resolve_compatibility(snapshot, old.snapshot_configuration())
    assert result.is_compatible_after_migration(), f"got {result!r}, should be compatible after migration"
    migrated = snapshot.migrate_element(old, new, [{"x": 1}, {"x": 2}])
    assert migrated == [{"x": 1, "y": "?"}, {"x": 2, "y": "?"}], f"got {migrated!r}, should fill y in every element"
    same = resolve_compatibility(old.snapshot_configuration(), old.snapshot_configuration())
    assert same.is_compatible_as_is(), f"got {same!r}, should be as is"


def test_avro_in_a_map_incompatibility_reaches_the_top() -> None:
    old = MapSerializer(StringSerializer(), AvroSerializer(V1))
    new = MapSerializer(StringSerializer(), AvroSerializer(V3))
    result = resolve_compatibility(new.snapshot_configuration(), old.snapshot_configuration())
    assert result.is_incompatible(), f"got {result!r}, should be incompatible"
    assert "type_mismatch at /fields/0/type" in (result.reason or ""), f"got {result.reason!r}, should carry the Avro location"


def test_migrating_through_a_list_over_bytes() -> None:
    old, new = ListSerializer(AvroSerializer(V1)), ListSerializer(AvroSerializer(V2))
    source, target = DataInputView(old.to_bytes([{"x": 5}])), DataOutputView()
    new.snapshot_configuration().migrate_state(old, new, source, target)
    got = new.from_bytes(target.getvalue())
    assert got == [{"x": 5, "y": "?"}] and type(got[0]["x"]) is int, f"got {got!r}, should be [{{'x': 5, 'y': '?'}}]"


def test_concurrent_migrations_agree() -> None:
    from concurrent.futures import ThreadPoolExecutor

    old = AvroSerializer(["null", "int", {"type": "record", "name": "Q", "fields": [{"name": "v", "type": "float"}]}])
    new = AvroSerializer(["null", "double", "string", {"type": "record", "name": "Q", "fields": [{"name": "v", "type": "double"}]}])
    values = [None, 3, {"v": 0.5}] * 50
    expected = [None, 3.0, {"v": 0.5}] * 50

    def migrate(value: object) -> object:
        return new.snapshot_configuration().migrate_element(old, new, value)

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(migrate, values))
    assert bits(got) == bits(expected), f"got {got[:3]}..., should be {expected[:3]}... from every thread"


def test_a_schema_fastavro_cannot_resolve_is_refused_with_the_reason() -> None:
    # valid Avro (Java falls back to the null namespace for "S"), but fastavro looks up a.S only
    schema = {
        "type": "record", "name": "R", "namespace": "a",
        "fields": [
            {"name": "x", "type": {"type": "record", "name": "S", "namespace": "", "fields": []}},
            {"name": "y", "type": "S"},
        ],
    }
    with pytest.raises(AvroSchemaError, match="fastavro cannot use the schema"):
        AvroSerializer(schema)


def test_a_schema_parsed_by_fastavro_is_accepted_as_the_same_schema() -> None:
    import fastavro

    parsed = fastavro.parse_schema(copy.deepcopy(USER))
    assert AvroSerializer(parsed) == AvroSerializer(USER), (
        f"got {AvroSerializer(parsed).schema_json}, should be {AvroSerializer(USER).schema_json}"
    )
