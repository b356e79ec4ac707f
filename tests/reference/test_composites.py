"""Nullable, List, Map and Tuple: Flink layouts, round trips on generated nested values, deep
copies, and the composite compatibility rule."""

from __future__ import annotations

import enum
import pickle
import struct
import sys
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    SerializationError,
    StateError,
    TypeSerializer,
    TypeSerializerSnapshot,
    register_type,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.serializers import (
    BooleanSerializer,
    BytesSerializer,
    DoubleSerializer,
    EnumSerializer,
    FloatSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    MapSerializer,
    NullableSerializer,
    ShortSerializer,
    StringSerializer,
    TimerSerializer,
    TtlSerializer,
    TupleSerializer,
    VoidNamespaceSerializer,
)


def canonical(value):
    """Type-exact, order-aware, bit-exact form of a value for comparisons."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, list):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, tuple):
        return ("tuple", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((canonical(k), canonical(v)) for k, v in value.items()))
    return (type(value).__name__, value)


def mutable_ids(value, into=None):
    into = set() if into is None else into
    if isinstance(value, (list, dict)):
        into.add(id(value))
    if isinstance(value, (list, tuple)):
        for v in value:
            mutable_ids(v, into)
    elif isinstance(value, dict):
        for k, v in value.items():
            mutable_ids(k, into)
            mutable_ids(v, into)
    return into


def _double(bits: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", bits))[0]


# -- a small schema model of our own (the core is tested without the strategies package) -------
_LEAVES = {
    "boolean": (BooleanSerializer, st.booleans()),
    "short": (ShortSerializer, st.integers(-(2**15), 2**15 - 1)),
    "int": (IntSerializer, st.integers(-(2**31), 2**31 - 1)),
    "long": (LongSerializer, st.integers(-(2**63), 2**63 - 1)),
    "float": (FloatSerializer, st.sampled_from([0.0, -0.0, 1.5, float("inf")])),
    "double": (DoubleSerializer, st.integers(0, 2**64 - 1).map(_double)),
    "string": (StringSerializer, st.text(max_size=8)),
    "bytes": (BytesSerializer, st.binary(max_size=8)),
}
_KEYS = ["int", "long", "string", "bytes"]

_schemas = st.recursive(
    st.tuples(st.just("leaf"), st.sampled_from(sorted(_LEAVES))),
    lambda inner: st.one_of(
        st.tuples(st.just("nullable"), inner, st.booleans()),
        st.tuples(st.just("list"), inner),
        st.tuples(st.just("map"), st.sampled_from(_KEYS), inner),
        st.tuples(st.just("tuple"), st.lists(inner, min_size=1, max_size=3).map(tuple)),
    ),
    max_leaves=6,
)


def build(schema):
    """(serializer, values strategy) for a schema; values never None at the top."""
    kind = schema[0]
    if kind == "leaf":
        factory, values = _LEAVES[schema[1]]
        return factory(), values
    if kind == "nullable":
        inner, values = build(schema[1])
        return NullableSerializer(inner, padded=schema[2]), st.none() | values
    if kind == "list":
        inner, values = build(schema[1])
        return ListSerializer(inner), st.lists(values, max_size=4)
    if kind == "map":
        key_factory, keys = _LEAVES[schema[1]]
        inner, values = build(schema[2])
        return MapSerializer(key_factory(), inner), st.dictionaries(keys, st.none() | values, max_size=4)
    fields = [build(f) for f in schema[1]]
    return TupleSerializer(*[f[0] for f in fields]), st.tuples(*[f[1] for f in fields])


@given(data=st.data())
def test_generated_nested_values_roundtrip_bit_exact(data):
    serializer, values = build(data.draw(_schemas, label="schema"))
    items = data.draw(st.lists(values, min_size=1, max_size=3), label="values")
    out = DataOutputView()
    sizes = []
    for item in items:
        before = out.len()
        serializer.serialize(item, out)
        sizes.append(out.len() - before)
    source = DataInputView(out.getvalue())
    got = [serializer.deserialize(source) for _ in items]
    assert [canonical(v) for v in got] == [canonical(v) for v in items], f"got {got!r}, should be {items!r} with {serializer!r}"
    assert source.available() == 0, f"got {source.available()} bytes left over, should be 0"
    if serializer.length != -1:
        assert set(sizes) == {serializer.length}, f"got record sizes {sizes}, should all be length {serializer.length}"
    # copy_serialized copies exactly one record
    source = DataInputView(out.getvalue())
    copied = DataOutputView()
    serializer.copy_serialized(source, copied)
    assert copied.len() == sizes[0] and copied.getvalue() == out.getvalue()[: sizes[0]], "copy_serialized copied the wrong bytes"
    assert source.available() == out.len() - sizes[0], "copy_serialized consumed more or less than one record"


@given(data=st.data())
def test_copy_is_deep_and_equal(data):
    serializer, values = build(data.draw(_schemas, label="schema"))
    value = data.draw(values, label="value")
    copied = serializer.copy(value)
    assert canonical(copied) == canonical(value), f"got {copied!r}, should equal {value!r}"
    shared = mutable_ids(copied) & mutable_ids(value)
    assert not shared, f"copy of {value!r} shares {len(shared)} mutable containers with the original"


@given(data=st.data())
def test_serializers_pickle_duplicate_and_restore_equal(data):
    serializer, _ = build(data.draw(_schemas, label="schema"))
    assert pickle.loads(pickle.dumps(serializer)) == serializer
    assert serializer.duplicate() == serializer
    restored = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration())).restore_serializer()
    assert restored == serializer, f"got {restored!r}, should be {serializer!r}"
    result = resolve_compatibility(serializer, serializer.snapshot_configuration())
    assert result.is_compatible_as_is(), f"got {result}, should be as-is for {serializer!r}"


# -- golden layouts (docs/formats.md) -----------------------------------------------------------
@pytest.mark.parametrize(
    "serializer,value,expected",
    [
        (ListSerializer(IntSerializer()), [1, -1], "00000002 00000001 ffffffff"),
        (ListSerializer(IntSerializer()), [], "00000000"),
        (ListSerializer(StringSerializer()), ["a", None], "00000002 0261 00"),
        (MapSerializer(StringSerializer(), LongSerializer()), {"a": 1, "b": None},
         "00000002 0261 00 0000000000000001 0262 01"),
        (NullableSerializer(IntSerializer()), None, "01"),
        (NullableSerializer(IntSerializer()), 5, "00 00000005"),
        (NullableSerializer(IntSerializer(), padded=True), None, "01 00000000"),
        (NullableSerializer(IntSerializer(), padded=True), 5, "00 00000005"),
        (NullableSerializer(StringSerializer(), padded=True), None, "01"),  # no fixed length: no padding
        (TupleSerializer(IntSerializer(), StringSerializer(), BooleanSerializer()), (7, "x", True), "00000007 0278 01"),
    ],
    ids=["list", "list-empty", "list-string-null", "map", "nullable-null", "nullable-value",
         "padded-null", "padded-value", "padded-variable-inner", "tuple"],
)
def test_golden_layouts(serializer, value, expected):
    got = serializer.to_bytes(value).hex()
    assert got == expected.replace(" ", ""), f"got {got}, should be {expected}"
    assert canonical(serializer.from_bytes(bytes.fromhex(expected.replace(" ", "")))) == canonical(value)


def test_padded_nullable_has_fixed_length():
    assert NullableSerializer(LongSerializer(), padded=True).length == 9
    assert NullableSerializer(LongSerializer()).length == -1
    assert TupleSerializer(IntSerializer(), LongSerializer()).length == 12


def test_a_zero_width_field_keeps_a_tuple_fixed_length():
    """An empty tuple takes no bytes: a tuple holding one is as fixed as its other fields, and
    a padded Nullable around it pads exactly that many bytes."""
    empty = TupleSerializer()
    assert empty.length == 0, f"got {empty.length}, should be 0"
    holding = TupleSerializer(IntSerializer(), empty)
    assert holding.length == 4, f"got {holding.length}, should be 4 (an int and a zero-width tuple)"
    padded = NullableSerializer(holding, padded=True)
    assert padded.length == 5, f"got {padded.length}, should be 5"
    assert padded.to_bytes(None).hex() == "0100000000", f"got {padded.to_bytes(None).hex()}, should be 01 + 4 zero bytes"


@pytest.mark.parametrize(
    "serializer,value",
    [
        (TupleSerializer(IntSerializer()), (None,)),
        (TupleSerializer(IntSerializer()), (1, 2)),
        (TupleSerializer(IntSerializer()), [1]),
        (ListSerializer(IntSerializer()), (1,)),
        (MapSerializer(StringSerializer(), IntSerializer()), {None: 1}),
        (MapSerializer(StringSerializer(), IntSerializer()), [("a", 1)]),
    ],
    ids=["tuple-null", "tuple-arity", "tuple-list", "list-tuple", "map-null-key", "map-pairs"],
)
def test_invalid_values_are_serialization_errors(serializer, value):
    with pytest.raises(SerializationError):
        serializer.to_bytes(value)


@pytest.mark.parametrize(
    "serializer,data",
    [
        (ListSerializer(IntSerializer()), "7fffffff"),
        (ListSerializer(IntSerializer()), "ffffffff"),
        (MapSerializer(IntSerializer(), IntSerializer()), "40000000"),
    ],
    ids=["list-huge", "list-negative", "map-huge"],
)
def test_corrupt_sizes_are_refused_without_allocating(serializer, data):
    with pytest.raises(SerializationError, match="size"):
        serializer.from_bytes(bytes.fromhex(data))


@pytest.mark.parametrize("serializer", [ListSerializer(IntSerializer()), ListSerializer(StringSerializer())],
                         ids=["fixed", "variable"])
def test_copying_a_list_record_cut_after_its_first_element_is_a_serialization_error(serializer):
    items = [7, 8, 9, 10, 11] if isinstance(serializer.element, IntSerializer) else list("abcde")
    cut = serializer.to_bytes(items)[: 4 + len(serializer.element.to_bytes(items[0]))]
    with pytest.raises(SerializationError, match="size"):
        serializer.copy_serialized(DataInputView(cut), DataOutputView())


# -- the composite compatibility rule -----------------------------------------------------------
class VerdictSerializer(TypeSerializer[int]):
    """Writes longs; its snapshot returns the verdict named by ``kind`` on any old one of its
    class. Lets the tests drive every nested verdict."""

    def __init__(self, kind: str = "as_is") -> None:
        self.kind = kind

    def serialize(self, value: int, target: DataOutputView) -> None:
        target.write_long(value)

    def deserialize(self, source: DataInputView) -> int:
        return source.read_long()

    def snapshot_configuration(self) -> VerdictSnapshot:
        snapshot = VerdictSnapshot()
        snapshot.kind = self.kind
        return snapshot


class VerdictSnapshot(TypeSerializerSnapshot[int]):
    def __init__(self) -> None:
        self.kind = "as_is"

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_utf(self.kind)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        self.kind = source.read_utf()

    def restore_serializer(self) -> VerdictSerializer:
        return VerdictSerializer(self.kind)

    def resolve_schema_compatibility(self, old_snapshot):
        if not isinstance(old_snapshot, VerdictSnapshot):
            return SchemaCompatibility.incompatible("not a verdict snapshot")
        return {
            "as_is": SchemaCompatibility.compatible_as_is,
            "after": SchemaCompatibility.compatible_after_migration,
            "reconf": lambda: SchemaCompatibility.compatible_with_reconfigured_serializer(VerdictSerializer("reconfigured")),
            "incompat": lambda: SchemaCompatibility.incompatible(f"verdict field said so ({old_snapshot.kind})"),
        }[self.kind]()


_KINDS = ["as_is", "reconf", "after", "incompat"]  # simplest first, for shrinking


def expected_combination(kinds: list[str]) -> str:
    """Flink's precedence, written independently: INCOMPATIBLE > AFTER_MIGRATION > RECONFIGURED > AS_IS."""
    for kind, result in [("incompat", "incompatible"), ("after", "compatible_after_migration"),
                         ("reconf", "compatible_with_reconfigured_serializer")]:
        if kind in kinds:
            return result
    return "compatible_as_is"


