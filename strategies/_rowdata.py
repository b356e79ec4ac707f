"""Strategies for Flink's Table types (``reference.sqltypes``) and their RowData values.

``sql_row_types()`` draws nested ROW types of every root ``RowDataSerializer`` supports (nested
rows, arrays, maps and multisets of them, NOT NULL anywhere); ``rowdata_values(row_type)`` draws
values of one in the Python form ``reference.serializers._binary`` specifies (NaN only as the
canonical NaN Flink's writers keep, no negative-zero decimals, since Flink's decimals have none).
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from reference import sqltypes as sql
from reference.serializers import Row, RowKind, TimestampData

__all__ = ["sql_row_types", "sql_types", "rowdata_values"]

_NAMES = ("id", "userId", "timestamp", "deviceType", "a", "b", "c", "f0", "f1", "user id", "x_y", "v`2")
_MAX_LENGTH = 2147483647
_HASHABLE_FREE = ("ARRAY", "MAP", "MULTISET")


def _leaf(hashable: bool) -> st.SearchStrategy[sql.LogicalType]:
    nullable = st.booleans()
    precision = st.integers(0, 9)
    length = st.one_of(st.just(_MAX_LENGTH), st.integers(1, 20))
    options = [
        st.builds(sql.BooleanType, nullable=nullable),
        st.builds(sql.TinyIntType, nullable=nullable),
        st.builds(sql.SmallIntType, nullable=nullable),
        st.builds(sql.IntType, nullable=nullable),
        st.builds(sql.BigIntType, nullable=nullable),
        st.builds(sql.FloatType, nullable=nullable),
        st.builds(sql.DoubleType, nullable=nullable),
        st.builds(sql.CharType, st.integers(1, 20), nullable=nullable),
        st.builds(sql.VarCharType, length, nullable=nullable),
        st.builds(sql.BinaryType, st.integers(1, 20), nullable=nullable),
        st.builds(sql.VarBinaryType, length, nullable=nullable),
        st.integers(1, 38).flatmap(lambda p: st.builds(sql.DecimalType, st.just(p), st.integers(0, p),
                                                        nullable=nullable)),
        st.builds(sql.DateType, nullable=nullable),
        st.builds(sql.TimeType, st.integers(0, 3), nullable=nullable),
        st.builds(sql.TimestampType, precision, nullable=nullable),
        st.builds(sql.LocalZonedTimestampType, precision, nullable=nullable),
    ]
    return st.one_of(options)


def _fields(inner: st.SearchStrategy[sql.LogicalType], low: int, high: int) -> st.SearchStrategy[Any]:
    return st.lists(st.sampled_from(_NAMES), min_size=low, max_size=high, unique=True).flatmap(
        lambda names: st.tuples(*(st.tuples(st.just(n), inner) for n in names)))


def sql_types(max_depth: int = 3, hashable: bool = False) -> st.SearchStrategy[sql.LogicalType]:
    """Any supported logical type nesting at most ``max_depth`` levels (``hashable``: only types
    whose Python values are hashable, for map keys and multiset elements)."""
    leaf = _leaf(hashable)
    if max_depth <= 1:
        return leaf
    inner = sql_types(max_depth - 1, hashable)
    keys = sql_types(max_depth - 1, True)
    nullable = st.booleans()
    composite = [st.builds(sql.RowType, _fields(inner, 0, 4), nullable=nullable)]
    if not hashable:
        composite += [
            st.builds(sql.ArrayType, inner, nullable=nullable),
            st.builds(sql.MapType, keys, inner, nullable=nullable),
            st.builds(sql.MultisetType, keys, nullable=nullable),
        ]
    return st.one_of(leaf, *composite)


def sql_row_types(max_depth: int = 3, min_fields: int = 1, max_fields: int = 6) -> st.SearchStrategy[sql.LogicalType]:
    """ROW types (the top level of a ``RowDataSerializer``) of nested supported types."""
    return st.builds(sql.RowType, _fields(sql_types(max_depth - 1), min_fields, max_fields))


def _canonical_nan(value: float) -> float:
    return math.nan if math.isnan(value) else value


def _decimal(precision: int, scale: int) -> st.SearchStrategy[Decimal]:
    top = 10 ** precision - 1

    def make(unscaled: int) -> Decimal:
        return Decimal((1 if unscaled < 0 else 0, tuple(map(int, str(abs(unscaled)))), -scale))

    return st.one_of(st.integers(-top, top), st.sampled_from([0, top, -top])).map(make)


def _timestamp(precision: int) -> st.SearchStrategy[TimestampData]:
    millis = st.one_of(st.integers(-(2 ** 63), 2 ** 63 - 1), st.integers(-10 ** 13, 10 ** 13))
    nanos = st.just(0) if precision <= 3 else st.integers(0, 999_999)
    return st.builds(TimestampData, millis, nanos)


_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64, "DATE": 32, "TIME_WITHOUT_TIME_ZONE": 32}


def rowdata_values(t: sql.LogicalType, allow_none: bool = True) -> st.SearchStrategy[Any]:
    """Values of logical type ``t`` (``None`` sometimes where ``t`` is nullable)."""
    strategy = _not_null(t)
    if t.nullable and allow_none:
        return st.one_of(st.none(), strategy) if t.root != "ROW" else st.one_of(strategy, st.none())
    return strategy


def _not_null(t: sql.LogicalType) -> st.SearchStrategy[Any]:
    root = t.root
    if root in _INT_BITS:
        bits = _INT_BITS[root]
        return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    if root == "BOOLEAN":
        return st.booleans()
    if root == "FLOAT":
        return st.floats(width=32).map(_canonical_nan)
    if root == "DOUBLE":
        return st.floats().map(_canonical_nan)
    if root in ("CHAR", "VARCHAR"):
        chars = st.characters(exclude_categories=["Cs"])
        return st.one_of(st.text(chars, max_size=12), st.text(chars, min_size=8, max_size=40))
    if root in ("BINARY", "VARBINARY"):
        return st.binary(max_size=24)
    if root == "DECIMAL":
        assert t.precision is not None and t.scale is not None
        return _decimal(t.precision, t.scale)
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        assert t.precision is not None
        return _timestamp(t.precision)
    if root == "ARRAY":
        return st.lists(rowdata_values(t.children[0]), max_size=5)
    if root == "MAP":
        return st.dictionaries(rowdata_values(t.children[0]), rowdata_values(t.children[1]), max_size=4)
    if root == "MULTISET":
        return st.dictionaries(rowdata_values(t.children[0]), st.integers(-(1 << 31), (1 << 31) - 1), max_size=4)
    fields = st.tuples(*(rowdata_values(f[1]) for f in t.fields))
    kinds = st.sampled_from(list(RowKind))
    return st.one_of(fields, st.tuples(fields, kinds).map(lambda p: p[0] if p[1] is RowKind.INSERT else Row(p[0], p[1])))
