"""Time attributes in RowData state: a SQL job's state row can hold its ``PROCTIME()`` column,
a ``TIMESTAMP_LTZ(3) NOT NULL`` of kind PROCTIME that holds null (the planner materializes
processing time only where a query reads it). tests/flink/test_flink_sql_job.py reads and
migrates such state of a real Flink job; these are the rules without Flink."""

from __future__ import annotations

import pytest

from reference import (
    DataInputView,
    DataOutputView,
    SerializationError,
    read_versioned_snapshot,
    write_versioned_snapshot,
)
from reference import sqltypes as sql
from reference.serializers import RowDataSerializer, TimestampData

PROCTIME = sql.LocalZonedTimestampType(3, nullable=False, kind="PROCTIME")
STATE = sql.RowType([("f0", sql.BigIntType()), ("f1", PROCTIME)])


def test_the_kind_is_part_of_the_type_and_not_of_its_text():
    regular = sql.LocalZonedTimestampType(3, nullable=False)
    assert PROCTIME != regular, "Flink's LogicalType.equals compares the timestamp kind"
    assert str(PROCTIME) == str(regular) == "TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL"
    assert PROCTIME.copy(True).kind == "PROCTIME", "copy(nullable) keeps the kind"
    assert sql.TimestampType(3, kind="ROWTIME").kind == "ROWTIME"
    with pytest.raises(ValueError, match="kind must be one of REGULAR, ROWTIME"):
        sql.TimestampType(3, kind="PROCTIME")
    with pytest.raises(ValueError, match="kind must be one of REGULAR"):
        sql.LogicalType("BIGINT", kind="ROWTIME")


def test_a_time_attribute_holds_null_even_when_not_null():
    serializer = RowDataSerializer(STATE)
    for value in [(1, None), (2, TimestampData(1_700_000_000_000, 0))]:
        assert serializer.deserialize(DataInputView(serializer.to_bytes(value))) == value
    regular = RowDataSerializer(sql.RowType([("f0", sql.BigIntType()), ("f1", sql.LocalZonedTimestampType(3, False))]))
    with pytest.raises(SerializationError, match="NOT NULL"):
        regular.to_bytes((1, None))


def test_the_kind_survives_the_snapshot():
    out = DataOutputView()
    write_versioned_snapshot(out, RowDataSerializer(STATE).snapshot_configuration(), dialect="flink")
    read = read_versioned_snapshot(DataInputView(out.getvalue()))
    assert read.row_type.field_types == STATE.field_types, f"read back {read.row_type.field_types}"
    assert read.resolve_schema_compatibility(RowDataSerializer(STATE).snapshot_configuration()).is_compatible_as_is()
    regular = sql.RowType([("f0", sql.BigIntType()), ("f1", sql.LocalZonedTimestampType(3, False))])
    assert read.resolve_schema_compatibility(RowDataSerializer(regular).snapshot_configuration()).is_incompatible(), (
        "Flink judges a RowData snapshot by equal field types, the kind included")


def test_a_changed_field_type_is_said_with_what_tells_the_types_apart_and_what_to_keep():
    """By name (this project's snapshots): a PROCTIME column declared a plain timestamp prints
    alike, so the refusal names the kind; a scalar type change is no collection's."""
    def refusal(old_row, new_row):
        old = RowDataSerializer(old_row).snapshot_configuration()
        result = RowDataSerializer(new_row).snapshot_configuration().resolve_schema_compatibility(old)
        assert result.is_incompatible(), f"got {result}, should be incompatible"
        return str(result)

    regular = sql.RowType([("f0", sql.BigIntType()), ("f1", sql.LocalZonedTimestampType(3, False))])
    text = refusal(STATE, regular)
    assert "(kind PROCTIME) to TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL (kind REGULAR)" in text, text
    assert 'kind="PROCTIME"' in text, f"got {text}, should say how to keep the kind"
    widened = sql.RowType([("f0", sql.IntType()), ("f1", PROCTIME)])
    text = refusal(STATE, widened)
    assert "from BIGINT to INT" in text and "array" not in text and "keep the old type" in text, text
