"""Hypothesis strategies for state types: random nested schemas (``reference.types``), their
values, their reference serializers, and evolutions that carry the verdict and the migrated
value the rules require (the oracle); ``amplified`` grows the values of any strategy across the
length boundaries of the formats, sets their ints to the varint edges (``varint_edges``) and
their times to their zone's daylight-saving transitions and the epoch's edges.

>>> from hypothesis import given, strategies as st
>>> import strategies
>>> @given(st.data())
... def test_roundtrip(data):
...     schema = data.draw(strategies.schemas())
...     value = data.draw(strategies.values(schema))
...     evolution = data.draw(strategies.evolutions(schema))
"""

from typing import Any

from hypothesis import strategies as _st

from reference import canonical, values_equal
from reference.types import serializer_for as _serializer_for

from ._amplify import ANY_REFUSAL_KINDS, GROWTH_KINDS, Amplified, amplified, richest_values
from ._domain import OutOfDomain, out_of_domain
from ._evolutions import (
    CHANGES,
    EVOLUTION_FAMILIES,
    KINDS,
    SchemaEvolution,
    chain_migration,
    evolution_chains,
    evolutions,
)
from ._pojo import PojoField, activate, check_schema, enum_type, pojo_type, schema_nodes
from ._rowdata import rowdata_values, sql_row_types, sql_types
from ._schemas import FAMILIES, schemas
from ._values import immutable_type, large_values, values, varint_edges, zero_value


def serializers(schema: Any) -> _st.SearchStrategy[Any]:
    """The reference serializer of ``schema`` (a fresh instance per example)."""
    return _st.builds(_serializer_for, _st.just(schema))


__all__ = [
    "ANY_REFUSAL_KINDS",
    "Amplified",
    "CHANGES",
    "EVOLUTION_FAMILIES",
    "FAMILIES",
    "GROWTH_KINDS",
    "KINDS",
    "OutOfDomain",
    "PojoField",
    "SchemaEvolution",
    "activate",
    "amplified",
    "richest_values",
    "canonical",
    "chain_migration",
    "check_schema",
    "evolution_chains",
    "enum_type",
    "evolutions",
    "large_values",
    "out_of_domain",
    "pojo_type",
    "rowdata_values",
    "schema_nodes",
    "schemas",
    "serializers",
    "sql_row_types",
    "sql_types",
    "values",
    "values_equal",
    "varint_edges",
    "zero_value",
    "immutable_type",
]
