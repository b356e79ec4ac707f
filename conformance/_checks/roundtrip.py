"""roundtrip: the family every other builds on: the serializer is usable, and value -> bytes ->
value holds for every value of the subject (and refuses what is outside its domain).

The api layer (runs first; every other check needs it):

- ``roundtrip.api_valid``: the serializer is a ``reference.TypeSerializer`` whose ``length`` is -1
  or a positive byte count, whose ``is_immutable_type`` is a bool (both read-only properties: one
  written as a plain method is named, with the fix, ``@property``), and whose
  ``snapshot_configuration()`` is a ``TypeSerializerSnapshot`` with a non-negative int version.
- ``roundtrip.create_instance``: ``create_instance()`` (what a restore fills a new field with) is
  the schema's zero (``strategies.zero_value``: Java's defaults) and round-trips through
  serialize and deserialize.

Then:

- ``roundtrip.bit_exact``: value -> bytes -> value gives the same value, bit for bit (NaN
  payloads, -0.0, also for each value's float siblings), read by ``deserialize`` and by
  ``from_bytes`` (a whole record, as savepoint readers and Spark read it); serialize leaves its
  argument as it was.
- ``roundtrip.value_equality``: a value read back is ``==`` to the one written by its own
  equality, ``!=`` says the same (a bool, never None), and where both are hashable their hashes
  agree: user code compares state values with ``==`` and keys dicts and sets by them (Python's
  data model: equal values hash equal; Flink's own serializer tests compare with ``equals``).
  Only values whose every part has value equality are compared: none holding a NaN (never
  ``==`` itself) or an object whose class compares by identity (no ``__eq__`` of its own, a
  dataclass with ``eq=False``). A reference ``Row`` read back is also unequal to the same fields
  of each other kind (Row equality includes the kind, as Flink's ``Row.equals``).
- ``roundtrip.sequence``: records written back to back read back one by one, nothing left over
  (from a view over their bytes and over a memoryview of 8-byte items holding them), and again
  after a reset to the mark taken where each starts (and at the end).
- ``roundtrip.deep_copy``: ``copy()`` returns an equal value sharing no mutable part.
- ``roundtrip.copy_serialized``: ``copy_serialized`` copies exactly one record's bytes and stops
  where the next begins (the last record of the input too).
- ``roundtrip.truncated``: a record cut short is refused by deserialize, copy_serialized and
  from_bytes with a ``StateError``, never read as a value or copied.
- ``roundtrip.corrupted``: a record with one byte corrupted (each byte of a short record, and
  the heads, middles and tails of a long one, flipped by 0xFF, 0x80 and 0x01, and set to 0x01,
  Flink's null mark, where no flip gives it: a POJO's flag byte) is refused (any
  exception), or read as a value the serializer writes and reads back as that value, and
  ``copy_serialized`` takes the bytes ``deserialize`` takes (one record): a restore
  never yields a value the next checkpoint cannot write (a NOT NULL field read as null, a
  count read past the range ``serialize`` accepts). A serializer built only of the reference's
  classes is held to the reference's own contract: it refuses with a ``StateError`` (an
  ``IndexError`` or ``KeyError`` escaping it is a guard missing), its ``copy_serialized`` refuses
  every corrupted record ``deserialize`` refuses, and each number it reads (a
  short, int or long: a size, a count, an ordinal, a value) set to -1, the least and the greatest
  of its width, is refused with a ``StateError`` or taken as it is: written back and copied as
  the bytes read (a size of -1 read as an empty list writes 0). Not for a serializer holding a
  ``PickleSerializer``: a corrupted pickle may run anything.
- ``roundtrip.generated_codecs``: the reference's serializers in the subject (itself, or nested
  in a serializer of the user's) read, write and copy records the same through their generated
  codecs as through their generic methods (``reference.serializers.generated_codecs(False)``,
  what ``REFERENCE_GENERATED_CODECS=0`` selects): the same bytes for each value, each one's
  bytes read and copied alike, and a truncated or corrupted record read to the same value or
  refused with the same error at the same input position. Not for a subject that holds none of
  them. The switch is process-wide while the check runs.
- ``roundtrip.length``: a declared fixed length matches the bytes every value takes.
- ``roundtrip.invalid_configuration``: a serializer built from an invalid configuration (the
  subject's ``invalid_configurations``: a negative width, a row with a field name twice, a
  nested serializer that is None, an enum symbol its class lacks) refuses it at construction
  with a ``ValueError`` or ``TypeError`` (a ``reference.StateError`` too) saying what is wrong,
  never builds a serializer that fails later, on the first record or on restore; an error of
  another type (``AttributeError`` on None) is a crash, not a refusal. Not applicable to a
  subject that declares none.
- ``roundtrip.equality``: serializers compare equal by configuration (a deep copy equals the
  original, with the same hash), and unequal to the serializer of a declared evolution that
  migrates or is incompatible (another format).
- ``roundtrip.duplicate``: ``duplicate()`` equals the original and writes and reads the same bytes
  (bytes that differ only because the serializer's bytes for a value follow what it wrote
  before, stale scratch state, are not blamed on ``duplicate()``: for keys that is
  ``roundtrip.key_determinism``'s verdict).
- ``roundtrip.concurrent``: duplicates used from several threads at once each write and read
  correct bytes; and, as threads race only when the machine interleaves them, the causes are
  looked for directly: scratch state on an instance ``duplicate()`` returns as it is, and a
  nested serializer that is stateful (its own ``duplicate()`` makes a new instance) shared by
  the original and its duplicate (Flink's contract: ``duplicate()`` is a deep copy wherever
  there is state).
- ``roundtrip.pickle``: the serializer pickles (it ships to workers), and is equal and writes the
  same after.
- ``roundtrip.key_determinism``: a key serializer writes equal values (however built) to equal bytes,
  whatever it or a duplicate wrote before: key A, other keys of various sizes, then A again
  (a fresh ``duplicate()`` and the original too).
- ``roundtrip.domain_refused``: for a subject with a schema, values with one part out of its
  domain (``strategies.out_of_domain``: a wrong Python type, a number out of range, a missing or
  extra field, None where the type is not nullable) make ``serialize`` raise
  ``reference.SerializationError`` naming the field that holds the bad part, and leave the target
  as it was (no partial record for the next one to be read against). The bytes backend's side
  of the same rule is ``backends.state_untouched``.
- ``roundtrip.size_boundaries``: text, bytes and containers of every length class, ints at every
  varint width's edge and times at their zone's transitions and the epoch's edges round-trip.
  Lengths are written as varints (Flink's string length + 1: 1 byte up to 127 units, 2 up to
  16,383, 3 up to 2,097,151, then 4), as ints or, in a hand-written format, in a byte or a short; a length on
  either side of each boundary is where a wrong shift, mask or bound shows. Every subject's
  drawn values are grown (``strategies.amplified``): one text or bytes part cut to empty or grown
  to each side of the 2- and 3-byte boundaries, one list, dict or set to 0, 127 and 128
  elements, one int part to each varint width's edge (``strategies.varint_edges``), one
  ``datetime`` or ``time`` part to each of its edges (``strategies.amplified``: its ``fold``
  flipped where ``reference.canonical`` counts it, a wall time its zone repeats at a fall-back
  transition with fold 0 and 1, the seconds around a spring-forward gap and a wall time inside
  it with fold 0 and 1 (a ``ZoneInfo`` without transitions, UTC, moved into a stand-in zone's),
  and the instants of epoch seconds 0, -1 and the int32 and int64-nanosecond limits in the
  value's own zone), and in two
  examples a text or bytes part to each side of a length in an unsigned byte, a signed short
  and an unsigned one (255/256, 32,767/32,768, 65,535/65,536) and to 2,097,150-2,097,152 units
  (ASCII) and a container to
  16,383/16,384 elements; a grown value that ``serialize`` refuses with
  ``reference.SerializationError`` is outside the serializer's domain and skipped (an int set to
  an edge, or a time to an epoch edge, with any error: the user's strategy bounds its ints and
  years, a struct.error or OverflowError says the same, unless the reference's own code raised
  it, whose refusals are StateErrors, as ``DataOutputView.write_int`` refuses an int past 32
  bits; a
  dict grown by keys, or with a key grown, that the serializer writes as a record of the fields
  it knows (what it reads back is written as the same bytes again, Avro's records) is skipped
  too: growing a record's keys renames its fields). With a schema
  the text and bytes are grown where the schema has them (``strategies.large_values``: all of
  them at once, 2 million units now and then), only lists are grown by count, to 0, 127 and 128
  (a dict may be a record; the schema's counts are ints), and ints and times are set to the
  edges as without one.
  Each value is written back to back, each record read back exactly, and ``copy_serialized``
  copies exactly its bytes.

Subjects without a schema give ``domain_refused`` nothing to draw from (not applicable), and
``size_boundaries`` nothing when no drawn value has a part with a length, an int or a time.
"""

