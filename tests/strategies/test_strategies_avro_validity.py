"""Every generated Avro evolution is a valid schema, also where a change meets a field default
(found by the main job: narrowing ["null", "string"] away from "null" kept the default None)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import strategies
from reference import types as t
from reference.serializers import AvroSerializer
from strategies import avro

SCHEMA = t.AvroType(json.dumps({"type": "record", "name": "R", "fields": [
    {"name": "note", "type": ["null", "string"], "default": None},
    {"name": "unit", "type": {"type": "enum", "name": "U", "symbols": ["C", "F"]}},
]}, sort_keys=True, separators=(",", ":")))


def test_strategies_avro_evolutions_of_defaulted_fields_are_valid_schemas() -> None:
    seen: set[str] = set()

    @settings(max_examples=150, database=None, deadline=None)
    @given(st.data())
    def check(data: Any) -> None:
        ev = data.draw(strategies.evolutions(SCHEMA, family="avro"), label="evolution")
        seen.add(ev.change)
        try:
            AvroSerializer(ev.new.schema)
        except Exception as exc:
            raise AssertionError(f"got an invalid schema from {ev.change}: {exc}, should be valid") from None

    check()
    assert "avro.narrow_union" in seen, f"got changes {sorted(seen)}, should include avro.narrow_union"


def _unions(schema: Any) -> list[list[Any]]:
    if isinstance(schema, list):
        return [schema] + [u for branch in schema for u in _unions(branch)]
    if isinstance(schema, dict):
        nested = [f["type"] for f in schema.get("fields", [])] + [schema[k] for k in ("items", "values") if k in schema]
        return [u for child in nested for u in _unions(child)]
    return []


@settings(max_examples=100, database=None, deadline=None)
@given(st.data())
def test_strategies_avro_unions_never_pair_an_array_with_bytes(data: Any) -> None:
    # fastavro writes a bytes value into an earlier array branch (found by CI: b"" in
    # ["null", array<int>, "bytes"] read back as []); such unions have no exact round trip.
    from strategies import _avro

    for i in range(20):  # such unions were rare (about 1 schema in 70): look at many per example
        schema = data.draw(_avro.raw_avro_schemas(depth=2), label=f"schema {i}")
        for union in _unions(schema):
            kinds = {b if isinstance(b, str) else b["type"] for b in union}
            assert not ("array" in kinds and kinds & {"bytes", "fixed"}), f"got union {union}, should not pair them"


LOGICAL = {"type": "record", "name": "L", "fields": [
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 3}},
    {"name": "price", "type": {"type": "fixed", "name": "P", "size": 2, "logicalType": "decimal", "precision": 4, "scale": 1}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "at_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "time", "type": {"type": "int", "logicalType": "time-millis"}},
    {"name": "time_us", "type": {"type": "long", "logicalType": "time-micros"}},
    {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "odd", "type": {"type": "int", "logicalType": "no-such-type"}},
]}


def test_logical_type_values_are_fastavros_and_read_back_exactly_in_both_encodings() -> None:
    """Each logical type's values are of the Python type fastavro reads, in its domain (a
    decimal of the schema's scale, within its precision and its fixed size; a timestamp to the
    unit stored, UTC-aware or naive), and read back identical in Flink's and Avro's encodings."""
    import datetime
    import decimal
    import uuid

    from reference import values_equal

    flink, binary = AvroSerializer(LOGICAL), AvroSerializer(LOGICAL, encoding="binary")
    utc = datetime.timezone.utc

    def form(value: Any) -> list[str]:
        wrong = []
        if not (type(value["amount"]) is decimal.Decimal and value["amount"].as_tuple().exponent == -3
                and len(value["amount"].as_tuple().digits) <= 5):
            wrong.append(f"amount {value['amount']!r} should be a Decimal of exponent -3 and at most 5 digits")
        price = value["price"]
        if not (type(price) is decimal.Decimal and price.as_tuple().exponent == -1 and -32768 <= price.scaleb(1) <= 9999):
            wrong.append(f"price {price!r} should be a Decimal of exponent -1 whose digits fit 2 bytes and precision 4")
        for name, unit, tz in (("at", 1000, utc), ("at_us", 1, utc), ("local", 1000, None)):
            v = value[name]
            if not (type(v) is datetime.datetime and v.tzinfo is tz and v.microsecond % unit == 0):
                wrong.append(f"{name} {v!r} should be a datetime with tzinfo {tz} to {unit} microsecond(s)")
        if type(value["day"]) is not datetime.date:
            wrong.append(f"day {value['day']!r} should be a date")
        if not (type(value["time"]) is datetime.time and value["time"].microsecond % 1000 == 0):
            wrong.append(f"time {value['time']!r} should be a time to the millisecond")
        if type(value["time_us"]) is not datetime.time or type(value["id"]) is not uuid.UUID:
            wrong.append(f"time_us {value['time_us']!r} should be a time, id {value['id']!r} a UUID")
        if type(value["odd"]) is not int:
            wrong.append(f"odd {value['odd']!r} should be an int (Avro ignores a logical type it does not know)")
        return wrong

    @settings(max_examples=200, database=None, deadline=None)
    @given(avro.schema_values(LOGICAL))
    def check(value: Any) -> None:
        wrong = form(value)
        assert not wrong, f"got {value!r}: " + "; ".join(wrong)
        for serializer in (flink, binary):
            back = serializer.from_bytes(serializer.to_bytes(value))
            assert values_equal(back, value), f"got {back!r}, should be {value!r} [{serializer.encoding}]"

    check()


def test_no_change_is_drawn_at_a_logical_type() -> None:
    """A logical type's values are not its underlying type's, so the oracle has no migration of
    them for a promotion or a narrowing: every drawn change leaves each logical field as it was
    (removed at most), and changes only the record."""
    old_types = {f["name"]: f["type"] for f in LOGICAL["fields"]}
    seen: set[str] = set()

    @settings(max_examples=100, database=None, deadline=None)
    @given(st.data())
    def check(data: Any) -> None:
        ev = data.draw(strategies.evolutions(avro.avro_type_of(LOGICAL), family="avro"), label="evolution")
        seen.add(ev.change)
        new = ev.new.schema
        records = [b for b in new if isinstance(b, dict)] if isinstance(new, list) else [new]
        for field in records[0]["fields"]:
            if field["name"] in old_types and old_types[field["name"]] != field["type"]:
                raise AssertionError(f"got {field['name']}: {field['type']} after {ev.change}, should be "
                                     f"{old_types[field['name']]} (no change at a logical type)")

    check()
    assert {"avro.remove_field", "avro.add_field_with_default"} <= seen, f"got changes {sorted(seen)}"
