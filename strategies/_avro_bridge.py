"""Where Avro schemas, values and evolutions come from (filled in once the Avro serializer lands)."""

from __future__ import annotations

from typing import Any


def available() -> bool:
    return False


def avro_schemas(depth: int) -> Any:
    raise NotImplementedError("Avro schemas are not available yet")


def change_labels(schema: Any) -> list[str]:
    return []


def change_kind(label: str) -> str:
    raise KeyError(label)


def apply_change(draw: Any, schema: Any, label: str) -> Any:
    raise NotImplementedError(label)


def avro_values(schema: Any) -> Any:
    raise NotImplementedError("Avro values are not available yet")
