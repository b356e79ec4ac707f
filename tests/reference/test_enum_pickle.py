"""EnumSerializer (own symbol order, reconfiguration) and PickleSerializer (works, never evolves)."""

from __future__ import annotations

import enum
import pickle
import struct
import sys
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

import reference
from reference import (
    DataInputView,
    DataOutputView,
    SerializationError,
    SnapshotFormatError,
    StateError,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.serializers import (
    EnumSerializer,
    EnumSerializerSnapshot,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    MapSerializer,
    PickleSerializer,
    PickleSerializerSnapshot,
    StringSerializer,
)


class Color(enum.Enum):
    RED = "r"
    GREEN = "g"
    BLUE = "b"


class Shape(enum.Enum):
    CIRCLE = 1
    SQUARE = 2


def _utf(text: str) -> bytes:
    data = text.encode("ascii")
    return struct.pack(">H", len(data)) + data


def _make_enum_module(name: str, members: list[str]) -> type[enum.Enum]:
    """A fresh module holding enum class ``E`` with ``members``, as a new release would define it."""
    module = types.ModuleType(name)
    cls = enum.Enum("E", [(m, i) for i, m in enumerate(members)], module=name, qualname="E")
    module.E = cls  # type: ignore[attr-defined]
    sys.modules[name] = module
    return cls


@pytest.fixture
def evolving_enum():
    """Yield a function (members -> class) that (re)defines the same enum class identity."""
    name = "tests_enum_evolution_module"
    yield lambda members: _make_enum_module(name, members)
    sys.modules.pop(name, None)


# -- data ------------------------------------------------------------------------------------
def test_enum_writes_ordinal_of_declaration_order_by_default():
    s = EnumSerializer(Color)
    got = [s.to_bytes(m).hex() for m in Color]
    assert got == ["00000000", "00000001", "00000002"], f"got {got}, should be ordinals 0,1,2 big-endian"


def test_enum_writes_ordinal_of_its_own_symbol_order():
    s = EnumSerializer(Color, symbols=["BLUE", "RED", "GREEN"])
    assert s.to_bytes(Color.BLUE) == b"\x00\x00\x00\x00", f"got {s.to_bytes(Color.BLUE).hex()}, should be 00000000"
    assert s.to_bytes(Color.GREEN) == b"\x00\x00\x00\x02", f"got {s.to_bytes(Color.GREEN).hex()}, should be 00000002"


def test_enum_symbols_left_out_are_appended():
    s = EnumSerializer(Color, symbols=["BLUE"])
    assert s.symbols == ("BLUE", "RED", "GREEN"), f"got {s.symbols}, should be BLUE then the rest in declaration order"


class Aliased(enum.Enum):
    ONE = 1
    UNO = 1  # an alias of ONE
    TWO = 2


@pytest.mark.parametrize("bad", [["RED", "RED"], ["PURPLE"]])
def test_enum_refuses_bad_symbol_lists(bad):
    with pytest.raises(ValueError, match="RED|PURPLE"):
        EnumSerializer(Color, symbols=bad)


def test_enum_aliases_name_their_canonical_member():
    s = EnumSerializer(Aliased, symbols=["TWO", "UNO"])
    assert s.symbols == ("TWO", "ONE"), f"got {s.symbols}, should be TWO, ONE"
    assert s.to_bytes(Aliased.UNO) == b"\x00\x00\x00\x01", "the alias writes its member's ordinal"
    with pytest.raises(ValueError, match="twice"):
        EnumSerializer(Aliased, symbols=["ONE", "UNO"])


@given(st.permutations([m.name for m in Color]), st.lists(st.sampled_from(list(Color)), max_size=20))
def test_enum_roundtrip_any_symbol_order(order, members):
    s = EnumSerializer(Color, symbols=order)
    out = DataOutputView()
    for m in members:
        s.serialize(m, out)
    assert out.len() == 4 * len(members), f"got {out.len()} bytes, should be 4 per member"
    source = DataInputView(out.getvalue())
    got = [s.deserialize(source) for _ in members]
    assert got == members, f"got {got}, should be {members}"
    assert source.available() == 0, f"got {source.available()} bytes left, should be 0"


@pytest.mark.parametrize("ordinal", [-1, 3, 2**31 - 1, -(2**31)])
def test_enum_wrong_ordinal_is_serialization_error(ordinal):
    with pytest.raises(SerializationError, match=str(ordinal)):
        EnumSerializer(Color).from_bytes(struct.pack(">i", ordinal))


def test_enum_refuses_foreign_values():
    with pytest.raises(SerializationError, match="Shape|CIRCLE"):
        EnumSerializer(Color).to_bytes(Shape.CIRCLE)


def test_enum_registers_its_class():
    class Local(enum.Enum):
        A = 1

    EnumSerializer(Local)
    name = f"{Local.__module__}:{Local.__qualname__}"
    assert reference.lookup_type(name) is Local, f"got {reference.lookup_type(name)}, should be the registered class"


def test_enum_serializer_pickles_and_stays_equal():
    s = EnumSerializer(Color, symbols=["GREEN", "BLUE", "RED"])
    back = pickle.loads(pickle.dumps(s))
    assert back == s and hash(back) == hash(s), f"got {back!r}, should equal {s!r}"
    assert back.to_bytes(Color.RED) == s.to_bytes(Color.RED), "unpickled serializer writes other bytes"
    assert EnumSerializer(Color) != s, "serializers with different symbol orders must differ"


def test_enum_copy_serialized_length_and_fixed_properties():
    s = EnumSerializer(Color)
    source = DataInputView(s.to_bytes(Color.GREEN) + b"\xff")
    out = DataOutputView()
    s.copy_serialized(source, out)
    assert out.getvalue() == b"\x00\x00\x00\x01", f"got {out.getvalue().hex()}, should be 00000001"
    assert source.available() == 1, f"got {source.available()} left, should be 1 (exactly one record copied)"
    assert s.length == 4 and s.is_immutable_type, f"got length {s.length}, should be 4 and immutable"
    assert s.copy(Color.RED) is Color.RED


# -- snapshot ----------------------------------------------------------------------------------
def test_enum_snapshot_golden_bytes():
    s = EnumSerializer(Color, symbols=["BLUE", "RED", "GREEN"])
    got = snapshot_to_bytes(s.snapshot_configuration())
    expected = (
        struct.pack(">i", 2)
        + _utf("reference.serializers:EnumSerializerSnapshot")
        + struct.pack(">i", 3)
        + _utf(f"{__name__}:Color")
        + struct.pack(">i", 3)
        + _utf("BLUE") + _utf("RED") + _utf("GREEN")
    )
    assert got == expected, f"got {got.hex()}, should be {expected.hex()}"


def test_enum_snapshot_restores_equal_serializer():
    s = EnumSerializer(Color, symbols=["GREEN", "RED", "BLUE"])
    restored = snapshot_from_bytes(snapshot_to_bytes(s.snapshot_configuration())).restore_serializer()
    assert restored == s, f"got {restored!r}, should be {s!r}"
    assert resolve_compatibility(s, s.snapshot_configuration()).is_compatible_as_is()


def test_enum_appended_member_is_reconfigured_keeping_old_ordinals(evolving_enum):
    v1 = evolving_enum(["A", "B"])
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(EnumSerializer(v1).snapshot_configuration()))
    old_bytes = EnumSerializer(v1).to_bytes(v1.B)
    v2 = evolving_enum(["C", "A", "B"])  # a new member declared first: declaration ordinals shift
    result = resolve_compatibility(EnumSerializer(v2), old_snapshot)
    assert result.is_compatible_with_reconfigured_serializer(), f"got {result}, should be reconfigured"
    reconfigured = result.get_reconfigured_serializer()
    assert reconfigured.symbols == ("A", "B", "C"), f"got {reconfigured.symbols}, should keep A,B and append C"
    assert reconfigured.from_bytes(old_bytes) is v2.B, "old ordinal 1 should still read as B"
    assert reconfigured.to_bytes(v2.C) == b"\x00\x00\x00\x02", "the new member should take the next ordinal"


