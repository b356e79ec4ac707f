"""PojoSerializer: dataclasses in Flink's POJO format, with Flink's POJO evolution rules."""

from __future__ import annotations

import dataclasses
import enum
import pickle
import struct
import subprocess
import sys
import types
from typing import Optional

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
    BooleanSerializer,
    BytesSerializer,
    DoubleSerializer,
    EnumSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    MapSerializer,
    NullableSerializer,
    PickleSerializer,
    PojoSerializer,
    PojoSerializerSnapshot,
    RowSerializer,
    StringSerializer,
    TupleSerializer,
)


class Suit(enum.Enum):
    HEARTS = 1
    SPADES = 2
    CLUBS = 3


@dataclasses.dataclass
class Point:
    y: int
    x: float
    label: str | None = None


@dataclasses.dataclass
class Everything:
    flag: bool
    count: int
    ratio: float
    text: str
    blob: bytes
    maybe: int | None
    words: list[str]
    scores: dict[str, int]
    pair: tuple[int, str]
    point: Point
    suit: Suit
    anything: set[int]
    small: int = dataclasses.field(default=0, metadata={"serializer": IntSerializer()})


def canonical(value):
    """Exact comparison form: floats by bits, types recorded, dataclasses by class and fields."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, tuple((f.name, canonical(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((canonical(k), canonical(v)) for k, v in value.items()))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, tuple(sorted(value)))
    return (type(value).__name__, value)


def _double_from_bits(bits: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", bits))[0]


_doubles = st.one_of(
    st.sampled_from([0.0, -0.0, float("inf")]), st.integers(0, 2**64 - 1).map(_double_from_bits)
)


def _maybe(strategy):
    return st.one_of(st.none(), strategy)


points = st.builds(Point, y=_maybe(st.integers(-(2**63), 2**63 - 1)), x=_maybe(_doubles), label=_maybe(st.text(max_size=5)))
everything = st.builds(
    Everything,
    flag=_maybe(st.booleans()),
    count=_maybe(st.integers(-(2**63), 2**63 - 1)),
    ratio=_maybe(_doubles),
    text=_maybe(st.text(max_size=6)),
    blob=_maybe(st.binary(max_size=6)),
    maybe=_maybe(st.integers(-5, 5)),
    words=_maybe(st.lists(st.text(max_size=3), max_size=3)),
    scores=_maybe(st.dictionaries(st.text(max_size=3), _maybe(st.integers(-5, 5)), max_size=3)),
    pair=_maybe(st.tuples(st.integers(-5, 5), st.text(max_size=3))),
    point=_maybe(points),
    suit=_maybe(st.sampled_from(list(Suit))),
    anything=_maybe(st.sets(st.integers(-5, 5), max_size=3)),
    small=_maybe(st.integers(-(2**31), 2**31 - 1)),
)


def utf(text: str) -> bytes:
    return struct.pack(">H", len(text)) + text.encode("ascii")


# -- field serializers and bytes --------------------------------------------------------------------
def test_field_serializers_from_annotations_and_metadata():
    got = dict(PojoSerializer(Everything).fields)
    want = {
        "anything": PickleSerializer(),
        "blob": BytesSerializer(),
        "count": LongSerializer(),
        "flag": BooleanSerializer(),
        "maybe": NullableSerializer(LongSerializer()),
        "pair": TupleSerializer(LongSerializer(), StringSerializer()),
        "point": PojoSerializer(Point),
        "ratio": DoubleSerializer(),
        "scores": MapSerializer(StringSerializer(), LongSerializer()),
        "small": IntSerializer(),
        "suit": EnumSerializer(Suit),
        "text": StringSerializer(),
        "words": ListSerializer(StringSerializer()),
    }
    for name in want:
        assert got.get(name) == want[name], f"got {got.get(name)!r}, should be {want[name]!r} [field {name}]"
    assert list(got) == sorted(want), f"got fields {list(got)}, should be the name-sorted {sorted(want)}"


def test_golden_bytes_fields_in_name_order():
    s = PojoSerializer(Point)
    got = s.to_bytes(Point(y=1, x=-0.0))
    # flags 02 | label: null | x: 00 + -0.0 | y: 00 + long 1
    want = bytes.fromhex("02" "01" "00" "8000000000000000" "00" "0000000000000001")
    assert got == want, f"got {got.hex()}, should be {want.hex()}"
    got = s.to_bytes(Point(y=None, x=1.5, label="a"))
    # label: not null, Nullable flag 00, String "a" (02 61)
    want = bytes.fromhex("02" "00" "00" "0261" "00" "3ff8000000000000" "01")
    assert got == want, f"got {got.hex()}, should be {want.hex()}"
    assert s.to_bytes(None) == b"\x01", f"got {s.to_bytes(None).hex()}, should be 01 for a null POJO"
    assert s.from_bytes(b"\x01") is None, "flags 01 should read as None"


def test_registers_the_dataclass():
    PojoSerializer(Point)
    assert reference.lookup_type(f"{Point.__module__}:Point") is Point, "PojoSerializer should register its class"


@dataclasses.dataclass
class Point3(Point):
    z: int = 0


@dataclasses.dataclass
class Point4(Point):
    w: bool = False


def test_subclasses_in_flinks_format():
    registered = PojoSerializer(Point, registered_subclasses=[Point4, Point3])
    value = Point3(1, 2.0, "p", 7)
    # flags 08, tag 1 (Point3 is registered second), then Point3's own record: flags 02 and
    # its fields x, y, z in name order.
    own = PojoSerializer(Point3).to_bytes(value)
    got = registered.to_bytes(value)
    assert got == b"\x08\x01" + own, f"got {got.hex()}, should be 0801 + {own.hex()}"
    assert registered.from_bytes(got) == value, "a registered subclass should read back as itself"
    plain = PojoSerializer(Point)
    got = plain.to_bytes(value)
    want = b"\x04" + utf(f"{Point3.__module__}:Point3") + own
    assert got == want, f"got {got.hex()}, should be {want.hex()} (flags 04, class name, record)"
    assert plain.from_bytes(got) == value, "a non-registered subclass should read back as itself"
    restored = plain.snapshot_configuration()
    assert [n for n, _ in restored.non_registered_subclasses] == [f"{Point3.__module__}:Point3"], (
        f"got {restored.non_registered_subclasses}, should list the subclass met so far"
    )


def test_refuses_unknown_subclasses_and_other_types():
    s = PojoSerializer(Point)
    with pytest.raises(SerializationError, match="Point"):
        s.to_bytes((1, 2.0))
    with pytest.raises(SerializationError, match="subclass"):
        s.from_bytes(b"\x04" + utf("x:Y"))
    with pytest.raises(SerializationError, match="tag 3"):
        PojoSerializer(Point, registered_subclasses=[Point3]).from_bytes(b"\x08\x03")
    with pytest.raises(TypeError, match="dataclass"):
        PojoSerializer(int)
    with pytest.raises(TypeError, match="subclass"):
        PojoSerializer(Point, registered_subclasses=[TreeNode])


def test_field_error_names_the_field():
    with pytest.raises(SerializationError, match="'y'"):
        PojoSerializer(Point).to_bytes(Point(y="one", x=1.0))


def test_recursive_dataclass_needs_an_explicit_serializer():
    with pytest.raises(TypeError, match="metadata"):
        PojoSerializer(Node)
    s = PojoSerializer(TreeNode)
    value = TreeNode(1, TreeNode(2, None))
    assert canonical(s.from_bytes(s.to_bytes(value))) == canonical(value), "explicitly serialized recursion should round trip"


@dataclasses.dataclass
class Node:
    value: int
    next: Node | None = None


@dataclasses.dataclass
class TreeNode:
    value: int
    child: TreeNode | None = dataclasses.field(default=None, metadata={"serializer": PickleSerializer()})


@given(items=st.lists(everything, min_size=1, max_size=3))
def test_roundtrip_bit_exact_sequences_copies(items):
    s = PojoSerializer(Everything)
    out = DataOutputView()
    for item in items:
        s.serialize(item, out)
    source = DataInputView(out.getvalue())
    got = [s.deserialize(source) for _ in items]
    assert [canonical(g) for g in got] == [canonical(v) for v in items], f"got {got}, should be {items}"
    assert source.available() == 0, f"got {source.available()} bytes left, should be 0"
    copied = DataOutputView()
    s.copy_serialized(DataInputView(out.getvalue()), copied)
    assert copied.getvalue() == s.to_bytes(items[0]), "copy_serialized should copy exactly the first record"
    copy = s.copy(items[0])
    assert copy is not items[0] and canonical(copy) == canonical(items[0]), f"got {copy!r}, should equal {items[0]!r}"
    if items[0].words is not None:
        assert copy.words is not items[0].words, "copy shares the list field; should be deep"
    if items[0].point is not None:
        assert copy.point is not items[0].point, "copy shares the nested dataclass; should be deep"
    back = pickle.loads(pickle.dumps(s))
    assert back == s and hash(back) == hash(s), f"got {back!r}, should equal {s!r} after pickling"
    assert back.to_bytes(items[0]) == s.to_bytes(items[0]), "unpickled serializer writes other bytes"
    assert s.duplicate() == s, "duplicate should equal the original"


@given(item=everything)
def test_snapshot_roundtrip_and_restore_reads_old_bytes(item):
    s = PojoSerializer(Everything)
    written = snapshot_to_bytes(s.snapshot_configuration())
    snapshot = snapshot_from_bytes(written, allow_pickle=True)  # its "anything" field pickles
    assert type(snapshot) is PojoSerializerSnapshot, f"got {type(snapshot).__name__}, should be PojoSerializerSnapshot"
    assert snapshot_to_bytes(snapshot) == written, "snapshot bytes are not stable over write/read/write"
    restored = snapshot.restore_serializer()
    assert restored == s, f"got {restored!r}, should equal {s!r}"
    back = restored.from_bytes(s.to_bytes(item))
    assert canonical(back) == canonical(item), f"got {back!r}, should be {item!r}"
    result = resolve_compatibility(s, snapshot)
    assert result.is_compatible_as_is(), f"got {result}, should be as is"


def test_golden_snapshot_bytes():
    got = snapshot_to_bytes(PojoSerializer(Point).snapshot_configuration())
    nested = b"".join(
        utf(f"reference.serializers:{name}") + struct.pack(">i", 3) + tail
        for name, tail in [
            ("NullableSerializerSnapshot",
             struct.pack(">iii", 911108, 2, 0) + struct.pack(">iii", 1333245, 1, 1)
             + utf("reference.serializers:StringSerializerSnapshot") + struct.pack(">i", 3)),
            ("DoubleSerializerSnapshot", b""),
            ("LongSerializerSnapshot", b""),
        ]
    )
    want = (
        struct.pack(">i", 2) + utf("reference.serializers:PojoSerializerSnapshot") + struct.pack(">i", 3)
        + struct.pack(">ii", 911108, 1) + utf(f"{Point.__module__}:Point") + struct.pack(">i", 3)
        + utf("label") + utf("x") + utf("y") + struct.pack(">iii", 1333245, 1, 3) + nested
    )
    assert got == want, f"got {got.hex()}, should be {want.hex()}"


def test_truncated_and_corrupt_bytes_raise_state_errors():
    s = PojoSerializer(Point)
    data = s.to_bytes(Point(y=3, x=2.0, label="abc"))
    for n in range(len(data)):
        with pytest.raises(SerializationError):
            s.from_bytes(data[:n])
    snap = snapshot_to_bytes(s.snapshot_configuration())
    for n in range(len(snap)):
        with pytest.raises(SnapshotFormatError):
            snapshot_from_bytes(snap[:n])
    with pytest.raises(SerializationError, match="flags"):
        s.from_bytes(b"\x00")


@given(data=st.data())
def test_random_corruption_raises_state_errors_only(data):
    s = PojoSerializer(Point)
    for blob in (s.to_bytes(Point(y=3, x=2.0, label="abc")), snapshot_to_bytes(s.snapshot_configuration())):
        position = data.draw(st.integers(0, len(blob) - 1), label="position")
        damaged = blob[:position] + bytes([data.draw(st.integers(0, 255), label="byte")]) + blob[position + 1 :]
        for read in (s.from_bytes, snapshot_from_bytes):
            try:
                read(damaged)
            except StateError:
                pass


# -- evolution -----------------------------------------------------------------------------------
class Release:
    """Defines successive versions of dataclass ``P`` under one class identity (a module that a
    new release of the user's code would replace)."""

    def __init__(self, module_name: str) -> None:
        self.name = module_name
        self.module = types.ModuleType(module_name)
        sys.modules[module_name] = self.module

    def define(self, fields, qualname: str = "P"):
        cls = dataclasses.make_dataclass(qualname, fields)
        cls.__module__ = self.name
        cls.__qualname__ = qualname
        setattr(self.module, qualname, cls)
        return cls

    def close(self) -> None:
        sys.modules.pop(self.name, None)


@pytest.fixture
def release(request):
    r = Release(f"tests_pojo_release_{request.node.name.replace('[', '_').replace(']', '_').replace('-', '_')}")
    yield r
    r.close()


def evolve(release, old_fields, new_fields, old_value_args):
    """Write a value with version 1, define version 2, and return (verdict, old bytes, old
    snapshot, new serializer, new class)."""
    v1 = release.define(old_fields)
    old = PojoSerializer(v1)
    old_bytes = old.to_bytes(v1(*old_value_args))
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    v2 = release.define(new_fields)
    new = PojoSerializer(v2)
    return resolve_compatibility(new, old_snapshot), old_bytes, old_snapshot, new, v2


def migrated(old_snapshot, new, old_bytes):
    prior = old_snapshot.restore_serializer()
    snapshot = new.snapshot_configuration()
    element = snapshot.migrate_element(prior, new, prior.from_bytes(old_bytes))
    out = DataOutputView()
    snapshot.migrate_state(prior, new, DataInputView(old_bytes), out)
    return element, out.getvalue()


def test_added_fields_take_defaults_then_zero_or_none(release):
    result, old_bytes, old_snapshot, new, v2 = evolve(
        release,
        [("a", int)],
        [
            ("a", int),
            ("d", int),
            ("e", str),
            ("f", float),
            ("g", Optional[int]),  # noqa: UP045 - typing.Optional must map like X | None
            ("b", int, dataclasses.field(default=7)),
            ("c", list[int], dataclasses.field(default_factory=lambda: [1, 2])),
        ],
        (5,),
    )
    assert result.is_compatible_after_migration(), f"got {result}, should be after migration (fields added)"
    assert result.row_paths == (), f"got {result.row_paths}, should be () (no row evolved)"
    element, new_bytes = migrated(old_snapshot, new, old_bytes)
    want = v2(a=5, d=0, e=None, f=0.0, g=None, b=7, c=[1, 2])
    assert type(element) is v2 and canonical(element) == canonical(want), f"got {element!r}, should be {want!r}"
    # flags | a: 00+5 | b: 00+7 | c: 00 + list[1,2] | d: 00+0 | e: null | f: 00+0.0 | g: null
    want_bytes = bytes.fromhex(
        "02" "00" "0000000000000005" "00" "0000000000000007" "00" "00000002" "0000000000000001" "0000000000000002"
        "00" "0000000000000000" "01" "00" "0000000000000000" "01"
    )
    assert new_bytes == want_bytes, f"got {new_bytes.hex()}, should be {want_bytes.hex()}"


def test_removed_fields_are_dropped(release):
    result, old_bytes, old_snapshot, new, v2 = evolve(
        release, [("a", int), ("gone", str), ("z", bool)], [("z", bool), ("a", int)], (1, "x", True)
    )
    assert result.is_compatible_after_migration(), f"got {result}, should be after migration (field removed)"
    element, new_bytes = migrated(old_snapshot, new, old_bytes)
    assert canonical(element) == canonical(v2(z=True, a=1)), f"got {element!r}, should be P(z=True, a=1)"
    assert not hasattr(element, "gone"), "the removed field should be dropped"
    want = bytes.fromhex("02" "00" "0000000000000001" "00" "01")
    assert new_bytes == want, f"got {new_bytes.hex()}, should be {want.hex()}"


def test_reordered_declaration_is_as_is(release):
    result, *_ = evolve(release, [("a", int), ("b", str)], [("b", str), ("a", int)], (1, "x"))
    assert result.is_compatible_as_is(), f"got {result}, should be as is (fields are written name-sorted)"


def test_field_type_change_is_incompatible_naming_it(release):
    result, *_ = evolve(release, [("a", int), ("b", str)], [("a", str), ("b", str)], (1, "x"))
    assert result.is_incompatible() and "'a'" in result.reason, f"got {result}, should be incompatible naming 'a'"
    result, *_ = evolve(release, [("a", str)], [("a", int)], ("x",))
    assert result.is_incompatible() and "'a'" in result.reason, f"got {result}, should be incompatible naming 'a' (back)"


def test_class_name_change_is_incompatible(release):
    v1 = release.define([("a", int)], qualname="P")
    old_snapshot = PojoSerializer(v1).snapshot_configuration()
    v2 = release.define([("a", int)], qualname="Q")
    result = resolve_compatibility(PojoSerializer(v2), old_snapshot)
    assert result.is_incompatible() and ":P" in result.reason and ":Q" in result.reason, (
        f"got {result}, should be incompatible naming both classes"
    )


def test_nested_row_evolution_migrates_through_the_pojo(release):
    city = RowSerializer([("city", StringSerializer(), True)])
    city_zip = RowSerializer([("city", StringSerializer(), True), ("zip", IntSerializer(), True)])
    result, old_bytes, old_snapshot, new, v2 = evolve(
        release,
        [("a", int), ("addr", tuple, dataclasses.field(metadata={"serializer": city}))],
        [("a", int), ("addr", tuple, dataclasses.field(metadata={"serializer": city_zip}))],
        (1, ("Oslo",)),
    )
    assert result.is_compatible_after_migration(), f"got {result}, should be after migration"
    assert result.row_paths == ("addr.zip",), f"got {result.row_paths}, should be ('addr.zip',)"
    element, new_bytes = migrated(old_snapshot, new, old_bytes)
    assert canonical(element) == canonical(v2(a=1, addr=("Oslo", None))), f"got {element!r}, should have addr ('Oslo', None)"
    want = bytes.fromhex("02" "00" "0000000000000001" "00" "10" "054f736c6f")
    assert new_bytes == want, f"got {new_bytes.hex()}, should be {want.hex()}"


def test_nested_pojo_evolution_migrates(release):
    inner_v1 = release.define([("x", int)], qualname="Inner")
    v1 = release.define([("inner", inner_v1)])
    old = PojoSerializer(v1)
    old_bytes = old.to_bytes(v1(inner_v1(4)))
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    inner_v2 = release.define([("x", int), ("y", int, dataclasses.field(default=9))], qualname="Inner")
    v2 = release.define([("inner", inner_v2)])
    new = PojoSerializer(v2)
    result = resolve_compatibility(new, old_snapshot)
    assert result.is_compatible_after_migration(), f"got {result}, should be after migration (nested field added)"
    element, new_bytes = migrated(old_snapshot, new, old_bytes)
    assert canonical(element) == canonical(v2(inner_v2(4, 9))), f"got {element!r}, should be P(Inner(4, 9))"
    assert type(element.inner) is inner_v2, f"got {type(element.inner)}, should be the current Inner class"


def test_nested_reconfigured_rebuilds_the_pojo(release):
    old_enum = EnumSerializer(Suit, symbols=["HEARTS", "SPADES", "CLUBS"])
    new_enum = EnumSerializer(Suit, symbols=["CLUBS", "HEARTS", "SPADES"])
    result, old_bytes, old_snapshot, new, v2 = evolve(
        release,
        [("s", Suit, dataclasses.field(metadata={"serializer": old_enum}))],
        [("s", Suit, dataclasses.field(metadata={"serializer": new_enum}))],
        (Suit.CLUBS,),
    )
    assert result.is_compatible_with_reconfigured_serializer(), f"got {result}, should be reconfigured"
    reconfigured = result.get_reconfigured_serializer()
    assert isinstance(reconfigured, PojoSerializer), f"got {reconfigured!r}, should be a PojoSerializer"
    back = reconfigured.from_bytes(old_bytes)
    assert back.s is Suit.CLUBS and type(back) is v2, f"got {back!r}, should read Suit.CLUBS into the current class"


def test_restore_needs_the_class_to_be_known():
    snapshot = PojoSerializer(Point).snapshot_configuration()
    data = bytearray(snapshot_to_bytes(snapshot))
    name = f"{Point.__module__}:Point".encode()
    other = name[:-5] + b"Pnope"
    data = bytes(data).replace(name, other)
    restored = snapshot_from_bytes(data)
    with pytest.raises(StateError, match="Pnope.*import"):
        restored.restore_serializer()


def test_pickles_by_class_name_and_imports_in_a_fresh_process():
    from reference.types import RowField

    s = PojoSerializer(RowField)
    payload = pickle.dumps(s)
    code = (
        "import pickle, sys; s = pickle.loads(sys.stdin.buffer.read()); "
        "print(s.dataclass_type.__module__, s.dataclass_type.__qualname__)"
    )
    done = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, timeout=60)
    assert done.stdout.decode().split() == ["reference.types", "RowField"], (
        f"got {done.stdout!r} {done.stderr[-300:]!r}, should rebuild PojoSerializer(RowField) in a fresh process"
    )