@given(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=5))
def test_tuple_combines_nested_verdicts_by_precedence(kinds):
    old = TupleSerializer(*[VerdictSerializer("old") for _ in kinds])
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    new = TupleSerializer(*[VerdictSerializer(k) for k in kinds])
    result = resolve_compatibility(new, old_snapshot)
    expected = expected_combination(kinds)
    assert result.kind == expected, f"got {result.kind}, should be {expected} for nested {kinds}"
    if expected == "compatible_with_reconfigured_serializer":
        rebuilt = TupleSerializer(*[VerdictSerializer("reconfigured" if k == "reconf" else k) for k in kinds])
        got = result.get_reconfigured_serializer()
        assert got == rebuilt, f"got {got!r}, should be the outer rebuilt around the reconfigured nested: {rebuilt!r}"
    if expected == "incompatible":
        assert "tuple field" in result.reason, f"got reason {result.reason!r}, should name the tuple field"


@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize(
    "wrap",
    [lambda s: ListSerializer(s), lambda s: MapSerializer(StringSerializer(), s),
     lambda s: MapSerializer(s, StringSerializer()), lambda s: NullableSerializer(s)],
    ids=["list", "map-value", "map-key", "nullable"],
)
def test_single_nested_verdict_passes_through(wrap, kind):
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(wrap(VerdictSerializer("old")).snapshot_configuration()))
    result = resolve_compatibility(wrap(VerdictSerializer(kind)), old_snapshot)
    expected = expected_combination([kind])
    assert result.kind == expected, f"got {result.kind}, should be {expected}"
    if kind == "reconf":
        got = result.get_reconfigured_serializer()
        assert got == wrap(VerdictSerializer("reconfigured")), f"got {got!r}, should be rebuilt around the reconfigured nested"


