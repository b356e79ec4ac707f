"""``values(schema)``: values of a logical type, built by construction (never filtered).

Floats come from raw bit patterns (NaN payloads, -0.0, subnormals) next to ordinary floats;
text is any string of Unicode code points, lone surrogate halves and non-BMP characters
included, mostly short but now and then of a length on each boundary of the varint that
prefixes it (127/128, 16,383/16,384 and, rarely, 2,097,151/2,097,152 UTF-16 units); containers may be empty or
nested; None appears exactly where the type can hold it; dict keys arrive in drawn order, so
insertion orders vary.
"""

from __future__ import annotations

import functools
import struct
from typing import Any

from hypothesis import strategies as st

from reference import types as t

from . import _pojo
from ._schemas import _eager, _integers, _sampled

__all__ = ["values", "large_values", "zero_value", "float32_from_bits", "float64_from_bits", "varint_edges"]

_F32 = struct.Struct(">f")
_U32 = struct.Struct(">I")
_F64 = struct.Struct(">d")
_U64 = struct.Struct(">Q")


def float32_from_bits(bits: int) -> float:
    """The Python float holding binary32 ``bits``. A signalling NaN is quieted (its payload
    kept): a Python float cannot carry a binary32 signalling NaN through a conversion."""
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        bits |= 0x00400000
    return _F32.unpack(_U32.pack(bits))[0]


def float64_from_bits(bits: int) -> float:
    return _F64.unpack(_U64.pack(bits))[0]


_INT_RANGES = {
    t.ByteType: (-(2**7), 2**7 - 1), t.ShortType: (-(2**15), 2**15 - 1),
    t.IntType: (-(2**31), 2**31 - 1), t.LongType: (-(2**63), 2**63 - 1),
}


def varint_edges(low: int = -(2**63), high: int = 2**63 - 1) -> tuple[int, ...]:
    """The integers in [low, high] on each side of a boundary where a varint takes another
    byte: 2**(7k) - 1 and 2**(7k) (the value as an unsigned varint), -2**(7k - 1) - 1,
    -2**(7k - 1), 2**(7k - 1) - 1 and 2**(7k - 1) (its zig-zag form, Avro's), for k = 1 .. 9;
    the int32 and int64 limits (the last varint byte, where a reader's shift guard sits), and
    ``low`` and ``high``; -1, 0 and 1. Smallest magnitude first."""
    edges = {-1, 0, 1, -(2**31), 2**31 - 1, -(2**63), 2**63 - 1, low, high}
    for k in range(1, 10):
        edges.update((2 ** (7 * k) - 1, 2 ** (7 * k), -(2 ** (7 * k - 1)) - 1, -(2 ** (7 * k - 1)),
                      2 ** (7 * k - 1) - 1, 2 ** (7 * k - 1)))
    return tuple(sorted((e for e in edges if low <= e <= high), key=lambda e: (abs(e), e)))


_FLOAT32 = _eager(st.one_of(
    st.floats(width=32),
    st.integers(0, 2**32 - 1).map(float32_from_bits),
))
_FLOAT64 = _eager(st.one_of(
    st.floats(),
    st.integers(0, 2**64 - 1).map(float64_from_bits),
))
def _row_kinds() -> list[Any]:
    from reference.serializers import RowKind

    return [*(k for k in RowKind if k.name != "INSERT"), RowKind.INSERT]


_KINDS = _row_kinds()
#: The UTF-16 units on both sides of each width of a unit's varint in Flink's string format
#: (1 byte up to 0x7F, 2 up to 0x3FFF, 3 up to 0xFFFF, the last unit there is), which a code
#: point drawn at random rarely is.
EDGE_UNITS = "\x7f\x80\u3fff\u4000\uffff"
#: Every code point, lone surrogate halves included (a Java string is UTF-16 units, any of them).
_CHARS = st.characters(codec=None, exclude_categories=())