def test_enum_reordered_members_are_reconfigured(evolving_enum):
    v1 = evolving_enum(["A", "B", "C"])
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(EnumSerializer(v1).snapshot_configuration()))
    v2 = evolving_enum(["C", "B", "A"])
    result = resolve_compatibility(EnumSerializer(v2), old_snapshot)
    assert result.is_compatible_with_reconfigured_serializer(), f"got {result}, should be reconfigured"
    assert result.get_reconfigured_serializer().symbols == ("A", "B", "C")


def test_enum_removed_member_is_incompatible_naming_it(evolving_enum):
    v1 = evolving_enum(["A", "GONE", "B"])
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(EnumSerializer(v1).snapshot_configuration()))
    v2 = evolving_enum(["A", "B"])
    result = resolve_compatibility(EnumSerializer(v2), old_snapshot)
    assert result.is_incompatible() and "GONE" in result.reason, f"got {result}, should be incompatible naming GONE"
    # The old data can still be read where it does not hold the removed member.
    restored = old_snapshot.restore_serializer()
    assert restored.from_bytes(b"\x00\x00\x00\x02") is v2.B
    with pytest.raises(SerializationError, match="GONE"):
        restored.from_bytes(b"\x00\x00\x00\x01")


def test_enum_class_change_is_incompatible():
    result = resolve_compatibility(EnumSerializer(Shape), EnumSerializer(Color).snapshot_configuration())
    assert result.is_incompatible() and "Color" in result.reason, f"got {result}, should name the old class"


