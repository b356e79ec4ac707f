"""Generated codecs (``reference.serializers._codegen``) against the generic methods they are
generated from: on drawn schemas and values, and on damaged and out-of-domain input, both write
the same bytes, read the same values, copy the same bytes, and fail with the same error at the
same input position, leaving an output as they found it."""

from __future__ import annotations

import dataclasses
import enum
import pickle
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strategies
from reference import DataInputView, DataOutputView, SerializationError, StateError
from reference import serializers as s
from reference import types as t
from reference.serializers import _codegen
from reference.types import serializer_for
from strategies import schema_nodes

COMPOSITES = ("row", "tuple", "pojo")
#: Top-level families with generated codecs.
GENERATED = COMPOSITES + ("avro",)
PREFIX = b"\xab\xcd"  # bytes already in the output: a refusal must leave them alone


def _both(run: Callable[[], Any]) -> tuple[Any, Any]:
    """``run()`` with the generic methods, then with generated codecs."""
    with s.generated_codecs(False):
        generic = run()
    with s.generated_codecs(True):
        generated = run()
    return generic, generated


def _outcome(call: Callable[[], Any]) -> tuple[Any, ...]:
    try:
        return ("value", strategies.canonical(call()))
    except StateError as exc:
        return ("error", type(exc).__name__, str(exc))


def _read(serializer: Any, data: bytes) -> Callable[[], Any]:
    def run() -> Any:
        source = DataInputView(data)
        result = _outcome(lambda: serializer.deserialize(source))
        return result, source.position, source.elements_left()

    return run


def _copy(serializer: Any, data: bytes) -> Callable[[], Any]:
    def run() -> Any:
        source, target = DataInputView(data), DataOutputView()
        target.write(PREFIX)
        result = _outcome(lambda: serializer.copy_serialized(source, target))
        return result, source.position, source.elements_left(), target.getvalue()

    return run


def _write(serializer: Any, value: Any) -> Callable[[], Any]:
    def run() -> Any:
        target = DataOutputView()
        target.write(PREFIX)
        result = _outcome(lambda: serializer.serialize(value, target))
        return result, target.getvalue()

    return run


def _agree(run: Callable[[], Any], what: str) -> Any:
    generic, generated = _both(run)
    assert generated == generic, f"got {generated!r:.600} from the generated codec, should be {generic!r:.600} [{what}]"
    return generated


@st.composite
def _composite_schema(draw: Any) -> Any:
    """A row, tuple or pojo (simplest first) whose fields are of any family, nested."""
    family = draw(st.sampled_from(COMPOSITES), label="family")
    types = draw(st.lists(strategies.schemas(max_depth=2, max_leaves=6), min_size=1, max_size=4), label="fields")
    if family == "row":
        nullable = draw(st.lists(st.booleans(), min_size=len(types), max_size=len(types)), label="nullable")
        return t.RowType(tuple(t.RowField(f"f{i}", f, n) for i, (f, n) in enumerate(zip(types, nullable, strict=True))))
    if family == "tuple":
        return t.TupleType(tuple(types))
    return strategies.pojo_type(tuple(strategies.PojoField(f"f{i}", f) for i, f in enumerate(types)))


@st.composite
def _subject(draw: Any) -> tuple[Any, Any, Any]:
    schema = draw(st.one_of(_composite_schema(), strategies.schemas(families=GENERATED)), label="schema")
    value = draw(strategies.values(schema), label="value")
    return schema, serializer_for(schema), value


def _damage(data: bytes, draw: Any) -> bytes:
    """Truncate, flip 1-3 bytes, or append bytes (simplest first: a cut)."""
    mutated = bytearray(data)
    if mutated and draw(st.booleans(), label="flip"):
        for _ in range(draw(st.integers(1, 3), label="flips")):
            pos = draw(st.integers(0, len(mutated) - 1), label="pos")
            mutated[pos] ^= draw(st.integers(1, 255), label="xor")
    mutated += draw(st.binary(max_size=4), label="appended")
    cut = draw(st.integers(0, len(mutated)), label="keep")
    return bytes(mutated[:cut])


