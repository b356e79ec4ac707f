"""The spark family's large history: which values it cycles through and how often
(``history_cycle``; no Spark needed)."""

from __future__ import annotations

from conformance._spark.checks import _layout, history_cycle
from reference.serializers import IntSerializer, ListSerializer, StringSerializer


def test_big_values_recur_less_often_and_every_value_is_in_the_cycle():
    small, medium, big = "a", "é" * 500, "x" * 20_000  # 2, ~1 KB and ~20 KB serialized
    values = [small, medium, big]
    cycle = history_cycle(StringSerializer(), values)
    counts = {v[:3]: sum(c is v for c in cycle) for v in values}
    assert counts == {"a": 16, "ééé": 4, "xxx": 1}, f"got {counts}, should be 16, 4 and 1 (by serialized size)"
    assert all(any(c is v for c in cycle) for v in values), "every drawn value should be in the cycle"
    assert cycle[:3] == values, f"got {cycle[:3]!r}..., should start with one round of every value"
    assert cycle[3:6] == [small, medium, small], f"got {cycle[3:6]!r}, rounds should interleave"


def test_values_of_one_weight_are_the_cycle_as_drawn():
    values = [[1, 2], [], [3]]
    cycle = history_cycle(ListSerializer(IntSerializer()), values)
    assert cycle == values and all(c is v for c, v in zip(cycle, values, strict=True)), f"got {cycle}, should be {values}"


def test_layout_takes_values_from_the_cycle_by_key():
    cycle = ["a", "b", "c"]
    value, elements, entries = _layout(4, cycle)
    assert (value, elements, entries) == ("b", ["b", "c", "a"], {"a": "b", "b": "c"}), f"got {value, elements, entries}"
    assert _layout(5, cycle) == ("c", None, None), f"got {_layout(5, cycle)}"