def test_enum_versus_other_snapshot_is_incompatible():
    result = resolve_compatibility(EnumSerializer(Color), IntSerializer().snapshot_configuration())
    assert result.is_incompatible(), f"got {result}, should be incompatible"


def test_enum_restore_unknown_class_says_import_and_imports_nothing():
    data = (
        struct.pack(">i", 2) + _utf("reference.serializers:EnumSerializerSnapshot")
        + struct.pack(">i", 3) + _utf("json.tool:Nope") + struct.pack(">i", 1) + _utf("X")
    )
    before = set(sys.modules)
    snapshot = snapshot_from_bytes(data)
    with pytest.raises(StateError, match="import"):
        snapshot.restore_serializer()
    assert set(sys.modules) == before, f"got new modules {set(sys.modules) - before}, should import nothing"


@pytest.mark.parametrize("version", [1, 2, 4])
def test_enum_snapshot_unknown_version_refused(version):
    data = (
        struct.pack(">i", 2) + _utf("reference.serializers:EnumSerializerSnapshot")
        + struct.pack(">i", version) + _utf(f"{__name__}:Color") + struct.pack(">i", 0)
    )
    with pytest.raises(SnapshotFormatError, match=str(version)):
        snapshot_from_bytes(data)


def test_enum_snapshot_huge_count_refused():
    data = (
        struct.pack(">i", 2) + _utf("reference.serializers:EnumSerializerSnapshot")
        + struct.pack(">i", 3) + _utf(f"{__name__}:Color") + struct.pack(">i", 2**31 - 1)
    )
    with pytest.raises(SnapshotFormatError, match="count"):
        snapshot_from_bytes(data)


def test_enum_snapshot_class_is_top_level_and_registered():
    assert EnumSerializerSnapshot.__qualname__ == "EnumSerializerSnapshot"
    assert type(snapshot_from_bytes(snapshot_to_bytes(EnumSerializer(Color).snapshot_configuration()))) is EnumSerializerSnapshot


# -- pickle ------------------------------------------------------------------------------------
_picklable = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10) | st.binary(max_size=10)
    | st.floats(allow_nan=False) | st.sampled_from(list(Color)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    | st.tuples(inner, inner) | st.frozensets(st.integers(), max_size=3),
    max_leaves=12,
)


@given(_picklable)
def test_pickle_roundtrip_and_layout(value):
    s = PickleSerializer()
    data = s.to_bytes(value)
    (size,) = struct.unpack(">i", data[:4])
    assert size == len(data) - 4, f"got length prefix {size}, should be {len(data) - 4}"
    assert data[4:] == pickle.dumps(value, protocol=5), "payload should be pickle protocol 5"
    back = s.from_bytes(data)
    assert back == value and type(back) is type(value), f"got {back!r}, should be {value!r}"


def test_pickle_keeps_nan_payload_and_negative_zero():
    nan = struct.unpack(">d", bytes.fromhex("7ff0000000000123"))[0]
    back = PickleSerializer().from_bytes(PickleSerializer().to_bytes([nan, -0.0]))
    got = [struct.pack(">d", x).hex() for x in back]
    assert got == ["7ff0000000000123", "8000000000000000"], f"got {got}, should keep the raw bits"


