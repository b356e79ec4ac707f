"""Values are valid by construction: the reference serializer of the schema writes every one
and reads back the same value; the edge cases the issue asks for are actually generated."""

from __future__ import annotations

import math
import struct
from typing import Any

from _strategies_oracle_check import read_all, to_bytes
from hypothesis import find, given, settings
from hypothesis import strategies as st

import strategies
from reference import DataOutputView
from reference import types as t
from reference.types import serializer_for


@settings(max_examples=200)
@given(st.data())
def test_strategies_values_round_trip_through_the_reference(data: Any) -> None:
    schema = data.draw(strategies.schemas(), label="schema")
    value = data.draw(strategies.values(schema), label="value")
    serializer = data.draw(strategies.serializers(schema), label="serializer")
    assert serializer == serializer_for(schema), (
        f"got {serializer!r}, should be the reference serializer {serializer_for(schema)!r}"
    )
    back = read_all(serializer, to_bytes(serializer, value))
    assert strategies.values_equal(back, value), f"got {back!r}, should be {value!r} [{schema!r}]"


def _bits(x: float) -> int:
    return struct.unpack(">Q", struct.pack(">d", x))[0]


_SETTINGS = settings(max_examples=5000, database=None, derandomize=True)


def test_strategies_values_reach_the_edge_cases() -> None:
    doubles = strategies.values(t.DoubleType())
    found = find(doubles, lambda x: math.isnan(x) and _bits(x) != _bits(math.nan), settings=_SETTINGS)
    assert math.isnan(found), f"got {found!r}, should be a NaN with a non-default payload"
    found = find(doubles, lambda x: x == 0 and math.copysign(1, x) < 0, settings=_SETTINGS)
    assert _bits(found) == 1 << 63, f"got {found!r}, should be -0.0"
    floats = strategies.values(t.FloatType())
    found = find(floats, lambda x: math.isnan(x) and _bits(x) & 0xFFFFFFF == 0 and
                 _bits(x) != _bits(math.nan), settings=_SETTINGS)
    assert math.isnan(found), f"got {found!r}, should be a binary32 NaN with a payload"
    text = strategies.values(t.StringType())
    found = find(text, lambda s: s is not None and any(ord(c) > 0xFFFF for c in s), settings=_SETTINGS)
    assert any(ord(c) > 0xFFFF for c in found), f"got {found!r}, should hold a non-BMP character"
    assert find(text, lambda s: s is None, settings=_SETTINGS) is None, "got no None string"
    nested = t.ListType(t.MapType(t.IntType(), t.ListType(t.StringType())))
    found = find(strategies.values(nested), lambda v: any(any(x == [] for x in m.values()) for m in v),
                 settings=_SETTINGS)
    assert found == [{0: []}], f"got {found!r}, should shrink to [{{0: []}}] (empty nested list)"
    maps = strategies.values(t.MapType(t.IntType(), t.IntType()))
    found = find(maps, lambda m: list(m) != sorted(m), settings=_SETTINGS)
    assert list(found) != sorted(found), f"got {found!r}, should have keys out of sorted order"


@settings(max_examples=300)
@given(st.data())
def test_strategies_values_none_only_where_the_type_holds_it(data: Any) -> None:
    schema = data.draw(strategies.schemas(families=("row", "tuple", "map", "list")), label="schema")
    value = data.draw(strategies.values(schema), label="value")
    _check_none(schema, value, "value")


def _check_none(schema: Any, value: Any, where: str) -> None:
    if isinstance(schema, t.TupleType):
        for i, (f, v) in enumerate(zip(schema.fields, value, strict=True)):
            assert v is not None, f"got None at {where}[{i}], should not be (tuple fields are never null)"
            _check_none(f, v, f"{where}[{i}]")
    elif isinstance(schema, t.RowType):
        for f, v in zip(schema.fields, value, strict=True):
            assert f.nullable or v is not None, f"got None at {where}.{f.name}, should not be (NOT NULL)"
            if v is not None:
                _check_none(f.type, v, f"{where}.{f.name}")
    elif isinstance(schema, t.MapType):
        for k, v in value.items():
            assert k is not None, f"got a None key at {where}, should not be (map keys are never null)"
            _check_none(schema.key, k, f"{where} key")
            if v is not None:
                _check_none(schema.value, v, f"{where}[{k!r}]")
    elif isinstance(schema, t.ListType):
        for i, v in enumerate(value):
            if v is not None:
                _check_none(schema.element, v, f"{where}[{i}]")
    elif isinstance(schema, t.BytesType):
        assert value is not None, f"got None at {where}, should be bytes"


def test_strategies_found_lists_of_zero_width_elements_read_back() -> None:
    # Found by the oracle test: a list of Avro fixed(0) values takes no bytes per element, and
    # ListSerializer refused to read more elements than bytes left.
    from reference import DataInputView, SerializationError
    from reference.serializers import AvroSerializer, ListSerializer

    serializer = ListSerializer(AvroSerializer({"type": "fixed", "name": "F", "size": 0}))
    value = [b"", b"", b""]
    data = to_bytes(serializer, value)
    assert data == bytes.fromhex("00000003"), f"got {data.hex()}, should be the size alone"
    assert read_all(serializer, data) == value, "got another list, should read back 3 empty fixed"
    copied = DataOutputView()
    serializer.copy_serialized(DataInputView(data), copied)
    assert copied.getvalue() == data, f"got {copied.getvalue().hex()} copied, should be {data.hex()}"
    try:
        serializer.deserialize(DataInputView(bytes.fromhex("7fffffff")))
    except SerializationError:
        pass
    else:
        raise AssertionError("got a list of 2**31-1 elements read, should be refused as corrupt")


@settings(max_examples=100)
@given(st.data())
def test_an_annotated_field_is_inferred_as_the_schemas_reference_serializer(data: Any) -> None:
    from reference.serializers import PojoSerializer, field_serializer_for_annotation
    from strategies._pojo import PojoField, annotation_for, pojo_type

    schema = data.draw(strategies.schemas(), label="field schema")
    annotation = annotation_for(schema)
    if annotation is not None:
        inferred = field_serializer_for_annotation(annotation)
        assert inferred == serializer_for(schema), \
            f"got {inferred!r} from {annotation!r}, should be {serializer_for(schema)!r} [{schema!r}]"
    pojo = pojo_type((PojoField("f", schema, annotated=True),), qualname="AnnotatedFieldProbe")
    (declared,) = pojo.cls.__dataclass_fields__.values()
    explicit = "serializer" in declared.metadata
    assert explicit is (annotation is None), \
        f"got an explicit serializer {explicit}, should be {annotation is None} (annotation {annotation!r})"
    (field,) = PojoSerializer(pojo.cls).fields
    assert field[1] == serializer_for(schema), f"got {field[1]!r}, should be {serializer_for(schema)!r}"