def test_unknown_runtime_class_fails_to_unpickle_with_a_clear_error(release):
    cls = release.define([("a", int)])
    payload = pickle.dumps(PojoSerializer(cls))
    assert pickle.loads(payload).dataclass_type is cls, "same process: the registered class should be found"
    code = (
        "import pickle, sys\n"
        "try:\n    pickle.loads(sys.stdin.buffer.read())\n"
        "except Exception as e:\n    print(type(e).__name__, e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, timeout=60)
    text = done.stdout.decode()
    assert text.startswith("StateError") and release.name in text and "register" in text, (
        f"got {text!r} {done.stderr[-300:]!r}, should be a StateError naming the class and register_type"
    )


def test_migrate_element_rebuilds_objects_of_an_earlier_class_version(release):
    v1 = release.define([("a", int), ("gone", str)])
    old_object = v1(3, "x")
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(PojoSerializer(v1).snapshot_configuration()))
    v2 = release.define([("a", int), ("n", int), ("b", str, dataclasses.field(default="d"))])
    new = PojoSerializer(v2)
    prior = old_snapshot.restore_serializer()
    element = new.snapshot_configuration().migrate_element(prior, new, old_object)
    want = v2(a=3, n=0, b="d")
    assert type(element) is v2 and canonical(element) == canonical(want), f"got {element!r}, should be {want!r}"


