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
    kind = type(schema)
    if kind is t.BooleanType:
        return st.booleans()
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        return st.integers(low, high)
    if kind is t.FloatType:
        return _FLOAT32
    if kind is t.DoubleType:
        return _FLOAT64
    if kind is t.StringType:
        # The String serializer writes None itself (length prefix 0).
        return st.one_of(st.none(), _TEXT) if allow_none else _TEXT
    if kind is t.BytesType:
        return st.binary(max_size=12)
    if kind is t.PickleType:
        return _PICKLED_ANY if allow_none else _PICKLED_SOME
    if kind is t.NullableType:
        inner = _values(schema.inner, False)
        return st.one_of(st.none(), inner) if allow_none else inner
    if kind is t.ListType:
        return st.lists(_values(schema.element, True), max_size=4)
    if kind is t.MapType:
        return st.dictionaries(
            _values(schema.key, False), _or_none(_values(schema.value, True)), max_size=4
        )
    if kind is t.TupleType:
        return st.tuples(*[_values(f, False) for f in schema.fields])
    if kind is t.RowType:
        fields = st.tuples(*[
            _or_none(_values(f.type, False)) if f.nullable else _values(f.type, False)
            for f in schema.fields
        ])
        # A plain tuple is an INSERT row; the other kinds are carried by reference's Row.
        return st.one_of(fields, st.builds(_row_with_kind, fields, st.sampled_from(_KINDS)))
    if kind is t.PojoType:
        return st.builds(schema.cls, **{
            f.name: _or_none(_values(f.type, False)) for f in _pojo.pojo_fields(schema)
        })
    if kind is t.EnumType:
        return st.sampled_from(list(schema.cls))
    if kind is t.AvroType:
        from . import _avro_bridge

        return _avro_bridge.avro_values(schema, allow_none)
    raise TypeError(f"values: not a logical type: {schema!r}")


def _row_with_kind(values: tuple[Any, ...], kind: Any) -> Any:
    from reference.serializers import Row

    return Row(values, kind)


def _or_none(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


def zero_value(schema: Any) -> Any:
    """What a missing value of ``schema`` becomes: the type's zero (the serializer's
    ``create_instance``, as Flink's POJO serializer leaves a new field at its default)."""
    from reference.types import serializer_for

    return serializer_for(schema).create_instance()
