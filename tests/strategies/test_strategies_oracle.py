"""The oracle agrees with the reference: for every generated evolution, the reference's
verdict is the labelled one and migrating through the reference gives ``migrate(value)``."""

from __future__ import annotations

from typing import Any

import pytest
from _strategies_oracle_check import check_evolution
from hypothesis import given, settings
from hypothesis import strategies as st

import strategies


@settings(max_examples=300)
@given(st.data())
def test_strategies_oracle_agrees_with_reference(data: Any) -> None:
    schema = data.draw(strategies.schemas(), label="schema")
    ev = data.draw(strategies.evolutions(schema), label="evolution")
    old_values = data.draw(st.lists(strategies.values(schema), min_size=1, max_size=3), label="values")
    check_evolution(ev, old_values)


@pytest.mark.parametrize("verdict", ["compatible", "incompatible", "compatible_after_migration",
                                     "compatible_with_reconfigured_serializer"])
@settings(max_examples=60)
@given(data=st.data())
def test_strategies_oracle_agrees_for_each_verdict(verdict: str, data: Any) -> None:
    families = ("row", "pojo", "enum", "list", "map", "tuple", "nullable")
    schema = data.draw(strategies.schemas(families=families), label="schema")
    if verdict == "compatible_with_reconfigured_serializer":
        schema = data.draw(strategies.schemas(families=("enum",)), label="enum schema")
    ev = data.draw(strategies.evolutions(schema, verdict=verdict), label="evolution")
    if verdict == "compatible":
        assert ev.expect != "incompatible", f"got {ev.expect}, should be compatible"
    elif verdict == "incompatible":
        assert ev.expect == "incompatible", f"got {ev.expect}, should be incompatible"
    else:
        assert ev.expect == verdict, f"got {ev.expect}, should be {verdict}"
    old_values = data.draw(st.lists(strategies.values(schema), min_size=1, max_size=3), label="values")
    check_evolution(ev, old_values)


@pytest.mark.slow
@settings(max_examples=3000)
@given(st.data())
def test_strategies_oracle_agrees_with_reference_at_length(data: Any) -> None:
    schema = data.draw(strategies.schemas(max_depth=4, max_leaves=12), label="schema")
    ev = data.draw(strategies.evolutions(schema), label="evolution")
    old_values = data.draw(st.lists(strategies.values(schema), min_size=1, max_size=5), label="values")
    check_evolution(ev, old_values)
