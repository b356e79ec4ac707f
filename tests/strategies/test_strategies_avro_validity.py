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