def test_pickle_copy_is_deep():
    value = {"a": [1, [2, 3]]}
    copied = PickleSerializer().copy(value)
    copied["a"][1].append(4)
    assert value == {"a": [1, [2, 3]]}, f"got {value}, the original changed through the copy"


def test_pickle_copy_serialized_copies_one_record():
    s = PickleSerializer()
    first, second = s.to_bytes([1, 2]), s.to_bytes("x")
    source = DataInputView(first + second)
    out = DataOutputView()
    s.copy_serialized(source, out)
    assert out.getvalue() == first, f"got {out.getvalue().hex()}, should be {first.hex()}"
    assert source.available() == len(second)


@pytest.mark.parametrize(
    "data",
    [
        b"\x00\x00\x00\x03abc",  # not a pickle
        b"\x00\x00\x00\x02\x80\x05",  # truncated pickle
        b"\x00\x00\x00\x10\x80\x05",  # length beyond the data
        b"\xff\xff\xff\xff",  # negative length
    ],
    ids=["garbage", "truncated", "long-length", "negative-length"],
)
def test_pickle_corrupt_payload_is_serialization_error(data):
    with pytest.raises(SerializationError):
        PickleSerializer().from_bytes(data)


def test_pickle_of_a_class_that_is_not_importable_is_serialization_error():
    # STACK_GLOBAL of "no_such_module_for_pickle:Nope", then STOP
    payload = b"\x80\x05\x8c\x19no_such_module_for_pickle\x94\x8c\x04Nope\x94\x93\x94."
    data = struct.pack(">i", len(payload)) + payload
    with pytest.raises(SerializationError, match="ModuleNotFoundError"):
        PickleSerializer().from_bytes(data)


def test_pickle_unpicklable_value_is_serialization_error():
    with pytest.raises(SerializationError, match="lambda|function"):
        PickleSerializer().to_bytes(lambda: 1)


def test_pickle_snapshot_is_simple_and_as_is_with_itself():
    data = snapshot_to_bytes(PickleSerializer().snapshot_configuration())
    expected = struct.pack(">i", 2) + _utf("reference.serializers:PickleSerializerSnapshot") + struct.pack(">i", 3)
    assert data == expected, f"got {data.hex()}, should be {expected.hex()}"
    snapshot = snapshot_from_bytes(data)
    assert type(snapshot) is PickleSerializerSnapshot
    assert snapshot.restore_serializer() == PickleSerializer()
    result = resolve_compatibility(PickleSerializer(), snapshot)
    assert result.is_compatible_as_is(), f"got {result}, should be as-is"
    assert pickle.loads(pickle.dumps(PickleSerializer())) == PickleSerializer()


@pytest.mark.parametrize(
    "old,new",
    [
        (PickleSerializer(), StringSerializer()),
        (StringSerializer(), PickleSerializer()),
        (ListSerializer(PickleSerializer()), ListSerializer(LongSerializer())),
        (MapSerializer(StringSerializer(), PickleSerializer()), MapSerializer(StringSerializer(), IntSerializer())),
        (MapSerializer(PickleSerializer(), IntSerializer()), MapSerializer(StringSerializer(), IntSerializer())),
    ],
    ids=["pickle->string", "string->pickle", "list-of-pickle", "map-value-pickle", "map-key-pickle"],
)
def test_a_type_containing_pickle_cannot_evolve(old, new):
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    result = resolve_compatibility(new, old_snapshot)
    assert result.is_incompatible(), f"got {result}, should be incompatible ({old!r} -> {new!r})"


def test_pickle_inside_list_and_map_unchanged_is_as_is_and_roundtrips():
    serializer = MapSerializer(StringSerializer(), ListSerializer(PickleSerializer()))
    value = {"k": [{"x": 1}, (2, 3.5), None], "e": []}
    assert serializer.from_bytes(serializer.to_bytes(value)) == value
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration()))
    result = resolve_compatibility(MapSerializer(StringSerializer(), ListSerializer(PickleSerializer())), old_snapshot)
    assert result.is_compatible_as_is(), f"got {result}, should be as-is"