@settings(deadline=None)
@given(st.data())
def test_generated_codecs_write_read_and_copy_as_the_generic_methods(data: Any) -> None:
    schema, serializer, value = data.draw(_subject(), label="subject")
    (result, written) = _agree(_write(serializer, value), f"write {schema!r}")
    assert result[0] == "value", f"got {result!r}, should write the drawn value of {schema!r}"
    encoded = written[len(PREFIX):]
    (read, position, _) = _agree(_read(serializer, encoded), f"read {schema!r}")
    assert read == ("value", strategies.canonical(value)), f"got {read!r:.300}, should read back {value!r:.300}"
    assert position == len(encoded), f"got position {position}, should be {len(encoded)} (the whole record)"
    (_, _, _, copied) = _agree(_copy(serializer, encoded), f"copy {schema!r}")
    assert copied == PREFIX + encoded, f"got {copied.hex()}, should copy {encoded.hex()}"


@settings(deadline=None)
@given(st.data())
def test_generated_codecs_fail_on_damaged_bytes_as_the_generic_methods(data: Any) -> None:
    schema, serializer, value = data.draw(_subject(), label="subject")
    damaged = _damage(serializer.to_bytes(value), data.draw)
    _agree(_read(serializer, damaged), f"read {damaged.hex()} as {schema!r}")
    _agree(_copy(serializer, damaged), f"copy {damaged.hex()} as {schema!r}")


@settings(deadline=None)
@given(st.data())
def test_generated_codecs_refuse_out_of_domain_values_as_the_generic_methods(data: Any) -> None:
    schema = data.draw(st.one_of(_composite_schema(), strategies.schemas(families=GENERATED)), label="schema")
    bad = data.draw(strategies.out_of_domain(schema), label="bad")
    serializer = serializer_for(schema)
    (result, written) = _agree(_write(serializer, bad.value), f"write {bad!r} as {schema!r}")
    if result[0] == "value" and any(isinstance(node, t.AvroType) for node in schema_nodes(schema)):
        return  # fastavro writes some values of other types (an object as a boolean): both paths alike
    assert result[:2] == ("error", "SerializationError"), f"got {result!r}, should refuse {bad!r}"
    assert written == PREFIX, f"got {written.hex()}, should leave the output as it was ({PREFIX.hex()})"


# -- the generated path is the one taken --------------------------------------------------------
@dataclasses.dataclass
class Reading:
    sensor: str = ""
    value: float = 0.0
    tags: list[str] = dataclasses.field(default_factory=list)


def _row() -> s.RowSerializer:
    address = s.RowSerializer([("street", s.StringSerializer(), True), ("zip", s.IntSerializer(), False)])
    return s.RowSerializer([
        ("id", s.LongSerializer(), False), ("name", s.StringSerializer(), True),
        ("score", s.DoubleSerializer(), True), ("ok", s.BooleanSerializer(), True),
        ("tags", s.ListSerializer(s.StringSerializer()), True),
        ("attrs", s.MapSerializer(s.StringSerializer(), s.NullableSerializer(s.LongSerializer())), True),
        ("address", address, True), ("payload", s.BytesSerializer(), True),
        ("pair", s.TupleSerializer(s.ShortSerializer(), s.NullableSerializer(s.FloatSerializer(), padded=True)), True),
        ("reading", s.PojoSerializer(Reading), True),
    ])


GOOD_ROWS = [
    (1, "a", 0.5, True, ["x", "y"], {"k": 1, "n": None}, ("Main St", 7), b"\x00\x01", (3, None), Reading("s", 1.5, ["t"])),
    s.Row((2, None, None, None, None, None, None, None, None, None), s.RowKind.UPDATE_AFTER),
    (3, "caf\u00e9 \U0001f600", -0.0, False, [], {}, (None, 0), b"", (-1, 2.5), None),
]


