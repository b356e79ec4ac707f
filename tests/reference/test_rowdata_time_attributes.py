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


def test_the_kind_is_neither_part_of_the_type_s_equality_nor_of_its_text_only_of_its_summary():
    # Flink 2.3's equals and hashCode leave the kind out (tests/flink/test_flink_rowdata_kinds.py
    # asks Flink); its asSummaryString shows it.
    regular = sql.LocalZonedTimestampType(3, nullable=False)
    assert PROCTIME == regular and hash(PROCTIME) == hash(regular), "got the kind compared, should be left out"
    assert str(PROCTIME) == str(regular) == "TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL"
    assert PROCTIME.as_summary_string() == "TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*", PROCTIME.as_summary_string()
    assert PROCTIME.copy(True).kind == "PROCTIME", "copy(nullable) keeps the kind"
    assert sql.TimestampType(3, kind="ROWTIME").kind == "ROWTIME"
    with pytest.raises(ValueError, match="kind must be one of REGULAR, ROWTIME"):
        sql.TimestampType(3, kind="PROCTIME")
    with pytest.raises(ValueError, match="kind must be one of REGULAR"):
        sql.LogicalType("BIGINT", kind="ROWTIME")


def test_a_not_null_timestamp_holds_null_whatever_its_kind_and_no_other_not_null_field_does():
    regular = sql.RowType([("f0", sql.BigIntType()), ("f1", sql.LocalZonedTimestampType(3, False))])
    rowtime = sql.RowType([("f0", sql.BigIntType()), ("f1", sql.TimestampType(3, False, kind="ROWTIME"))])
    for row_type in (STATE, regular, rowtime):
        serializer = RowDataSerializer(row_type)
        for value in [(1, None), (2, TimestampData(1_700_000_000_000, 0))]:
            got = serializer.deserialize(DataInputView(serializer.to_bytes(value)))
            assert got == value, f"got {got}, should read back {value} [{row_type.as_summary_string()}]"
    # The state of a PROCTIME column, read by a job that declares it a plain timestamp.
    written = RowDataSerializer(STATE).to_bytes((1, None))
    assert RowDataSerializer(regular).from_bytes(written) == (1, None)
    with pytest.raises(SerializationError, match="NOT NULL"):
        RowDataSerializer(sql.RowType([("f0", sql.BigIntType(False))])).to_bytes((None,))


def test_the_kind_survives_the_snapshot_and_a_changed_kind_reads_as_is():
    out = DataOutputView()
    write_versioned_snapshot(out, RowDataSerializer(STATE).snapshot_configuration(), dialect="flink")
    read = read_versioned_snapshot(DataInputView(out.getvalue()))
    assert [t.kind for t in read.row_type.field_types] == ["REGULAR", "PROCTIME"], read.row_type.as_summary_string()
    assert read.resolve_schema_compatibility(RowDataSerializer(STATE).snapshot_configuration()).is_compatible_as_is()
    regular = sql.RowType([("f0", sql.BigIntType()), ("f1", sql.LocalZonedTimestampType(3, False))])
    result = RowDataSerializer(regular).snapshot_configuration().resolve_schema_compatibility(read)
    assert result.is_compatible_as_is(), f"got {result}, should be compatible as is (Flink 2.3's verdict)"


def test_a_changed_field_type_is_said_with_what_to_keep():
    """By name (this project's snapshots): a scalar type change is no collection's."""
    old = RowDataSerializer(STATE).snapshot_configuration()
    widened = sql.RowType([("f0", sql.IntType()), ("f1", PROCTIME)])
    result = RowDataSerializer(widened).snapshot_configuration().resolve_schema_compatibility(old)
    assert result.is_incompatible(), f"got {result}, should be incompatible"
    text = str(result)
    assert "from BIGINT to INT" in text and "array" not in text and "keep the old type" in text, text
