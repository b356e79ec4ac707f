"""RowSerializer (Flink's Row format) and FLIP-527 evolution by field name."""

from __future__ import annotations

import enum
import pickle
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    SerializationError,
    SnapshotFormatError,
    StateError,
    StateMigrationError,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.serializers import (
    BooleanSerializer,
    BytesSerializer,
    DoubleSerializer,
    EnumSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    MapSerializer,
    NullableSerializer,
    Row,
    RowKind,
    RowSerializer,
    RowSerializerSnapshot,
    StringSerializer,
    TupleSerializer,
)


class Suit(enum.Enum):
    HEARTS = 1
    SPADES = 2
    CLUBS = 3


def canonical(value):
    """Exact comparison form: floats by bits, types recorded, row kinds kept."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, tuple):
        kind = value.kind if type(value) is Row else None
        return (type(value).__name__, kind, tuple(canonical(v) for v in value))
    if isinstance(value, list):
        return ("list", [canonical(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(canonical(k), canonical(v)) for k, v in value.items()])
    return (type(value).__name__, value)


def utf(text: str) -> bytes:
    return struct.pack(">H", len(text)) + text.encode("ascii")


def migrate(new_serializer, old_serializer, value):
    """Resolve new against old, then migrate ``value`` (read by the restored old serializer)
    through both paths: migrate_element, and migrate_state over the old bytes."""
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old_serializer.snapshot_configuration()))
    new_snapshot = new_serializer.snapshot_configuration()
    result = resolve_compatibility(new_snapshot, old_snapshot)
    assert result.is_compatible_after_migration(), f"got {result}, should be compatible_after_migration"
    prior = old_snapshot.restore_serializer()
    element = new_snapshot.migrate_element(prior, new_serializer, prior.from_bytes(old_serializer.to_bytes(value)))
    out = DataOutputView()
    new_snapshot.migrate_state(prior, new_serializer, DataInputView(old_serializer.to_bytes(value)), out)
    return result, element, out.getvalue()


def verdict(new_serializer, old_serializer):
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old_serializer.snapshot_configuration()))
    return resolve_compatibility(new_serializer, old_snapshot)


INT, L, S, D = IntSerializer(), LongSerializer(), StringSerializer(), DoubleSerializer()

# -- bytes -----------------------------------------------------------------------------------------
GOLDEN_FIELDS = [("f0", INT, True), ("f1", L, False), ("f2", S, False), ("f3", D, True)]


def test_golden_row_with_nulls():
    # docs/formats.md: Row(null, 42L, "My string.", null) INSERT: mask bits 00|1001 -> 0x24.
    got = RowSerializer(GOLDEN_FIELDS).to_bytes((None, 42, "My string.", None))
    want = bytes.fromhex("24" "000000000000002a" "0b") + b"My string."
    assert got == want, f"got {got.hex()}, should be {want.hex()}"
    back = RowSerializer(GOLDEN_FIELDS).from_bytes(want)
    assert canonical(back) == canonical((None, 42, "My string.", None)), f"got {back!r}, should be the plain INSERT tuple"


@pytest.mark.parametrize(
    "kind, mask",
    [(RowKind.INSERT, 0x00), (RowKind.UPDATE_BEFORE, 0x80), (RowKind.UPDATE_AFTER, 0x40), (RowKind.DELETE, 0xC0)],
)
def test_golden_row_kinds(kind, mask):
    s = RowSerializer([("x", INT, False)])
    value = Row((7,), kind)
    got = s.to_bytes(value)
    want = bytes([mask]) + b"\x00\x00\x00\x07"
    assert got == want, f"got {got.hex()}, should be {want.hex()} [{kind.name}]"
    back = s.from_bytes(want)
    want_type = tuple if kind is RowKind.INSERT else Row
    assert type(back) is want_type, f"got {type(back).__name__}, should be {want_type.__name__} [{kind.name}]"
    assert getattr(back, "kind", RowKind.INSERT) is kind, f"got {back!r}, should have kind {kind.name}"


def test_golden_mask_spanning_two_bytes():
    # 2 kind bits + 7 fields = 9 bits: DELETE (11), nulls at 0,2,4,6 -> 1110 1010 | 1000 0000
    s = RowSerializer([(f"f{i}", INT, True) for i in range(7)])
    got = s.to_bytes(Row((None, 1, None, 2, None, 3, None), RowKind.DELETE))
    want = bytes.fromhex("ea80" "00000001" "00000002" "00000003")
    assert got == want, f"got {got.hex()}, should be {want.hex()}"


def test_golden_eight_fields_with_kind_take_two_mask_bytes():
    s = RowSerializer([(f"f{i}", BooleanSerializer(), True) for i in range(6)])
    got = s.to_bytes((True,) * 6)
    assert got == bytes.fromhex("00") + b"\x01" * 6, f"got {got.hex()}, should be a 1-byte mask for 8 bits"
    s7 = RowSerializer([(f"f{i}", BooleanSerializer(), True) for i in range(7)])
    got = s7.to_bytes((None,) * 7)
    assert got == bytes.fromhex("3f80"), f"got {got.hex()}, should be 3f80 for 9 bits, 7 nulls"


def test_golden_legacy_mode_has_no_kind_bits():
    s = RowSerializer(GOLDEN_FIELDS, supports_row_kind=False)
    got = s.to_bytes((None, 42, "My string.", None))
    want = bytes.fromhex("90" "000000000000002a" "0b") + b"My string."
    assert got == want, f"got {got.hex()}, should be {want.hex()} (mask 1001 without kind bits)"
    with pytest.raises(SerializationError, match="DELETE"):
        s.to_bytes(Row((None, 42, "x", None), RowKind.DELETE))


def test_not_null_field_given_none_names_the_field():
    s = RowSerializer([("id", L, False), ("name", S, True)])
    with pytest.raises(SerializationError, match="'id'"):
        s.to_bytes((None, "x"))


@pytest.mark.parametrize("bad", [(1,), (1, "a", 2), [1, "a"], "ab", None])
def test_wrong_shape_is_serialization_error(bad):
    with pytest.raises(SerializationError, match="tuples"):
        RowSerializer([("id", L, False), ("name", S, True)]).to_bytes(bad)


def test_not_null_field_marked_null_in_data_is_serialization_error():
    with pytest.raises(SerializationError, match="'x'"):
        RowSerializer([("x", INT, False)]).from_bytes(bytes.fromhex("20"))


def test_constructor_refuses_bad_fields():
    with pytest.raises(ValueError, match="'a'"):
        RowSerializer([("a", INT, True), ("a", L, True)])
    with pytest.raises(TypeError, match="TypeSerializer"):
        RowSerializer([("a", int, True)])
    with pytest.raises(TypeError, match="nullable"):
        RowSerializer([("a", INT, 1)])


def test_copy_keeps_the_exact_row_type():
    s = RowSerializer([("x", INT, True)])
    for value in ((1,), Row((1,)), Row((None,), RowKind.UPDATE_BEFORE)):
        copy = s.copy(value)
        assert type(copy) is type(value) and canonical(copy) == canonical(value), f"got {copy!r}, should be {value!r}"


def test_row_value_type():
    deleted = Row((1, "a"), RowKind.DELETE)
    assert deleted != (1, "a"), "a DELETE row should not equal the plain (INSERT) tuple"
    assert Row((1, "a")) == (1, "a") and hash(Row((1, "a"))) == hash((1, "a")), "INSERT Row should equal its tuple"
    assert Row.of(1, "a", kind=RowKind.DELETE) == deleted, "Row.of should build the same row"
    back = pickle.loads(pickle.dumps(deleted))
    assert type(back) is Row and back.kind is RowKind.DELETE and back == deleted, f"got {back!r}, should be {deleted!r}"
    assert RowKind.UPDATE_AFTER.short_string == "+U", f"got {RowKind.UPDATE_AFTER.short_string}, should be +U"


# -- property round trips -----------------------------------------------------------------------
def _double_from_bits(bits: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", bits))[0]


_doubles = st.one_of(
    st.sampled_from([0.0, -0.0, float("inf")]),
    st.integers(0, 2**64 - 1).map(_double_from_bits),  # every NaN payload included
)
_LEAVES = {
    "int": (IntSerializer(), st.integers(-(2**31), 2**31 - 1)),
    "long": (LongSerializer(), st.integers(-(2**63), 2**63 - 1)),
    "double": (DoubleSerializer(), _doubles),
    "string": (StringSerializer(), st.text(max_size=8)),
    "bytes": (BytesSerializer(), st.binary(max_size=8)),
    "bool": (BooleanSerializer(), st.booleans()),
    "longs": (ListSerializer(LongSerializer()), st.lists(st.integers(-5, 5), max_size=3)),
}


@st.composite
def row_schemas(draw, depth=1):
    """(serializer, value strategy) of a random row; nested rows up to ``depth``."""
    names = draw(st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10), label="field names")
    fields, strategies = [], []
    for name in names:
        nullable = draw(st.booleans(), label=f"{name} nullable")
        if depth > 0 and draw(st.booleans(), label=f"{name} is a row"):
            serializer, values = draw(row_schemas(depth - 1))
        else:
            serializer, values = _LEAVES[draw(st.sampled_from(sorted(_LEAVES)), label=f"{name} type")]
        fields.append((name, serializer, nullable))
        strategies.append(st.one_of(st.none(), values) if nullable else values)
    kinds = st.sampled_from(list(RowKind))
    values = st.tuples(st.tuples(*strategies), kinds).map(
        lambda vk: vk[0] if vk[1] is RowKind.INSERT else Row(vk[0], vk[1])
    )
    return RowSerializer(fields), values


@given(data=st.data())
def test_roundtrip_bit_exact_sequences_and_copies(data):
    serializer, values = data.draw(row_schemas(), label="schema")
    items = data.draw(st.lists(values, min_size=1, max_size=4), label="rows")
    out = DataOutputView()
    for item in items:
        serializer.serialize(item, out)
    source = DataInputView(out.getvalue())
    got = [serializer.deserialize(source) for _ in items]
    assert [canonical(g) for g in got] == [canonical(v) for v in items], f"got {got}, should be {items}"
    assert source.available() == 0, f"got {source.available()} bytes left after {len(items)} rows, should be 0"
    source, copied = DataInputView(out.getvalue()), DataOutputView()
    serializer.copy_serialized(source, copied)
    first = serializer.to_bytes(items[0])
    assert copied.getvalue() == first, f"got {copied.getvalue().hex()}, should be {first.hex()} (one record)"
    copy = serializer.copy(items[0])
    assert canonical(copy) == canonical(items[0]), f"got {copy!r}, should be {items[0]!r}"
    for mine, theirs in zip(copy, items[0], strict=False):
        if isinstance(theirs, list):
            assert mine is not theirs, "copy shares a list with the original; should be deep"
    dup = serializer.duplicate()
    assert dup == serializer and dup.to_bytes(items[0]) == first, f"got {dup!r}, should equal {serializer!r}"
    back = pickle.loads(pickle.dumps(serializer))
    assert back == serializer and back.to_bytes(items[0]) == first, "unpickled serializer differs"


@given(data=st.data())
def test_snapshot_roundtrip_restores_a_reader_of_old_bytes(data):
    serializer, values = data.draw(row_schemas(), label="schema")
    value = data.draw(values, label="row")
    written = snapshot_to_bytes(serializer.snapshot_configuration())
    snapshot = snapshot_from_bytes(written)
    assert type(snapshot) is RowSerializerSnapshot, f"got {type(snapshot).__name__}, should be RowSerializerSnapshot"
    again = snapshot_to_bytes(snapshot)
    assert again == written, f"got {again.hex()}, should be stable {written.hex()}"
    restored = snapshot.restore_serializer()
    assert restored == serializer, f"got {restored!r}, should be {serializer!r}"
    back = restored.from_bytes(serializer.to_bytes(value))
    assert canonical(back) == canonical(value), f"got {back!r}, should be {value!r}"
    result = resolve_compatibility(serializer, snapshot)
    assert result.is_compatible_as_is(), f"got {result}, should be compatible_as_is for the same serializer"


def test_golden_snapshot_bytes():
    got = snapshot_to_bytes(RowSerializer([("a", INT, False)]).snapshot_configuration())
    want = (
        struct.pack(">i", 2) + utf("reference.serializers:RowSerializerSnapshot") + struct.pack(">i", 3)
        + struct.pack(">ii", 911108, 5) + b"\x01" + struct.pack(">i", 1) + utf("a") + b"\x00"
        + struct.pack(">iii", 1333245, 1, 1)
        + utf("reference.serializers:IntSerializerSnapshot") + struct.pack(">i", 3)
    )
    assert got == want, f"got {got.hex()}, should be {want.hex()}"


# -- corrupt input ------------------------------------------------------------------------------
def test_flinks_outer_version_4_reads_as_positional_names():
    # Flink 2.3's RowSerializerSnapshot body: outer version 4 and the row-kind flag only.
    flink_form = (
        struct.pack(">i", 2) + utf("reference.serializers:RowSerializerSnapshot") + struct.pack(">i", 3)
        + struct.pack(">ii", 911108, 4) + b"\x01"
        + struct.pack(">iii", 1333245, 1, 1)
        + utf("reference.serializers:IntSerializerSnapshot") + struct.pack(">i", 3)
    )
    restored = snapshot_from_bytes(flink_form).restore_serializer()
    want = RowSerializer([("f0", INT, True)])
    assert restored == want, f"got {restored!r}, should be {want!r} [Flink's outer version 4]"


def test_truncated_data_and_snapshots_raise_state_errors_only():
    s = RowSerializer([("a", L, True), ("b", S, False), ("c", RowSerializer([("z", D, True)]), True)])
    data = s.to_bytes((5, "hello", (1.5,)))
    for n in range(len(data)):
        with pytest.raises(SerializationError):
            s.from_bytes(data[:n])
    snap = snapshot_to_bytes(s.snapshot_configuration())
    for n in range(len(snap)):
        with pytest.raises(SnapshotFormatError):
            snapshot_from_bytes(snap[:n])


@given(flip=st.data())
def test_corrupt_bytes_raise_state_errors_only(flip):
    s = RowSerializer([("a", L, True), ("b", S, False), ("c", RowSerializer([("z", D, True)]), True)])
    for blob in (s.to_bytes((5, "hello", (1.5,))), snapshot_to_bytes(s.snapshot_configuration())):
        position = flip.draw(st.integers(0, len(blob) - 1), label="position")
        byte = flip.draw(st.integers(0, 255), label="byte")
        damaged = blob[:position] + bytes([byte]) + blob[position + 1 :]
        try:
            s.from_bytes(damaged)
        except StateError:
            pass
        try:
            snapshot_from_bytes(damaged)
        except StateError:
            pass


def test_huge_field_count_in_snapshot_is_refused_before_allocating():
    snap = bytearray(snapshot_to_bytes(RowSerializer([("a", INT, False)]).snapshot_configuration()))
    start = snap.index(struct.pack(">ii", 911108, 5)) + 9
    snap[start : start + 4] = struct.pack(">i", 2**31 - 1)
    with pytest.raises(SnapshotFormatError, match="field count"):
        snapshot_from_bytes(bytes(snap))


# -- FLIP-527 evolution --------------------------------------------------------------------------
OLD = RowSerializer([("id", L, False), ("name", S, True)])


@pytest.mark.parametrize(
    "new_fields, value, want, want_bytes",
    [
        (  # nullable field appended
            [("id", L, False), ("name", S, True), ("x", INT, True)],
            (1, "s"), (1, "s", None), "08" "0000000000000001" "0273",
        ),
        (  # nullable field in the middle
            [("id", L, False), ("x", INT, True), ("name", S, True)],
            (1, "s"), (1, None, "s"), "10" "0000000000000001" "0273",
        ),
        (  # nullable field first
            [("x", INT, True), ("id", L, False), ("name", S, True)],
            (1, None), (None, 1, None), "28" "0000000000000001",
        ),
    ],    ids=["append", "middle", "first"],
)
def test_adding_nullable_fields_anywhere_migrates(new_fields, value, want, want_bytes):
    result, element, migrated_bytes = migrate(RowSerializer(new_fields), OLD, value)
    assert result.row_paths == ("x",), f"got {result.row_paths}, should be ('x',)"
    assert canonical(element) == canonical(want), f"got {element!r}, should be {want!r}"
    assert migrated_bytes.hex() == want_bytes, f"got {migrated_bytes.hex()}, should be {want_bytes}"


def test_removing_a_field_is_incompatible_naming_it():
    new = RowSerializer([("id", L, False)])
    result = verdict(new, OLD)
    assert result.is_incompatible() and "'name'" in result.reason, f"got {result}, should be incompatible naming 'name'"


def test_renaming_a_field_is_incompatible_naming_it():
    new = RowSerializer([("id", L, False), ("title", S, True)])
    result = verdict(new, OLD)
    assert result.is_incompatible() and "'name'" in result.reason, f"got {result}, should be incompatible naming 'name'"


def test_reordering_migrates_by_name():
    new = RowSerializer([("name", S, True), ("id", L, False)])
    result, element, migrated_bytes = migrate(new, OLD, Row((7, "ab"), RowKind.UPDATE_AFTER))
    assert result.row_paths == ("name", "id"), f"got {result.row_paths}, should be ('name', 'id')"
    assert canonical(element) == canonical(Row(("ab", 7), RowKind.UPDATE_AFTER)), f"got {element!r}"
    want = "40" "03" "6162" "0000000000000007"
    assert migrated_bytes.hex() == want, f"got {migrated_bytes.hex()}, should be {want}"


def test_same_typed_reorder_swaps_values():
    old = RowSerializer([("a", L, False), ("b", L, False)])
    new = RowSerializer([("b", L, False), ("a", L, False)])
    result, element, migrated_bytes = migrate(new, old, (1, 2))
    assert element == (2, 1) and type(element) is tuple, f"got {element!r}, should be (2, 1)"
    want = "00" "0000000000000002" "0000000000000001"
    assert migrated_bytes.hex() == want, f"got {migrated_bytes.hex()}, should be {want}"


def test_changing_a_field_type_is_incompatible_naming_it():
    new = RowSerializer([("id", S, False), ("name", S, True)])
    result = verdict(new, OLD)
    assert result.is_incompatible() and "'id'" in result.reason, f"got {result}, should be incompatible naming 'id'"
    back = verdict(OLD, new)
    assert back.is_incompatible() and "'id'" in back.reason, f"got {back}, should be incompatible naming 'id' (back)"


def test_adding_not_null_field_is_incompatible_naming_it():
    new = RowSerializer([("id", L, False), ("name", S, True), ("n", INT, False)])
    result = verdict(new, OLD)
    assert result.is_incompatible() and "'n'" in result.reason, f"got {result}, should be incompatible naming 'n'"


def test_nullable_to_not_null_is_incompatible_and_back_is_as_is():
    strict = RowSerializer([("id", L, False), ("name", S, False)])
    result = verdict(strict, OLD)
    assert result.is_incompatible() and "'name'" in result.reason, f"got {result}, should be incompatible naming 'name'"
    relaxed = verdict(OLD, strict)
    assert relaxed.is_compatible_as_is(), f"got {relaxed}, should be as is: NOT NULL -> nullable keeps the bytes"


def test_row_kind_support_change_migrates():
    legacy = RowSerializer(OLD.fields, supports_row_kind=False)
    result, element, migrated_bytes = migrate(OLD, legacy, (3, None))
    assert result.row_paths == (), f"got {result.row_paths}, should be () (no field evolved)"
    assert element == (3, None), f"got {element!r}, should be (3, None)"
    assert migrated_bytes.hex() == "10" "0000000000000003", f"got {migrated_bytes.hex()}, should be 10 + id"
    result, element, migrated_bytes = migrate(legacy, OLD, (3, "x"))
    assert migrated_bytes.hex() == "00" "0000000000000003" "0278", f"got {migrated_bytes.hex()}"
    with pytest.raises(StateMigrationError, match="DELETE"):
        migrate(legacy, OLD, Row((3, "x"), RowKind.DELETE))


def test_identical_is_as_is():
    result = verdict(RowSerializer(list(OLD.fields)), OLD)
    assert result.is_compatible_as_is(), f"got {result}, should be compatible_as_is"


def test_nested_reconfigured_rebuilds_the_row():
    old = RowSerializer([("id", L, False), ("suit", EnumSerializer(Suit, symbols=["HEARTS", "SPADES", "CLUBS"]), True)])
    new = RowSerializer([("id", L, False), ("suit", EnumSerializer(Suit, symbols=["CLUBS", "HEARTS", "SPADES"]), True)])
    result = verdict(new, old)
    assert result.is_compatible_with_reconfigured_serializer(), f"got {result}, should be reconfigured"
    reconfigured = result.get_reconfigured_serializer()
    assert isinstance(reconfigured, RowSerializer) and reconfigured.field_names == ["id", "suit"], f"got {reconfigured!r}"
    old_bytes = old.to_bytes((1, Suit.CLUBS))
    back = reconfigured.from_bytes(old_bytes)
    assert back == (1, Suit.CLUBS), f"got {back!r}, should be (1, Suit.CLUBS) read with the old ordinals"


ADDRESS_V1 = RowSerializer([("city", S, True)])
ADDRESS_V2 = RowSerializer([("zip", INT, True), ("city", S, True)])


def test_nested_row_evolves_by_the_same_rules():
    old = RowSerializer([("id", L, False), ("address", ADDRESS_V1, True)])
    new = RowSerializer([("id", L, False), ("address", ADDRESS_V2, True)])
    result, element, migrated_bytes = migrate(new, old, (1, ("Oslo",)))
    assert result.row_paths == ("address.zip",), f"got {result.row_paths}, should be ('address.zip',)"
    assert element == (1, (None, "Oslo")), f"got {element!r}, should be (1, (None, 'Oslo'))"
    want = "00" "0000000000000001" "20" "054f736c6f"
    assert migrated_bytes.hex() == want, f"got {migrated_bytes.hex()}, should be {want}"
    result = verdict(old, new)
    assert result.is_incompatible() and "'address'" in result.reason and "'zip'" in result.reason, (
        f"got {result}, should be incompatible naming 'address' and 'zip'"
    )


@pytest.mark.parametrize(
    "wrap, value, want",
    [
        (NullableSerializer, ("Oslo",), (None, "Oslo")),
        (lambda r: MapSerializer(S, r), {"home": ("Oslo",), "none": None}, {"home": (None, "Oslo"), "none": None}),
        (lambda r: TupleSerializer(L, r), (5, ("Oslo",)), (5, (None, "Oslo"))),
        (lambda r: RowSerializer([("inner", r, True)]), (("Oslo",),), ((None, "Oslo"),)),
    ],
    ids=["nullable", "map", "tuple", "row"],
)
def test_row_inside_composites_migrates(wrap, value, want):
    old = RowSerializer([("k", L, False), ("a", wrap(ADDRESS_V1), True)])
    new = RowSerializer([("k", L, False), ("a", wrap(ADDRESS_V2), True)])
    result, element, migrated_bytes = migrate(new, old, (9, value))
    assert result.row_paths and all(p.startswith("a.") for p in result.row_paths), f"got {result.row_paths}"
    assert canonical(element) == canonical((9, want)), f"got {element!r}, should be {(9, want)!r}"
    assert migrated_bytes == new.to_bytes((9, want)), f"got {migrated_bytes.hex()}, should be {new.to_bytes((9, want)).hex()}"


def test_row_inside_list_cannot_evolve():
    old = RowSerializer([("k", L, False), ("a", ListSerializer(ADDRESS_V1), True)])
    new = RowSerializer([("k", L, False), ("a", ListSerializer(ADDRESS_V2), True)])
    result = verdict(new, old)
    assert result.is_incompatible() and "'a'" in result.reason and "list" in result.reason, (
        f"got {result}, should be incompatible: row evolution inside a list"
    )
    top = verdict(ListSerializer(ADDRESS_V2), ListSerializer(ADDRESS_V1))
    assert top.is_incompatible(), f"got {top}, should be incompatible"


def test_other_snapshot_class_is_incompatible():
    result = resolve_compatibility(RowSerializer([("a", L, False)]), TupleSerializer(L).snapshot_configuration())
    assert result.is_incompatible() and "row" in result.reason, f"got {result}, should be incompatible"


# -- property: random evolutions migrate like a by-name oracle ------------------------------------
@given(data=st.data())
def test_random_add_and_reorder_migrates_like_the_oracle(data):
    old, values = data.draw(row_schemas(), label="old schema")
    value = data.draw(values, label="old row")
    old_fields = list(old.fields)
    extra = [
        (name, _LEAVES[leaf][0], True)
        for name, leaf in data.draw(
            st.lists(st.tuples(st.sampled_from("klmnop"), st.sampled_from(sorted(_LEAVES))),
                     unique_by=lambda t: t[0], max_size=3),
            label="added nullable fields",
        )
    ]
    new_fields = data.draw(st.permutations(old_fields + extra), label="new field order")
    new = RowSerializer(new_fields)
    # Oracle, by hand: new values by name, None for added fields, kind kept.
    by_name = {f[0]: v for f, v in zip(old_fields, value, strict=False)}
    want_values = tuple(by_name.get(f[0]) for f in new_fields)
    kind = getattr(value, "kind", RowKind.INSERT)
    want = want_values if kind is RowKind.INSERT else Row(want_values, kind)
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    result = resolve_compatibility(new, old_snapshot)
    changed = [f[0] for f in new_fields] != [f[0] for f in old_fields]
    want_kind = "compatible_after_migration" if changed else "compatible_as_is"
    assert result.kind == want_kind, f"got {result}, should be {want_kind}"
    prior = old_snapshot.restore_serializer()
    snapshot = new.snapshot_configuration()
    element = snapshot.migrate_element(prior, new, prior.from_bytes(old.to_bytes(value)))
    assert canonical(element) == canonical(want), f"got {element!r}, should be {want!r}"
    out = DataOutputView()
    snapshot.migrate_state(prior, new, DataInputView(old.to_bytes(value)), out)
    assert out.getvalue() == new.to_bytes(want), f"got {out.getvalue().hex()}, should be {new.to_bytes(want).hex()}"


def test_reads_flinks_own_row_snapshot_form_without_names():
    # Flink 2.3 writes only the supports-row-kind flag as the outer snapshot; fields become
    # f0..fn-1, all nullable.
    data = (
        struct.pack(">i", 2) + utf("reference.serializers:RowSerializerSnapshot") + struct.pack(">i", 3)
        + struct.pack(">ii", 911108, 4) + b"\x01"
        + struct.pack(">iii", 1333245, 1, 2)
        + utf("reference.serializers:IntSerializerSnapshot") + struct.pack(">i", 3)
        + utf("reference.serializers:StringSerializerSnapshot") + struct.pack(">i", 3)
    )
    restored = snapshot_from_bytes(data).restore_serializer()
    want = RowSerializer([("f0", INT, True), ("f1", S, True)])
    assert restored == want, f"got {restored!r}, should be {want!r}"


class _ScratchString(StringSerializer):
    """A field serializer with per-instance state: ``duplicate()`` is a new instance."""

    def __init__(self) -> None:
        super().__init__()
        self.scratch: list[str] = []

    def duplicate(self) -> _ScratchString:
        return _ScratchString()


@pytest.mark.parametrize("supports_row_kind", [True, False])
def test_duplicate_of_a_row_over_a_stateful_field_is_a_new_equal_row_serializer(supports_row_kind):
    field = _ScratchString()
    serializer = RowSerializer([("id", LongSerializer(), False), ("name", field, True)], supports_row_kind)
    dup = serializer.duplicate()
    assert dup is not serializer, "got the same RowSerializer back, should be a new one (a field is stateful)"
    assert dup.fields[1][1] is not field, "got the same stateful field serializer, should be its duplicate"
    assert dup == serializer, f"got {dup!r}, should equal {serializer!r}"
    assert dup.supports_row_kind is supports_row_kind, \
        f"got supports_row_kind {dup.supports_row_kind}, should be {supports_row_kind}"
    row = Row.of(7, "x", kind=RowKind.UPDATE_AFTER) if supports_row_kind else (7, "x")
    assert dup.to_bytes(row) == serializer.to_bytes(row), "the duplicate writes other bytes"


def test_a_row_snapshot_refuses_field_serializers_that_do_not_match_its_field_count():
    snapshot = RowSerializerSnapshot(RowSerializer([("a", LongSerializer(), False), ("b", StringSerializer(), True)]))
    with pytest.raises(SnapshotFormatError) as info:
        snapshot.create_outer_serializer_with_nested_serializers([LongSerializer()])
    assert "1 field serializers for the 2 fields" in str(info.value), f"got {info.value}"


def test_a_row_restored_from_flinks_form_stays_positional_through_the_reference_dialect():
    """Its names are Flink's placeholders: written by this project, it is still Flink's form, so
    a later rename stays as is (by position) instead of a removed field (by name)."""
    row = RowSerializer([("f0", L, True), ("f1", S, True)])
    restored = snapshot_from_bytes(snapshot_to_bytes(row.snapshot_configuration(), dialect="flink")).restore_serializer()
    again = snapshot_from_bytes(snapshot_to_bytes(restored.snapshot_configuration()))
    assert again.positional, "got a named snapshot, should stay positional"
    renamed = RowSerializer([("id", L, True), ("name", S, True)])
    result = resolve_compatibility(renamed, again)
    assert result.is_compatible_as_is(), f"got {result!r}, should be compatible as is (fields match by position)"


def test_a_row_restored_from_flinks_form_stays_positional_when_pickled():
    """Spark ships serializers pickled: an executor's copy must still match fields by position
    (and write Flink's form again), as the driver's does."""
    row = RowSerializer([("f0", L, True), ("f1", S, True)])
    restored = snapshot_from_bytes(snapshot_to_bytes(row.snapshot_configuration(), dialect="flink")).restore_serializer()
    assert restored.positional, "precondition: restored from Flink's form, should be positional"
    back = pickle.loads(pickle.dumps(restored))
    assert back.positional, "got a named serializer after pickling, should stay positional"
    assert snapshot_to_bytes(back.snapshot_configuration()) == snapshot_to_bytes(restored.snapshot_configuration()), (
        "got another snapshot from the unpickled serializer, should write the same bytes"
    )
    assert not pickle.loads(pickle.dumps(row)).positional, "got positional, a named row should stay named"


@pytest.mark.parametrize(("version", "kind"), [(2, False), (3, True), (4, False), (4, True)])
def test_a_row_snapshot_written_at_an_older_flink_outer_version_restores_the_same_row(version, kind):
    row = RowSerializer([("name", StringSerializer(), True), ("count", LongSerializer(), True)],
                        supports_row_kind=kind)
    snapshot = row.snapshot_configuration()
    written = snapshot_to_bytes(snapshot.in_flink_outer_version(version))
    outer = written.index(b"\x00\x0d\xe7\x04") + 4  # the composite snapshot's marker, then the outer version
    assert int.from_bytes(written[outer:outer + 4], "big") == version, (
        f"got outer version {int.from_bytes(written[outer:outer + 4], 'big')}, should be {version}")
    restored = snapshot_from_bytes(written).restore_serializer()
    assert (restored.supports_row_kind, restored.positional, restored.field_names) == (kind, True, ["f0", "f1"]), (
        f"got {(restored.supports_row_kind, restored.positional, restored.field_names)}, should be "
        f"{(kind, True, ['f0', 'f1'])} [outer version {version}]")
    value = Row.of("a", 1, kind=RowKind.UPDATE_AFTER) if kind else ("a", 1)
    assert restored.to_bytes(value) == row.to_bytes(value), f"got other bytes, should be the row's [outer version {version}]"
    again = snapshot_to_bytes(snapshot)
    assert snapshot_from_bytes(again).restore_serializer().field_names == ["name", "count"], (
        "got the original snapshot changed, should keep its names (in_flink_outer_version copies)")


@pytest.mark.parametrize(("version", "kind", "says"), [
    (1, True, "should be one of [2, 3, 4]"), (5, True, "should be one of [2, 3, 4]"),
    (2, True, "supports_row_kind=False)"), (3, False, "supports_row_kind=True)")])
def test_a_row_snapshot_refuses_an_outer_version_that_cannot_hold_it(version, kind, says):
    snapshot = RowSerializer([("name", StringSerializer(), True)], supports_row_kind=kind).snapshot_configuration()
    with pytest.raises(StateError) as raised:
        snapshot.in_flink_outer_version(version)
    assert says in str(raised.value), f"got {raised.value}, should say {says!r}"
