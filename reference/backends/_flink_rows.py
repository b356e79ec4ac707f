"""A flink-core Row or a Table runtime row read from a Flink savepoint, named for FLIP-527's
name-based rules (docs/flink-savepoints.md, "The old job's row type").

Flink's ``RowSerializer`` snapshot keeps the field types but no names, and so does its
``RowDataSerializer`` snapshot at the top level (nested rows keep theirs). ``flink_row_as_named``
is the one rule giving such a row its names: the old job's row type when the caller gives it,
else ``f0..fN`` (the names of Flink's ``Types.ROW``). ``migrate_flink_savepoint``, the backends'
restore of a Flink savepoint and ``conformance savepoint check`` all use it.
"""

from __future__ import annotations

from typing import Any

from .._errors import StateError
from ..serializers import RowDataSerializer, RowDataSerializerSnapshot, RowSerializer, RowSerializerSnapshot

__all__ = ["flink_row_as_named"]


def flink_row_as_named(snapshot: Any, old_row: Any = None, where: str = "the state") -> Any:
    """The snapshot FLIP-527's name-based rules judge for a flink-core Row stored in Flink's form
    (no field names): the old job's row type ``old_row`` when given (a ``RowSerializer``, a
    ``reference.types.RowType``, or a sequence of field names taking the savepoint's field
    types), which must read the stored row as is; else fields ``f0..fN`` (the names of Flink's
    ``Types.ROW``). Any other snapshot is returned as it is; ``old_row`` for one is refused. Raises
    ``StateError`` saying what to give."""
    from ..types import RowType, serializer_for

    if isinstance(snapshot, RowDataSerializerSnapshot) and snapshot.positional:
        return _rowdata_as_named(snapshot, old_row, where)
    is_flink_row = isinstance(snapshot, RowSerializerSnapshot) and snapshot.positional
    if old_row is None:
        if not is_flink_row:
            return snapshot
        restored = snapshot.restore_serializer()
        assert isinstance(restored, RowSerializer)
        return RowSerializer(restored.fields, restored.supports_row_kind).snapshot_configuration()
    if not is_flink_row:
        raise StateError(f"{where} holds no flink-core Row in Flink's form (its value serializer snapshot is "
                         f"{type(snapshot).__name__}); give an old row type for row states only")
    arity = len(snapshot.nested_snapshots)
    if isinstance(old_row, RowType):
        old_row = serializer_for(old_row)
    elif _field_names(old_row, arity, where):
        restored = snapshot.restore_serializer()
        old_row = RowSerializer([(name, serializer, nullable) for name, (_n, serializer, nullable)
                                 in zip(old_row, restored.fields, strict=True)], restored.supports_row_kind)
    if not isinstance(old_row, RowSerializer):
        raise StateError(f"{where}: the old row type is a {type(old_row).__name__}; give a reference RowSerializer, "
                         "a reference.types.RowType or the field names in order")
    return _read_as_is(old_row, snapshot, arity, where)


def _rowdata_as_named(snapshot: RowDataSerializerSnapshot, old_row: Any, where: str) -> Any:
    """``flink_row_as_named`` of a Table runtime row in Flink's form: ``old_row`` a
    ``RowDataSerializer``, a ``reference.sqltypes`` row type or the top-level field names in
    order; else the snapshot's own ``f0..fN`` form (``named()``)."""
    from ..sqltypes import LogicalType
    from ..sqltypes import RowType as SqlRowType

    if old_row is None:
        return snapshot.named()
    if snapshot.row_type is None:
        raise StateError(f"{where}: the Table runtime row's snapshot holds no row type to name")
    fields = snapshot.row_type.fields
    if isinstance(old_row, LogicalType) and old_row.root == "ROW":
        old_row = RowDataSerializer(old_row)
    elif _field_names(old_row, len(fields), where):
        old_row = RowDataSerializer(SqlRowType([(name, field[1]) for name, field in zip(old_row, fields, strict=True)]))
    if not isinstance(old_row, RowDataSerializer):
        raise StateError(f"{where}: the old row type is a {type(old_row).__name__}; for a Table runtime row give a "
                         "RowDataSerializer, a reference.sqltypes row type or the field names in order")
    return _read_as_is(old_row, snapshot, len(fields), where)


def _field_names(old_row: Any, arity: int, where: str) -> bool:
    """Whether ``old_row`` is the old fields' names in order (a list or tuple of str), which
    must name every one of the savepoint's ``arity`` fields."""
    if not isinstance(old_row, (list, tuple)) or not all(isinstance(n, str) for n in old_row):
        return False
    if len(old_row) != arity:
        raise StateError(f"{where}: the old row type names {len(old_row)} fields {list(old_row)}, the savepoint's "
                         f"row has {arity} fields; name each field in its order")
    return True


def _read_as_is(old_row: Any, snapshot: Any, arity: int, where: str) -> Any:
    """The snapshot of ``old_row``, which must read the stored row (``snapshot``) as is."""
    from .._snapshot import resolve_compatibility

    result = resolve_compatibility(old_row, snapshot)
    if not result.is_compatible_as_is():
        raise StateError(
            f"{where}: {old_row!r} does not read the savepoint's row as is ({result.kind}"
            f"{': ' + result.reason if result.reason else ''}); give the old job's row type, {arity} fields "
            "of the savepoint's types in its order")
    return old_row.snapshot_configuration()