def test_nullable_padding_change_is_incompatible_even_with_reconfigured_nested():
    for old_padded, new_padded in [(False, True), (True, False)]:
        old_snapshot = snapshot_from_bytes(snapshot_to_bytes(
            NullableSerializer(IntSerializer(), padded=old_padded).snapshot_configuration()))
        result = resolve_compatibility(NullableSerializer(IntSerializer(), padded=new_padded), old_snapshot)
        assert result.is_incompatible() and "padding" in result.reason, f"got {result}, should be incompatible naming the padding"


def test_nullable_padding_survives_snapshot():
    serializer = NullableSerializer(LongSerializer(), padded=True)
    restored = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration())).restore_serializer()
    assert restored.padding_length == 8 and restored.to_bytes(None) == b"\x01" + bytes(8), f"got {restored!r}"


@pytest.mark.parametrize(
    "old,new",
    [
        (TupleSerializer(IntSerializer()), TupleSerializer(IntSerializer(), IntSerializer())),
        (ListSerializer(IntSerializer()), NullableSerializer(IntSerializer())),
        (ListSerializer(IntSerializer()), ListSerializer(LongSerializer())),
        (MapSerializer(IntSerializer(), IntSerializer()), MapSerializer(LongSerializer(), IntSerializer())),
        (NullableSerializer(IntSerializer()), IntSerializer()),
        (IntSerializer(), NullableSerializer(IntSerializer())),
    ],
    ids=["tuple-arity", "composite-class", "list-element", "map-key", "unwrap", "wrap"],
)
def test_structural_changes_are_incompatible(old, new):
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    result = resolve_compatibility(new, old_snapshot)
    assert result.is_incompatible(), f"got {result}, should be incompatible for {old!r} -> {new!r}"