def test_migrate_element_rebuilds_registered_subclass_objects_of_an_earlier_version(release):
    """An object of an earlier version of a registered subclass becomes the subclass of that
    name now registered, whichever serializer is the prior: the old release's own (which wrote
    it), or one restored after the new classes were registered."""
    shape = release.define([("name", str)], qualname="Shape")

    def circle(fields):
        cls = dataclasses.make_dataclass("Circle", fields, bases=(shape,))
        cls.__module__, cls.__qualname__ = release.name, "Circle"
        release.module.Circle = cls
        return cls

    old_circle = circle([("r", float, dataclasses.field(default=0.0))])
    old = PojoSerializer(shape, registered_subclasses=[old_circle])
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    old_object = old_circle("c", 2.5)
    new_circle = circle([("r", float, dataclasses.field(default=0.0)),
                         ("colour", str, dataclasses.field(default="red"))])
    new = PojoSerializer(shape, registered_subclasses=[new_circle])
    for prior, which in ((old, "the old release's serializer"), (old_snapshot.restore_serializer(), "restored")):
        element = new.snapshot_configuration().migrate_element(prior, new, old_object)
        assert type(element) is new_circle and (element.name, element.r, element.colour) == ("c", 2.5, "red"), (
            f"got {element!r} ({type(element).__qualname__} of the new release: "
            f"{type(element) is new_circle}), should be Circle(name='c', r=2.5, colour='red') of the new "
            f"release [prior: {which}]")


