"""Damaged bytes: truncated or bit-flipped records and snapshots of every built-in serializer
give a ``StateError`` (or, by chance, a valid decoding), never IndexError, struct.error,
MemoryError, UnicodeError or a hang."""

from __future__ import annotations

import dataclasses
import enum
import warnings
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import (
    StateError,
    class_identity,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference import serializers as s


class Suit(enum.Enum):
    CLUBS = 1
    HEARTS = 2
    SPADES = 3


@dataclasses.dataclass
class Item:
    name: str = ""
    count: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)


def _cases():
    cases = [
        ("boolean", s.BooleanSerializer(), [True, False]),
        ("byte", s.ByteSerializer(), [-5, 127]),
        ("short", s.ShortSerializer(), [-300]),
        ("int", s.IntSerializer(), [2**31 - 1]),
        ("long", s.LongSerializer(), [-(2**63)]),
        ("float", s.FloatSerializer(), [1.5, float("nan")]),
        ("double", s.DoubleSerializer(), [-0.0, 1e300]),
        ("string", s.StringSerializer(), ["", "My string.", "h\u00e9llo \U0001F600\x00", None]),
        ("bytes", s.BytesSerializer(), [b"", b"\x00\xff" * 5]),
        ("pickle", s.PickleSerializer(), [{"a": [1, 2.5, "x"]}, (1, None), Suit.HEARTS]),
        ("enum", s.EnumSerializer(Suit, symbols=["SPADES", "CLUBS", "HEARTS"]), list(Suit)),
        ("nullable", s.NullableSerializer(s.LongSerializer(), padded=True), [None, 7]),
        ("list", s.ListSerializer(s.StringSerializer()), [["a", None, "bc"], []]),
        ("map", s.MapSerializer(s.StringSerializer(), s.ListSerializer(s.IntSerializer())), [{"k": [1, 2], "n": None}]),
        ("tuple", s.TupleSerializer(s.IntSerializer(), s.StringSerializer(), s.NullableSerializer(s.DoubleSerializer())),
         [(1, "x", None), (2, "yy", 0.5)]),
    ]
    optional = [
        ("row", lambda: s.RowSerializer([("id", s.LongSerializer(), False), ("name", s.StringSerializer(), True),
                                         ("tags", s.ListSerializer(s.StringSerializer()), True)]),
         [(1, "a", ["t"]), (2, None, None)]),
        ("pojo", lambda: s.PojoSerializer(Item), [Item("x", 3, ["a"]), Item()]),
        ("avro", lambda: s.AvroSerializer({"type": "record", "name": "R", "fields": [
            {"name": "a", "type": "long"}, {"name": "b", "type": ["null", "string"]}]}),
         [{"a": 1, "b": None}, {"a": -2, "b": "zz"}]),
    ]
    for name, factory, values in optional:
        try:
            cases.append((name, factory(), values))
        except NotImplementedError:
            pass  # a family still being written
    return cases


CASES = _cases()
IDS = [c[0] for c in CASES]

_FORBIDDEN = (IndexError, KeyError, MemoryError, UnicodeError, OverflowError, RecursionError)


def _encodings(serializer, values):
    return [serializer.to_bytes(v) for v in values]


def _mutate(data: bytes, draw) -> bytes:
    """Truncate, or flip 1-3 bytes, or both."""
    mutated = bytearray(data)
    if mutated and draw(st.booleans(), label="flip"):
        for _ in range(draw(st.integers(1, 3), label="flips")):
            pos = draw(st.integers(0, len(mutated) - 1), label="pos")
            mutated[pos] ^= draw(st.integers(1, 255), label="xor")
    cut = draw(st.integers(0, len(mutated)), label="keep")
    return bytes(mutated[:cut])