from __future__ import annotations

import copy as _copy
import dataclasses
import decimal
import enum
import inspect
import math
import pickle
import struct
import sys
import threading
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    SerializationError,
    StateError,
    TypeSerializer,
    TypeSerializerSnapshot,
    Verdict,
)

from .._engine.canonical import canonical, show, values_equal
from .._engine.property import guarded
from .._engine.registry import NotApplicable, Violation, check
from ._support import (
    CORRUPTIONS,
    IntReads,
    bytes_difference,
    bytes_example,
    corrupted_bytes,
    expect_equal,
    hexdump,
    int_extremes,
    nested_serializers,
    read_one,
    reference_built,
    serializers_in,
    spread_positions,
    write,
)

if TYPE_CHECKING:
    from .._engine.runner import CheckContext

API = ("roundtrip.api_valid",)
BIT_EXACT = ("roundtrip.bit_exact",)


_QUIET_NAN_PAYLOAD = struct.unpack(">d", bytes.fromhex("7ff8000020000000"))[0]  # survives binary32 too


def float_siblings(value: Any) -> Any:
    """``value`` with each 0.0 as -0.0 and each NaN as a NaN with a payload: values a strategy
    that draws 0.0 or NaN admits, which hypothesis rarely draws itself."""
    if type(value) is float:
        if value == 0.0:
            return -0.0 if math.copysign(1.0, value) > 0 else 0.0
        if math.isnan(value):
            return _QUIET_NAN_PAYLOAD
        return value
    if type(value) is list:
        return [float_siblings(v) for v in value]
    if type(value) is tuple:
        return tuple(float_siblings(v) for v in value)
    if type(value) is dict:
        return {k: float_siblings(v) for k, v in value.items()}
    return value


#: ``TypeSerializer``'s read-only properties, which a subclass overrides with ``@property``, and
#: what a plain method in their place does (it is read, never called).
_PROPERTIES = {"is_immutable_type": "a method there is always true, so copy() hands out mutable values uncopied",
               "length": "a method there is no byte count"}


def _properties_as_methods(cls: type) -> list[str]:
    """The properties of ``_PROPERTIES`` that ``cls`` (or a base below TypeSerializer) defines as
    plain methods: read without a call, such a method is truthy and never a byte count."""
    found = []
    for name in _PROPERTIES:
        attribute = inspect.getattr_static(cls, name, None)
        if inspect.isfunction(attribute) or isinstance(attribute, (staticmethod, classmethod)):
            found.append(name)
    return found


@check(id="roundtrip.api_valid", family="roundtrip", layer="api")
def api_valid(ctx: CheckContext) -> None:
    """The serializer is a TypeSerializer with sane length/immutability (read-only properties)
    and a snapshot; with ``Subject(schema=...)``, is_immutable_type true only where the schema's
    values are immutable (exactly, for the reference's own serializers)."""
    serializer = ctx.serializer()
    if not isinstance(serializer, TypeSerializer):
        raise Violation(f"got a {type(serializer).__name__}, should be a reference.TypeSerializer")
    methods = _properties_as_methods(type(serializer))
    if methods:
        names = " and ".join(methods)
        defs = " and ".join(f"def {name}(self)" for name in methods)
        one = len(methods) == 1
        raise Violation(
            f"{type(serializer).__qualname__} defines {names} as {'a plain method' if one else 'plain methods'}, "
            f"should be {'a read-only property' if one else 'read-only properties'} as on "
            f"reference.TypeSerializer ({'it is' if one else 'they are'} read, never called: "
            f"{'; '.join(_PROPERTIES[name] for name in methods)}): put @property above {defs}"
        )
    length = serializer.length
    if type(length) is not int or not (length == -1 or length > 0):
        raise Violation(f"length is {length!r}, should be -1 (variable) or a positive byte count")
    immutable = serializer.is_immutable_type
    if type(immutable) is not bool:
        raise Violation(f"is_immutable_type is {immutable!r}, should be True or False")
    _immutability_of_the_schema(ctx, serializer, immutable)
    snapshot = serializer.snapshot_configuration()
    if not isinstance(snapshot, TypeSerializerSnapshot):
        raise Violation(
            f"snapshot_configuration() returned {type(snapshot).__name__}, should return a "
            "reference.TypeSerializerSnapshot"
        )
    version = snapshot.get_current_version()
    if type(version) is not int or not 0 <= version < 2**31:
        raise Violation(f"snapshot get_current_version() is {version!r}, should be a non-negative int")


def _immutability_of_the_schema(ctx: CheckContext, serializer: Any, immutable: bool) -> None:
    """With ``Subject(schema=...)``, ``is_immutable_type`` is true only where the schema's values
    are immutable (``strategies.immutable_type``): else ``copy`` hands out values the caller
    may change under the state. A serializer of yours may say False where they are (a copy then
    costs a little more); the reference's own say exactly what the schema's values are."""
    schema = getattr(ctx.subject, "schema", None)
    if schema is None:
        return
    import strategies

    expected = strategies.immutable_type(schema)
    if immutable is expected or (not reference_built(serializer) and not immutable):
        return
    raise Violation(
        f"is_immutable_type is {immutable}, should be {expected} for the schema {schema!r}: "
        + ("its values are mutable (a list, map, dataclass, pickled object or Avro record in it), so copy() "
           "must copy them" if not expected else
           "its values are immutable, and the reference's serializers say so (copy() hands them out as they are)"))


@check(id="roundtrip.create_instance", family="roundtrip", requires=API, layer="api")
def create_instance(ctx: CheckContext) -> None:
    """create_instance() (what a restore fills a new field with) is the schema's zero and a value
    serialize writes and deserialize reads back (None, a type without a zero as Flink allows,
    only where the schema's zero is None)."""
    serializer = ctx.serializer()
    instance = guarded("create_instance", serializer.create_instance)
    schema = getattr(ctx.subject, "schema", None)
    if schema is not None:
        import strategies

        expect_equal(instance, strategies.zero_value(schema), "create_instance()")
    if instance is not None:
        shown = show(instance)
        read = read_one(serializer, write(serializer, instance),
                        f"deserialize of create_instance()'s value {shown}, as serialize wrote it,")
        expect_equal(read, instance, "reading back create_instance() written by serialize")


@check(id="roundtrip.bit_exact", family="roundtrip", requires=API)
def bit_exact(ctx: CheckContext) -> None:
    """value -> bytes -> value gives the same value, bit for bit (NaN payloads, -0.0), read by
    deserialize and by from_bytes; serialize leaves the value it was given as it was."""
    s = ctx.serializer()

    def body(value: Any) -> None:
        before = canonical(value)
        data = write(s, value)
        if canonical(value) != before:
            raise Violation(f"serialize changed the value it was given to {show(value)}, should leave it "
                            "as it was (state keeps that object: normalise a copy, never the argument)")
        expect_equal(read_one(s, data), value, "reading back what serialize wrote")
        expect_equal(guarded("from_bytes", s.from_bytes, data), value,
                     "from_bytes of what serialize wrote (the whole-record read of savepoint readers and Spark)")
        sibling = float_siblings(value)
        if canonical(sibling) != canonical(value):
            try:
                expect_equal(read_one(s, write(s, sibling)), sibling, "reading back what serialize wrote")
            except Violation as exc:
                exc.example = show(sibling)  # the failing value is the sibling, not the draw
                raise

    ctx.for_all(ctx.subject.values, body)


def _truth(result: Any) -> bool | None:
    """What a comparison's result says: True or False, None when it says neither (None,
    NotImplemented, or an object with no truth value)."""
    if result is None or result is NotImplemented:
        return None
    try:
        return bool(result)
    except Exception:  # noqa: BLE001 - an array-like result has no single truth value
        return None