def test_migrate_element_refuses_an_old_object_of_a_class_the_new_serializer_does_not_write(release):
    shape = release.define([("name", str)], qualname="Shape")
    square = dataclasses.make_dataclass("Square", [("side", float)], bases=(shape,))
    square.__module__, square.__qualname__ = release.name, "Square"
    release.module.Square = square
    old = PojoSerializer(shape, registered_subclasses=[square])
    old_object = square("s", 1.0)
    new_square = dataclasses.make_dataclass("Square", [("side", float)], bases=(shape,))
    new_square.__module__, new_square.__qualname__ = release.name, "Square"
    reference.register_type(new_square)  # the new release's Square, which the new POJO does not register
    new = PojoSerializer(shape)
    prior = snapshot_from_bytes(snapshot_to_bytes(PojoSerializer(shape).snapshot_configuration())).restore_serializer()
    with pytest.raises(StateError) as caught:
        new.snapshot_configuration().migrate_element(prior, new, old_object)
    text = str(caught.value)
    assert "Square" in text and "registers" in text, f"got {text!r}, should name the class and what is registered"
    assert old.registered_subclasses == (square,), "got the old serializer changed, should be untouched"


_POOL_TYPES = {
    "int": (int, st.integers(-(2**63), 2**63 - 1), 0),
    "bool": (bool, st.booleans(), False),
    "float": (float, _doubles, 0.0),
    "str": (str, st.text(max_size=4), None),
    "optional": (Optional[int], st.integers(-5, 5), None),  # noqa: UP045 - typing.Optional on purpose
    "ints": (list[int], st.lists(st.integers(-5, 5), max_size=3), None),
}
_release_counter = iter(range(10**9))