AVRO_EVENT = {
    "type": "record", "name": "Event", "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"]},
        {"name": "score", "type": ["double", "null"]},
        {"name": "ratio", "type": "float"},
        {"name": "count", "type": "int"},
        {"name": "ok", "type": "boolean"},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "long"]}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}},
        {"name": "digest", "type": {"type": "fixed", "name": "Digest", "size": 3}},
        {"name": "payload", "type": "bytes"},
        {"name": "address", "type": ["null", {"type": "record", "name": "Address", "fields": [
            {"name": "street", "type": "string"}, {"name": "zip", "type": "int"}]}]},
    ],
}
GOOD_EVENTS = [
    {"id": 1, "name": "a", "score": 0.5, "ratio": 1.5, "count": -3, "ok": True, "tags": ["x", "\u00e9\U0001f600"],
     "attrs": {"k": 1, "n": None}, "kind": "B", "digest": b"abc", "payload": b"\x00\xff",
     "address": {"street": "Main St", "zip": 7}},
    {"id": -(2**63), "name": None, "score": None, "ratio": -0.0, "count": 2**31 - 1, "ok": False, "tags": [],
     "attrs": {}, "kind": "A", "digest": b"\x00\x00\x00", "payload": b"", "address": None},
]


def _counting(serializer: Any) -> list[str]:
    """Record every call of ``serializer``'s generic methods (installed before the codec is
    generated, so the generated functions call these)."""
    calls: list[str] = []
    for name in ("_deserialize_generic", "_serialize_generic", "_copy_serialized_generic"):
        method = getattr(serializer, name)

        def counted(*args: Any, _method: Any = method, _name: str = name) -> Any:
            calls.append(_name)
            return _method(*args)

        setattr(serializer, name, counted)
    _codegen.install(serializer)
    return calls


CASES: dict[str, tuple[Callable[[], Any], list[Any]]] = {
    "row": (_row, GOOD_ROWS),
    "pojo": (lambda: s.PojoSerializer(Reading), [Reading("a", 2.0, ["b"]), Reading()]),
    "tuple": (lambda: s.TupleSerializer(s.IntSerializer(), s.StringSerializer()), [(1, "a"), (-5, "")]),
    "avro": (lambda: s.AvroSerializer(AVRO_EVENT), GOOD_EVENTS),
}


@pytest.mark.parametrize("case", list(CASES))
def test_valid_records_take_the_generated_path(case: str) -> None:
    make, values = CASES[case]
    serializer = make()
    with s.generated_codecs(True):
        calls = _counting(serializer)
        for value in values:
            encoded = serializer.to_bytes(value)
            assert strategies.values_equal(serializer.from_bytes(encoded), value), f"got another value back for {value!r}"
            target = DataOutputView()
            serializer.copy_serialized(DataInputView(encoded), target)
            assert target.getvalue() == encoded, f"got {target.getvalue().hex()}, should copy {encoded.hex()}"
    assert calls == [], f"got calls of the generic methods {calls}, should take the generated path for valid records"


def _every_damage(encoded: bytes) -> list[bytes]:
    damaged = [encoded[:cut] for cut in range(len(encoded))]
    for pos in range(len(encoded)):
        for byte in (0x00, 0x01, 0x02, 0x7F, 0x80, 0xFF):
            if encoded[pos] != byte:
                damaged.append(encoded[:pos] + bytes([byte]) + encoded[pos + 1:])
    return damaged


@pytest.mark.parametrize(("case", "index"), [(c, i) for c in CASES for i in range(len(CASES[c][1]))])
def test_every_byte_of_a_record_damaged_fails_or_reads_as_the_generic_methods(case: str, index: int) -> None:
    make, values = CASES[case]
    serializer = make()
    damaged = _every_damage(serializer.to_bytes(values[index]))
    runs = [run for data in damaged for run in (_read(serializer, data), _copy(serializer, data))]
    generic, generated = _both(lambda: [run() for run in runs])
    for data, want, got in zip([d for d in damaged for _ in (0, 1)], generic, generated, strict=True):
        assert got == want, f"got {got!r:.400} from the generated codec, should be {want!r:.400} [{data.hex()}]"