def _identity_part(value: Any, depth: int = 0) -> str | None:
    """The first part of ``value`` that ``==`` cannot find equal to a copy of itself (a NaN,
    an object whose class compares by identity), or None when every part has value equality."""
    if depth > 64:
        return "a value nested deeper than 64 levels"
    cls = type(value)
    if value is None or cls in (bool, int, str, bytes, bytearray):
        return None
    if isinstance(value, float):
        return "a NaN" if math.isnan(value) else None
    if isinstance(value, decimal.Decimal):
        return "a Decimal NaN" if value.is_nan() else None
    if isinstance(value, (list, tuple, set, frozenset)):
        return next((found for item in value if (found := _identity_part(item, depth + 1))), None)
    if isinstance(value, dict):
        return next((found for pair in value.items() for item in pair if (found := _identity_part(item, depth + 1))),
                    None)
    if isinstance(value, enum.Enum):
        return None  # members are singletons: the one read back is the one written
    if dataclasses.is_dataclass(value):
        if not cls.__dataclass_params__.eq:  # type: ignore[attr-defined]
            return f"{cls.__qualname__} (a dataclass with eq=False)"
        return next((found for f in dataclasses.fields(value)
                     if (found := _identity_part(getattr(value, f.name), depth + 1))), None)
    if cls.__eq__ is object.__eq__:
        return f"{cls.__qualname__} (no __eq__ of its own)"
    return None