@st.composite
def pojo_fields(draw, names, types_by_name=None):
    """Dataclass field specs for ``names``: (name, type key, default spec) with default spec
    None (no default), ("value", v) or ("factory", v)."""
    specs = []
    for name in names:
        key = (types_by_name or {}).get(name) or draw(st.sampled_from(sorted(_POOL_TYPES)), label=f"{name} type")
        default = draw(
            st.one_of(st.none(), st.tuples(st.sampled_from(["value", "factory"]), _POOL_TYPES[key][1])),
            label=f"{name} default",
        )
        specs.append((name, key, default))
    return specs


def _define(release, specs):
    ordered = [s for s in specs if s[2] is None] + [s for s in specs if s[2] is not None]
    fields = []
    for name, key, default in ordered:
        if default is None:
            fields.append((name, _POOL_TYPES[key][0]))
        elif default[0] == "value" and not isinstance(default[1], list):
            fields.append((name, _POOL_TYPES[key][0], dataclasses.field(default=default[1])))
        else:
            fields.append((name, _POOL_TYPES[key][0], dataclasses.field(default_factory=lambda v=default[1]: v)))
    return release.define(fields)


@given(data=st.data())
def test_random_field_additions_and_removals_migrate_like_the_oracle(data):
    release = Release(f"tests_pojo_random_release_{next(_release_counter)}")
    try:
        old_names = data.draw(st.lists(st.sampled_from("abcdef"), unique=True, max_size=5), label="old fields")
        old_specs = data.draw(pojo_fields(old_names), label="old specs")
        types_by_name = {name: key for name, key, _ in old_specs}
        new_names = data.draw(st.lists(st.sampled_from("abcdefgh"), unique=True, max_size=6), label="new fields")
        new_specs = data.draw(pojo_fields(new_names, types_by_name), label="new specs")
        v1 = _define(release, old_specs)
        old_values = {
            name: data.draw(_maybe(_POOL_TYPES[key][1]), label=f"old {name}") for name, key, _ in old_specs
        }
        old = PojoSerializer(v1)
        old_bytes = old.to_bytes(v1(**old_values))
        old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
        v2 = _define(release, new_specs)
        new = PojoSerializer(v2)
        result = resolve_compatibility(new, old_snapshot)
        want_kind = "compatible_as_is" if set(old_names) == set(new_names) else "compatible_after_migration"
        assert result.kind == want_kind, f"got {result}, should be {want_kind}"
        # Oracle, by hand: kept fields keep their value; added fields take the default, else
        # the zero of a numeric/bool field, else None.
        want = {}
        for name, key, default in new_specs:
            if name in old_values:
                want[name] = old_values[name]
            elif default is not None:
                want[name] = default[1]
            else:
                want[name] = _POOL_TYPES[key][2]
        element, new_bytes = migrated(old_snapshot, new, old_bytes)
        assert type(element) is v2, f"got {type(element)}, should be the current class"
        got = {name: getattr(element, name) for name in new_names}
        assert canonical(got) == canonical(want), f"got {got}, should be {want}"
        assert not set(old_names) - set(new_names) & set(vars(element)), "removed fields should be dropped"
        want_bytes = new.to_bytes(v2(**want))
        assert new_bytes == want_bytes, f"got {new_bytes.hex()}, should be {want_bytes.hex()}"
    finally:
        release.close()


