"""Fuzzing untrusted input: mutated records, snapshots and savepoints against every reader.

One input is: a configuration (a serializer of one of the shapes below, sample values, and an
evolved serializer for migration), an entry point, and a mutation of valid bytes of that
configuration. ``run_input`` runs it under the canary and the limits and returns what it saw:

- the outcome must be a value or a ``StateError``; anything else is an *escape*;
- the input must finish within ``TIME_LIMIT`` seconds of this process's CPU time (an interval
  timer on CPU time interrupts it, so a busy machine does not turn a slow start into a finding)
  and within ``WALL_LIMIT`` seconds of wall time (a read that blocks): else a *hang*;
- the process's peak memory must not grow by more than ``MEMORY_LIMIT`` bytes: else *memory*;
- nothing may be imported (new ``sys.modules`` entries or ``import`` audit events): *import*;
- nothing may be unpickled (``pickle.loads`` calls or ``pickle.find_class`` audit events)
  unless the configuration itself chose ``PickleSerializer`` and the input reaches it through
  that choice (the caller's opt-in: its own serializer reading records, a descriptor that uses
  it): *unpickle*. A serializer restored from snapshot bytes is never an opt-in, so the
  snapshot entry points (``snapshot_from_bytes`` -> ``restore_serializer`` -> ``deserialize``
  of records and mutated records) may unpickle nothing whatever the configuration.

Mutations are drawn from a ``Source``: ``HypothesisSource`` in the test suite (hypothesis
shrinks a failure to a small mutation) and ``RandomSource`` in the campaign script
(``campaign.py``), so both run exactly the same mutations.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import decimal
import enum
import json
import os
import pickle
import resource
import shutil
import signal
import struct
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

try:  # loaded in real processes anyway (pandas, pyarrow): its lazy submodules are a target
    import numpy  # noqa: F401
except ImportError:  # pragma: no cover
    pass

from reference import (
    DataInputView,
    DataOutputView,
    StateError,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference import serializers as s
from reference import sqltypes as sql
from reference._snapshot import COMPOSITE_MAGIC, NESTED_MAGIC, class_identity
from reference.backends import (
    BytesStateBackend,
    HeapStateBackend,
    ListStateDescriptor,
    MapStateDescriptor,
    ValueStateDescriptor,
)
from reference.backends._base import read_list_elements
from reference.savepoint import (
    METADATA_FILE,
    decode_list_value,
    read_flink_savepoint,
    read_savepoint_content,
    read_savepoint_metadata,
    state_data_files,
)

#: Seconds of CPU time (user + system, this process) one input may take.
TIME_LIMIT = 2.0
#: Seconds of wall time one input may take: a blocked read uses no CPU time.
WALL_LIMIT = 30.0
#: Growth of the process's peak memory one input may cause (bytes).
MEMORY_LIMIT = 1 << 30
EVOLUTION = {"state.schema-evolution.enable": True}


# -- configurations ---------------------------------------------------------------------------
class Suit(enum.Enum):
    CLUBS = 1
    HEARTS = 2
    SPADES = 3


@dataclasses.dataclass
class Address:
    city: str = ""
    zip: int = 0


@dataclasses.dataclass
class Item:
    name: str = ""
    count: int = 0
    tags: list[str] = dataclasses.field(default_factory=list)
    suit: Optional[Suit] = None  # noqa: UP045 - the annotation mapping reads typing.Optional
    home: Optional[Address] = None  # noqa: UP045
    scores: dict[str, float] = dataclasses.field(default_factory=dict)


@dataclass
class Config:
    """A serializer shape: sample values, and the evolved serializer a migration targets."""

    name: str
    serializer: Any
    values: list[Any]
    evolved: Any = None
    #: The configuration itself reads through pickle (the caller's opt-in to unpickling).
    pickles: bool = False
    records: list[bytes] = field(default_factory=list)
    snapshot: bytes = b""

    def __post_init__(self) -> None:
        self.records = [self.serializer.to_bytes(v) for v in self.values]
        self.snapshot = snapshot_to_bytes(self.serializer.snapshot_configuration())

    @property
    def target(self) -> Any:
        return self.evolved if self.evolved is not None else self.serializer


def _row(fields: Sequence[tuple[str, Any, bool]], kind: bool = True) -> Any:
    return s.RowSerializer(list(fields), supports_row_kind=kind)


_ADDRESS = _row([("zip", s.IntSerializer(), True)])
_ADDRESS_V2 = _row([("zip", s.IntSerializer(), True), ("city", s.StringSerializer(), True)])
_AVRO_LOGICAL = {
    "type": "record", "name": "Payment", "namespace": "fuzz", "fields": [
        {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}
_AVRO_LOGICAL_V2 = json.loads(json.dumps(_AVRO_LOGICAL))
_AVRO_LOGICAL_V2["fields"].append({"name": "tags", "type": {"type": "array", "items": "string"}, "default": []})
_AVRO_NODE = {
    "type": "record", "name": "Node", "fields": [
        {"name": "value", "type": "int"},
        {"name": "children", "type": {"type": "array", "items": "Node"}},
        {"name": "next", "type": ["null", "Node"], "default": None},
    ],
}
_AVRO_NODE_V2 = {
    "type": "record", "name": "Node", "fields": [
        {"name": "value", "type": "long"},
        {"name": "children", "type": {"type": "array", "items": "Node"}},
        {"name": "next", "type": ["null", "Node"], "default": None},
        {"name": "label", "type": "string", "default": ""},
    ],
}
_AVRO_UNION = ["null", "int", "string", {"type": "array", "items": ["null", "long"]},
               {"type": "map", "values": "double"},
               {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN"]}]
_AVRO_UNION_V2 = ["null", "long", "string", {"type": "array", "items": ["null", "long"]},
                  {"type": "map", "values": "double"},
                  {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}]


def _node(value: int, children: list[Any] | None = None, nxt: Any = None) -> dict[str, Any]:
    return {"value": value, "children": children or [], "next": nxt}


_ROWDATA = sql.RowType([
    ("id", sql.IntType()), ("tag", sql.VarCharType()), ("note", sql.VarCharType(40)),
    ("amount", sql.DecimalType(24, 2)), ("at", sql.TimestampType(6)),
    ("names", sql.ArrayType(sql.VarCharType())),
    ("scores", sql.MapType(sql.VarCharType(), sql.DoubleType())),
    ("bag", sql.MultisetType(sql.VarBinaryType())),
    ("inner", sql.RowType([("ok", sql.BooleanType(False)), ("price", sql.DecimalType(5, 2))])),
])

_ROWDATA_COLLECTIONS = sql.RowType([
    ("rows", sql.ArrayType(sql.RowType([("price", sql.DecimalType(5, 2)), ("ids", sql.ArrayType(sql.IntType()))]))),
    ("blobs", sql.ArrayType(sql.ArrayType(sql.VarBinaryType()))),
    ("seen", sql.MapType(sql.VarCharType(), sql.RowType([("at", sql.TimestampType(3))]))),
])


def build_configs() -> list[Config]:
    utc = datetime.timezone.utc
    configs = [
        Config("long", s.LongSerializer(), [0, -(2**63), 12345]),
        Config("string", s.StringSerializer(), ["", "h\u00e9llo \U0001F600\x00", None, "abc" * 20]),
        Config("bytes", s.BytesSerializer(), [b"", b"\x00\xff" * 9]),
        Config("double", s.DoubleSerializer(), [-0.0, float("inf")]),
        Config("list-of-rows", s.ListSerializer(_row([("id", s.LongSerializer(), False),
                                                     ("name", s.StringSerializer(), True)])),
               [[(1, "a"), (2, None)], []]),
        Config("map-string-nullable-long",
               s.MapSerializer(s.StringSerializer(), s.NullableSerializer(s.LongSerializer())),
               [{"a": 1, "b": None, "": -5}, {}]),
        Config("nested-row",
               _row([("id", s.LongSerializer(), False), ("address", _ADDRESS, True),
                     ("tags", s.ListSerializer(s.StringSerializer()), True)]),
               [(1, (90210,), ["x"]), (2, None, None), s.Row((3, (1,), []), s.RowKind.DELETE)],
               evolved=_row([("tags", s.ListSerializer(s.StringSerializer()), True),
                             ("id", s.LongSerializer(), False), ("address", _ADDRESS_V2, True),
                             ("email", s.StringSerializer(), True)])),
        Config("avro-logical", s.AvroSerializer(_AVRO_LOGICAL),
               [{"amount": decimal.Decimal("12.34"), "at": datetime.datetime(2024, 5, 1, 12, 0, tzinfo=utc),
                 "day": datetime.date(2020, 2, 29), "id": uuid.UUID(int=7), "note": None},
                {"amount": decimal.Decimal("-0.01"), "at": datetime.datetime(1970, 1, 1, tzinfo=utc),
                 "day": datetime.date(1970, 1, 1), "id": uuid.UUID(int=2**100), "note": "n"}],
               evolved=s.AvroSerializer(_AVRO_LOGICAL_V2)),
        Config("avro-recursive", s.AvroSerializer(_AVRO_NODE),
               [_node(1, [_node(2), _node(3, [_node(4)])], _node(5, nxt=_node(6))), _node(0)],
               evolved=s.AvroSerializer(_AVRO_NODE_V2)),
        Config("avro-union", s.AvroSerializer(_AVRO_UNION),
               [None, 3, "x", [None, 5], {"k": 1.5}, "GREEN"], evolved=s.AvroSerializer(_AVRO_UNION_V2)),
        Config("pojo", s.PojoSerializer(Item),
               [Item("x", 3, ["a"], Suit.HEARTS, Address("c", 1), {"k": 0.5}), Item(), None]),
        Config("enum", s.EnumSerializer(Suit, symbols=["SPADES", "CLUBS", "HEARTS"]), list(Suit),
               evolved=s.EnumSerializer(Suit)),
        Config("zero-width-lists", s.ListSerializer(s.ListSerializer(s.TupleSerializer())),
               [[[()] * 3, [], [()]], []]),
        Config("zero-width-avro", s.ListSerializer(s.AvroSerializer({"type": "array", "items": {"type": "array", "items": "null"}})),
               [[[[None, None], []], [[None]]]]),
        Config("zero-width-rows", s.ListSerializer(_row([], kind=False)), [[(), ()], []]),
        Config("tuple", s.TupleSerializer(s.IntSerializer(), s.NullableSerializer(s.DoubleSerializer(), padded=True),
                                          s.StringSerializer()), [(1, None, "x"), (2, 0.5, "")]),
        Config("rowdata", s.RowDataSerializer(_ROWDATA),
               [(1, "short", "a string past seven bytes", decimal.Decimal("-12345678901234567890.12"),
                 s.TimestampData(1_700_000_000_123, 456_789), ["x", None, "longer than seven"],
                 {"k": 1.5, "none": None}, {b"\x00": 3}, (True, decimal.Decimal("1.50"))),
                s.Row((None, None, "", None, None, [], {}, {}, None), s.RowKind.UPDATE_AFTER)]),
        # collections of rows, arrays and maps: their snapshots hold the element serializers'
        # Java object graphs (arrays, a Class, serialized lambdas, shared types)
        Config("rowdata-collections", s.RowDataSerializer(_ROWDATA_COLLECTIONS),
               [([(decimal.Decimal("1.50"), [1, None]), None], [[b"\x01"], [], None],
                 {"k": (s.TimestampData(1_700_000_000_123, 0),), "n": None}),
                ([], [], {})]),
        Config("pickle-list", s.ListSerializer(s.PickleSerializer()),
               [[{"a": [1, 2.5]}, (1, None)], [b"\x00\xff" * 200, "x" * 300], []], pickles=True),
    ]
    return configs


CONFIGS = build_configs()
#: Class names a mutation puts where a snapshot names a class: registered snapshots (Pickle's
#: among them) and names of classes that must never be resolved or imported.
HOSTILE_CLASS_NAMES = [class_identity(c) for c in (
    s.PickleSerializerSnapshot, s.ListSerializerSnapshot, s.MapSerializerSnapshot,
    s.NullableSerializerSnapshot, s.RowSerializerSnapshot, s.PojoSerializerSnapshot,
    s.EnumSerializerSnapshot, s.AvroSerializerSnapshot, s.TupleSerializerSnapshot,
    s.LongSerializerSnapshot,
)] + [
    "numpy:testing.TestCase",
    "numpy:random.Generator",
    "os:system",
    "subprocess:Popen",
    "builtins:object",
    "collections:OrderedDict",
    "antigravity:Fly",
    "fuzzing:Item",
    "fuzzing:Suit",
    "reference.serializers:RowKind",
]
PICKLE_NAME = class_identity(s.PickleSerializerSnapshot)


# -- sources of randomness --------------------------------------------------------------------
class Source:
    """Where mutations get their choices."""

    def integer(self, lo: int, hi: int, label: str) -> int:
        raise NotImplementedError

    def choice(self, items: Sequence[Any], label: str) -> Any:
        return items[self.integer(0, len(items) - 1, label)]

    def boolean(self, label: str) -> bool:
        return self.integer(0, 1, label) == 1

    def blob(self, max_size: int, label: str) -> bytes:
        return bytes(self.integer(0, 255, label) for _ in range(self.integer(0, max_size, f"{label} size")))


class RandomSource(Source):
    def __init__(self, rng: Any) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int, label: str) -> int:
        return self.rng.randint(lo, hi)


class HypothesisSource(Source):
    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data, self.st = data, st

    def integer(self, lo: int, hi: int, label: str) -> int:
        return self.data.draw(self.st.integers(lo, hi), label=label)  # type: ignore[no-any-return]


# -- byte mutations ---------------------------------------------------------------------------
_INTERESTING = [0, 1, -1, 2, 3, 6, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 65536, 65537, 0x7FFFFFFF,
                -0x80000000, 1 << 24, 100, 400]


def mutate_bytes(data: bytes, src: Source) -> bytes:
    """1-3 of: flip bits, set bytes, overwrite a big-endian int with an interesting one,
    insert or delete a run, duplicate a slice, truncate, append; or, rarely, replace everything
    by nested counts (``n`` then ``n`` times ``m``: lists of lists of empty elements)."""
    if src.integer(0, 15, "nested counts") == 0:
        n = src.choice([2, 4, 100, 300, 2000], "outer count")
        m = src.choice([3, 65536, 1 << 20, 2**31 - 1], "inner count")
        return struct.pack(">i", n) + struct.pack(">i", m) * n
    out = bytearray(data)
    for _ in range(src.integer(1, 3, "mutations")):
        op = src.integer(0, 7, "op")
        n = len(out)
        if op == 0 and n:
            pos = src.integer(0, n - 1, "pos")
            out[pos] ^= 1 << src.integer(0, 7, "bit")
        elif op == 1 and n:
            pos = src.integer(0, n - 1, "pos")
            out[pos] = src.choice([0, 1, 0x7F, 0x80, 0xFF, src.integer(0, 255, "byte")], "value")
        elif op == 2 and n >= 4:
            pos = src.integer(0, n - 4, "pos")
            value = src.choice(_INTERESTING, "int")
            out[pos:pos + 4] = struct.pack(">i", value if value < 2**31 else value - 2**32)
        elif op == 3:
            pos = src.integer(0, n, "pos")
            out[pos:pos] = src.blob(8, "insert")
        elif op == 4 and n:
            pos = src.integer(0, n - 1, "pos")
            del out[pos:pos + src.integer(1, 8, "delete")]
        elif op == 5 and n:
            a = src.integer(0, n - 1, "from")
            b = src.integer(a, min(n, a + 64), "to")
            pos = src.integer(0, n, "pos")
            out[pos:pos] = out[a:b] * src.choice([1, 2, 3, 4, 64, 300], "copies")
        elif op == 6:
            del out[src.integer(0, n, "keep"):]
        else:
            out += src.blob(8, "append")
    return bytes(out)


def _utf(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack(">H", len(data)) + data


def _class_names(data: bytes) -> list[tuple[int, int]]:
    """(offset, end) of each UTF string in ``data`` that looks like a ``module:qualname``."""
    found = []
    for i in range(len(data) - 2):
        n = struct.unpack_from(">H", data, i)[0]
        if 3 <= n <= 200 and i + 2 + n <= len(data):
            text = data[i + 2:i + 2 + n]
            if b":" in text and all(32 < c < 127 for c in text):
                found.append((i, i + 2 + n))
    return found


def deep_list_snapshot(depth: int, inner: bytes) -> bytes:
    """A snapshot of ``depth`` List snapshots around ``inner`` (a versioned snapshot without
    the proxy int), written without recursion."""
    head = (_utf("reference.serializers:ListSerializerSnapshot") + struct.pack(">i", 3)
            + struct.pack(">iiiii", COMPOSITE_MAGIC, 1, NESTED_MAGIC, 1, 1))
    return struct.pack(">i", 2) + head * depth + inner


def mutate_snapshot(data: bytes, src: Source) -> bytes:
    """Structure-aware snapshot mutations (class names swapped, nesting deepened, nested
    counts and Avro schema texts replaced), or byte mutations."""
    op = src.integer(0, 5, "snapshot op")
    if op == 1:
        names = _class_names(data)
        if names:
            start, end = src.choice(names, "class name")
            name = PICKLE_NAME if src.integer(0, 3, "pickle") == 0 else src.choice(HOSTILE_CLASS_NAMES, "new name")
            data = data[:start] + _utf(name) + data[end:]
            return data if src.boolean("then bytes") is False else mutate_bytes(data, src)
    if op == 2:
        depth = src.choice([1, 2, 50, 99, 100, 101, 400, 2000], "depth")
        return deep_list_snapshot(depth, data[4:])
    if op == 3:
        # the nested-snapshot count of a composite: 0, 1, 3 or a huge one
        pos = data.find(struct.pack(">ii", NESTED_MAGIC, 1))
        if pos >= 0:
            pos += 8
            count = src.choice([0, 1, 3, 2**31 - 1, -1], "count")
            # the first nested block is the outermost composite's: with a count of 0 its nested
            # snapshots go too, so the snapshot stays well-formed apart from its arity
            return data[:pos] + struct.pack(">i", count) + (b"" if count == 0 else data[pos + 4:])
    if op == 4:
        pos = data.find(b'{"')
        if pos < 0:
            pos = data.find(b'["')
        if pos >= 4:
            text = src.choice([
                "[" * 100000, "{" * 3000, '{"type":"record","name":"Node","fields":[{"name":"next",'
                '"type":["null","Node"],"default":{}}]}', '"null"', '{"type":"array","items":"null"}',
                '{"type":"fixed","name":"F","size":-1}', "\udcff", '{"type":"enum","name":"E","symbols":[]}',
                '[' + '{"type":"array","items":' * 300 + '"int"' + '}' * 300 + ']',
            ], "schema")
            raw = text.encode("utf-8", "surrogatepass")
            return data[:pos - 4] + struct.pack(">i", len(raw)) + raw
    return mutate_bytes(data, src)


# -- the canary -------------------------------------------------------------------------------
class Hang(BaseException):
    """Raised by the interval timer: the input took longer than the time limit."""


class Canary:
    """Counts imports and unpicklings while ``watching`` (one per process: audit hooks stay)."""

    def __init__(self) -> None:
        self.watching = False
        self.imports: list[str] = []
        self.unpicklings: list[str] = []
        sys.addaudithook(self._audit)
        self._loads = pickle.loads
        pickle.loads = self._counting_loads  # type: ignore[assignment]

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.watching:
            return
        if event == "import":
            self.imports.append(str(args[0]))
        elif event == "pickle.find_class":
            self.unpicklings.append(f"find_class {args[0]}.{args[1]}")

    def _counting_loads(self, data: Any, *args: Any, **kwargs: Any) -> Any:
        if self.watching:
            self.unpicklings.append(f"pickle.loads of {len(data)} bytes")
        return self._loads(data, *args, **kwargs)


_CANARY: list[Canary] = []


def canary() -> Canary:
    if not _CANARY:
        _CANARY.append(Canary())
    return _CANARY[0]


@dataclass
class Outcome:
    """What one input did: ``problem`` is None when it behaved."""

    config: str
    entry: str
    problem: str | None = None
    detail: str = ""
    seconds: float = 0.0
    data: bytes = b""


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang()


def run_guarded(config: Config, entry: str, data: bytes, call: Callable[[], Any]) -> Outcome:
    """Run ``call`` under the canary, the time limit and the memory limit."""
    watch = canary()
    modules = set(sys.modules)
    outcome = Outcome(config.name, entry, data=data)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    watch.imports.clear()
    watch.unpicklings.clear()
    previous = {number: signal.signal(number, _on_alarm) for number in (signal.SIGPROF, signal.SIGALRM)}
    start, cpu_start = time.perf_counter(), time.process_time()
    watch.watching = True
    try:
        signal.setitimer(signal.ITIMER_PROF, TIME_LIMIT)
        signal.setitimer(signal.ITIMER_REAL, WALL_LIMIT)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                call()
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)
    except Hang:
        outcome.problem, outcome.detail = "hang", (
            f"over {TIME_LIMIT} s of CPU time or {WALL_LIMIT} s of wall time")
    except StateError:
        pass
    except Exception as exc:
        outcome.problem, outcome.detail = "escape", f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        watch.watching = False
        for number, handler in previous.items():
            signal.signal(number, handler)
    outcome.seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - peak
    new_modules = sorted(set(sys.modules) - modules)
    if outcome.problem is None and (cpu > TIME_LIMIT or outcome.seconds > WALL_LIMIT):
        outcome.problem, outcome.detail = "hang", f"{cpu:.2f} s of CPU time, {outcome.seconds:.2f} s of wall time"
    if outcome.problem is None and grown > MEMORY_LIMIT:
        outcome.problem, outcome.detail = "memory", f"peak memory grew by {grown >> 20} MiB"
    if outcome.problem is None and (watch.imports or new_modules):
        outcome.problem, outcome.detail = "import", f"imported {sorted(set(watch.imports) | set(new_modules))[:10]}"
    if outcome.problem is None and watch.unpicklings and not opted_in(config, entry):
        outcome.problem, outcome.detail = "unpickle", "; ".join(watch.unpicklings[:5])
    return outcome


# -- entry points -----------------------------------------------------------------------------
def opted_in(config: Config, entry: str) -> bool:
    """Whether the caller opted in to unpickling for ``entry``: the configuration chose
    ``PickleSerializer`` and the entry reads with it (its records, or a savepoint through its
    descriptors); never for a snapshot entry, whose serializers come from the bytes."""
    return config.pickles and entry not in SNAPSHOT_ENTRIES
RECORD_ENTRIES = ("deserialize", "copy_serialized", "migrate_state", "list_state_value")
SNAPSHOT_ENTRIES = ("snapshot_from_bytes", "restore_serializer", "resolve_compatibility")


def _record_call(config: Config, entry: str, data: bytes) -> Callable[[], Any]:
    serializer = config.serializer
    if entry == "deserialize":
        return lambda: serializer.from_bytes(data)
    if entry == "copy_serialized":
        return lambda: serializer.copy_serialized(DataInputView(data), DataOutputView())
    if entry == "migrate_state":
        def migrate() -> None:
            new = config.target
            new.snapshot_configuration().migrate_state(serializer, new, DataInputView(data), DataOutputView())
        return migrate

    def list_value() -> None:
        read_list_elements(data, serializer)
        decode_list_value(data, serializer)
    return list_value


def _snapshot_call(config: Config, entry: str, data: bytes, records: Sequence[bytes] = ()) -> Callable[[], Any]:
    """Read the snapshot bytes ``data`` and, for ``restore_serializer``, read the
    configuration's records and ``records`` (mutated ones) with what it restores: nothing
    read from bytes may unpickle, whichever serializer the snapshot names."""
    def run() -> None:
        snapshot = snapshot_from_bytes(data)
        if entry == "snapshot_from_bytes":
            return
        if entry == "resolve_compatibility":
            resolve_compatibility(config.target, snapshot)
            resolve_compatibility(snapshot, config.serializer.snapshot_configuration())
            return
        restored = snapshot.restore_serializer()
        snapshot_to_bytes(restored.snapshot_configuration())
        for record in [*config.records, *records]:
            try:
                restored.from_bytes(record)
            except StateError:
                pass
    return run


def record_input(src: Source) -> tuple[Config, str, bytes, Callable[[], Any]]:
    config = src.choice(CONFIGS, "config")
    entry = src.choice(RECORD_ENTRIES, "entry")
    record = src.choice(config.records, "record")
    if entry == "list_state_value":
        record = b",".join(config.records[: src.integer(1, len(config.records), "elements")])
    data = mutate_bytes(record, src)
    return config, entry, data, _record_call(config, entry, data)


def snapshot_input(src: Source) -> tuple[Config, str, bytes, Callable[[], Any]]:
    config = src.choice(CONFIGS, "config")
    entry = src.choice(SNAPSHOT_ENTRIES, "entry")
    data = mutate_snapshot(config.snapshot, src) if src.integer(0, 7, "keep snapshot") else config.snapshot
    records = [mutate_bytes(src.choice(config.records, "record"), src)] if entry == "restore_serializer" else []
    return config, entry, data, _snapshot_call(config, entry, data, records)


# -- savepoints -------------------------------------------------------------------------------
def descriptors(config: Config, evolved: bool) -> list[Any]:
    serializer = config.target if evolved else config.serializer
    return [
        ValueStateDescriptor("v", serializer),
        ListStateDescriptor("l", serializer),
        MapStateDescriptor("m", s.StringSerializer(), serializer),
    ]


def write_base_savepoint(config: Config, directory: str) -> str:
    """A savepoint of ``config`` with a value, a list and a map state over three keys."""
    backend = HeapStateBackend(s.StringSerializer())
    value, lst, mp = (backend.get_value_state(descriptors(config, False)[0]),
                      backend.get_list_state(descriptors(config, False)[1]),
                      backend.get_map_state(descriptors(config, False)[2]))
    values = [v for v in config.values if v is not None] or [config.serializer.create_instance()]
    for i, key in enumerate(["k0", "k1", "k2"]):
        backend.set_current_key(key)
        value.update(values[i % len(values)])
        lst.update(values[: i + 1] if values else [])
        mp.put_all({f"u{j}": values[j % len(values)] for j in range(i + 1)} | {"null": None})
    path = backend.savepoint(os.path.join(directory, config.name))
    backend.close()
    return path


def _mutate_metadata(path: str, src: Source) -> str:
    file = os.path.join(path, METADATA_FILE)
    with open(file, encoding="utf-8") as handle:
        text = handle.read()
    op = src.integer(0, 5, "metadata op")
    if op == 5:  # a listed path: a data directory or a data file name of a hostile shape
        doc = json.loads(text)
        state = src.choice(doc["states"], "state")
        hostile = src.choice(HOSTILE_PATHS, "path")
        if state.get("files") and src.boolean("file name"):
            state["files"][src.integer(0, len(state["files"]) - 1, "file")]["name"] = hostile
        else:
            state["data"] = hostile
        text = json.dumps(doc)
    elif op == 0:  # a snapshot replaced by a mutated one
        doc = json.loads(text)
        states = doc["states"]
        state = src.choice(states, "state")
        key = src.choice(["value_serializer_snapshot", "user_key_serializer_snapshot",
                          "namespace_serializer_snapshot", "key"], "snapshot field")
        holder = doc if key == "key" else state
        key = "key_serializer_snapshot" if key == "key" else key
        original = base64.b64decode(holder[key]) if holder.get(key) else snapshot_to_bytes(
            s.LongSerializer().snapshot_configuration())
        if src.integer(0, 3, "pickle instead") == 0:  # Pickle's snapshot, or one nesting it
            replaced = src.choice([s.PickleSerializer(), s.ListSerializer(s.PickleSerializer()),
                                   s.MapSerializer(s.StringSerializer(), s.PickleSerializer())], "pickle")
            mutated = snapshot_to_bytes(replaced.snapshot_configuration())
        else:
            mutated = mutate_snapshot(original, src)
        holder[key] = base64.b64encode(mutated).decode("ascii")
        text = json.dumps(doc)
    elif op == 1:  # a field set to a hostile value
        doc = json.loads(text)
        holder = src.choice([doc, src.choice(doc["states"], "state")], "holder")
        key = src.choice(sorted(holder), "key")
        holder[key] = src.choice([None, 0, -1, 2**40, "", "../x", ".hidden", "state-0000", [], {},
                                  "x" * 5, True, 1.5, "AAAA", "map", "list"], "value")
        text = json.dumps(doc)
    elif op == 2:
        text = src.choice(["[" * 100000, "{" * 5000, "", "null", "\udcff", '{"format": 1}'], "text")
    else:
        raw = mutate_bytes(text.encode("utf-8"), src)
        with open(file, "wb") as handle:
            handle.write(raw)
        return path
    with open(file, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)
    return path


#: Paths a forged listing may name: under a file, too long, absolute, climbing out, with a
#: separator, NUL or lone surrogate, empty, another state's file.
HOSTILE_PATHS = [
    "_metadata.json", "_metadata.json/part-00000.parquet", "x" * 300, "state-" + "0" * 300, "..",
    ".", "", "../state-0000", "/etc", "/dev/shm", "/tmp/part-00000.parquet", "state-0000/..",
    "state-0000\x00", "state-0000\\..", "state-0001", "state-9999", "~", "C:\\x", "\udcff",
    "state-0000/part-00000.parquet", "../state-0001/part-00000.parquet", "part-00000.parquet/x",
    "x" * 300 + ".parquet", "part-00000." + "a" * 260 + ".parquet", "part-00000..parquet",
    "part-00000.parquet", "part-00001.parquet", "part-00000.h-1-0.parquet",
]


def _mutate_data(path: str, src: Source) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    metadata = read_savepoint_metadata(path)
    state = src.choice(list(metadata.states), "state")
    file = state_data_files(path, state)[0]
    op = src.integer(0, 3, "data op")
    if op == 0:  # damage the file's bytes (footer, pages)
        with open(file, "rb") as handle:
            raw = handle.read()
        if src.boolean("footer"):
            cut = max(0, len(raw) - 64)
            raw = raw[:cut] + mutate_bytes(raw[cut:], src)
        else:
            raw = mutate_bytes(raw, src)
        with open(file, "wb") as handle:
            handle.write(raw)
        return path
    with open(file, "rb") as handle:
        original = handle.read()
    table = pq.read_table(file)
    rows = table.to_pylist()
    if op == 1 and rows:  # one cell's bytes mutated
        row = src.choice(rows, "row")
        column = src.choice(["key", "namespace", "user_key", "value"], "column")
        row[column] = mutate_bytes(row[column] or b"", src) if src.integer(0, 4, "null") else None
        if src.boolean("key group"):
            row["key_group"] = src.choice([-1, 0, 127, 128, 2**31 - 1], "group")
        schema = table.schema
    else:  # the schema changed: a nullable key column holding a null, a type, a column
        schema = table.schema
        change = src.integer(0, 3, "schema change")
        if change == 0:
            schema = schema.set(1, pa.field("key", pa.binary(), nullable=True))
            if rows:
                rows[0]["key"] = None
        elif change == 1:
            schema = schema.set(0, pa.field("key_group", pa.int64(), nullable=False))
        elif change == 2:
            schema = schema.append(pa.field("extra", pa.int32()))
        else:
            schema = schema.remove(4)
        rows = [{k: r.get(k) for k in schema.names} for r in rows]
    try:
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), file)
    except (pa.ArrowException, ValueError, TypeError, OverflowError):
        # pyarrow refused the damage itself (and removed what it had begun to write): keep
        # the file as it was
        with open(file, "wb") as handle:
            handle.write(original)
    if src.integer(0, 3, "relist"):  # mostly: a manifest that agrees, so the rows reach the readers
        _relist(path, state.name, os.path.getsize(file))
    return path


def _relist(path: str, state_name: str, size: int) -> None:
    """Set the listed size of the (first) data file of state ``state_name`` in the manifest."""
    file = os.path.join(path, METADATA_FILE)
    with open(file, encoding="utf-8") as handle:
        doc = json.load(handle)
    for state in doc["states"]:
        if state["name"] == state_name and state.get("files"):
            state["files"][0]["size"] = size
    with open(file, "w", encoding="utf-8") as handle:
        json.dump(doc, handle)


def savepoint_input(src: Source, bases: dict[str, str], scratch: str) -> tuple[Config, str, bytes, Callable[[], Any]]:
    config = src.choice(CONFIGS, "config")
    path = os.path.join(scratch, f"sp-{uuid.uuid4().hex}")
    shutil.copytree(bases[config.name], path)
    if src.boolean("metadata"):
        _mutate_metadata(path, src)
        what = "metadata"
    else:
        _mutate_data(path, src)
        what = "data"
    backend = src.choice(["heap", "bytes"], "backend")
    evolved = src.boolean("evolved descriptors") and config.evolved is not None
    return config, f"restore[{backend}, {what}{', evolved' if evolved else ''}]", b"", _savepoint_call(
        config, path, backend, evolved)


def listed_path_input(config: Config, bases: dict[str, str], scratch: str, field: str, hostile: str,
                      backend: str) -> tuple[Config, str, bytes, Callable[[], Any]]:
    """A savepoint of ``config`` whose first state's ``field`` (``"data"`` or ``"file"``)
    is the listed path ``hostile``: the regression inputs of the path mutations."""
    path = os.path.join(scratch, f"sp-{uuid.uuid4().hex}")
    shutil.copytree(bases[config.name], path)
    file = os.path.join(path, METADATA_FILE)
    with open(file, encoding="utf-8") as handle:
        doc = json.load(handle)
    if field == "data":
        doc["states"][0]["data"] = hostile
    else:
        doc["states"][0]["files"][0]["name"] = hostile
    with open(file, "w", encoding="utf-8") as handle:
        json.dump(doc, handle)
    return config, f"restore[{backend}, {field} {hostile[:40]!r}]", hostile.encode("utf-8", "surrogatepass"), (
        _savepoint_call(config, path, backend, False))


def _savepoint_call(config: Config, path: str, backend: str, evolved: bool) -> Callable[[], Any]:
    def run() -> None:
        try:
            read_savepoint_content(path)
            cls = HeapStateBackend if backend == "heap" else BytesStateBackend
            restored = cls.restore(path, key_serializer=s.StringSerializer(), config=EVOLUTION)
            try:
                for descriptor in descriptors(config, evolved):
                    try:
                        _read_state(restored, descriptor)
                    except StateError:
                        pass
                restored.savepoint(path + "-out")
            finally:
                restored.close()
        finally:
            shutil.rmtree(path, ignore_errors=True)
            shutil.rmtree(path + "-out", ignore_errors=True)

    return run


def _read_state(backend: Any, descriptor: Any) -> None:
    getter = {"value": backend.get_value_state, "list": backend.get_list_state,
              "map": backend.get_map_state}[descriptor.kind]
    state = getter(descriptor)
    for key in backend.keys(descriptor.name):
        backend.set_current_key(key)
        if descriptor.kind == "value":
            state.value()
        elif descriptor.kind == "list":
            state.get()
        else:
            state.items()


# -- Flink's canonical savepoints ------------------------------------------------------------
#: Real Flink 2.3 savepoints (tests/data/flink_savepoints: inline state in _metadata; state
#: files, Snappy-compressed; state files, two subtasks, two-byte key-group prefixes).
def _flink_bases() -> list[str]:
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "flink_savepoints")
    found = []
    for case in sorted(os.listdir(root)):
        with open(os.path.join(root, case, "expected.json"), encoding="utf-8") as handle:
            found.append(os.path.join(root, case, json.load(handle)["savepoint"]))
    return found


FLINK_BASES = _flink_bases()
FLINK_CONFIG = Config("flink-savepoint", s.LongSerializer(), [0])


#: The keyed states of the kept savepoints' operators that the state backends restore (the
#: others hold a POJO without its class, Kryo, or timers).
FLINK_BACKEND_STATES = {
    "keyed-states": ("count", "names", "amounts", "tuple", "row", "sum", "avg", "fresh"),
    "window": ("window-contents",),
}


def read_flink_everything(path: str) -> None:
    """What a user of ``read_flink_savepoint`` does: every operator, every keyed state's
    entries decoded, raw and as rows, every operator state's elements; and what a user of the
    backends does: restore the operators' keyed states into both backends and write them as a
    Flink savepoint again."""
    savepoint = read_flink_savepoint(path)
    key_serializers = {}
    for operator in savepoint.operators:
        for operator_state in operator.operator_states:
            for _ in operator_state.values():
                pass
        for state in operator.keyed_states:
            for _ in state.entries():
                pass
            for _ in state.raw_entries():
                pass
            if state.kind != "timers":
                for _ in state.rows():
                    pass
                if operator.uid is not None:
                    key_serializers[operator.uid] = state.key_serializer
    for uid, states in FLINK_BACKEND_STATES.items():
        if uid not in key_serializers:
            continue
        for cls in (HeapStateBackend, BytesStateBackend):
            restored = cls.restore(path, key_serializers[uid].restore_serializer(), operator_uid=uid, states=states)
            try:
                out = tempfile.mkdtemp(prefix="fuzz-flink-out-")
                try:
                    restored.savepoint(os.path.join(out, "sp"), format="flink", operator_uid=uid)
                finally:
                    shutil.rmtree(out, ignore_errors=True)
            finally:
                restored.close()


def _fix_listed_size(directory: str, name: str, size: int) -> None:
    """Set the size _metadata lists for the relative state file ``name`` (so that a mutated
    file reaches the parsers instead of failing the size check)."""
    file = os.path.join(directory, "_metadata")
    with open(file, "rb") as handle:
        data = bytearray(handle.read())
    label = _utf(name)
    at = data.find(label)
    if at >= 0:
        data[at + len(label): at + len(label) + 8] = struct.pack(">q", size)
        with open(file, "wb") as handle:
            handle.write(data)


def flink_input(src: Source, scratch: str) -> tuple[Config, str, bytes, Callable[[], Any]]:
    """A mutated copy of a real Flink savepoint: its ``_metadata`` or one of its state files
    (then, usually, listed in ``_metadata`` with its new size)."""
    base = src.choice(FLINK_BASES, "flink savepoint")
    path = os.path.join(scratch, f"flink-{uuid.uuid4().hex}")
    shutil.copytree(base, path)
    files = sorted(f for f in os.listdir(path) if f != "_metadata")
    target = "_metadata" if not files or src.boolean("mutate _metadata") else src.choice(files, "state file")
    with open(os.path.join(path, target), "rb") as handle:
        data = mutate_bytes(handle.read(), src)
    with open(os.path.join(path, target), "wb") as handle:
        handle.write(data)
    if target != "_metadata" and src.integer(0, 4, "fix listed size"):
        _fix_listed_size(path, target, len(data))
    entry = f"read_flink_savepoint[{os.path.basename(os.path.dirname(base))}, {'metadata' if target == '_metadata' else 'state file'}]"

    def run() -> None:
        try:
            read_flink_everything(path)
        finally:
            shutil.rmtree(path, ignore_errors=True)

    return FLINK_CONFIG, entry, data, run


def make_bases(directory: str) -> dict[str, str]:
    return {config.name: write_base_savepoint(config, directory) for config in CONFIGS}


def warm_up(bases: dict[str, str]) -> None:
    """Run every entry point on valid input once, so that lazy imports of the readers happen
    before the canary watches."""
    import pickletools  # noqa: F401  (the pickle length check imports it on first use)

    for config in CONFIGS:
        for entry in RECORD_ENTRIES:
            try:
                _record_call(config, entry, config.records[0])()
            except StateError:
                pass
        for entry in SNAPSHOT_ENTRIES:
            _snapshot_call(config, entry, config.snapshot)()
    for base in FLINK_BASES:
        read_flink_everything(base)
    scratch = tempfile.mkdtemp(prefix="fuzz-warm-")
    try:
        for config in CONFIGS:
            path = os.path.join(scratch, config.name)
            shutil.copytree(bases[config.name], path)
            for cls in (HeapStateBackend, BytesStateBackend):
                restored = cls.restore(path, key_serializer=s.StringSerializer(), config=EVOLUTION)
                for descriptor in descriptors(config, config.evolved is not None):
                    _read_state(restored, descriptor)
                restored.savepoint(path + f"-{cls.__name__}")
                restored.close()
            _mutate_data(path, RandomSource(__import__("random").Random(0)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def describe(outcome: Outcome) -> str:
    return (f"{outcome.problem} in {outcome.entry} of {outcome.config}: {outcome.detail} "
            f"(input {outcome.data[:200].hex()}{'...' if len(outcome.data) > 200 else ''})")
