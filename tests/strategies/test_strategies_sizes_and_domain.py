"""Wider draws: text on every varint length boundary and over all of Unicode, zero-width tuples,
out-of-domain values that serializers must refuse, and the schema zeros; shrinking still goes to
the simplest example."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

import strategies
from reference import DataOutputView, SerializationError
from reference import types as t
from reference.types import serializer_for
from strategies._values import BOUNDARY_UNITS, HUGE_UNITS, _text_of_units, _units

_FIND = settings(max_examples=3000, database=None, suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("seed", ["", "ab", "\U0001f600", "x\ud800", "é\U0001f600y"])
@pytest.mark.parametrize("units", BOUNDARY_UNITS + HUGE_UNITS)
def test_text_of_units_has_exactly_that_many_utf16_units(seed: str, units: int) -> None:
    text = _text_of_units(seed, units)
    got = len(text.encode("utf-16-le", "surrogatepass")) // 2
    assert got == units == _units(text), f"got {got} units, should be {units} (seed {seed!r})"


@pytest.mark.parametrize("units", [127, 128, 16384])
def test_string_values_reach_each_varint_boundary(units: int) -> None:
    found = find(strategies.values(t.StringType()), lambda v: v is not None and _units(v) == units, settings=_FIND)
    assert _units(found) == units, f"got {_units(found)} units, should find a string of {units}"


def test_string_values_hold_lone_surrogates_and_supplementary_characters() -> None:
    lone = find(strategies.values(t.StringType()), lambda v: bool(v) and any(0xD800 <= ord(c) <= 0xDFFF for c in v),
                settings=_FIND)
    assert len(lone) == 1, f"got {lone!r}, should shrink to one lone surrogate half"
    wide = find(strategies.values(t.StringType()), lambda v: bool(v) and any(ord(c) > 0xFFFF for c in v), settings=_FIND)
    assert len(wide) == 1 and ord(wide) > 0xFFFF, f"got {wide!r}, should shrink to one supplementary character"


@given(strategies.values(t.StringType()))
@settings(max_examples=200, deadline=None)
def test_drawn_strings_survive_a_utf16_round_trip(value: Any) -> None:
    s = serializer_for(t.StringType())
    assert s.from_bytes(s.to_bytes(value)) == value, f"got a different string back for {value!r:.80}"


def test_large_values_put_every_string_on_a_boundary_and_keep_the_rest() -> None:
    schema = t.RowType((t.RowField("id", t.LongType(), nullable=False), t.RowField("s", t.StringType(), nullable=False),
                        t.RowField("b", t.ListType(t.BytesType()), nullable=False)))
    value = find(strategies.large_values(schema), lambda v: len(v[2]) >= 1, settings=_FIND)
    assert _units(value[1]) in BOUNDARY_UNITS + HUGE_UNITS, f"got a string of {_units(value[1])} units, should be on a boundary"
    assert all(len(b) in BOUNDARY_UNITS + HUGE_UNITS for b in value[2]), f"got bytes of {[len(b) for b in value[2]]}"
    assert value[0] == 0, f"got id {value[0]}, should shrink to 0 (only text and bytes are inflated)"


def test_schemas_draw_zero_width_tuples() -> None:
    empty = find(strategies.schemas(), lambda s: isinstance(s, t.TupleType) and not s.fields, settings=_FIND)
    assert empty == t.TupleType(()), f"got {empty!r}, should find the empty tuple"
    assert serializer_for(empty).to_bytes(()) == b"", "got bytes for an empty tuple, should be zero-width"


def test_a_map_of_zero_width_keys_and_null_values_reads_back() -> None:
    # One byte per entry (the null flag): a bound of two bytes per entry refused it.
    s = serializer_for(t.MapType(t.TupleType(()), t.IntType()))
    got = s.from_bytes(s.to_bytes({(): None}))
    assert got == {(): None}, f"got {got!r}, should be {{(): None}}"


_DOMAIN_SCHEMAS = [
    t.IntType(), t.ByteType(), t.BooleanType(), t.FloatType(), t.StringType(), t.BytesType(),
    t.NullableType(t.LongType(), padded=True), t.ListType(t.StringType()),
    t.MapType(t.StringType(), t.NullableType(t.DoubleType())), t.TupleType((t.IntType(), t.StringType())),
    t.RowType((t.RowField("id", t.LongType(), nullable=False), t.RowField("名字", t.ListType(t.IntType())))),
    t.PickleType(),
]


@pytest.mark.parametrize("schema", _DOMAIN_SCHEMAS, ids=repr)
def test_out_of_domain_values_are_refused_naming_the_field_leaving_nothing(schema: Any) -> None:
    serializer = serializer_for(schema)

    @given(strategies.out_of_domain(schema))
    @settings(max_examples=60, deadline=None, database=None)
    def refused(case: Any) -> None:
        target = DataOutputView()
        target.write(b"\x01")
        with pytest.raises(SerializationError) as caught:
            serializer.serialize(case.value, target)
        assert case.field is None or case.field in str(caught.value), (
            f"got {str(caught.value)!r}, should name {case.field!r} [{case.what}]")
        assert target.getvalue() == b"\x01", f"got {target.getvalue()!r} left, should be b'\\x01' [{case.what}]"

    refused()


def test_out_of_domain_gives_a_pojo_an_instance_of_another_dataclass() -> None:
    schema = find(strategies.schemas(), lambda s: isinstance(s, t.PojoType), settings=_FIND)
    case = find(strategies.out_of_domain(schema), lambda c: "another dataclass" in c.what, settings=_FIND)
    assert dataclasses.is_dataclass(case.value) and not isinstance(case.value, schema.cls), (
        f"got {case!r}, should be an instance of a dataclass that is not {schema.cls.__qualname__}")
    with pytest.raises(SerializationError):
        serializer_for(schema).serialize(case.value, DataOutputView())


def test_out_of_domain_shrinks_to_a_wrong_type_at_the_top() -> None:
    schema = t.RowType((t.RowField("a", t.IntType(), nullable=False), t.RowField("b", t.StringType())))
    case = find(strategies.out_of_domain(schema), lambda c: True, settings=_FIND)
    assert case.field == "b" and case.value == (0,), f"got {case!r}, should be the row missing its last field"
    int_case = find(strategies.out_of_domain(t.IntType()), lambda c: True, settings=_FIND)
    assert int_case.value == "1", f"got {int_case!r}, should be the str '1'"


@pytest.mark.parametrize("schema, zero", [
    (t.IntType(), 0), (t.BooleanType(), False), (t.DoubleType(), 0.0), (t.StringType(), ""),
    (t.BytesType(), b""), (t.NullableType(t.ShortType()), 0), (t.ListType(t.IntType()), []),
    (t.TupleType((t.LongType(), t.StringType())), (0, "")),
    (t.RowType((t.RowField("a", t.IntType(), nullable=False), t.RowField("b", t.IntType()))), (0, None)),
    (t.PickleType(), None),
], ids=repr)
def test_zero_value_is_javas_default(schema: Any, zero: Any) -> None:
    got = strategies.zero_value(schema)
    assert strategies.values_equal(got, zero), f"got {got!r}, should be {zero!r}"
    assert strategies.values_equal(serializer_for(schema).create_instance(), zero), (
        f"got create_instance() {serializer_for(schema).create_instance()!r}, should be {zero!r}")


@pytest.mark.parametrize("schema, immutable", [
    (t.IntType(), True), (t.StringType(), True), (t.BytesType(), True), (t.NullableType(t.DoubleType()), True),
    (t.NullableType(t.ListType(t.IntType())), False), (t.ListType(t.IntType()), False),
    (t.MapType(t.StringType(), t.LongType()), False), (t.TupleType((t.LongType(), t.StringType())), True),
    (t.TupleType((t.LongType(), t.ListType(t.StringType()))), False),
    (t.RowType((t.RowField("a", t.IntType(), nullable=False), t.RowField("b", t.StringType()))), True),
    (t.RowType((t.RowField("a", t.IntType()), t.RowField("b", t.MapType(t.IntType(), t.IntType())))), False),
    (t.PickleType(), False),
], ids=repr)
def test_immutable_type_is_true_only_of_immutable_values(schema: Any, immutable: bool) -> None:
    got = strategies.immutable_type(schema)
    assert got is immutable, f"got {got}, should be {immutable} [{schema!r}]"
    got = serializer_for(schema).is_immutable_type
    assert got is immutable, f"got is_immutable_type {got}, should be {immutable} [{schema!r}]"


@given(st.data())
@settings(max_examples=30, deadline=None)
def test_domain_draws_are_not_values(data: Any) -> None:
    schema = data.draw(strategies.schemas(families=("primitive", "nullable", "list", "tuple", "row"), max_depth=2))
    case = data.draw(strategies.out_of_domain(schema))
    with pytest.raises(SerializationError):
        serializer_for(schema).serialize(case.value, DataOutputView())