@dataclasses.dataclass
class WithFactoryDefaults:
    tags: list[str] = dataclasses.field(default_factory=lambda: ["new"])
    count: int = 5
    name: str = dataclasses.field(default="")


def test_create_instance_takes_each_fields_default_and_default_factory():
    got = PojoSerializer(WithFactoryDefaults).create_instance()
    assert got == WithFactoryDefaults(["new"], 5, ""), f"got {got!r}, should be the class's own defaults"


def test_a_registered_subclass_is_judged_new_against_old(release):
    """A registered subclass whose row field gains a nullable field: the new subclass snapshot
    judges the old one (a field added: compatible after migration), never the other way round
    (a field removed: incompatible)."""
    from reference.serializers import RowSerializer

    old_row = RowSerializer([("a", IntSerializer(), True)])
    new_row = RowSerializer([("a", IntSerializer(), True), ("b", StringSerializer(), True)])
    shape = release.define([("name", str)], qualname="Shape")

    def circle(row_serializer):
        cls = dataclasses.make_dataclass(
            "Circle", [("r", tuple, dataclasses.field(metadata={"serializer": row_serializer}))], bases=(shape,))
        cls.__module__, cls.__qualname__ = release.name, "Circle"
        release.module.Circle = cls
        return cls

    old = PojoSerializer(shape, registered_subclasses=[circle(old_row)])
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()))
    new = PojoSerializer(shape, registered_subclasses=[circle(new_row)])
    result = resolve_compatibility(new.snapshot_configuration(), old_snapshot)
    assert result.is_compatible_after_migration(), (
        f"got {result}, should be compatible after migration (the subclass's row only gained a nullable field)")