def test_damaged_records_take_the_generic_path() -> None:
    serializer = _row()
    with s.generated_codecs(True):
        calls = _counting(serializer)
        encoded = serializer.to_bytes(GOOD_ROWS[0])
        with pytest.raises(StateError):
            serializer.from_bytes(encoded[:-3])
    assert calls == ["_deserialize_generic"], f"got {calls}, should fall back to the generic read once"


def test_a_view_over_a_memoryview_reads_through_the_generic_path() -> None:
    serializer = _row()
    encoded = serializer.to_bytes(GOOD_ROWS[0])
    with s.generated_codecs(True):
        source = DataInputView(memoryview(bytearray(b"\x00" + encoded))[1:])
        got = serializer.deserialize(source)
    assert strategies.values_equal(got, GOOD_ROWS[0]), f"got {got!r}, should be {GOOD_ROWS[0]!r}"
    assert source.available() == 0, f"got {source.available()} bytes left, should read the whole record"


# -- safety: names never reach the source, compiled code never travels -------------------------
HOSTILE = ['x"); raise SystemExit("', "y\nimport os", "{v1}", "k0", "v2"]


def test_field_names_from_schemas_never_appear_in_generated_source() -> None:
    serializer = s.RowSerializer([(name, s.StringSerializer(), True) for name in HOSTILE])
    value = tuple(f"value {i}" for i in range(len(HOSTILE)))
    with s.generated_codecs(True):
        assert serializer.from_bytes(serializer.to_bytes(value)) == value, "got another row back"
        for kind, text in _codegen.generated_source(serializer).items():
            for name in HOSTILE[:3]:
                assert name not in text, f"got field name {name!r} in the generated {kind} source, should be a constant"


def test_the_emitter_takes_only_its_own_names_and_ints() -> None:
    g = _codegen.Emitter("read")
    with pytest.raises(TypeError, match="emitter names"):
        g.emit("{x} = 1", x="__import__('os')")
    with pytest.raises(TypeError, match="emitter names"):
        g.tuple_of(["os"])  # type: ignore[list-item]
    g.emit("{x} = {n}", x=g.var(), n=3)
    assert g.lines[-1].strip() == "v1 = 3", f"got {g.lines[-1]!r}, should be 'v1 = 3'"


def test_pickled_serializers_carry_no_compiled_code_and_generate_again() -> None:
    serializer = _row()
    with s.generated_codecs(True):
        before = pickle.dumps(serializer)
        encoded = serializer.to_bytes(GOOD_ROWS[0])
        after = pickle.dumps(serializer)
        assert after == before, "got a different pickle after use, should pickle the configuration only"
        restored = pickle.loads(after)
        assert isinstance(restored._cache_read.__self__, _codegen._Lazy), "got no lazy codec after unpickling"
        assert strategies.values_equal(restored.from_bytes(encoded), GOOD_ROWS[0]), "got another row back"


def test_the_switch_turns_generation_off_and_on_for_existing_serializers() -> None:
    serializer = _row()
    with s.generated_codecs(False):
        assert not s.generated_codecs_enabled(), "got generation on, should be off inside the block"
        assert serializer._cache_read == serializer._deserialize_generic, "got a generated read, should be generic"
    with s.generated_codecs(True):
        serializer.to_bytes(GOOD_ROWS[1])
        assert getattr(serializer._cache_write, "__source__", None), "got no generated write after use"


def test_uses_generic_methods_follows_the_slots_of_a_serializer() -> None:
    serializer = _row()
    serializer.to_bytes(GOOD_ROWS[1])
    got = s.uses_generic_methods(serializer)
    assert got is False, f"got {got}, should be False [a used row, codecs on]"
    with s.generated_codecs(False):
        cases = {"the same row, codecs off": serializer, "a long (no codec slots)": s.LongSerializer()}
        for what, x in cases.items():
            got = s.uses_generic_methods(x)
            assert got is True, f"got {got}, should be True [{what}]"
    serializer._cache_write = serializer._serialize_generic
    got = s.uses_generic_methods(serializer)
    assert got is False, f"got {got}, should be False [codecs on, its read and copy slots generated or lazy]"


