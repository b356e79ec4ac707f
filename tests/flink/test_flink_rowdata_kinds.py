"""Time attribute kinds in RowData state, against the real Flink 2.3: Flink's ``LogicalType``
leaves a timestamp's kind (REGULAR, ROWTIME, PROCTIME) out of ``equals``, so a RowData snapshot
whose column is a time attribute reads as is where the new job declares a plain timestamp, and
the other way round, and the rows, nulls in the NOT NULL column included (a ``PROCTIME()``
column's state), come over unchanged.

CrossCheck's ``judge`` mode (with the Table runtime on its class path) restores both
Flink-form snapshots, lets the new one judge the old one and brings a record over; the
reference must give the same verdict and the same bytes."""

from __future__ import annotations

import os
import subprocess

import pytest
from test_flink_verdicts import _reference_route  # beside this file: the reference's route, as Flink's judge

from reference import snapshot_to_bytes
from reference import sqltypes as sql
from reference.serializers import RowDataSerializer, TimestampData

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

LTZ_PROC = sql.LocalZonedTimestampType(3, nullable=False, kind="PROCTIME")
LTZ = sql.LocalZonedTimestampType(3, nullable=False)
LTZ_ROW = sql.LocalZonedTimestampType(3, nullable=False, kind="ROWTIME")
TS_ROW = sql.TimestampType(3, nullable=False, kind="ROWTIME")
TS = sql.TimestampType(3, nullable=False)
TS_ROW_9 = sql.TimestampType(9, kind="ROWTIME")
TS_9 = sql.TimestampType(9)


def _row(column: sql.LogicalType) -> sql.LogicalType:
    return sql.RowType([("id", sql.BigIntType()), ("t", column),
                        ("device", sql.RowType([("at", column), ("name", sql.VarCharType(20))]))])


CHANGES = [(LTZ_PROC, LTZ), (LTZ, LTZ_PROC), (LTZ_ROW, LTZ_PROC), (TS_ROW, TS), (TS, TS_ROW), (TS_ROW_9, TS_9)]
VALUES = [(1, None, (None, "a")), (2, TimestampData(1_700_000_000_123, 0), (TimestampData(-5, 0), None)),
          (None, None, None)]


def _cases() -> list[tuple[sql.LogicalType, sql.LogicalType, tuple]]:
    cases = []
    for old, new in CHANGES:
        for value in VALUES:
            if value[1] is not None and old.precision == 9:
                value = (value[0], TimestampData(value[1].millisecond, 999_999), value[2])
            cases.append((_row(old), _row(new), value))
    return cases


def test_a_changed_time_attribute_kind_reads_as_is_and_its_rows_come_over_as_flink_brings_them(crosscheck,
                                                                                               rowdata_java):
    java, classpath = crosscheck[0], crosscheck[crosscheck.index("-cp") + 1]
    table_classpath = rowdata_java[rowdata_java.index("-cp") + 1]
    command = [java, "-cp", os.pathsep.join([classpath, table_classpath]), "CrossCheck", "judge"]
    lines, expected = [], []
    for i, (old_type, new_type, value) in enumerate(_cases()):
        old, new = RowDataSerializer(old_type), RowDataSerializer(new_type)
        old_bytes = snapshot_to_bytes(old.snapshot_configuration(), dialect="flink")
        new_bytes = snapshot_to_bytes(new.snapshot_configuration(), dialect="flink")
        record = old.to_bytes(value)
        lines.append(f"{i} {old_bytes.hex()} {new_bytes.hex()} {record.hex()}\n")
        expected.append((old_type, new_type, value, record, _reference_route(old_bytes, new_bytes, record)))
    ran = subprocess.run(command, input="".join(lines), capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, f"CrossCheck judge failed: {ran.stderr[-2000:]}"
    answers = ran.stdout.splitlines()
    assert len(answers) == len(expected), f"got {len(answers)} answers, should be {len(expected)}: {ran.stdout[-2000:]}"
    for answer, (old_type, new_type, value, record, (verdict, ours)) in zip(answers, expected, strict=True):
        _, flink_verdict, flink_hex = answer.split(" ", 2)
        where = f"[{old_type.as_summary_string()} -> {new_type.as_summary_string()}, {value!r}]"
        assert not flink_hex.startswith("ERROR"), f"Flink could not bring the record over: {flink_hex} {where}"
        assert flink_verdict == "compatible_as_is", f"Flink said {flink_verdict}, the test's premise is as is {where}"
        assert verdict == flink_verdict, f"got {verdict}, should be Flink's {flink_verdict} {where}"
        assert ours is not None and ours.hex() == flink_hex, f"got {ours and ours.hex()}, should be Flink's {flink_hex} {where}"
        assert ours == record, f"got {ours.hex()}, should be the old record {record.hex()} unchanged {where}"
