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


@settings(max_examples=100)
@given(data=st.data())
def test_a_change_of_kind_is_incompatible_where_it_happens(data: Any) -> None:
    """``kind.change`` (a type becoming one of another kind, at any depth: below a padded
    Nullable, whose padding is judged first, too) and ``enum.rename_class`` are refused by the
    reference with the reason they expect."""
    families = ("row", "pojo", "enum", "list", "map", "tuple", "nullable")
    schema = data.draw(strategies.schemas(families=families), label="schema")
    family = data.draw(st.sampled_from(["kind", "enum"]), label="family")
    ev = data.draw(strategies.evolutions(schema, family=family, verdict="incompatible"), label="evolution")
    assert ev.change in ("kind.change", "enum.remove", "enum.rename_class"), f"got {ev.change}, should be of {family}"
    old_values = data.draw(st.lists(strategies.values(schema), min_size=1, max_size=3), label="values")
    check_evolution(ev, old_values)


def test_a_change_of_kind_below_a_padded_nullable_expects_the_paddings_reason() -> None:
    from hypothesis import find

    from reference import types as t

    schema = t.NullableType(t.LongType(), padded=True)
    ev = find(strategies.evolutions(schema, family="kind"), lambda e: e.path == (("inner",),))
    assert ev.reason_contains is None, (
        f"got reason_contains {ev.reason_contains!r}, should be None: the padding is judged first")
    check_evolution(ev, [None, 5])


def test_reason_where_names_each_place_on_the_way_to_the_change() -> None:
    """SchemaEvolution.reason_where: a row field's name, ``value``, ``null``, ``field 1``, ...
    one word per step of the path, outermost first."""
    from reference import types as t

    inner = t.RowType((t.RowField("x", t.IntType()),))
    schema = t.RowType((t.RowField("a", t.MapType(t.StringType(), t.NullableType(t.TupleType((t.IntType(), inner))))),))
    expected = {
        (("row", 0),): ("a",),
        (("row", 0), ("key",)): ("a", "key"),
        (("row", 0), ("value",)): ("a", "value"),
        (("row", 0), ("value",), ("inner",)): ("a", "value", "null"),
        (("row", 0), ("value",), ("inner",), ("field", 0)): ("a", "value", "null", "field 0"),
        (("row", 0), ("value",), ("inner",), ("field", 1)): ("a", "value", "null", "field 1"),
        (("row", 0), ("value",), ("inner",), ("field", 1), ("row", 0)): ("a", "value", "null", "field 1", "x"),
    }
    seen: set[tuple[Any, ...]] = set()

    @settings(max_examples=300, database=None, deadline=None)
    @given(strategies.evolutions(schema, verdict="incompatible"))
    def check(ev: Any) -> None:
        if ev.path in expected:
            seen.add(ev.path)
            assert ev.reason_where == expected[ev.path], (
                f"got {ev.reason_where}, should be {expected[ev.path]} [{ev.change} at {ev.path}]")
        else:
            assert ev.path == (), f"got a change at {ev.path}, which this test does not know"

    check()
    deepest = max(expected, key=len)
    assert deepest in seen, f"got changes at {sorted(seen)}, should include the deepest place {deepest}"