def _decode_only_state_errors(call, what):
    try:
        call()
    except StateError:
        pass
    except _FORBIDDEN as exc:
        pytest.fail(f"got {type(exc).__name__}: {exc} from {what}, should be a StateError")
    except Exception as exc:  # any other leak is just as wrong
        pytest.fail(f"got {type(exc).__name__}: {exc} from {what}, should be a StateError")


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@settings(deadline=timedelta(seconds=5))
@given(data=st.data())
def test_damaged_records_give_state_errors(index, data):
    name, serializer, values = CASES[index]
    original = data.draw(st.sampled_from(_encodings(serializer, values)), label="record")
    damaged = _mutate(original, data.draw)
    _decode_only_state_errors(lambda: serializer.from_bytes(damaged), f"{name}.from_bytes({damaged.hex()})")


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_every_truncation_of_a_record_is_a_state_error(index):
    name, serializer, values = CASES[index]
    for encoded in _encodings(serializer, values):
        for cut in range(len(encoded)):
            with pytest.raises(StateError):
                serializer.from_bytes(encoded[:cut])


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_every_truncation_of_a_snapshot_is_a_state_error(index):
    name, serializer, _ = CASES[index]
    encoded = snapshot_to_bytes(serializer.snapshot_configuration())
    for cut in range(len(encoded)):
        with pytest.raises(StateError):
            snapshot_from_bytes(encoded[:cut])


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
@settings(deadline=timedelta(seconds=5))
@given(data=st.data())
def test_damaged_snapshots_give_state_errors(index, data):
    name, serializer, values = CASES[index]
    original = snapshot_to_bytes(serializer.snapshot_configuration())
    damaged = _mutate(original, data.draw)

    def read_restore_and_resolve():
        snapshot = snapshot_from_bytes(damaged)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            resolve_compatibility(serializer, snapshot)
        restored = snapshot.restore_serializer()
        for encoded in _encodings(serializer, values):
            try:
                restored.from_bytes(encoded)
            except StateError:
                pass

    _decode_only_state_errors(read_restore_and_resolve, f"snapshot of {name} damaged to {damaged.hex()}")


# -- regressions: what a fuzzing campaign found (each once a crash, a hang or an import) -------
def _deep_lists(depth: int) -> bytes:
    """``depth`` List snapshots around a Long snapshot, built without recursion."""
    import struct

    from reference._snapshot import COMPOSITE_MAGIC, NESTED_MAGIC

    def utf(text):
        return struct.pack(">H", len(text)) + text.encode()

    head = utf("reference.serializers:ListSerializerSnapshot") + struct.pack(">iiiiiii", 3, COMPOSITE_MAGIC, 1, NESTED_MAGIC, 1, 1, 0)[:-4]
    inner = snapshot_to_bytes(s.LongSerializer().snapshot_configuration())[4:]
    return struct.pack(">i", 2) + head * depth + inner


def test_snapshots_nested_deeper_than_the_limit_are_refused_before_recursing():
    from reference import SnapshotFormatError
    from reference._bounds import MAX_SNAPSHOT_DEPTH

    for depth in (MAX_SNAPSHOT_DEPTH, 400, 5000):
        with pytest.raises(SnapshotFormatError, match=f"deeper than {MAX_SNAPSHOT_DEPTH}"):
            snapshot_from_bytes(_deep_lists(depth))


def test_snapshots_at_the_depth_limit_work_everywhere():
    from reference._bounds import MAX_SNAPSHOT_DEPTH

    snapshot = snapshot_from_bytes(_deep_lists(MAX_SNAPSHOT_DEPTH - 1))
    serializer = snapshot.restore_serializer()
    value = 7
    for _ in range(MAX_SNAPSHOT_DEPTH - 1):
        value = [value]
    assert serializer.from_bytes(serializer.to_bytes(value)) == value, "got another value, should round-trip"
    result = resolve_compatibility(serializer, snapshot)
    assert result.is_compatible_as_is(), f"got {result}, should be compatible as is"
    again = snapshot_to_bytes(serializer.snapshot_configuration())
    assert again == _deep_lists(MAX_SNAPSHOT_DEPTH - 1), "got other bytes, should write the snapshot read"


