"""The states every backends history writes (shared with the fresh-process child, which must
stay light: no hypothesis import)."""

from __future__ import annotations

from typing import Any

__all__ = ["descriptors", "expected_state", "state_trees"]


def descriptors(serializer: Any) -> tuple[Any, Any, Any]:
    from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
    from reference.serializers import StringSerializer

    return (ValueStateDescriptor("value", serializer), ListStateDescriptor("list", serializer),
            MapStateDescriptor("map", StringSerializer(), serializer))


def expected_state(values: list[Any]) -> dict[int, tuple[Any, list[Any], dict[str, Any]]]:
    """Key i holds value i, a list of up to three values from i on, and a map of two."""
    state = {}
    n = len(values)
    for i, v in enumerate(values):
        state[i] = (v, [values[(i + j) % n] for j in range(min(3, n))], {"a": v, "b": values[(i + 1) % n]})
    return state


def state_trees(value: Any, elements: list[Any], entries: dict[str, Any]) -> list[Any]:
    """One key's value, list and map state as ``reference.value_tree`` forms (map entries sorted
    by key): what the writer and a fresh process must agree on, whatever either's hash seed."""
    from reference import value_tree

    return [value_tree(value), [value_tree(e) for e in elements],
            [[k, value_tree(entries[k])] for k in sorted(entries)]]