@pytest.fixture
def evolving_enum():
    name = "tests_composites_enum_module"

    def define(members):
        module = types.ModuleType(name)
        cls = enum.Enum("E", [(m, i) for i, m in enumerate(members)], module=name, qualname="E")
        module.E = cls
        sys.modules[name] = module
        return cls

    yield define
    sys.modules.pop(name, None)


def test_reconfigured_enum_rebuilds_list_and_map(evolving_enum):
    v1 = evolving_enum(["A", "B"])
    old = MapSerializer(StringSerializer(), ListSerializer(EnumSerializer(v1)))
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    old_bytes = old.to_bytes({"k": [v1.B, v1.A]})
    v2 = evolving_enum(["Z", "A", "B"])
    result = resolve_compatibility(MapSerializer(StringSerializer(), ListSerializer(EnumSerializer(v2))), old_snapshot)
    assert result.is_compatible_with_reconfigured_serializer(), f"got {result}, should be reconfigured"
    reconfigured = result.get_reconfigured_serializer()
    assert isinstance(reconfigured, MapSerializer) and isinstance(reconfigured.value, ListSerializer)
    got = reconfigured.from_bytes(old_bytes)
    assert got == {"k": [v2.B, v2.A]}, f"got {got}, should read the old ordinals as B, A"


