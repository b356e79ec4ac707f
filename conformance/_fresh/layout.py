"""The states every backends history writes (shared with the fresh-process child, which must
stay light: no hypothesis import)."""

from __future__ import annotations

from typing import Any

__all__ = ["descriptors", "expected_state"]


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
