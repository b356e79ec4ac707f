"""``values(schema)``: values of a logical type, built by construction (never filtered).

Floats come from raw bit patterns (NaN payloads, -0.0, subnormals) next to ordinary floats;
text is any surrogate-free string including non-BMP characters; containers may be empty or
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
from ._schemas import _integers

__all__ = ["values", "zero_value", "float32_from_bits", "float64_from_bits"]

_F32 = struct.Struct(">f")
_U32 = struct.Struct(">I")
_F64 = struct.Struct(">d")
_U64 = struct.Struct(">Q")


def float32_from_bits(bits: int) -> float:
    """The Python float holding binary32 ``bits``. A signalling NaN is quieted (its payload
    kept): a Python float cannot carry a binary32 signalling NaN through a conversion."""
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x007FFFFF:
        bits |= 0x00400000
    return _F32.unpack(_U32.pack(bits))[0]  # type: ignore[no-any-return]


def float64_from_bits(bits: int) -> float:
    return _F64.unpack(_U64.pack(bits))[0]  # type: ignore[no-any-return]


_INT_RANGES = {
    t.ByteType: (-(2**7), 2**7 - 1), t.ShortType: (-(2**15), 2**15 - 1),
    t.IntType: (-(2**31), 2**31 - 1), t.LongType: (-(2**63), 2**63 - 1),
}

_FLOAT32 = st.one_of(
    st.floats(width=32),
    st.integers(0, 2**32 - 1).map(float32_from_bits),
)
_FLOAT64 = st.one_of(
    st.floats(),
    st.integers(0, 2**64 - 1).map(float64_from_bits),
)
def _row_kinds() -> list[Any]:
    from reference.serializers import RowKind

    return [k for k in RowKind if k.name != "INSERT"]


_KINDS = _row_kinds()
_TEXT = st.text(max_size=12)  # hypothesis' default alphabet: all of Unicode but surrogates
_PICKLE_SOME = st.one_of(st.integers(), st.booleans(), _TEXT, st.binary(max_size=8), _FLOAT64)
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


_BOOLEANS = st.booleans()
_SIZE = st.integers(0, 4)
_BINARY = st.binary(max_size=12)
_TEXT_OR_NONE = st.one_of(st.none(), _TEXT)
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
    _LEAVES[_kind] = (st.integers(_low, _high), st.integers(_low, _high))


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
    # A plain tuple is an INSERT row (half of the rows); the other kinds are carried by
    # reference's Row.
    return values if kind < 3 else _row_with_kind(values, _KINDS[kind - 3])


def _draw_pojo(draw: Any, schema: t.PojoType, allow_none: bool) -> Any:
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


_ROW_KIND = st.integers(0, 5)
_DRAWERS: dict[type, Any] = {
    t.NullableType: _draw_nullable, t.ListType: _draw_list, t.MapType: _draw_map,
    t.TupleType: _draw_tuple, t.RowType: _draw_row, t.PojoType: _draw_pojo,
    t.EnumType: _draw_enum, t.AvroType: _draw_avro,
}


def _row_with_kind(values: tuple[Any, ...], kind: Any) -> Any:
    from reference.serializers import Row

    return Row(values, kind)


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


_NUMBERS = (t.BooleanType, t.ByteType, t.ShortType, t.IntType, t.LongType, t.FloatType, t.DoubleType)
_ZEROS: dict[type, Any] = {
    t.BooleanType: False, t.ByteType: 0, t.ShortType: 0, t.IntType: 0, t.LongType: 0, t.FloatType: 0.0,
    t.DoubleType: 0.0, t.StringType: "", t.BytesType: b"",
}