def test_an_enum_snapshot_whose_class_name_is_registered_to_a_non_enum_is_refused(evolving_enum):
    colour = evolving_enum(["RED", "GREEN"])
    written = snapshot_to_bytes(EnumSerializer(colour).snapshot_configuration())
    impostor = type("E", (), {"__module__": colour.__module__, "__qualname__": "E"})
    register_type(impostor)  # the last registration of a name wins
    try:
        with pytest.raises(StateError) as info:
            snapshot_from_bytes(written).restore_serializer()
        assert "not an Enum class" in str(info.value), f"got {info.value}, should say the class is not an Enum"
    finally:
        register_type(colour)


class _ScratchLong(LongSerializer):
    """A serializer with per-instance state: ``duplicate()`` is a new instance."""

    def __init__(self) -> None:
        super().__init__()
        self.scratch: list[int] = []

    def duplicate(self) -> _ScratchLong:
        return _ScratchLong()


@pytest.mark.parametrize("make,value", [
    (lambda: MapSerializer(StringSerializer(), _ScratchLong()), {"a": 1, "b": -2}),
    (lambda: MapSerializer(_ScratchLong(), StringSerializer()), {1: "a", -2: "b"}),
    (lambda: ListSerializer(_ScratchLong()), [1, -2]),
    (lambda: TupleSerializer(StringSerializer(), _ScratchLong()), ("a", 3)),
    (lambda: NullableSerializer(_ScratchLong(), padded=True), None),
], ids=["map-value", "map-key", "list", "tuple", "nullable"])
def test_a_composite_over_a_stateful_serializer_duplicates_into_an_equal_new_one(make, value):
    serializer = make()
    dup = serializer.duplicate()
    assert dup is not serializer, f"got the same {type(serializer).__name__} back, should be a new one"
    assert dup == serializer, f"got {dup!r}, should equal {serializer!r}"
    assert dup.to_bytes(value) == serializer.to_bytes(value), f"the duplicate writes other bytes for {value!r}"
    assert dup.from_bytes(serializer.to_bytes(value)) == value, f"the duplicate reads other than {value!r}"


def test_an_enum_restored_over_a_class_that_lost_every_member_has_no_instance_to_create(evolving_enum):
    old = evolving_enum(["RED", "GREEN"])
    written = snapshot_to_bytes(EnumSerializer(old).snapshot_configuration())
    register_type(evolving_enum(["BLUE"]))  # a later release's class: none of the recorded members left
    restored = snapshot_from_bytes(written).restore_serializer()
    with pytest.raises(StateError) as info:
        restored.create_instance()
    assert "none of the members" in str(info.value), f"got {info.value}, should say no member is left"


def test_an_enum_creates_its_first_member_left(evolving_enum):
    """create_instance() is the first of the serializer's symbols whose member the class still
    has (restored over a class that lost the first recorded member: the next one)."""
    cls = evolving_enum(["RED", "GREEN"])
    assert EnumSerializer(cls).create_instance() is cls.RED, f"got {EnumSerializer(cls).create_instance()!r}"
    written = snapshot_to_bytes(EnumSerializer(cls).snapshot_configuration())
    later = evolving_enum(["GREEN", "BLUE"])
    register_type(later)
    got = snapshot_from_bytes(written).restore_serializer().create_instance()
    assert got is later.GREEN, f"got {got!r}, should be GREEN (RED is gone)"


@pytest.mark.parametrize("build, named", [
    (lambda: TtlSerializer(None, LongSerializer()), "TtlSerializer's timestamp"),
    (lambda: TtlSerializer(LongSerializer(), "long"), "TtlSerializer's value"),
    (lambda: TimerSerializer(LongSerializer, VoidNamespaceSerializer()), "TimerSerializer's key"),
    (lambda: TimerSerializer(LongSerializer(), None), "TimerSerializer's namespace"),
])
def test_flink_runtime_composites_refuse_a_nested_non_serializer_at_construction(build, named):
    with pytest.raises(TypeError) as caught:
        build()
    assert named in str(caught.value), f"got {caught.value}, should name {named!r}"