def _as_utf16(text: str) -> str:
    """``text`` as UTF-16 reads it back: a high surrogate half followed by a low one is one
    supplementary character (both are the same two units), so values compare after a round trip."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


_SHORT_TEXT = _eager(st.text(_CHARS, max_size=12).map(_as_utf16))
#: UTF-16 unit counts on both sides of each varint width of Flink's string length (length + 1
#: is written: 1, 2, 3 and 4 bytes), and of the units themselves.
BOUNDARY_UNITS = (126, 127, 128, 16382, 16383, 16384)
HUGE_UNITS = (2_097_150, 2_097_151, 2_097_152)
#: Lengths on both sides of a length written in an unsigned byte (255/256), a signed short
#: (32,767/32,768) and an unsigned one (65,535/65,536, Java's ``writeUTF``): hand-written
#: length prefixes, which the huge pass of ``amplified`` also tries.
SHORT_LENGTH_UNITS = (255, 256, 32_767, 32_768, 65_535, 65_536)


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _text_of_units(seed: str, n: int) -> str:
    """A string of exactly ``n`` UTF-16 units built by repeating ``seed`` (then padded)."""
    if not seed:
        return "a" * n
    text = seed * (n // max(1, _units(seed)) + 1)
    while _units(text) > n:
        text = text[: max(0, len(text) - max(1, (_units(text) - n) // 2))]
    return text + "a" * (n - _units(text))


@st.composite
def _text_strategy(draw: Any, huge: bool) -> str:
    # Mostly short text (the first alternative, where shrinking goes); now and then one holding
    # a unit at a varint edge, or a length on a varint boundary; with ``huge`` always a boundary length, every other one of 2 million units.
    size = draw(_integers(0, 30), label="text size class") if not huge else 29 + draw(
        _integers(0, 3), label="text size class")
    if size < 28:
        return draw(_SHORT_TEXT, label="text")
    if size == 28:  # a short text holding a unit at a varint edge
        text = draw(_SHORT_TEXT, label="text")
        at = draw(_integers(0, len(text)), label="edge unit position")
        return _as_utf16(text[:at] + draw(_sampled(EDGE_UNITS), label="edge unit") + text[at:])
    if size < 31:
        seed = draw(st.text(_CHARS, max_size=3), label="text seed")
        return _as_utf16(_text_of_units(seed, draw(_sampled(BOUNDARY_UNITS), label="text units")))
    # 2 million units: the length's 4-byte varint is the point, so the text is ASCII (whose
    # units the reader takes in one step; every other unit width is drawn at the sizes above).
    seed = draw(st.text("abc", min_size=1, max_size=3), label="text seed")
    return _text_of_units(seed, draw(_sampled(HUGE_UNITS), label="text units"))


_TEXT = _eager(_text_strategy(False))
_PICKLE_SOME = st.one_of(st.integers(), st.booleans(), _SHORT_TEXT, st.binary(max_size=8), _FLOAT64)
_PICKLED_ANY = st.recursive(
    st.one_of(st.none(), _PICKLE_SOME),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.tuples(inner, inner),
                            st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=6,
)
# Not None at the top (for places that cannot hold None), any picklable value below.
_PICKLED_SOME = st.one_of(
    _PICKLE_SOME, st.lists(_PICKLED_ANY, max_size=3), st.tuples(_PICKLED_ANY, _PICKLED_ANY)
)


def values(schema: Any) -> st.SearchStrategy[Any]:
    """Values of ``schema`` (a ``reference.types`` logical type) as its serializer takes them."""
    return _values(schema, True)


@functools.lru_cache(maxsize=8192)
def _values(schema: Any, allow_none: bool) -> st.SearchStrategy[Any]:
    if not _known(schema):
        raise TypeError(f"values: not a logical type: {schema!r}")
    return _value_strategy(schema, allow_none)


def _known(schema: Any) -> bool:
    return type(schema) in _LEAVES or type(schema) in _DRAWERS


# One composite walks the schema and draws each part from strategies built once at import:
# building (and validating) a strategy tree per schema costs more than drawing from it.
@st.composite
def _value_strategy(draw: Any, schema: Any, allow_none: bool) -> Any:
    return _draw_value(draw, schema, allow_none)


_BOOLEANS = _eager(st.booleans())
_SIZE = _integers(0, 4)
_BINARY = _eager(st.one_of(st.binary(max_size=12), st.builds(
    lambda n, fill: fill * n, st.sampled_from(BOUNDARY_UNITS), st.binary(min_size=1, max_size=1))))
_TEXT_OR_NONE = _eager(st.one_of(st.none(), _TEXT))
_HUGE_TEXT = _eager(_text_strategy(True))
_HUGE_BINARY = st.builds(lambda n, fill: fill * n, st.sampled_from(BOUNDARY_UNITS + HUGE_UNITS[1:2]),
                         st.binary(min_size=1, max_size=1))
_LEAVES: dict[type, tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]] = {
    # type: (strategy where None is allowed, strategy where it is not)
    t.BooleanType: (_BOOLEANS, _BOOLEANS),
    t.FloatType: (_FLOAT32, _FLOAT32),
    t.DoubleType: (_FLOAT64, _FLOAT64),
    # The String serializer writes None itself (length prefix 0).
    t.StringType: (_TEXT_OR_NONE, _TEXT),
    t.BytesType: (_BINARY, _BINARY),
    t.PickleType: (_PICKLED_ANY, _PICKLED_SOME),
}
for _kind, (_low, _high) in _INT_RANGES.items():
    _LEAVES[_kind] = (_integers(_low, _high), _integers(_low, _high))


def _draw_value(draw: Any, schema: Any, allow_none: bool) -> Any:
    leaf = _LEAVES.get(type(schema))
    if leaf is not None:
        return draw(leaf[0] if allow_none else leaf[1])
    return _DRAWERS[type(schema)](draw, schema, allow_none)


def _maybe_null(draw: Any) -> bool:
    # False (the simplest choice) means null: values shrink towards None where it is allowed.
    return not draw(_BOOLEANS)


def _draw_nullable(draw: Any, schema: t.NullableType, allow_none: bool) -> Any:
    if allow_none and _maybe_null(draw):
        return None
    return _draw_value(draw, schema.inner, False)


def _draw_list(draw: Any, schema: t.ListType, allow_none: bool) -> Any:
    return [_draw_value(draw, schema.element, True) for _ in range(draw(_SIZE))]


def _draw_map(draw: Any, schema: t.MapType, allow_none: bool) -> Any:
    # Keys arrive in drawn order (varied insertion orders); a repeated key keeps its first
    # place and its last value, as a dict does.
    result = {}
    for _ in range(draw(_SIZE)):
        key = _draw_value(draw, schema.key, False)
        result[key] = None if _maybe_null(draw) else _draw_value(draw, schema.value, False)
    return result


def _draw_tuple(draw: Any, schema: t.TupleType, allow_none: bool) -> Any:
    return tuple([_draw_value(draw, f, False) for f in schema.fields])


def _draw_row(draw: Any, schema: t.RowType, allow_none: bool) -> Any:
    values = tuple([
        None if f.nullable and _maybe_null(draw) else _draw_value(draw, f.type, False)
        for f in schema.fields
    ])
    kind = draw(_ROW_KIND)
    # A plain tuple is an INSERT row (three rows in seven); the other kinds are carried by
    # reference's Row, and so, in one row in seven, is INSERT (``Row.of(...)``, as users build
    # rows: read back, it is the plain tuple).
    return values if kind < 3 else _row_with_kind(values, _KINDS[kind - 3])


def _draw_pojo(draw: Any, schema: t.PojoType, allow_none: bool) -> Any:
    # A pojo reference may be null (its serializer writes a null flag) where the place holds
    # None: at the top and as a list element; a pojo field or map value is null by its holder.
    if allow_none and _maybe_null(draw):
        return None
    kwargs = {
        f.name: None if _maybe_null(draw) else _draw_value(draw, f.type, False)
        for f in _pojo.pojo_fields(schema)
    }
    return schema.cls(**kwargs)


def _draw_enum(draw: Any, schema: t.EnumType, allow_none: bool) -> Any:
    members = list(schema.cls)
    return members[draw(_integers(0, len(members) - 1))] if len(members) > 1 else members[0]


def _draw_avro(draw: Any, schema: t.AvroType, allow_none: bool) -> Any:
    from . import _avro_bridge

    return draw(_avro_bridge.avro_values(schema, allow_none))


_ROW_KIND = _integers(0, 6)
_DRAWERS: dict[type, Any] = {
    t.NullableType: _draw_nullable, t.ListType: _draw_list, t.MapType: _draw_map,
    t.TupleType: _draw_tuple, t.RowType: _draw_row, t.PojoType: _draw_pojo,
    t.EnumType: _draw_enum, t.AvroType: _draw_avro,
}


def _row_with_kind(values: tuple[Any, ...], kind: Any) -> Any:
    from reference.serializers import Row

    return Row.of(*values, kind=kind)  # as users build rows


def large_values(schema: Any) -> st.SearchStrategy[Any]:
    """Values of ``schema`` whose text and bytes (outside map keys, pickles and Avro) all have
    lengths on a boundary of the varint before them, 2 million UTF-16 units now and then."""
    return _large_values(schema)


@functools.lru_cache(maxsize=256)
def _large_values(schema: Any) -> st.SearchStrategy[Any]:
    return st.tuples(values(schema), st.data()).map(lambda pair: _inflated(schema, pair[0], pair[1]))


def _inflated(schema: Any, value: Any, data: Any) -> Any:
    kind = type(schema)
    if value is None:
        return None
    if kind is t.StringType:
        return data.draw(_HUGE_TEXT, label="large text")
    if kind is t.BytesType:
        return data.draw(_HUGE_BINARY, label="large bytes")
    if kind is t.NullableType:
        return _inflated(schema.inner, value, data)
    if kind is t.ListType:
        return [_inflated(schema.element, v, data) for v in value]
    if kind is t.MapType:
        return {k: _inflated(schema.value, v, data) for k, v in value.items()}
    if kind is t.TupleType:
        return tuple(_inflated(f, v, data) for f, v in zip(schema.fields, value, strict=True))
    if kind is t.RowType:
        fields = tuple(_inflated(f.type, v, data) for f, v in zip(schema.fields, value, strict=True))
        return fields if type(value) is tuple else _row_with_kind(fields, value.kind)
    if kind is t.PojoType:
        return schema.cls(**{f.name: _inflated(f.type, getattr(value, f.name), data)
                             for f in _pojo.pojo_fields(schema)})
    return value


def zero_value(schema: Any) -> Any:
    """What ``create_instance`` must return for ``schema`` (Java's defaults, as Flink's
    serializers give them): 0 / 0.0 / False for numbers and booleans, "" and b"" for text and
    bytes, empty containers, a tuple of its fields' zeros, a row of its NOT NULL fields' zeros
    (None in nullable ones), an enum's first member, a pojo built from its fields' defaults (a
    number or bool field without one gets its zero, any other field None), and None for types
    with no zero of their own (pickle, Avro)."""
    kind = type(schema)
    if kind in _ZEROS:
        return _ZEROS[kind]
    if kind is t.NullableType:
        return zero_value(schema.inner)
    if kind is t.ListType:
        return []
    if kind is t.MapType:
        return {}
    if kind is t.TupleType:
        return tuple(zero_value(f) for f in schema.fields)
    if kind is t.RowType:
        return tuple(None if f.nullable else zero_value(f.type) for f in schema.fields)
    if kind is t.EnumType:
        return next(iter(schema.cls))
    if kind is t.PojoType:
        return schema.cls(**{
            f.name: f.default if f.has_default else _ZEROS.get(type(f.type)) if type(f.type) in _NUMBERS else None
            for f in _pojo.pojo_fields(schema)
        })
    return None


def immutable_type(schema: Any) -> bool:
    """What ``is_immutable_type`` of ``serializer_for(schema)`` must be: whether every value of
    ``schema`` is an immutable Python object (numbers, bools, text, bytes and enum members, and
    a Nullable, tuple or row of such values), so that ``copy`` may hand it out as it is. A list,
    map, dataclass, pickled object or Avro record is mutable."""
    kind = type(schema)
    if kind in _ZEROS or kind is t.EnumType:
        return True
    if kind is t.NullableType:
        return immutable_type(schema.inner)
    if kind is t.TupleType:
        return all(immutable_type(f) for f in schema.fields)
    if kind is t.RowType:
        return all(immutable_type(f.type) for f in schema.fields)
    return False


_NUMBERS = (t.BooleanType, t.ByteType, t.ShortType, t.IntType, t.LongType, t.FloatType, t.DoubleType)
_ZEROS: dict[type, Any] = {
    t.BooleanType: False, t.ByteType: 0, t.ShortType: 0, t.IntType: 0, t.LongType: 0, t.FloatType: 0.0,
    t.DoubleType: 0.0, t.StringType: "", t.BytesType: b"",
}