@pytest.mark.parametrize("serializer", [
    s.MapSerializer(s.StringSerializer(), s.LongSerializer()),
    s.ListSerializer(s.LongSerializer()),
    s.NullableSerializer(s.LongSerializer()),
], ids=["map", "list", "nullable"])
@pytest.mark.parametrize("count", [0, 3])
def test_wrong_nested_snapshot_count_is_refused_at_read(serializer, count):
    import struct

    from reference import SnapshotFormatError
    from reference._snapshot import NESTED_MAGIC

    data = snapshot_to_bytes(serializer.snapshot_configuration())
    pos = data.find(struct.pack(">ii", NESTED_MAGIC, 1)) + 8
    extra = snapshot_to_bytes(s.LongSerializer().snapshot_configuration())[4:]
    nested = data[pos + 4:]
    arity = struct.unpack_from(">i", data, pos)[0]
    body = b"" if count == 0 else nested + extra * (count - arity)
    with pytest.raises(SnapshotFormatError, match=f"{count} nested snapshots, should be {arity}"):
        snapshot_from_bytes(data[:pos] + struct.pack(">i", count) + body)


def _avro_snapshot(schema_text: str) -> bytes:
    import struct

    from reference._snapshot import class_identity

    raw = schema_text.encode()
    name = class_identity(s.AvroSerializerSnapshot).encode()
    return struct.pack(">iH", 2, len(name)) + name + struct.pack(">ii", 1, len(raw)) + raw


@pytest.mark.parametrize("schema", [
    "[" * 100000,
    "{" * 100000,
    '{"type":"record","name":"Node","fields":[{"name":"next","type":["null","Node"],"default":{}}]}',
    '{"type":"record","name":"A","fields":[{"name":"b","type":{"type":"record","name":"B","fields":'
    '[{"name":"a","type":["null","A"],"default":{}}]},"default":{}}]}',
], ids=["arrays", "objects", "recursive-default", "mutually-recursive-default"])
def test_hostile_avro_schema_texts_are_snapshot_format_errors(schema):
    from reference import SnapshotFormatError
    from reference.serializers import AvroSchemaError

    with pytest.raises(AvroSchemaError):
        s.AvroSerializer.from_json(schema)
    with pytest.raises(SnapshotFormatError):
        snapshot_from_bytes(_avro_snapshot(schema))


def test_a_recursive_avro_record_may_still_default_its_recursive_field_to_null():
    schema = ('{"type":"record","name":"Node","fields":[{"name":"v","type":"int","default":0},'
              '{"name":"next","type":["null","Node"],"default":null}]}')
    serializer = s.AvroSerializer.from_json(schema)
    value = {"v": 1, "next": {"v": 2, "next": None}}
    assert serializer.from_bytes(serializer.to_bytes(value)) == value, "got another value, should round-trip"