@check(id="roundtrip.value_equality", family="roundtrip", requires=BIT_EXACT)
def value_equality(ctx: CheckContext) -> None:
    """A value read back is ``==`` to the one written by its own equality, ``!=`` agrees, and
    equal values hash alike (values with a NaN or an identity-equality part are left out)."""
    s = ctx.serializer()
    compared: list[bool] = []
    left_out: list[str] = []

    def body(value: Any) -> None:
        part = _identity_part(value)
        if part is not None:
            left_out.append(part)
            return
        compared.append(True)
        got = read_one(s, write(s, value))
        where = f"the value read back ({show(got)}) and the one written ({show(value)})"
        for sentence, result, should in (("read == written", got == value, True),
                                         ("written == read", value == got, True),
                                         ("read != written", got != value, False)):
            truth = _truth(result)
            if truth is None and result is not None and result is not NotImplemented:
                left_out.append(f"a {type(result).__name__} from {sentence.split()[1]} (no single truth value)")
                return
            if truth is not should:
                fix = ("!= must say the opposite of == (define __ne__ as not __eq__, or leave it to Python)"
                       if not should else "user code comparing state values, and dicts and sets holding them, "
                       "find them different")
                raise Violation(f"{sentence} is {result!r} for {where}, should be {should}: {fix}")
        _row_kinds_unequal(got, where)
        try:
            hashes = hash(got), hash(value)
        except TypeError as exc:
            if "should return an integer" not in str(exc):  # Python's words for a __hash__ returning no int
                return  # unhashable (a list inside, __hash__ = None): nothing keys a dict or set by it
            raise Violation(f"hash() raised TypeError ({exc}) for {where}, should give an int (or make the "
                            "class unhashable with __hash__ = None)") from None
        if hashes[0] != hashes[1]:
            raise Violation(f"hash() differs ({hashes[0]} read, {hashes[1]} written) for {where}, which are "
                            "==, should be equal: a dict or set keyed by the value written does not find the "
                            "one read back (Python's data model: equal values hash alike)")

    ctx.for_all(ctx.subject.values, body, max_examples=max(10, ctx.examples // 4))
    if not compared:
        raise NotApplicable(f"no drawn value has value equality in every part (e.g. {left_out[0]}): "
                            "nothing to compare with ==" if left_out else "no value was drawn")


def _row_kinds_unequal(got: Any, where: str) -> None:
    """A reference ``Row`` read back is unequal, both ways, to the same fields of each other
    kind: Row equality includes the kind (as Flink's ``Row.equals``), or a retraction (-D)
    compares equal to the insertion it retracts."""
    from reference.serializers import Row, RowKind

    if type(got) is not Row:
        return
    for kind in RowKind:
        if kind is not got.kind:
            other = Row(tuple(got), kind)
            if _truth(got == other) is not False or _truth(other == got) is not False:
                raise Violation(f"{show(got)} == {show(other)}, the same fields of another kind, for {where}; "
                                "should be unequal: Row equality includes the kind (as Flink's Row.equals)")


@check(id="roundtrip.sequence", family="roundtrip", requires=BIT_EXACT)
def sequence(ctx: CheckContext) -> None:
    """Records written back to back read back one by one with nothing left over, from a view
    over their bytes and over a memoryview of 8-byte items holding them, and again after a reset
    to the mark taken where each starts (and at the end)."""
    s = ctx.serializer()

    def body(values: list[Any]) -> None:
        out = DataOutputView()
        ends = []
        for v in values:
            guarded("serialize", s.serialize, v, out)
            ends.append(len(out.getvalue()))
        data = out.getvalue()
        # A view over any buffer reads its bytes: also one of 8-byte items (an array of records).
        wide = memoryview(data + bytes(-len(data) % 8)).cast("Q")
        for source, over in ((DataInputView(data), ""), (DataInputView(wide), " from a memoryview of 8-byte items")):
            marks = []
            for i, v in enumerate(values):
                marks.append(source.mark())
                got = guarded("deserialize" + over, s.deserialize, source)
                if source.position != ends[i]:
                    raise Violation(
                        f"reading record {i} of {len(values)}{over} stopped at byte {source.position}, "
                        f"should stop at {ends[i]} where the next record starts (the read is greedy "
                        "or short)"
                    )
                expect_equal(got, v, f"record {i} of {len(values)} written back to back{over}")
            # Read again from where each record starts, the end last, as a reader that gives a
            # record up and redoes it does (mark / reset).
            marks.append(source.mark())
            for i in reversed(range(len(marks))):
                guarded(f"reset to the mark taken at byte {marks[i][0]}{over}", source.reset, marks[i])
                if i < len(values):
                    again = guarded("deserialize after reset" + over, s.deserialize, source)
                    expect_equal(again, values[i], f"record {i} of {len(values)} read again after reset{over}")

    ctx.for_all(st.lists(ctx.subject.values, min_size=2, max_size=5), body,
                max_examples=max(10, ctx.examples // 2))


def _mutable_parts(value: Any, path: str, out: dict[int, str], depth: int = 0) -> None:
    if depth > 20:
        return
    if isinstance(value, (list, bytearray, dict, set)):
        out.setdefault(id(value), path or "the top level")
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _mutable_parts(item, f"{path}[{i}]", out, depth + 1)
    elif isinstance(value, dict):
        for k, item in value.items():
            _mutable_parts(item, f"{path}[{k!r}]", out, depth + 1)
    elif isinstance(value, set):
        pass
    elif isinstance(value, (enum.Enum, type)) or value is None:
        pass
    elif dataclasses.is_dataclass(value):
        params = getattr(type(value), "__dataclass_params__", None)
        if not (params is not None and params.frozen):
            out.setdefault(id(value), path or "the top level")
        for f in dataclasses.fields(value):
            _mutable_parts(getattr(value, f.name), f"{path}.{f.name}", out, depth + 1)
    elif hasattr(value, "__dict__") and not callable(value):
        out.setdefault(id(value), path or "the top level")
        for name, item in vars(value).items():
            _mutable_parts(item, f"{path}.{name}", out, depth + 1)


@check(id="roundtrip.deep_copy", family="roundtrip", requires=BIT_EXACT)
def deep_copy(ctx: CheckContext) -> None:
    """copy() returns an equal value that shares no mutable part with the original."""
    s = ctx.serializer()

    def body(value: Any) -> None:
        before = canonical(value)
        copied = guarded("copy", s.copy, value)
        expect_equal(copied, value, "copy")
        original: dict[int, str] = {}
        _mutable_parts(value, "", original)
        mine: dict[int, str] = {}
        _mutable_parts(copied, "", mine)
        shared = [original[i] for i in mine if i in original]
        if shared:
            raise Violation(
                f"copy() shares the mutable {type_at(value, shared[0])} at {shared[0]} with the "
                "original, should copy it (mutating the copy would change the stored value)"
            )
        if canonical(value) != before:
            raise Violation("copy() changed the value it copied, should leave it untouched")

    ctx.for_all(ctx.subject.values, body)


def type_at(value: Any, path: str) -> str:
    return "part" if path != "the top level" else type(value).__name__


#: Values per example of ``roundtrip.generated_codecs`` (one switch of the codecs per example),
#: and corrupted or truncated forms of each value's record judged in both.
CODEC_VALUES = 6
CODEC_DAMAGES = 16


@check(id="roundtrip.generated_codecs", family="roundtrip", requires=BIT_EXACT)
def generated_codecs(ctx: CheckContext) -> None:
    """The reference's Row, Tuple, Pojo and Avro serializers in the subject (itself, or nested in
    a serializer of yours) treat its records alike through their generated codecs and their
    generic methods: the same bytes, values and copies, and the same result or error (class,
    message, input position) on damaged records. Switched off, the codecs of serializers already
    built give way to the generic methods; and a fresh interpreter has them on unless
    ``REFERENCE_GENERATED_CODECS=0`` turns them off."""
    from reference.serializers import generated_codecs as codecs_switched
    from reference.serializers import generated_codecs_enabled, has_generated_codecs

    s = ctx.serializer()
    if not any(has_generated_codecs(x) for x in serializers_in(s)):
        raise NotApplicable("the serializer holds none of the reference's serializers with generated codecs")
    _environment_switch_works()
    if not generated_codecs_enabled():
        raise NotApplicable("generated codecs are off in this process (REFERENCE_GENERATED_CODECS=0 or another "
                            "value that turns them off, or set_generated_codecs(False)): the generic methods are "
                            "all there is to compare")

    for setting in (False, True):  # switched off, and to the setting it has: each block restores it
        with codecs_switched(setting):
            pass
        if not generated_codecs_enabled():
            raise Violation(
                f"after a `with reference.serializers.generated_codecs({setting})` block the generated codecs "
                "are off, should be on again: the block restores the setting set_generated_codecs says it "
                "replaced (it returns the previous one), or a process that switched them for a moment runs "
                "on without the codecs it meant to test")

    def outcomes(values: list[Any], records: list[bytes]) -> list[tuple[str, Any]]:
        """(what was done, with ``{record}`` where the record is named; what it gave)."""
        found: list[tuple[str, Any]] = []
        for value, data in zip(values, records, strict=True):
            found.append(("writing {record}", _written(s, value)))
            found.append(("reading {record}", _outcome(s.deserialize, data)))
            found.append(("copying {record}", _outcome(lambda source: _copied(s, source), data)))
            for damage, damaged in _damaged(data):
                found.append((f"reading {{record}} {damage}", _outcome(s.deserialize, damaged)))
        return found

    def body(values: list[Any]) -> None:
        records = [write(s, v) for v in values]
        generated = outcomes(values, records)
        with codecs_switched(False):
            _holds_generic_methods(s)
            generic = outcomes(values, records)
        per_value = len(generated) // len(values)
        for i, ((what, got), (_, want)) in enumerate(zip(generated, generic, strict=True)):
            if not _same_outcome(got, want):
                value = values[i // per_value]
                raise Violation(
                    f"{what.format(record=f'the record of {show(value)}')}, with the generated codecs, gave "
                    f"{_shown(got)}, should be {_shown(want)} as with the generic methods (REFERENCE_GENERATED_CODECS=0): "
                    "the generated codec of a reference serializer in it disagrees with the generic "
                    "method that defines the format",
                    example=bytes_example(records[i // per_value]))

    ctx.for_all(st.lists(ctx.subject.values, min_size=1, max_size=CODEC_VALUES), body,
                max_examples=max(3, ctx.examples // 8))


#: The environment a fresh interpreter starts with -> whether its generated codecs must be on
#: (``REFERENCE_GENERATED_CODECS``, read when ``reference.serializers`` is imported).
_SWITCH_CASES: dict[str | None, bool] = {None: True, "0": False}
#: What the fresh interpreters gave, once per process: the problem found, or "" for none.
_SWITCH_FOUND: list[str] = []


def _environment_switch_works() -> None:
    """The documented switch does what it says: a fresh interpreter has generated codecs on
    unless ``REFERENCE_GENERATED_CODECS=0`` turns them off (this check compares both ways in
    one process by ``generated_codecs(False)``; a run under the variable, such as the mutation
    tool's second one, relies on the variable). Asked of two fresh interpreters once per
    process."""
    import os
    import subprocess

    from reference.serializers import ENVIRONMENT_VARIABLE

    if not _SWITCH_FOUND:
        problems = []
        for value, enabled in _SWITCH_CASES.items():
            env = {k: v for k, v in os.environ.items() if k != ENVIRONMENT_VARIABLE}
            if value is not None:
                env[ENVIRONMENT_VARIABLE] = value
            done = subprocess.run(
                [sys.executable, "-c", "import reference.serializers as s; print(s.generated_codecs_enabled())"],
                env=env, capture_output=True, text=True, timeout=120, check=False)
            got = done.stdout.strip()
            if got != str(enabled):
                where = f"{ENVIRONMENT_VARIABLE}={value}" if value is not None else f"{ENVIRONMENT_VARIABLE} unset"
                problems.append(f"a fresh interpreter with {where} gave generated_codecs_enabled() "
                                f"{got or done.stderr.strip()[-300:]!r}, should be {enabled}")
        _SWITCH_FOUND.append("; ".join(problems))
    if _SWITCH_FOUND[0]:
        raise Violation(f"{_SWITCH_FOUND[0]}: {ENVIRONMENT_VARIABLE}=0 turns the generated codecs off, and "
                        "nothing else does at start")


def _holds_generic_methods(s: Any) -> None:
    """With the codecs switched off, every reference serializer in ``s`` reads, writes and copies
    through its generic methods: the switch reaches serializers already built (a job's), not only
    those built after it."""
    from reference.serializers import has_generated_codecs, uses_generic_methods

    for x in serializers_in(s):
        if has_generated_codecs(x) and not uses_generic_methods(x):
            raise Violation(
                f"with the generated codecs switched off (reference.serializers.generated_codecs(False)), {show(x)} "
                "still holds generated code, should read, write and copy through its generic methods: "
                "set_generated_codecs must re-install the codecs of every serializer already built")


def _written(s: Any, value: Any) -> tuple[str, Any]:
    try:
        return ("value", write(s, value))
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return ("error", (type(exc), str(exc), None))


def _copied(s: Any, source: DataInputView) -> bytes:
    target = DataOutputView()
    s.copy_serialized(source, target)
    return target.getvalue()


def _outcome(read: Any, data: bytes) -> tuple[str, Any]:
    """What reading ``data`` gives: ("value", (value, position)) or ("error", (class, message,
    position))."""
    source = DataInputView(data)
    try:
        got = read(source)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return ("error", (type(exc), str(exc), source.position))
    return ("value", (got, source.position))


def _same_outcome(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return bool(a[1] == b[1])
    if isinstance(a[1], bytes):
        return bool(a[1] == b[1])
    return values_equal(a[1][0], b[1][0]) and a[1][1] == b[1][1]


def _shown(outcome: tuple[str, Any]) -> str:
    kind, detail = outcome
    if kind == "error":
        cls, message, position = detail
        at = "" if position is None else f" at input position {position}"
        return f"{cls.__name__}: {message}{at}"
    if isinstance(detail, bytes):
        return hexdump(detail)
    value, position = detail
    return f"{show(value)} (input position {position} after it)"


def _damaged(data: bytes) -> list[tuple[str, bytes]]:
    """Up to ``CODEC_DAMAGES`` damaged forms of a record: cut short, and one byte flipped, at
    positions spread over it."""
    cuts = _cuts(len(data))
    step = max(1, len(cuts) // (CODEC_DAMAGES // 2))
    found = [(f"cut to {at} of its {len(data)} bytes", data[:at]) for at in cuts[::step]]
    for at in cuts[::step]:
        broken = bytearray(data)
        broken[at] ^= CORRUPTIONS[len(found) % len(CORRUPTIONS)]
        found.append((f"with byte {at} flipped ({data[at]:02x} -> {broken[at]:02x})", bytes(broken)))
    return found


@check(id="roundtrip.copy_serialized", family="roundtrip", requires=BIT_EXACT)
def copy_serialized(ctx: CheckContext) -> None:
    """copy_serialized copies exactly one record's bytes and stops where the next begins, and
    copies the last record of the input (nothing after it) too."""
    s = ctx.serializer()

    def body(pair: tuple[Any, Any]) -> None:
        first, second = write(s, pair[0]), write(s, pair[1])
        source = DataInputView(first + second)
        target = DataOutputView()
        guarded("copy_serialized", s.copy_serialized, source, target)
        copied = target.getvalue()
        if copied != first:
            raise Violation(
                f"copy_serialized wrote {len(copied)} bytes ({hexdump(copied)}), should copy "
                f"exactly the first record's {len(first)} bytes ({hexdump(first)})"
                + _history_hint(s, list(pair))
            )
        if source.position != len(first):
            raise Violation(
                f"copy_serialized consumed {source.position} bytes, should consume exactly the "
                f"first record's {len(first)}"
            )
        target = DataOutputView()
        guarded("copy_serialized of the last record", s.copy_serialized, source, target)
        if target.getvalue() != second or source.available():
            raise Violation(
                f"copy_serialized of the input's last record wrote {hexdump(target.getvalue())} and "
                f"left {source.available()} byte{'' if source.available() == 1 else 's'}, should copy its {len(second)} bytes "
                f"({hexdump(second)}) and leave none"
            )

    ctx.for_all(st.tuples(ctx.subject.values, ctx.subject.values), body)


def _cuts(size: int) -> list[int]:
    """Where a record of ``size`` bytes is cut: at every byte of a short record; for a long one,
    its first 32 bytes (headers, lengths), 8 cuts between and its last bytes (the last field:
    32, or 8 past 2 KB, since reading a cut record costs up to the cut)."""
    return spread_positions(size, 128, 32, 32 if size <= 2048 else 8, 8)


def _refuses(what: str, func: Any, data: bytes, cut: int, full: int) -> None:
    source = DataInputView(data)
    try:
        got = func(source)
    except StateError:
        return
    except Exception as exc:
        raise Violation(
            f"{what} of a record cut to its first {cut} of {full} bytes raised {type(exc).__name__}: {exc}, "
            "should raise a reference.StateError (reading past the end of a DataInputView raises "
            "EndOfDataError; let it through, or raise SerializationError saying what is missing)"
        ) from exc
    returned = "" if what == "copy_serialized" else f" {show(got)}"
    raise Violation(
        f"{what} of a record cut to its first {cut} of {full} bytes returned{returned} after reading "
        f"{source.position} bytes, should raise a reference.StateError: a record's own bytes say where "
        "it ends, so a cut record needs bytes that are not there (read with read_fully and the "
        "read_* methods, which raise EndOfDataError past the end, and let it through; never "
        "peek at or slice whatever is left, or turn the error into a default value)"
    )


@check(id="roundtrip.truncated", family="roundtrip", requires=("roundtrip.sequence", "roundtrip.copy_serialized"))
def truncated(ctx: CheckContext) -> None:
    """A record cut short (a strict prefix of what serialize wrote, as a damaged or partly
    written savepoint holds) is refused by deserialize, copy_serialized and from_bytes with a
    StateError, never read as a value or copied."""
    s = ctx.serializer()

    # from_bytes of the base class is deserialize and a test for bytes left over: only a class
    # with a from_bytes of its own (a fixed-width primitive's fast path, Avro's) reads cuts apart.
    own_from_bytes = type(s).from_bytes is not TypeSerializer.from_bytes

    def body(value: Any) -> None:
        data = write(s, value)
        for cut in _cuts(len(data)):
            part = data[:cut]
            _refuses("deserialize", s.deserialize, part, cut, len(data))
            _refuses("copy_serialized", lambda source: s.copy_serialized(source, DataOutputView()), part, cut,
                     len(data))
            if own_from_bytes:
                _refuses("from_bytes", lambda source: s.from_bytes(source.read_fully(source.available())), part,
                         cut, len(data))

    ctx.for_all(ctx.subject.values, body, max_examples=max(10, ctx.examples // 2))



@check(id="roundtrip.corrupted", family="roundtrip", requires=("roundtrip.sequence",))
def corrupted(ctx: CheckContext) -> None:
    """A record with one byte corrupted is refused, or read as a value the serializer writes
    and reads back as itself (what a restore reads, the next checkpoint must be able to write),
    and copy_serialized takes the bytes deserialize takes. A serializer of the reference's
    classes also refuses in copy_serialized what deserialize refuses, and refuses each count,
    length or number of a record set to -1 or its width's least or greatest with a
    StateError, or reads, writes and copies it unchanged."""
    s = ctx.serializer()
    from reference.serializers import PickleSerializer

    if any(isinstance(x, PickleSerializer) for x in serializers_in(s)):
        raise NotApplicable("the serializer unpickles (a PickleSerializer): corrupted pickles are never "
                            "handed to it, since unpickling one may run anything")

    strict = reference_built(s)

    def judge(where: str, broken: bytes, exact: bool) -> None:
        """Refused, or read as a value serialize writes and reads back, and copied by taking the
        bytes deserialize takes. A strict subject's copy also refuses what deserialize refuses;
        with ``exact`` (a number set to an extreme, for a strict subject), the value and the copy
        are also written as the bytes read."""
        # The copy matters where deserialize reads a value, and, for a strict subject, where it
        # refuses: a user's copy of a record deserialize refuses is not judged (nor made).
        copy = _outcome(lambda source: _copied(s, source), broken) if strict else None
        def guard_missing(what: str, cls: type, message: str) -> Violation:
            return Violation(
                f"{what} of {where} raised {cls.__name__}: {message}, should raise a reference.StateError "
                "naming the problem (a serializer built of the reference's classes refuses corrupt bytes "
                "so; another exception is a guard missing)", example=bytes_example(broken))

        if copy is not None and copy[0] == "error" and not issubclass(copy[1][0], StateError):
            raise guard_missing("copy_serialized", copy[1][0], copy[1][1])
        source = DataInputView(broken)
        try:
            got = s.deserialize(source)
        except Exception as exc:  # noqa: BLE001 - refusing corrupt bytes is right, whatever the error
            if strict and not isinstance(exc, StateError):
                raise guard_missing("deserialize", type(exc), str(exc)) from None
            if copy is not None and copy[0] == "value":
                raise Violation(
                    f"copy_serialized copied {where} ({copy[1][1]} bytes), which deserialize refuses "
                    f"({type(exc).__name__}: {exc}), should refuse it too: the reference's serializers refuse in "
                    "copy_serialized every record deserialize refuses, or a migration plan's byte path would "
                    "take records its object path refuses", example=bytes_example(broken)) from None
            return
        if copy is None:
            copy = _outcome(lambda source: _copied(s, source), broken)
        if copy[0] == "value" and copy[1][1] != source.position:
            raise Violation(
                f"copy_serialized of {where} took {copy[1][1]} bytes, deserialize {source.position}: it must "
                "copy exactly the one record deserialize reads", example=bytes_example(broken))
        out = DataOutputView()
        try:
            s.serialize(got, out)
        except Exception as exc:  # noqa: BLE001 - any refusal is the finding
            raise Violation(
                f"deserialize read {where} as {show(got)}, which serialize refuses ({type(exc).__name__}: "
                f"{exc}): a restore would succeed and the next checkpoint fail; deserialize should "
                "refuse what serialize cannot write (raise reference.SerializationError there)",
                example=bytes_example(broken)) from None
        again = read_one(s, out.getvalue(), f"deserialize of what serialize wrote for the value read from {where}")
        expect_equal(again, got, f"the value read from {where}, written and read back,")
        read = broken[:source.position]
        if exact and out.getvalue() != read:
            raise Violation(f"deserialize read {where} as {show(got)}, which serialize writes as other bytes "
                            f"than it read {bytes_difference(out.getvalue(), read)}: {_NUMBER_READ_AS_ANOTHER}",
                            example=bytes_example(broken))
        if exact and copy[0] == "value" and copy[1][0] != read:
            raise Violation(f"copy_serialized of {where} wrote other bytes than it read "
                            f"{bytes_difference(copy[1][0], read)}: {_NUMBER_READ_AS_ANOTHER}", example=bytes_example(broken))

    def body(value: Any) -> None:
        data = write(s, value)
        for at in _cuts(len(data)):
            for new, how in corrupted_bytes(data[at]):
                broken = bytearray(data)
                broken[at] = new
                judge(f"the record of {show(value)} with byte {at} of {len(data)} {how} "
                      f"({data[at]:02x} -> {new:02x})", bytes(broken), False)
        if strict:
            for what, extreme in int_extremes(data, _numbers_read(s, data), CORRUPTED_NUMBERS):
                judge(f"the record of {show(value)} with {what}", extreme, True)

    ctx.for_all(ctx.subject.values, body, max_examples=max(5, ctx.examples // 10))


#: What ``roundtrip.corrupted`` says when a number of a record was read as another one.
_NUMBER_READ_AS_ANOTHER = (
    "the number was taken as another one. The reference's serializers take each number of a record "
    "as it is (a value is written back so, a count or length counts what follows), or refuse it with "
    "a StateError when they cannot (a negative count or length, one past the record, an ordinal "
    "past the symbols)")

#: How many corrupted forms of each record ``roundtrip.corrupted`` makes by setting a number the
#: serializer reads to an extreme (``int_extremes``), for a serializer of the reference's classes.
CORRUPTED_NUMBERS = 24


def _numbers_read(s: Any, data: bytes) -> list[tuple[int, int]]:
    """Where the generic methods of ``s`` read a short, int or long from its record ``data``
    (``IntReads``): the generated codecs read their buffer directly, so they are off meanwhile."""
    from reference.serializers import generated_codecs as codecs_switched
    from reference.serializers import generated_codecs_enabled, has_generated_codecs

    source = IntReads(data)
    if generated_codecs_enabled() and any(has_generated_codecs(x) for x in serializers_in(s)):
        with codecs_switched(False):
            s.deserialize(source)
    else:
        s.deserialize(source)
    return source.at


@check(id="roundtrip.length", family="roundtrip", requires=BIT_EXACT)
def length(ctx: CheckContext) -> None:
    """A declared fixed length matches the bytes every value takes."""
    s = ctx.serializer()
    declared = s.length
    if declared == -1:
        raise NotApplicable("variable length (length == -1): nothing to compare")

    def body(value: Any) -> None:
        size = len(write(s, value))
        if size != declared:
            raise Violation(f"serialize wrote {size} bytes, should write the declared length {declared}")

    ctx.for_all(ctx.subject.values, body)


#: What a refusal at construction raises: the configuration is a wrong value or of a wrong type.
_REFUSALS = (ValueError, TypeError, StateError)


@check(id="roundtrip.invalid_configuration", family="roundtrip", requires=API)
def invalid_configuration(ctx: CheckContext) -> None:
    """A serializer built from an invalid configuration refuses it at construction."""
    invalid = getattr(ctx.subject, "invalid_configurations", None) or {}
    if not invalid:
        raise NotApplicable("no invalid configurations declared (Subject(invalid_configurations={...}))")
    for what, build in invalid.items():
        try:
            made = build()
        except _REFUSALS as exc:
            if not str(exc).strip():
                raise Violation(f"building a serializer from {what} raised {type(exc).__name__} without a "
                                "message, should say what is wrong and how to fix it") from None
            continue
        except Exception as exc:
            raise Violation(
                f"building a serializer from {what} raised {type(exc).__name__}: {exc}, should refuse the "
                "configuration with a ValueError or TypeError saying what is wrong (validate it in the "
                "constructor rather than fail on using it)") from None
        raise Violation(
            f"building a serializer from {what} returned {show(made)}, should refuse the configuration at "
            "construction with a ValueError or TypeError saying what is wrong (an invalid configuration "
            "accepted fails later: on the first record, or when a savepoint is restored)")


@check(id="roundtrip.equality", family="roundtrip", requires=API)
def equality(ctx: CheckContext) -> None:
    """Serializers compare equal by configuration: a deep copy equals the original, same hash;
    a declared evolution's serializer of another format is unequal."""
    s = ctx.serializer()
    if s != s:
        raise Violation("the serializer is not equal to itself, should be (__eq__ by configuration)")
    try:
        twin = _copy.deepcopy(s)
    except Exception:  # e.g. holds a lock; a shallow copy still has the same configuration
        twin = _copy.copy(s)
    if twin != s:
        raise Violation(
            f"a copy of {show(s)} is not equal to it, should be: implement __eq__ (and "
            "__hash__) by configuration, not identity"
        )
    if hash(twin) != hash(s):
        raise Violation(f"equal serializers hash to {hash(twin)} and {hash(s)}, should hash equally")
    # A declared evolution that migrates or is incompatible writes another format: its serializer
    # is another configuration, never equal (an __eq__ that says so would call the new release
    # the old one wherever serializers are compared).
    for i, evo in enumerate(ctx.subject.evolutions):
        if evo.has_target and evo.expect in (Verdict.COMPATIBLE_AFTER_MIGRATION, Verdict.INCOMPATIBLE):
            other = evo.serializer()
            if s == other or other == s:
                raise Violation(
                    f"{show(s)} compares equal to {show(other)}, the serializer of {evo.label(i)}, "
                    "which writes another format; should be unequal: implement __eq__ by the whole "
                    "configuration")


@check(id="roundtrip.duplicate", family="roundtrip", requires=BIT_EXACT)
def duplicate(ctx: CheckContext) -> None:
    """duplicate() equals the original and writes and reads the same bytes."""
    s = ctx.serializer()
    d = s.duplicate()
    if d != s:
        raise Violation(f"duplicate() returned {show(d)}, should return a serializer equal to {show(s)}")
    drawn: list[Any] = []
    differed: list[tuple[Any, bytes, bytes]] = []

    def body(value: Any) -> None:
        drawn.append(value)
        mine, theirs = write(s, value), write(d, value)
        if mine != theirs:
            differed.append((value, mine, theirs))  # judged once every value is drawn (below)
            return
        expect_equal(read_one(d, mine, "the duplicate's deserialize"), value, "the duplicate")

    ctx.for_all(ctx.subject.values, body)
    value, mine, theirs = _differing_bytes(s, drawn, differed)
    if value is not None:
        raise Violation(
            f"the duplicate wrote {hexdump(theirs)}, should write the same bytes as the "
            f"original ({hexdump(mine)}); duplicate() lost configuration", example=show(value))
    for value, mine, _ in differed:  # bytes that follow history: the duplicate still reads them
        try:
            expect_equal(read_one(d, mine, "the duplicate's deserialize"), value, "the duplicate")
        except Violation as exc:
            exc.example = show(value)
            raise


def bytes_follow_history(serializer: Any, values: list[Any]) -> tuple[Any, bytes, list[Any], bytes] | None:
    """Whether a fresh ``duplicate()`` of ``serializer`` writes one of ``values`` to other bytes
    once it has written the others (a reused scratch buffer whose padding or tail is never
    cleared): (that value, its first bytes, the values written in between, its later bytes),
    or None. The values are written shortest first, then again: stale bytes of a longer one
    show in a shorter one written after it."""
    fresh, sizer = serializer.duplicate(), serializer.duplicate()
    sized = sorted(values, key=lambda v: len(write(sizer, v)))
    first = [write(fresh, v) for v in sized]
    for i, v in enumerate(sized):
        later = write(fresh, v)
        if later != first[i]:
            return v, first[i], sized[i + 1:] + sized[:i], later
    # Stale bytes need not follow the record's size (a field's padded slot): each of the first
    # few values is also written again right after each other one.
    few = values[:_HISTORY_PAIRS]
    for a in few:
        for b in few:
            if a is b:
                continue
            fresh = serializer.duplicate()
            before = write(fresh, a)
            write(fresh, b)
            after = write(fresh, a)
            if after != before:
                return a, before, [b], after
    return None


#: How many values ``bytes_follow_history`` also writes pairwise (each after each other).
_HISTORY_PAIRS = 6


def _history_hint(serializer: Any, values: list[Any]) -> str:
    """What to add to a message about bytes that differ where they should not, when the cause
    is that the serializer's bytes for a value follow what it wrote before: the same value's
    two writes, else ""."""
    found = bytes_follow_history(serializer, values)
    if found is None:
        return ""
    value, before, _, after = found
    return (f"; the serializer writes {show(value)} as {hexdump(before)}, then after other values as "
            f"{hexdump(after)}: its bytes follow what it wrote before (a reused scratch buffer whose "
            "tail or padding is not cleared?), which a copy that re-serializes shows")


def _differing_bytes(s: Any, drawn: list[Any], differed: list[tuple[Any, bytes, bytes]]) -> tuple[Any, bytes, bytes]:
    """The value (shortest shown first) whose bytes another instance wrote differently from
    ``s``, unless the serializer's bytes follow what it wrote before (then the two instances'
    histories explain the difference, not their configuration): (None, b"", b"") when none."""
    if not differed or bytes_follow_history(s, drawn) is not None:
        return None, b"", b""
    return min(differed, key=lambda d: len(show(d[0])))


@check(id="roundtrip.concurrent", family="roundtrip", requires=("roundtrip.duplicate",))
def concurrent(ctx: CheckContext) -> None:
    """Duplicates used from several threads at once each write and read correct bytes."""
    s = ctx.serializer()
    threads, rounds = 4, 25

    def body(values: list[Any]) -> None:
        # Bytes that follow what a serializer wrote before differ between any two instances:
        # that is roundtrip.key_determinism's to judge (for keys), not a race; then only the
        # values read back are compared.
        history_free = bytes_follow_history(s, values) is None
        # Each from a fresh duplicate, as each thread's first write is: ``s`` has written other
        # values before (in other checks), which bytes that follow history would show.
        expected = [write(s.duplicate(), v) for v in values]
        problems: list[str] = []
        barrier = threading.Barrier(threads)

        def worker(offset: int) -> None:
            mine = s.duplicate()
            try:
                barrier.wait(timeout=10)
                for r in range(rounds):
                    j = (offset + r) % len(values)
                    data = write(mine, values[j])
                    if history_free and data != expected[j]:
                        problems.append(f"wrote {hexdump(data)} instead of {hexdump(expected[j])} for {show(values[j])}")
                        return
                    got = read_one(mine, data)
                    if not values_equal(got, values[j]):
                        problems.append(f"read {show(got)} instead of {show(values[j])}")
                        return
            except Violation as exc:
                problems.append(exc.message)
            except Exception as exc:
                problems.append(f"{type(exc).__name__}: {exc}")

        previous = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
        finally:
            sys.setswitchinterval(previous)
        if problems:
            alone = _alone(s, values)
            if alone is not None:
                raise Violation(
                    f"a serializer {alone}, from one thread as from {threads}: not a race, but a value "
                    "this serializer cannot write and read back (the other round-trip checks drew "
                    "none like it)"
                )
            raise Violation(
                f"used from {threads} threads (each with its own duplicate()), a serializer "
                f"{problems[0]}; it should be thread-safe per duplicate (duplicate() must not "
                "share mutable state)"
            )
        # Threads only race when the OS interleaves them, which a loaded machine may not do;
        # so also look for the cause directly: scratch state that serialize() leaves behind
        # (it reflects the last value written) on an instance that duplicate() shares.
        scratch = _scratch_attributes(s, values[0], values[-1])
        if scratch and s.duplicate() is s:
            raise Violation(
                f"duplicate() returns the same instance, but serialize() keeps per-value scratch "
                f"state in {', '.join(scratch)} (it changes with each value written); duplicates "
                "used from several threads overwrite each other's state. duplicate() should "
                "return a new instance, or serialize() should keep no state"
            )

    ctx.for_all(st.lists(ctx.subject.values, min_size=threads, max_size=threads), body,
                max_examples=max(5, ctx.examples // 5))
    shared = _shared_stateful(s, s.duplicate())
    if shared:
        path, nested = shared[0]
        raise Violation(
            f"duplicate() shares the nested {show(nested)} at {path} with the original, but that "
            "serializer is stateful (its own duplicate() returns a new instance); duplicates used "
            "from several threads then share its state. duplicate() should be a deep copy: "
            "duplicate the nested serializers and build a new instance over the duplicates"
        )


def _alone(serializer: Any, values: list[Any]) -> str | None:
    """What goes wrong writing and reading ``values`` back from one thread (a fresh duplicate),
    or None: a problem the threads met that one thread meets too is no race."""
    mine = serializer.duplicate()
    for value in values:
        try:
            got = read_one(mine, write(mine, value))
        except Violation as exc:
            return exc.message
        except Exception as exc:  # noqa: BLE001 - the serializer's own error is the finding
            return f"{type(exc).__name__}: {exc} for {show(value)}"
        if not values_equal(got, value):
            return f"read {show(got)} instead of {show(value)}"
    return None


def _shared_stateful(original: Any, duplicate: Any) -> list[tuple[str, Any]]:
    """Nested serializers of ``original`` that are stateful (their ``duplicate()`` is a new
    instance) and that ``duplicate`` holds too, with where."""
    theirs = {id(s) for _, s in nested_serializers(duplicate)} | {id(duplicate)}
    shared = []
    for path, nested in nested_serializers(original):
        if id(nested) not in theirs:
            continue
        try:
            stateful = nested.duplicate() is not nested
        except Exception:  # noqa: BLE001 - a nested duplicate() that fails is another check's finding
            continue
        if stateful:
            shared.append((path, nested))
    return shared


def _state(serializer: Any) -> dict[str, str] | None:
    try:
        return {k: repr(v) for k, v in vars(serializer).items()}
    except TypeError:  # __slots__ only: nothing we can watch
        return None


def _scratch_attributes(serializer: Any, a: Any, b: Any) -> list[str]:
    """Attributes whose content follows the last value written (a scratch buffer), as opposed
    to caches that only grow: after a, b, a again the attribute is back to its state after a."""
    if values_equal(a, b):
        return []
    try:
        write(serializer, a)
        after_a = _state(serializer)
        write(serializer, b)
        after_b = _state(serializer)
        write(serializer, a)
        again = _state(serializer)
    except Violation:
        return []
    if after_a is None or after_b is None or again is None:
        return []
    return sorted(k for k in after_a if after_a[k] != after_b.get(k) and after_a[k] == again.get(k))


@check(id="roundtrip.pickle", family="roundtrip", requires=BIT_EXACT)
def pickled(ctx: CheckContext) -> None:
    """The serializer pickles (it ships to workers) and is equal and writes the same after."""
    s = ctx.serializer()
    try:
        clone = pickle.loads(pickle.dumps(s))
    except Exception as exc:
        raise Violation(
            f"pickling the serializer raised {type(exc).__name__}: {exc}; it should pickle "
            "(serializers are shipped to workers)"
        ) from None
    if clone != s:
        raise Violation(f"after pickling the serializer is {show(clone)}, should equal {show(s)}")

    drawn: list[Any] = []
    differed: list[tuple[Any, bytes, bytes]] = []

    def body(value: Any) -> None:
        drawn.append(value)
        mine, theirs = write(s, value), write(clone, value)
        if mine != theirs:
            differed.append((value, mine, theirs))  # judged once every value is drawn (below)

    ctx.for_all(ctx.subject.values, body, max_examples=max(10, ctx.examples // 2))
    value, mine, theirs = _differing_bytes(s, drawn, differed)
    if value is not None:
        raise Violation(f"the unpickled serializer wrote {hexdump(theirs)}, should write {hexdump(mine)}",
                        example=show(value))


def rebuilt(value: Any) -> Any:
    """An equal value built in a different order: dicts and sets filled in reverse, in tables
    of another size (so their iteration order differs)."""
    if isinstance(value, dict) and type(value) is dict:
        items = [(rebuilt(k), rebuilt(v)) for k, v in reversed(list(value.items()))]
        return dict(items)
    if type(value) in (set, frozenset):
        filler = [object() for _ in range(3 * len(value) + 8)]
        grown: set[Any] = set(filler)
        for item in reversed(list(value)):
            grown.add(rebuilt(item))
        for f in filler:
            grown.discard(f)
        return grown if type(value) is set else frozenset(grown)
    if type(value) is list:
        return [rebuilt(v) for v in value]
    if type(value) is tuple:
        return tuple(rebuilt(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            return dataclasses.replace(
                value, **{f.name: rebuilt(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
            )
        except Exception:
            return value
    return value


@check(id="roundtrip.key_determinism", family="roundtrip", requires=BIT_EXACT)
def key_determinism(ctx: CheckContext) -> None:
    """Key serializers write equal values (however built) to equal bytes, whatever was written
    before them by the same serializer or a duplicate."""
    if not ctx.subject.key:
        raise NotApplicable("not a key serializer (Subject(key=True) enables this check)")
    s = ctx.serializer()

    def body(case: tuple[Any, list[Any]]) -> None:
        value, others = case
        once, again = write(s, value), write(s, value)
        if once != again:
            raise Violation(f"writing the same key twice gave {hexdump(once)} then {hexdump(again)}, should be identical")
        # Key A, other keys of various sizes, then A again, by a fresh duplicate(): the example
        # alone decides (the original's own history is what the checks before left in it).
        found = bytes_follow_history(s, [value, *others])
        if found is not None:
            key, first, between, later = found
            raise Violation(
                f"key determinism: key {show(key)} written by a fresh duplicate() gave {hexdump(first)}, "
                f"then, after keys {show(between)}, {hexdump(later)}; should give the same bytes whatever "
                "was written before (key bytes pick the key group: clear a reused buffer's padding and "
                "tail, keep no state from the previous key)")
        other = rebuilt(value)
        if not values_equal(other, value):
            return
        theirs = write(s, other)
        if theirs != once:
            raise Violation(
                f"an equal key built in another order gave {hexdump(theirs)}, should give the "
                f"same bytes as {hexdump(once)} (key bytes pick the key group: write map/set "
                "entries in a deterministic order)"
            )

    ctx.for_all(st.tuples(ctx.subject.values, st.lists(ctx.subject.values, min_size=1, max_size=4)), body)


_PREFIX = b"\x07before"


def out_of_domain_cases(ctx: Any) -> Any:
    """``strategies.out_of_domain`` of the subject's schema (NotApplicable without one)."""
    schema = getattr(ctx.subject, "schema", None)
    if schema is None:
        raise NotApplicable("no schema (Subject(schema=...)): no out-of-domain values to draw")
    import strategies

    return strategies.out_of_domain(schema)


def _refusal(serializer: Any, case: Any, target: DataOutputView) -> SerializationError:
    """The SerializationError ``serialize`` raised for ``case``; a Violation otherwise."""
    try:
        serializer.serialize(case.value, target)
    except SerializationError as exc:
        return exc
    except Exception as exc:
        raise Violation(
            f"serialize raised {type(exc).__name__}: {exc} for {case.what}, should raise "
            "reference.SerializationError (callers catch that one error)", example=repr(case)) from None
    raise Violation(f"serialize accepted {case.what}, should refuse it with a SerializationError",
                    example=repr(case))


def _names_field(exc: Exception, case: Any) -> None:
    if case.field is not None and case.field not in str(exc):
        raise Violation(
            f"the refusal of {case.what} says {str(exc)!r}, should name the field {case.field!r}",
            example=repr(case))


@check(id="roundtrip.domain_refused", family="roundtrip", requires=BIT_EXACT)
def refused(ctx: CheckContext) -> None:
    """Out-of-domain values raise SerializationError naming the field, and write nothing."""
    cases = out_of_domain_cases(ctx)
    s = ctx.serializer()

    def body(case: Any) -> None:
        target = DataOutputView()
        target.write(_PREFIX)
        exc = _refusal(s, case, target)
        _names_field(exc, case)
        left = target.getvalue()
        if left != _PREFIX:
            raise Violation(
                f"refusing {case.what}, serialize left {len(left) - len(_PREFIX)} bytes in the "
                "target, should leave it as it was (no partial record)", example=repr(case))

    ctx.for_all(cases, body)


def _boundary_roundtrip(s: Any, value: Any, what: str, first: bytes | None = None) -> None:
    """``value`` written twice back to back (``first``: its record, when already written) reads
    back exactly, record by record, and ``copy_serialized`` copies exactly one record."""
    if first is None:
        first = write(s, value)
    source = DataInputView(first + first)
    for i in range(2):
        got = guarded("deserialize", s.deserialize, source)
        if source.position != len(first) * (i + 1):
            raise Violation(f"reading record {i} of {what} stopped at byte {source.position}, should stop at "
                            f"{len(first) * (i + 1)} (a length read with fewer bytes or another width than "
                            "serialize wrote it)")
        expect_equal(got, value, f"record {i} of {what} written back to back")
    target = DataOutputView()
    source = DataInputView(first + first)
    guarded("copy_serialized", s.copy_serialized, source, target)
    if target.getvalue() != first or source.position != len(first):
        raise Violation(f"copy_serialized of {what} copied {len(target.getvalue())} bytes and consumed "
                        f"{source.position}, should copy and consume {len(first)}")


def _normalized(s: Any, data: bytes, value: Any) -> bool:
    """Whether ``s`` wrote ``value`` (a dict grown by keys, or with a key renamed) as a record of
    the fields it knows: what ``data`` reads back is not ``value`` but is written as ``data``
    again (the unknown keys left out, the missing fields defaulted). A map serializer that loses
    an entry on reading is no fixed point and is judged as usual."""
    try:
        read = s.deserialize(DataInputView(data))
        return not values_equal(read, value) and s.to_bytes(read) == data
    except Exception:
        return False


def _reference_frame(exc: BaseException) -> str | None:
    """Where in the reference's own code ``exc`` was raised (its innermost frame, as
    ``file:line in function``), or None when it was raised elsewhere."""
    import os
    import traceback

    import reference

    from .._engine.runner import in_package, package_folder

    frames = traceback.extract_tb(exc.__traceback__)
    home = package_folder(reference)
    if not frames or not in_package(frames[-1].filename, home):
        return None
    last = frames[-1]
    shown = os.path.relpath(os.path.realpath(last.filename), os.path.dirname(home.rstrip(os.sep)))  # reference/...
    return f"{shown}:{last.lineno} in {last.name}"


#: Examples of the huge pass (2 million units, 16,384 elements: each costs megabytes).
_HUGE_EXAMPLES = 2
#: Values drawn for each huge example, of which the one with the most sites is grown.
_HUGE_CANDIDATES = 16


@check(id="roundtrip.size_boundaries", family="roundtrip", requires=BIT_EXACT)
def size_boundaries(ctx: CheckContext) -> None:
    """Text, bytes and containers on each varint length boundary (empty, 127/128 ... 2,097,152
    units) and, without a schema, each end of a length in a byte or a short (255/256,
    32,767/32,768, 65,535/65,536), ints on each varint width's edge and times at their zone's transitions and the
    epoch's edges round-trip; grown values the serializer refuses with SerializationError are
    skipped."""
    import strategies

    s = ctx.serializer()
    examples = max(5, ctx.examples // 6)
    schema = getattr(ctx.subject, "schema", None)
    if schema is not None:
        ctx.for_all(strategies.large_values(schema),
                    lambda value: _boundary_roundtrip(s, value, "a value with its text and bytes on a boundary"),
                    max_examples=examples)
    grew = [0]
    drawn_before: list[Any] = []

    def body(drawn: Any) -> None:
        drawn_before.append(drawn.base)
        for kind, what, value in drawn.variants():
            out: DataOutputView | None = DataOutputView()
            try:
                s.serialize(value, out)
            except SerializationError:
                continue  # outside the serializer's domain (a refusal is its right)
            except Exception as exc:
                if kind in strategies.ANY_REFUSAL_KINDS:
                    where = _reference_frame(exc)
                    if where is None:
                        continue  # an int or a year the user's strategy bounds: any refusal will do
                    raise Violation(
                        f"refusing the value with {what}, the reference's own code ({where}) raised "
                        f"{type(exc).__name__}: {exc}, should raise a reference.SerializationError (the "
                        "reference refuses a value outside its range with one)",
                        example=f"{show(drawn.base)} as drawn, before it was grown ({what})") from None
                out = None  # the round trip below reports it, with the variant named
            if kind in ("dict", "key") and out is not None and _normalized(s, out.getvalue(), value):
                continue  # a record: its fields are the keys it knows, the added or renamed ones are not
            grew[0] += 1
            try:
                _boundary_roundtrip(s, value, f"the value with {what}", None if out is None else out.getvalue())
            except Violation as exc:
                if what not in exc.message:
                    exc.message = f"{exc.message} (the value with {what})"
                exc.message = f"{exc.message}; the drawn value was {show(drawn.base)}"
                exc.example = f"{show(drawn.base)} as drawn, before it was grown ({what})"
                raise

    def display(drawn: Any) -> str:
        return show(drawn.base)

    # With a schema, large_values grew the text and bytes where the schema has them (2 million
    # units too) and its lists' counts are ints: lists are grown here to 0, 127 and 128 (a dict
    # may be a record, Avro's, whose keys are its fields), ints set to the varint edges, times
    # to their edges.
    kinds = ("list", "int", "datetime", "time") if schema is not None else strategies.GROWTH_KINDS
    # Each example tries every size of a site (about 10 variants, 60 with an int): half as
    # many examples as above go as far.
    ctx.for_all(strategies.amplified(ctx.subject.values, kinds=kinds), body, max_examples=max(3, examples // 2),
                display=display)
    if schema is None:
        # Each of the few huge examples grows the value with the most sites of those drawn above
        # and the _HUGE_CANDIDATES drawn for it: an optional part (a field that may be None)
        # absent from one draw is present in another.
        def richest(drawn: list[Any]) -> Any:
            return (strategies.richest_values([*drawn, *drawn_before], huge=True, at_most=1) or drawn)[0]

        bases = st.lists(ctx.subject.values, min_size=_HUGE_CANDIDATES, max_size=_HUGE_CANDIDATES).map(richest)
        ctx.for_all(strategies.amplified(bases, huge=True), body, max_examples=_HUGE_EXAMPLES, display=display)
    if schema is None and not grew[0]:
        raise NotApplicable("no drawn value had text, bytes, a container, an int or a time to grow, or the "
                            "serializer refused every grown one (SerializationError)")
