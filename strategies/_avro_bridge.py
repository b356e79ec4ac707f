"""Where the generic strategies meet the Avro ones (``strategies._avro``, written with the Avro
serializer): schemas, values and labelled changes of ``reference.types.AvroType``."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

__all__ = ["available", "avro_schemas", "avro_values", "change_labels", "change_kind",
           "apply_change", "change_table"]


@functools.cache
def available() -> bool:
    try:
        from . import _avro

        return bool(_avro.available())
    except ImportError:
        return False


@st.composite
def _avro_schema_strategy(draw: Any, depth: int) -> Any:
    from . import _avro

    # A fresh name counter per schema: the same draws give the same names, whatever was drawn
    # before (``_avro.avro_schemas`` shares one counter across all its draws).
    return _avro._avro_type(draw(_avro._schema(depth, [0], top=True)))


@functools.cache
def avro_schemas(depth: int) -> Any:
    return _avro_schema_strategy(min(depth, 2))


@functools.lru_cache(maxsize=4096)
def avro_values(schema: Any, allow_none: bool = True) -> st.SearchStrategy[Any]:
    """Values of an Avro type; without ``allow_none`` a top-level union loses its null branch
    (for places such as tuple fields and NOT NULL row fields that cannot hold None)."""
    from . import _avro

    parsed = schema.schema
    if not allow_none and isinstance(parsed, list) and "null" in parsed:
        branches = [b for b in parsed if b != "null"]
        return _avro.schema_values(branches if len(branches) > 1 else branches[0])
    return _avro.avro_values(schema)


def change_labels(schema: Any) -> list[str]:
    from . import _avro

    return list(_avro.change_labels(schema))


def change_kind(label: str) -> str:
    from . import _avro

    return str(_avro.change_kind(label))


def change_table() -> dict[str, str]:
    """Every Avro change label with its verdict kind (empty without Avro)."""
    if not available():
        return {}
    from . import _avro

    labels = [*_avro.COMPATIBLE_CHANGES, *_avro.INCOMPATIBLE_CHANGES]
    return {label: change_kind(label) for label in labels}


def apply_change(draw: Any, schema: Any, label: str) -> Any:
    from . import _avro

    return _avro.apply_change(draw, schema, label)