def test_a_pojo_takes_as_many_registered_subclasses_as_a_signed_byte_tags():
    # Flink reads the tag with readByte() and indexes its registered serializers with it:
    # tags 0 to 127, so 128 registered subclasses work and a 129th would read as tag -128.
    many = [dataclasses.make_dataclass(f"Sub{i}", [("n", int, dataclasses.field(default=0))], bases=(Point,))
            for i in range(129)]
    s = PojoSerializer(Point, registered_subclasses=many[:128])
    last = many[127](1, 2.0, n=5)
    got = s.to_bytes(last)
    assert got[:2] == b"\x08\x7f", f"got {got[:2].hex()}, should be 087f (flags, tag 127)"
    assert s.from_bytes(got) == last, f"got {s.from_bytes(got)!r}, should read back as {last!r}"
    with pytest.raises(ValueError, match="129 registered subclasses, at most 128"):
        PojoSerializer(Point, registered_subclasses=many)


@pytest.mark.parametrize("kind", ["pojo", "enum", "subclass", "java"])
def test_a_snapshot_naming_a_class_not_imported_says_which_module_to_import(kind):
    """A snapshot naming a class of a module nobody imported (a savepoint restored before the
    user's module is) is refused with a StateError naming the module on its own, or, for a Java
    name, the name to register."""
    from dataclasses import make_dataclass

    from reference import StateError, snapshot_from_bytes, snapshot_to_bytes
    from reference.serializers import EnumSerializer

    Colour = enum.Enum("NamedColour", ["RED"])
    Colour.__module__ = __name__
    Base = make_dataclass("NamedBase", [("a", int)])
    Sub = make_dataclass("NamedSub", [("b", int, 0)], bases=(Base,))
    Base.__module__ = Sub.__module__ = __name__
    serializer = {"pojo": lambda: PojoSerializer(Base), "enum": lambda: EnumSerializer(Colour),
                  "subclass": lambda: PojoSerializer(Base, registered_subclasses=[Sub]),
                  "java": lambda: PojoSerializer(Base)}[kind]()
    if kind == "java":  # Flink's form names a class by the Java name it answers to
        reference.register_type(Base, "org.example.NamedBase")
    data = snapshot_to_bytes(serializer.snapshot_configuration(), dialect="flink" if kind == "java" else "reference")
    name = {"pojo": "NamedBase", "enum": "NamedColour", "subclass": "NamedSub", "java": "NamedBase"}[kind]
    old = b"org.example.NamedBase" if kind == "java" else f"{__name__}:{name}".encode()
    new = b"org.example.Missing" if kind == "java" else f"not_imported_here:{name}".encode()
    at = data.index(old)
    data = data[:at - 2] + len(new).to_bytes(2, "big") + new + data[at + len(old):]
    with pytest.raises(StateError) as caught:
        snapshot_from_bytes(data).restore_serializer()
    wanted = "register_type(cls, 'org.example.Missing')" if kind == "java" else "import module 'not_imported_here'"
    assert wanted in str(caught.value), f"got {caught.value}, should say {wanted!r} [{kind}]"


def test_a_field_naming_a_class_defined_in_a_function_needs_only_its_own_serializer():
    """Annotations are resolved field by field: a field whose annotation names a class defined
    in a function (not resolvable by name) builds when the field gives its serializer, while the
    other fields keep theirs from their annotations; without one, the error names that field."""
    from dataclasses import field, make_dataclass

    from reference.serializers import LongSerializer

    Inner = make_dataclass("Inner", [("x", int)])
    Inner.__module__ = __name__
    Outer = make_dataclass("Outer", [("n", "int"), ("inner", "Inner | None",
                                                     field(default=None, metadata={"serializer": PojoSerializer(Inner)}))])
    Outer.__module__ = __name__
    fields = dict(PojoSerializer(Outer).fields)
    assert fields == {"n": LongSerializer(), "inner": PojoSerializer(Inner)}, f"got {fields}, should be n: long, inner: Inner's"
    Bare = make_dataclass("Bare", [("n", "int"), ("inner", "Inner | None", field(default=None))])
    Bare.__module__ = __name__
    with pytest.raises(TypeError, match=r"Bare\.inner \(NameError"):
        PojoSerializer(Bare)