@pytest.mark.parametrize(("raised", "falls_back"), [
    (SyntaxError("too many statically nested blocks"), True),
    (ValueError("Exceeds the limit (4300 digits) for integer string conversion"), True),
    (RecursionError("maximum recursion depth exceeded during compilation"), True),
    (IndentationError("expected an indented block after 'if' statement"), False),
])
def test_code_past_compile_limits_falls_back_and_a_broken_generator_is_raised(
        raised: BaseException, falls_back: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = _row().to_bytes(GOOD_ROWS[0])  # written by generated code, before the patch

    def generate(serializer: Any, kind: str) -> Any:
        raise raised

    monkeypatch.setattr(_codegen, "_generate", generate)
    serializer = _row()
    if falls_back:
        got = serializer.to_bytes(GOOD_ROWS[0])
        assert got == expected, f"got {got.hex()}, should be {expected.hex()} [{raised!r}: the generic method writes]"
        assert serializer._cache_write == serializer._serialize_generic, f"got {serializer._cache_write!r} in the write slot, should be the generic method"
        return
    with pytest.raises(IndentationError):
        serializer.to_bytes(GOOD_ROWS[0])


class _Colour(enum.Enum):
    RED = 1


def test_has_generated_codecs_names_the_serializers_the_switch_changes() -> None:
    cases = {
        "a row": (_row(), True),
        "a tuple": (s.TupleSerializer(s.IntSerializer(), s.LongSerializer()), True),
        "a long (inlined by composites, no codec of its own)": (s.LongSerializer(), False),
        "a list (inlined by composites, no codec of its own)": (s.ListSerializer(s.IntSerializer()), False),
        "an enum": (s.EnumSerializer(_Colour), False),
        "not a serializer": (object(), False),
    }
    for what, (serializer, expected) in cases.items():
        got = s.has_generated_codecs(serializer)
        assert got is expected, f"got {got}, should be {expected} [{what}]"


def test_the_switch_returns_the_setting_it_replaces() -> None:
    before = s.generated_codecs_enabled()
    try:
        assert s.set_generated_codecs(False) is before, "got another previous setting, should be the one replaced"
        assert s.set_generated_codecs(False) is False, "got another previous setting, should be off (unchanged)"
        assert s.set_generated_codecs(True) is False, "got another previous setting, should be off"
    finally:
        s.set_generated_codecs(before)


def test_the_environment_variable_turns_generation_off() -> None:
    code = (
        "from reference import serializers as s\n"
        "r = s.RowSerializer([('a', s.IntSerializer(), True)])\n"
        "print(s.generated_codecs_enabled(), r._cache_read == r._deserialize_generic, r.from_bytes(r.to_bytes((5,))))\n"
    )
    env = {**__import__("os").environ, _codegen.ENVIRONMENT_VARIABLE: "0"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "(5,)"], f"got {out!r}, should run the generic methods"


def test_deep_nesting_is_called_not_inlined() -> None:
    inner: Any = s.IntSerializer()
    for _ in range(_codegen.MAX_INLINE_DEPTH + 4):
        inner = s.RowSerializer([("f", inner, True), ("g", s.StringSerializer(), True)])
    value: Any = 7
    for i in range(_codegen.MAX_INLINE_DEPTH + 4):
        value = (value, str(i))
    with s.generated_codecs(True):
        assert inner.from_bytes(inner.to_bytes(value)) == value, "got another nested row back"
        assert inner.to_bytes(value) == _both(lambda: inner.to_bytes(value))[0], "got other bytes than the generic write"


class _Millis(s.LongSerializer):
    """A user's subclass of a built-in that overrides its methods: epoch milliseconds read
    as ``datetime`` (module level: serializers pickle by class)."""

    def serialize(self, value: Any, target: Any) -> None:
        super().serialize(round(value.timestamp() * 1000), target)

    def deserialize(self, source: Any) -> Any:
        import datetime

        return datetime.datetime.fromtimestamp(super().deserialize(source) / 1000, datetime.timezone.utc)


def test_a_field_serializer_overriding_a_builtin_or_declining_is_called_not_inlined() -> None:
    """A field serializer whose class overrides the method a fragment stands for (a user's
    subclass of a built-in) or declines (Avro with a logical type) is called by the generated
    code of its row, never replaced by the built-in's fragment."""
    import datetime

    at = datetime.datetime(2026, 11, 24, 6, 0, tzinfo=datetime.timezone.utc)
    logical = s.AvroSerializer({"type": "record", "name": "T", "fields": [
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}]})
    row = s.RowSerializer([("when", _Millis(), True), ("avro", logical, True)])
    value = (at, {"at": at})
    with s.generated_codecs(True):
        data = row.to_bytes(value)
        got = row.from_bytes(data)
    assert getattr(row._cache_read, "__source__", None), "got no generated read for the row"
    assert got == value, f"got {got!r}, should be {value!r} (the fields' own methods)"
    assert data == _both(lambda: row.to_bytes(value))[0], "got other bytes than the generic write"


