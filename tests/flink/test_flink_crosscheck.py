"""Byte-for-byte cross-check against Apache Flink's own serializers (the ground truth for
docs/formats.md).

CrossCheck.java (beside this file) is compiled at test time against the flink-dist jar shipped
by the PyPI package apache-flink-libraries (``pip install -e .[flink]``) and prints the bytes
Flink writes for a fixed set of values and serializer snapshots; each is compared with what the
reference writes, and Flink's bytes are read back with the reference.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import random
import struct
import subprocess
from pathlib import Path

import pytest

import reference
from reference import serializers as s
from reference import snapshot_from_bytes, snapshot_to_bytes

# One xdist worker compiles and runs the Java side once (the suite runs with --dist loadgroup).
pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

@pytest.fixture(scope="module")
def flink_bytes(crosscheck) -> dict[str, bytes]:
    ran = subprocess.run(crosscheck, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, f"CrossCheck failed: {ran.stderr}"
    result = {}
    for line in ran.stdout.splitlines():
        name, _, hexed = line.partition(" ")
        result[name] = bytes.fromhex(hexed)
    return result


class Color(enum.Enum):  # same members, same order as CrossCheck.Color
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


@dataclasses.dataclass
class Item:  # CrossCheck.Item: String name, int count
    # A plain ``str`` (not Optional): the POJO's own null flag covers None, as in Flink.
    name: str = None  # type: ignore[assignment]
    count: int = dataclasses.field(default=0, metadata={"serializer": s.IntSerializer()})


def _row4():
    return s.RowSerializer([
        ("f0", s.IntSerializer(), True), ("f1", s.LongSerializer(), True),
        ("f2", s.StringSerializer(), True), ("f3", s.IntSerializer(), True),
    ])


def _canonical(value):
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, s.Row):
        return ("row", int(value.kind), tuple(_canonical(v) for v in value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((_canonical(k), _canonical(v)) for k, v in value.items()))
    return (type(value).__name__, value)


K = s.RowKind
DATA = {
    "boolean_true": (s.BooleanSerializer, True),
    "boolean_false": (s.BooleanSerializer, False),
    "byte": (s.ByteSerializer, -5),
    "short": (s.ShortSerializer, -300),
    "int_max": (s.IntSerializer, 2**31 - 1),
    "int_neg": (s.IntSerializer, -1),
    "long_min": (s.LongSerializer, -(2**63)),
    "long_42": (s.LongSerializer, 42),
    "float_1_5": (s.FloatSerializer, 1.5),
    "float_neg_zero": (s.FloatSerializer, -0.0),
    "float_nan": (s.FloatSerializer, float("nan")),
    "float_inf": (s.FloatSerializer, float("-inf")),
    "double_neg_zero": (s.DoubleSerializer, -0.0),
    "double_big": (s.DoubleSerializer, 1e300),
    "double_nan": (s.DoubleSerializer, float("nan")),
    "string_example": (s.StringSerializer, "My string."),
    "string_empty": (s.StringSerializer, ""),
    "string_null": (s.StringSerializer, None),
    "string_unicode": (s.StringSerializer, "h\u00e9llo \U0001F600\x00 \u4000\uffff\u0080"),
    "string_long": (s.StringSerializer, "a" * 200),
    "bytes": (s.BytesSerializer, b"\x00\xff\x05"),
    "bytes_empty": (s.BytesSerializer, b""),
    "list_int": (lambda: s.ListSerializer(s.IntSerializer()), [1, -1, 3]),
    "list_empty": (lambda: s.ListSerializer(s.IntSerializer()), []),
    "list_string": (lambda: s.ListSerializer(s.StringSerializer()), ["a", None, "bc"]),
    "map_string_long": (lambda: s.MapSerializer(s.StringSerializer(), s.LongSerializer()), {"a": 1, "b": None}),
    "nullable_null": (lambda: s.NullableSerializer(s.IntSerializer()), None),
    "nullable_value": (lambda: s.NullableSerializer(s.IntSerializer()), 5),
    "padded_null": (lambda: s.NullableSerializer(s.IntSerializer(), padded=True), None),
    "padded_value": (lambda: s.NullableSerializer(s.IntSerializer(), padded=True), 5),
    "tuple3": (lambda: s.TupleSerializer(s.IntSerializer(), s.StringSerializer(), s.BooleanSerializer()), (7, "x", True)),
    "enum_green": (lambda: s.EnumSerializer(Color), Color.GREEN),
    "enum_blue": (lambda: s.EnumSerializer(Color), Color.BLUE),
    "row_example": (_row4, (None, 42, "My string.", None)),
    "row_update_before": (_row4, s.Row.of(1, 2, "x", 3, kind=K.UPDATE_BEFORE)),
    "row_update_after": (_row4, s.Row.of(1, None, None, 3, kind=K.UPDATE_AFTER)),
    "row_delete": (_row4, s.Row.of(None, None, None, None, kind=K.DELETE)),
    "row_nine": (lambda: s.RowSerializer([(f"f{i}", s.IntSerializer(), True) for i in range(9)]),
                 s.Row.of(0, None, 2, None, 4, None, 6, None, 8, kind=K.UPDATE_AFTER)),
    "pojo_item": (lambda: s.PojoSerializer(Item), Item("x", 3)),
    "pojo_null_field": (lambda: s.PojoSerializer(Item), Item(None, -1)),
    "pojo_null": (lambda: s.PojoSerializer(Item), None),
}


@pytest.mark.parametrize("name", sorted(DATA))
def test_data_bytes_equal_flinks(flink_bytes, name):
    factory, value = DATA[name]
    try:
        serializer = factory()
    except NotImplementedError:
        pytest.skip(f"{name}: that serializer is not written yet")
    ours = serializer.to_bytes(value)
    theirs = flink_bytes[name]
    assert ours == theirs, f"got {ours.hex()}, should be Flink's {theirs.hex()} for {name} = {value!r}"
    back = serializer.from_bytes(theirs)
    assert _canonical(back) == _canonical(value), f"got {back!r} reading Flink's bytes, should be {value!r} [{name}]"


def test_my_string_example_matches_flink_formats_md(flink_bytes):
    assert flink_bytes["string_example"].hex(" ") == "0b 4d 79 20 73 74 72 69 6e 67 2e"
    assert flink_bytes["row_example"].hex() == "24" + "000000000000002a" + "0b4d7920737472696e672e"


# The Java classes of CrossCheck, as this process models them.
reference.register_type(Color, "CrossCheck$Color")
reference.register_type(Item, "CrossCheck$Item")

SNAPSHOTS = {
    "snapshot_int": lambda: s.IntSerializer(),
    "snapshot_string": lambda: s.StringSerializer(),
    "snapshot_bytes": lambda: s.BytesSerializer(),
    "snapshot_list_string": lambda: s.ListSerializer(s.StringSerializer()),
    "snapshot_map_string_long": lambda: s.MapSerializer(s.StringSerializer(), s.LongSerializer()),
    "snapshot_nullable_int": lambda: s.NullableSerializer(s.IntSerializer()),
    "snapshot_padded_int": lambda: s.NullableSerializer(s.IntSerializer(), padded=True),
    "snapshot_enum": lambda: s.EnumSerializer(Color),
    "snapshot_row": _row4,
    "snapshot_tuple3": lambda: s.TupleSerializer(s.IntSerializer(), s.StringSerializer(), s.BooleanSerializer()),
    "snapshot_pojo": lambda: s.PojoSerializer(Item),
}


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_snapshots_in_the_flink_dialect_equal_flinks(flink_bytes, name):
    ours = snapshot_to_bytes(SNAPSHOTS[name]().snapshot_configuration(), dialect="flink")
    theirs = flink_bytes[name]
    assert ours == theirs, f"got {ours.hex()}, should be Flink's {theirs.hex()} [{name}]"


@pytest.mark.parametrize("name", sorted(SNAPSHOTS))
def test_reads_flinks_snapshot_bytes(flink_bytes, name):
    """Flink's snapshot, Java names and all, restores our serializer (a row with Flink's
    positional field names f0..f3, as _row4 has)."""
    serializer = SNAPSHOTS[name]()
    restored = snapshot_from_bytes(flink_bytes[name]).restore_serializer()
    assert restored == serializer, f"got {restored!r} from Flink's snapshot, should be {serializer!r} [{name}]"


# -- Flink reads what we write: many generated records, one JVM --------------------------------
def _random_text(rnd: random.Random) -> str:
    alphabets = [
        lambda: chr(rnd.randrange(0x20, 0x7F)),
        lambda: chr(rnd.randrange(0x80, 0x800)),
        lambda: chr(rnd.randrange(0x800, 0xD800)),
        lambda: chr(rnd.randrange(0xE000, 0x10000)),
        lambda: chr(rnd.randrange(0x10000, 0x110000)),
        lambda: rnd.choice(["\x00", "\ud800", "\udfff", "\x7f", "\x80", "\u3fff", "\u4000"]),
    ]
    length = rnd.choice([0, 1, 2, 126, 127, 128, rnd.randrange(300), rnd.randrange(20000)])
    picks = [rnd.choice(alphabets) for _ in range(3)]
    return "".join(rnd.choice(picks)() for _ in range(length))


def _random_bits_float(rnd: random.Random, fmt: str, bits: int, exponent_mask: int) -> float:
    while True:  # Flink canonicalises NaN payloads; every other bit pattern must survive as is
        raw = rnd.getrandbits(bits)
        if (raw & exponent_mask) != exponent_mask:
            return struct.unpack(fmt, raw.to_bytes(bits // 8, "big"))[0]


def _generated_records(seed: int = 2026, per_kind: int = 150):
    rnd = random.Random(seed)
    row_kinds = list(s.RowKind)

    def maybe(value):
        return None if rnd.random() < 0.3 else value

    generators = {
        "boolean": (s.BooleanSerializer(), lambda: rnd.random() < 0.5),
        "byte": (s.ByteSerializer(), lambda: rnd.randrange(-128, 128)),
        "short": (s.ShortSerializer(), lambda: rnd.randrange(-(2**15), 2**15)),
        "int": (s.IntSerializer(), lambda: rnd.randrange(-(2**31), 2**31)),
        "long": (s.LongSerializer(), lambda: rnd.randrange(-(2**63), 2**63)),
        "float": (s.FloatSerializer(), lambda: rnd.choice([
            float("nan"), -0.0, float("inf"), _random_bits_float(rnd, ">f", 32, 0x7F800000)])),
        "double": (s.DoubleSerializer(), lambda: rnd.choice([
            float("nan"), -0.0, float("-inf"), _random_bits_float(rnd, ">d", 64, 0x7FF0000000000000)])),
        "string": (s.StringSerializer(), lambda: maybe(_random_text(rnd))),
        "bytes": (s.BytesSerializer(), lambda: rnd.randbytes(rnd.choice([0, 1, rnd.randrange(500)]))),
        "list_string": (s.ListSerializer(s.StringSerializer()),
                        lambda: [maybe(_random_text(rnd)[:20]) for _ in range(rnd.randrange(5))]),
        "map_string_long": (s.MapSerializer(s.StringSerializer(), s.LongSerializer()),
                            lambda: {_random_text(rnd)[:10]: maybe(rnd.randrange(-(2**63), 2**63))
                                     for _ in range(rnd.randrange(5))}),
        "padded_long": (s.NullableSerializer(s.LongSerializer(), padded=True),
                        lambda: maybe(rnd.randrange(-(2**63), 2**63))),
        "enum": (s.EnumSerializer(Color), lambda: rnd.choice(list(Color))),
        "row4": (_row4(), lambda: s.Row.of(maybe(rnd.randrange(-(2**31), 2**31)), maybe(rnd.randrange(2**40)),
                                           maybe(_random_text(rnd)[:30]), maybe(-1), kind=rnd.choice(row_kinds))),
    }
    records = []
    for kind, (serializer, make) in sorted(generators.items()):
        for _ in range(per_kind):
            records.append((kind, serializer.to_bytes(make())))
    return records


def test_flink_rereads_generated_records_identically(crosscheck):
    records = _generated_records()
    stdin = "".join(f"{kind} {data.hex()}\n" for kind, data in records)
    ran = subprocess.run([*crosscheck, "reread"], input=stdin, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, f"CrossCheck reread failed: {ran.stderr}"
    lines = ran.stdout.splitlines()
    assert len(lines) == len(records), f"got {len(lines)} answers, should be {len(records)}"
    # Flink reads a map into a HashMap, so its rewrite may order entries differently:
    # maps are compared as decoded dicts, everything else byte for byte.
    map_serializer = s.MapSerializer(s.StringSerializer(), s.LongSerializer())
    wrong = []
    for (kind, ours), line in zip(records, lines, strict=True):
        answer_kind, _, theirs = line.partition(" ")
        if kind == "map_string_long" and answer_kind == kind and not theirs.startswith("ERROR"):
            if map_serializer.from_bytes(bytes.fromhex(theirs)) != map_serializer.from_bytes(ours):
                wrong.append(f"{kind}: we wrote {ours.hex()[:80]}, Flink read and rewrote {theirs[:80]}")
        elif answer_kind != kind or theirs != ours.hex():
            wrong.append(f"{kind}: we wrote {ours.hex()[:80]}, Flink read and rewrote {theirs[:80]}")
    assert not wrong, f"got {len(wrong)} of {len(records)} records Flink reads differently, should be 0:\n" + "\n".join(wrong[:10])


#: The built-ins' own files: their golden releases and the Flink snapshots they declare.
BUILTINS = Path(__file__).resolve().parents[2] / "conformance" / "_builtins"


def _declared_flink_snapshots() -> dict[str, bytes]:
    """flink_snapshots.json: built-in name -> the snapshot bytes Flink 2.3 writes for it."""
    entries = json.loads((BUILTINS / "flink_snapshots.json").read_text())["snapshots"]
    return {name: bytes.fromhex(data) for name, data in entries.items()}


def test_the_built_ins_flink_snapshots_are_the_ones_flink_writes(flink_bytes):
    """conformance/_builtins/flink_snapshots.json (which the built-ins declare as
    Subject(flink_snapshot=...): tests/harness/test_builtin_flink_dialect.py) holds what Flink
    2.3 writes for each built-in's serializer (CrossCheck's builtinSnapshots), one entry each."""
    declared = _declared_flink_snapshots()
    flinks = {name[len("builtin_"):]: data for name, data in flink_bytes.items() if name.startswith("builtin_")}
    assert sorted(declared) == sorted(flinks), (
        f"got entries for {sorted(declared)}, should be for {sorted(flinks)} (the built-ins CrossCheck writes)")
    for name, theirs in flinks.items():
        assert declared[name] == theirs, f"got {declared[name].hex()}, should be Flink's {theirs.hex()} [{name}]"


def _flink_era_releases():
    """(built-in, release) for every golden release a built-in holds in the form an earlier
    Flink wrote (a release named ``flink-<version>``)."""
    return sorted((d.parent.name, d) for d in (BUILTINS / "golden").glob("*/flink-*") if d.is_dir())


def test_flink_restores_the_built_ins_flink_era_golden_releases(crosscheck):
    """A built-in's ``flink-1.7`` golden release holds the snapshot in Flink 1.7's form (a
    simple snapshot of version 2, with the serializer's class name); Flink 2.3 must read it,
    judge its own serializer compatible as is, and read and rewrite every recorded record to
    the same bytes, as a job restoring a Flink 1.7 savepoint does."""
    flink_snapshots = _declared_flink_snapshots()
    serializers = {"int": s.IntSerializer(), "string": s.StringSerializer()}
    releases = _flink_era_releases()
    assert [(name, d.name) for name, d in releases] == [("int", "flink-1.7"), ("string", "flink-1.7")], (
        f"got {[(name, d.name) for name, d in releases]}, should be the int and string built-ins' flink-1.7")
    lines, expected = [], []
    for name, directory in releases:
        serializer = serializers[name]
        snapshot = (directory / "snapshot.bin").read_bytes()
        data = (directory / "data.bin").read_bytes()
        view = reference.DataInputView(data)
        while view.available():
            start = len(data) - view.available()
            serializer.deserialize(view)
            record = data[start:len(data) - view.available()]
            lines.append(f"{name}/{len(expected)} {snapshot.hex()} {flink_snapshots[name].hex()} {record.hex()}\n")
            expected.append(record)
    ran = subprocess.run([*crosscheck, "judge"], input="".join(lines), capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, f"CrossCheck judge failed: {ran.stderr}"
    answers = ran.stdout.splitlines()
    assert len(answers) == len(expected) == 100, f"got {len(answers)} answers for {len(expected)} records, should be 100"
    for answer, record in zip(answers, expected, strict=True):
        where, verdict, hexed = answer.split(" ", 2)
        assert (verdict, hexed) == ("compatible_as_is", record.hex()), (
            f"got Flink's {verdict} {hexed[:80]}, should be compatible_as_is and the recorded {record.hex()[:80]} [{where}]")