def test_an_object_of_an_earlier_release_read_before_its_classes_changed_migrates_to_writable_objects():
    """An object of the old release's classes, read before the new release's classes were
    registered under the same names and migrated with the restored serializer as the prior, is
    rebuilt by field name: its nested object of the old release's class is rebuilt too, so the
    new serializer (the heap backend's, at the next savepoint) writes the result."""
    from dataclasses import field, make_dataclass

    from reference import migrated_element, snapshot_from_bytes, snapshot_to_bytes

    def release(extra: bool) -> tuple[type, type]:
        page = make_dataclass("TripStop", [("path", str), ("millis", int, field(default=0))])
        fields = [("user", str), ("last", page, field(default=None))]
        trip = make_dataclass("Trip", fields + ([("note", str, field(default=""))] if extra else []))
        page.__module__ = trip.__module__ = __name__
        return trip, page

    (trip, stop) = release(False)
    old = PojoSerializer(trip)
    snapshot = snapshot_to_bytes(old.snapshot_configuration())
    element = old.from_bytes(old.to_bytes(trip("ada", stop("/", 5))))
    (trip2, stop2) = release(True)
    new = PojoSerializer(trip2)
    prior = snapshot_from_bytes(snapshot).restore_serializer()  # restored after the new classes came
    got = migrated_element(new.snapshot_configuration(), prior, new, element)
    assert type(got) is trip2 and type(got.last) is stop2, (
        f"got {type(got).__qualname__} holding {type(got.last)!r}, should be the new Trip holding the new TripStop")
    assert new.from_bytes(new.to_bytes(got)) == trip2("ada", stop2("/", 5), ""), "got other values written back"


def test_a_class_not_known_of_an_imported_module_is_said_to_need_registering():
    """When the module a snapshot names is imported but holds no such class at its top level (a
    class defined in a function, never registered), importing it again would not help: the
    message says to register it."""
    from reference._classes import not_known_hint

    hint = not_known_hint(f"{__name__}:make_things.<locals>.Thing")
    assert f"module {__name__!r} is imported" in hint and "register_type" in hint, f"got {hint!r}"
    assert "import module 'not_imported_here' before restoring" in not_known_hint("not_imported_here:Thing")


def test_a_rebuilt_object_keeps_a_field_of_a_users_serializer_that_reads_as_is():
    """Rebuilt by field name, an object of an earlier release has its nested objects rebuilt by
    the reference's own snapshots, but a field whose user snapshot reads it as is is left as it
    is: that snapshot's migrate_element (here: add one) runs only where migration is needed."""
    from dataclasses import field, make_dataclass
    from typing import Any

    from reference import (
        SchemaCompatibility,
        SimpleTypeSerializerSnapshot,
        migrated_element,
        snapshot_from_bytes,
        snapshot_to_bytes,
    )
    from reference.serializers import LongSerializer

    class Counted(LongSerializer):
        def snapshot_configuration(self) -> Any:
            return CountedSnapshot()

    class CountedSnapshot(SimpleTypeSerializerSnapshot):
        def __init__(self) -> None:
            super().__init__(Counted)

        def resolve_schema_compatibility(self, old: Any) -> Any:
            return SchemaCompatibility.compatible_as_is()

        def migrate_element(self, prior: Any, new: Any, element: Any) -> Any:  # type: ignore[override]
            return element + 1  # only ever asked where a migration is needed: never here

    def release(extra: bool) -> tuple[type, type]:
        stop = make_dataclass("LegStop", [("path", str)])
        fields = [("n", int, field(default=0, metadata={"serializer": Counted()})), ("stop", stop, field(default=None))]
        leg = make_dataclass("Leg", fields + ([("note", str, field(default=""))] if extra else []))
        stop.__module__ = leg.__module__ = __name__
        return leg, stop

    leg, stop = release(False)
    old = PojoSerializer(leg)
    snapshot = snapshot_to_bytes(old.snapshot_configuration())
    element = old.from_bytes(old.to_bytes(leg(5, stop("/"))))
    leg2, stop2 = release(True)
    new = PojoSerializer(leg2)
    prior = snapshot_from_bytes(snapshot).restore_serializer()
    got = migrated_element(new.snapshot_configuration(), prior, new, element)
    assert got.n == 5 and type(got.stop) is stop2, f"got {got!r}, should keep n = 5 and hold the new LegStop"


def test_a_nested_class_not_known_is_said_with_the_field_that_holds_it():
    """Restoring a POJO whose field's class is not known says which field of which snapshot the
    restore stood at, not only the nested class (the user restores the outer one)."""
    from dataclasses import field, make_dataclass

    from reference import StateError, snapshot_from_bytes, snapshot_to_bytes

    Stop = make_dataclass("HeldStop", [("path", str)])
    Route = make_dataclass("HeldRoute", [("first", Stop, field(default=None))])
    Stop.__module__ = Route.__module__ = __name__
    data = snapshot_to_bytes(PojoSerializer(Route).snapshot_configuration())
    old, new = f"{__name__}:HeldStop".encode(), b"not_imported_here:HeldStop"
    at = data.index(old)
    data = data[:at - 2] + len(new).to_bytes(2, "big") + new + data[at + len(old):]
    with pytest.raises(StateError, match=r"not_imported_here.*\[restoring the field 'first' of PojoSerializerSnapshot\]"):
        snapshot_from_bytes(data).restore_serializer()