def test_class_names_resolve_without_getattr_or_imports():
    """``lookup_type`` resolves what a snapshot or record may name (registered classes,
    dataclasses and enums) and nothing else: another class of a loaded module is refused with a
    StateError whichever modules the interpreter happens to have loaded (so ``subprocess`` is
    imported here first), a name that is no class resolves to None, and a module that is not
    loaded is never imported."""
    import subprocess
    import sys

    code = (
        "import dataclasses, enum, signal, subprocess, sys, collections, numpy\n"
        "from reference import StateError, lookup_type, register_type\n"
        "@dataclasses.dataclass\n"
        "class Point:\n    x: int = 0\n"
        "class Mood(enum.Enum):\n    OK = 1\n"
        "class Plain:\n    pass\n"
        "register_type(Plain)\n"
        "class Unregistered:\n    pass\n"
        "assert 'subprocess' in sys.modules and 'antigravity' not in sys.modules\n"
        "before = set(sys.modules)\n"
        "def look(name):\n"
        "    try:\n        found = lookup_type(name)\n"
        "    except StateError as exc:\n        return 'refused ' + type(exc).__name__\n"
        "    return getattr(found, '__qualname__', found)\n"
        "names = ['subprocess:Popen', 'collections:OrderedDict', 'builtins:object', "
        "'__main__:Unregistered', 'numpy:testing.TestCase', 'numpy:random.Generator', "
        "'numpy:linalg.LinAlgError', 'os:system', 'os:path.sep', 'antigravity:Fly', "
        "'__main__:Point', '__main__:Mood', '__main__:Plain', 'signal:Signals']\n"
        "for name in names:\n    print(name, '->', look(name))\n"
        "print('imported', sorted(set(sys.modules) - before))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    refused = "refused ClassNotAllowedError"
    should = [
        f"subprocess:Popen -> {refused}",
        f"collections:OrderedDict -> {refused}",
        f"builtins:object -> {refused}",
        f"__main__:Unregistered -> {refused}",
        "numpy:testing.TestCase -> None",
        "numpy:random.Generator -> None",
        "numpy:linalg.LinAlgError -> None",
        "os:system -> None",
        "os:path.sep -> None",
        "antigravity:Fly -> None",
        "__main__:Point -> Point",
        "__main__:Mood -> Mood",
        "__main__:Plain -> Plain",
        "signal:Signals -> Signals",
        "imported []",
    ]
    assert out.stdout.splitlines() == should, (
        f"got {out.stdout.splitlines()} {out.stderr[-500:]}, should be {should}: only registered "
        "classes, dataclasses and enums resolve, any other class is refused, nothing is imported"
    )


class _Hue(enum.Enum):
    RED = 1


@dataclasses.dataclass
class _Spot:
    x: int = 0


def _utf(text: str) -> bytes:
    data = text.encode("utf-8")
    return len(data).to_bytes(2, "big") + data


def test_a_snapshot_naming_a_class_of_a_loaded_module_is_refused():
    """A Pojo or Enum snapshot naming a loaded class that is neither registered, a dataclass
    nor an enum restores nothing (a StateError names the class), and a record naming one as a
    Pojo subclass is a SerializationError."""
    import dataclasses
    import subprocess  # noqa: F401  (loaded: its classes must still not resolve)

    from reference import SerializationError
    from reference.serializers import EnumSerializer, PojoSerializer

    for serializer, name in ((EnumSerializer(_Hue), class_identity(_Hue)),
                             (PojoSerializer(_Spot), class_identity(_Spot))):
        data = snapshot_to_bytes(serializer.snapshot_configuration())
        forged = data.replace(_utf(name), _utf("subprocess:Popen"))
        assert forged != data, "the test should replace the class name"
        with pytest.raises(StateError, match="subprocess:Popen"):
            snapshot_from_bytes(forged).restore_serializer()

    @dataclasses.dataclass
    class Sub(_Spot):
        pass

    record = PojoSerializer(_Spot).to_bytes(Sub(1))
    name = class_identity(Sub)
    assert _utf(name) in record, "the record should name its subclass"
    with pytest.raises(SerializationError, match="subprocess:Popen"):
        PojoSerializer(_Spot).from_bytes(record.replace(_utf(name), _utf("subprocess:Popen")))


def test_an_enum_snapshot_naming_a_lazy_submodule_class_imports_nothing():
    import subprocess
    import sys

    code = (
        "import sys, numpy, struct\n"
        "from reference import snapshot_from_bytes, StateError\n"
        "from reference.serializers import EnumSerializerSnapshot\n"
        "from reference._snapshot import class_identity\n"
        "name = class_identity(EnumSerializerSnapshot).encode(); cls = b'numpy:testing.TestCase'\n"
        "data = struct.pack('>iH', 2, len(name)) + name + struct.pack('>iH', 3, len(cls)) + cls + struct.pack('>i', 0)\n"
        "before = set(sys.modules)\n"
        "snapshot = snapshot_from_bytes(data)\n"
        "try:\n    snapshot.restore_serializer()\nexcept StateError as exc:\n    print('refused')\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["refused", "[]"], (
        f"got {out.stdout!r} {out.stderr[-500:]}, should refuse the class and import nothing"
    )


def test_zero_width_elements_share_one_budget_across_nesting_levels():
    import struct
    import time

    from reference import DataInputView, DataOutputView, SerializationError
    from reference._bounds import ZERO_WIDTH_ALLOWANCE

    serializer = s.ListSerializer(s.ListSerializer(s.TupleSerializer()))
    # 300 inner lists of 65536 empty tuples each: 1204 bytes that once decoded 19.7M elements
    data = struct.pack(">i", 300) + struct.pack(">i", 65536) * 300
    start = time.monotonic()
    with pytest.raises(SerializationError, match="more elements than a 1204-byte record may hold"):
        serializer.from_bytes(data)
    with pytest.raises(SerializationError, match="more elements"):
        serializer.copy_serialized(DataInputView(data), DataOutputView())
    assert time.monotonic() - start < 5, "got a slow refusal, should refuse before decoding the elements"
    # the budget is exact: byte length + allowance elements over all levels
    inner = (len(struct.pack(">i", 0) * 3) + ZERO_WIDTH_ALLOWANCE - 3) // 2
    fits = struct.pack(">i", 2) + struct.pack(">i", inner) * 2
    budget = len(fits) + ZERO_WIDTH_ALLOWANCE
    assert 2 + 2 * inner <= budget, f"got {2 + 2 * inner} elements, should fit the budget {budget}"
    assert len(serializer.from_bytes(fits)[1]) == inner, "got another list, should read a list within the budget"
    over = struct.pack(">i", 2) + struct.pack(">i", budget) * 2
    with pytest.raises(SerializationError, match="more elements"):
        serializer.from_bytes(over)


def test_zero_width_avro_items_inside_lists_share_the_budget():
    import struct

    from reference import SerializationError

    serializer = s.ListSerializer(s.AvroSerializer({"type": "array", "items": "null"}, encoding="binary"))
    # each element: a block of 60000 nulls (zigzag varint), then the end of the array
    item = bytes([0xC0, 0xA9, 0x07]) + b"\x00"
    data = struct.pack(">i", 100) + item * 100
    with pytest.raises(SerializationError, match="element budget|more elements"):
        serializer.from_bytes(data)
    # Flink's encoding (the default) bounds each value by the same allowance
    flink = s.ListSerializer(s.AvroSerializer({"type": "array", "items": "null"}))
    with pytest.raises(SerializationError, match="more than 4096 items of an empty type"):
        flink.from_bytes(struct.pack(">i", 1) + bytes([0xC0, 0xA9, 0x07, 0x00]))


def test_a_pickle_length_beyond_the_payload_is_refused_before_allocating():
    import struct
    import tracemalloc

    from reference import SerializationError

    serializer = s.PickleSerializer()
    for opcode, fmt in ((b"\x8e", "<Q"), (b"\x96", "<Q"), (b"B", "<i")):
        payload = b"\x80\x05" + opcode + struct.pack(fmt, 2**31 - 1 if fmt == "<i" else 8 * 10**18) + b"abc."
        record = struct.pack(">i", len(payload)) + payload
        tracemalloc.start()
        try:
            with pytest.raises(SerializationError, match="not a well-formed pickle"):
                serializer.from_bytes(record)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 1 << 20, f"got {peak} bytes allocated at peak, should allocate no more than the input justifies"


# A record whose map key or tuple field reads as None is refused by deserialize (map keys and
# tuple fields are never null), and so by copy_serialized and by a byte migration: the three
# must agree, or a migration plan's byte path takes records its object path refuses. A null
# string is Flink's StringValue length 0 (one byte 00).
_NULL_PART_RECORDS = [
    ("a map key", lambda: s.MapSerializer(s.StringSerializer(), s.IntSerializer()),
     bytes.fromhex("00000001" "00" "01")),
    ("a map key of a two-byte length 0", lambda: s.MapSerializer(s.StringSerializer(), s.IntSerializer()),
     bytes.fromhex("00000001" "8000" "01")),
    ("a tuple field", lambda: s.TupleSerializer(s.IntSerializer(), s.StringSerializer()),
     bytes.fromhex("00000007" "00")),
    ("a tuple field in a row", lambda: s.RowSerializer(
        [("t", s.TupleSerializer(s.IntSerializer(), s.StringSerializer()), True)]),
     bytes.fromhex("00" "00000007" "00")),
    ("a map key in a tuple", lambda: s.TupleSerializer(
        s.MapSerializer(s.StringSerializer(), s.IntSerializer())),
     bytes.fromhex("00000001" "00" "01")),
]


@pytest.mark.parametrize("codecs", [True, False], ids=["generated codecs", "generic methods"])
@pytest.mark.parametrize(("what", "make", "record"), _NULL_PART_RECORDS, ids=[c[0] for c in _NULL_PART_RECORDS])
def test_a_null_where_none_may_be_is_refused_by_read_copy_and_byte_migration(what, make, record, codecs):
    from reference import DataInputView, DataOutputView, SerializationError

    with s.generated_codecs(codecs):
        serializer = make()
        with pytest.raises(SerializationError, match="None") as read:
            serializer.deserialize(DataInputView(record))
        with pytest.raises(SerializationError, match="None") as copied:
            serializer.copy_serialized(DataInputView(record), DataOutputView())
        assert str(copied.value) == str(read.value), (
            f"got copy_serialized refusing {what} with {copied.value}, should refuse it as deserialize: {read.value}")
        if isinstance(serializer, (s.TupleSerializer, s.MapSerializer)):
            parts = serializer.fields if isinstance(serializer, s.TupleSerializer) else (serializer.key, serializer.value)
            steps = [p.copy_serialized for p in parts]
            migrate = (serializer.byte_migration(serializer, steps) if isinstance(serializer, s.TupleSerializer)
                       else serializer.byte_migration(serializer, *steps))
            with pytest.raises(SerializationError, match="None") as migrated:
                migrate(DataInputView(record), DataOutputView())
            assert str(migrated.value) == str(read.value), (
                f"got the byte migration refusing {what} with {migrated.value}, should refuse it as deserialize")
        valid = DataOutputView()
        serializer.serialize({"k": 1} if isinstance(serializer, s.MapSerializer) else serializer.create_instance(), valid)
        out = DataOutputView()
        serializer.copy_serialized(DataInputView(valid.getvalue()), out)
        assert out.getvalue() == valid.getvalue(), (
            f"got a copy of a valid record {out.getvalue().hex()}, should be {valid.getvalue().hex()} [{what}]")


def test_composite_snapshots_refuse_an_outer_version_they_do_not_read():
    """A composite snapshot class that declares the outer versions it reads
    (``READ_OUTER_VERSIONS``) refuses another one with a SnapshotFormatError naming it; Flink's
    list and map snapshots declare none and read any, as Flink's do (the outer version is
    ignored)."""
    import dataclasses

    from reference import (
        CompositeTypeSerializerSnapshot,
        SnapshotFormatError,
        snapshot_from_bytes,
        snapshot_to_bytes,
    )
    from reference.serializers import (
        ListSerializer,
        LongSerializer,
        MapSerializer,
        NullableSerializer,
        PojoSerializer,
        RowSerializer,
        StringSerializer,
        TupleSerializer,
    )

    @dataclasses.dataclass
    class Versioned:
        a: int = 0

    def with_outer(data: bytes, name: str, version: int) -> bytes:
        end = data.index(name.encode()) + len(name) + CompositeTypeSerializerSnapshot.OUTER_VERSION_AT
        return data[:end] + version.to_bytes(4, "big", signed=True) + data[end + 4:]

    declared = {"NullableSerializerSnapshot": NullableSerializer(LongSerializer()),
                "TupleSerializerSnapshot": TupleSerializer(LongSerializer(), StringSerializer()),
                "PojoSerializerSnapshot": PojoSerializer(Versioned),
                "RowSerializerSnapshot": RowSerializer([("a", LongSerializer(), True)])}
    for name, serializer in declared.items():
        data = snapshot_to_bytes(serializer.snapshot_configuration())
        with pytest.raises(SnapshotFormatError, match="unsupported outer version 1000"):
            snapshot_from_bytes(with_outer(data, name, 1000))
    for name, serializer in {"ListSerializerSnapshot": ListSerializer(LongSerializer()),
                             "MapSerializerSnapshot": MapSerializer(StringSerializer(), LongSerializer())}.items():
        data = snapshot_to_bytes(serializer.snapshot_configuration())
        restored = snapshot_from_bytes(with_outer(data, name, 1000)).restore_serializer()
        assert restored == serializer, f"got {restored!r}, should be {serializer!r} (the outer version ignored) [{name}]"