def test_an_avro_schema_with_logical_types_or_other_unions_keeps_the_generic_functions() -> None:
    logical = s.AvroSerializer({"type": "record", "name": "T", "fields": [
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}}]})
    union = s.AvroSerializer({"type": "record", "name": "U", "fields": [{"name": "u", "type": ["int", "string"]}]})
    with s.generated_codecs(True):
        logical.from_bytes(logical.to_bytes({"at": 5}))
        union.from_bytes(union.to_bytes({"u": "x"}))
    assert logical._cache_read == logical._deserialize_generic, "got a generated read for a logical type"
    assert union._cache_write == union._serialize_generic, "got a generated write for an int|string union"
    assert getattr(union._cache_read, "__source__", None), "got no generated read for an int|string union"


def test_a_refused_nested_value_names_its_field_and_writes_nothing() -> None:
    serializer = _row()
    bad = list(GOOD_ROWS[0])
    bad[6] = ("Main St", "not an int")
    (result, written) = _agree(_write(serializer, tuple(bad)), "bad zip")
    assert result[1] == "SerializationError" and "'address'" in result[2] and "'zip'" in result[2], (
        f"got {result!r}, should name the field address.zip")
    assert written == PREFIX, f"got {written.hex()}, should leave the output as it was"
    with pytest.raises(SerializationError):
        serializer.to_bytes(tuple(bad))


def test_a_row_too_wide_to_compile_keeps_the_generic_methods() -> None:
    width = 15000  # its mask's bits are ints beyond the digits Python compiles
    serializer = s.RowSerializer([(f"f{i}", s.IntSerializer(), True) for i in range(width)])
    value = tuple(range(width))
    with s.generated_codecs(True):
        assert serializer.from_bytes(serializer.to_bytes(value)) == value, "got another wide row back"
    assert serializer._cache_read == serializer._deserialize_generic, "got a generated read, should keep the generic one"


@pytest.mark.parametrize("kind", [True, False])
def test_rows_without_fields_read_write_and_copy_as_the_generic_methods(kind: bool) -> None:
    serializer = s.ListSerializer(s.RowSerializer([], supports_row_kind=kind))
    row = s.RowSerializer([], supports_row_kind=kind)
    values = [(), s.Row((), s.RowKind.DELETE)] if kind else [()]
    for value in values:
        (result, written) = _agree(_write(row, value), f"write {value!r}")
        encoded = written[len(PREFIX):]
        assert _agree(_read(row, encoded), f"read {encoded.hex()}")[0] == ("value", strategies.canonical(value)), (
            f"got another value back for {value!r}")
        _agree(_copy(row, encoded), f"copy {encoded.hex()}")
    _agree(_read(serializer, serializer.to_bytes([(), ()])), "a list of empty rows")
