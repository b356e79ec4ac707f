"""RowData against Flink 2.3's Table runtime: ``BinaryRowData`` records of drawn nested row
types, written by Flink's ``RowDataSerializer`` (RowDataCheck.java, one JVM run for every case),
read by the reference value for value and written again byte for byte.

Each case is a ROW type drawn by ``strategies.sql_row_types`` and a value drawn by
``strategies.rowdata_values``; Java parses the type's SQL text with Flink's
``LogicalTypeParser``, builds the value as ``GenericRowData`` and serializes it twice: with a
fresh serializer (what the reference must write byte for byte) and with one serializer kept per
type across the cases (a reused writer may leave older bytes in unused parts of a slot: those
records must read the same).

Then a DataStream job (RowDataJob.java) keeps drawn rows of FLIP-527's ``Events`` type in keyed
state: its savepoint reads value for value; the nested row gains a nullable field; Flink refuses
the original savepoint for the evolved type, the reference migrates it (with the opt-in), and
Flink restores the result with every old value in place and the new field null.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies
from reference import (
    DataInputView,
    DataOutputView,
    StateMigrationError,
    read_versioned_snapshot,
    values_equal,
    write_versioned_snapshot,
)
from reference import sqltypes as sql
from reference.backends import ValueStateDescriptor, migrate_flink_savepoint
from reference.savepoint import read_flink_savepoint
from reference.serializers import Row, RowDataSerializer, RowDataSerializerSnapshot, TimestampData

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

CASES = 400


def tokens(t, value) -> list[str]:
    """The value as RowDataCheck.java reads it (see its header)."""
    if value is None:
        return ["N"]
    root = t.root
    if root == "BOOLEAN":
        return ["1" if value else "0"]
    if root in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DATE", "TIME_WITHOUT_TIME_ZONE"):
        return [str(value)]
    if root == "FLOAT":
        return [struct.pack(">f", value).hex()]
    if root == "DOUBLE":
        return [struct.pack(">d", value).hex()]
    if root in ("CHAR", "VARCHAR"):
        return ["x" + value.encode("utf-8").hex()]
    if root in ("BINARY", "VARBINARY"):
        return ["x" + value.hex()]
    if root == "DECIMAL":
        sign, digits, _ = value.as_tuple()
        return [("-" if sign else "") + "".join(map(str, digits))]
    if root.startswith("TIMESTAMP"):
        assert isinstance(value, TimestampData)
        return [f"{value.millisecond}:{value.nano_of_millisecond}"]
    if root == "ARRAY":
        return [f"A{len(value)}", *(tok for item in value for tok in tokens(t.children[0], item))]
    if root in ("MAP", "MULTISET"):
        key_type = t.children[0]
        value_type = t.children[1] if root == "MAP" else None
        out = [f"M{len(value)}"]
        for key, item in value.items():
            out += tokens(key_type, key)
            out += [str(item)] if value_type is None else tokens(value_type, item)
        return out
    kind = int(value.kind) if type(value) is Row else 0
    return [f"R{kind}", *(tok for (_, ftype, _), item in zip(t.fields, value, strict=True)
                          for tok in tokens(ftype, item))]


def draw_cases(count: int) -> list[tuple]:
    cases = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        row_type = data.draw(strategies.sql_row_types(max_depth=4), label="row type")
        cases.append((row_type, data.draw(strategies.rowdata_values(row_type, allow_none=False), label="row")))

    draw()
    return cases


def _wide_row() -> sql.LogicalType:
    """130 fields: the getters of positions past 127 box ints Java's Integer cache does not hold
    (a new object each time, no back reference)."""
    kinds = [sql.IntType(), sql.DecimalType(20, 3), sql.TimestampType(9), sql.VarCharType(5),
             sql.ArrayType(sql.IntType(False)), sql.LocalZonedTimestampType(3, False)]
    return sql.RowType([(f"c{i}", kinds[i % len(kinds)]) for i in range(130)])


#: Collections of rows, arrays and maps, nested in each other, whatever the draw gives.
FIXED_TYPES = [
    sql.RowType([("wide", sql.ArrayType(_wide_row()))]),
    sql.RowType([("m", sql.MapType(
        sql.RowType([("a", sql.DecimalType(38, 10)), ("b", sql.LocalZonedTimestampType(3))]),
        sql.ArrayType(sql.MapType(sql.VarCharType(), sql.MultisetType(sql.RowType([("x", sql.IntType(False))]))))))]),
    sql.RowType([("bag", sql.MultisetType(sql.ArrayType(sql.RowType([])))), ("id", sql.IntType(False))]),
    sql.RowType([("cube", sql.ArrayType(sql.ArrayType(sql.ArrayType(sql.BigIntType(False), False), False))),
                 ("same", sql.ArrayType(sql.ArrayType(sql.ArrayType(sql.BigIntType(False), False), False)))]),
    sql.RowType([("r", sql.RowType([("inner", sql.MapType(sql.DateType(), sql.RowType([
        ("t", sql.TimeType(3)), ("d", sql.DecimalType(5, 5, False)), ("b", sql.BinaryType(3)),
        ("v", sql.VarBinaryType(9)), ("f", sql.FloatType()), ("g", sql.DoubleType(False)),
        ("s", sql.SmallIntType()), ("y", sql.TinyIntType()), ("z", sql.BooleanType()), ("c", sql.CharType(2)),
        ("m", sql.MultisetType(sql.MapType(sql.IntType(), sql.ArrayType(sql.VarCharType()))))])))]))]),
]


def fixed_cases() -> list[tuple]:
    """``FIXED_TYPES`` with a drawn value each."""
    cases: list[tuple] = []

    @settings(max_examples=1, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        cases[:] = [(t, data.draw(strategies.rowdata_values(t, allow_none=False), label=str(t)))
                    for t in FIXED_TYPES]

    draw()
    return cases


@pytest.fixture(scope="module")
def flink_rows(rowdata_check, tmp_path_factory):
    cases = draw_cases(CASES) + fixed_cases()
    lines = [f"{row_type}\t{' '.join(tokens(row_type, value))}" for row_type, value in cases]
    return cases, rowdata_check(lines, tmp_path_factory.mktemp("rowdata"))


def test_drawn_rows_read_and_write_as_flink(flink_rows):
    cases, output = flink_rows
    assert len(cases) >= CASES // 2, f"only {len(cases)} cases drawn"
    for (row_type, value), line in zip(cases, output, strict=True):
        assert not line.startswith("ERROR"), f"Flink refused {row_type} / {value!r}: {line}"
        fresh, reused, _snapshot, flink_type, _shared, summary = line.split("\t")
        assert flink_type == str(row_type), f"type text: Flink's {flink_type!r}, the reference's {str(row_type)!r}"
        assert summary == row_type.as_summary_string(), (
            f"summary: got {row_type.as_summary_string()!r}, should be Flink's {summary!r}")
        serializer = RowDataSerializer(row_type)
        flink_bytes = bytes.fromhex(fresh)
        assert serializer.to_bytes(value) == flink_bytes, (
            f"{row_type}: the reference wrote {serializer.to_bytes(value).hex()} for {value!r}, "
            f"Flink {fresh}")
        for written in (flink_bytes, bytes.fromhex(reused)):
            source = DataInputView(written)
            read = serializer.deserialize(source)
            assert source.available() == 0, f"{row_type}: {source.available()} bytes left after the record"
            assert values_equal(read, value), f"{row_type}: read {read!r} from Flink's bytes, should be {value!r}"


def _nested_elements(t) -> bool:
    """Whether ``t`` holds an array, map or multiset of rows, arrays or maps (whose Flink snapshot
    holds the element serializer as a Java object graph: arrays, serialized lambdas, shared
    types)."""
    if t.root in ("ARRAY", "MAP", "MULTISET") and any(c.root in ("ROW", "ARRAY", "MAP", "MULTISET")
                                                      for c in t.children):
        return True
    return any(_nested_elements(c) for c in t.children) or any(_nested_elements(f[1]) for f in t.fields)


def versioned(snapshot) -> bytes:
    """The snapshot as Flink's TypeSerializerSnapshot.writeVersionedSnapshot writes it."""
    out = DataOutputView()
    write_versioned_snapshot(out, snapshot, dialect="flink")
    return out.getvalue()


def read_back(data: bytes):
    source = DataInputView(data)
    snapshot = read_versioned_snapshot(source)
    assert source.available() == 0, f"{source.available()} bytes left after the snapshot"
    return snapshot


def test_drawn_snapshots_read_and_write_as_flink(flink_rows):
    cases, output = flink_rows
    compared = nested = shared = 0
    for (row_type, _), line in zip(cases, output, strict=True):
        flink_snapshot, shared_snapshot = (bytes.fromhex(line.split("\t")[i]) for i in (2, 4))
        snapshot = RowDataSerializer(row_type).snapshot_configuration()
        # the same type with one Java object for all equal nested types: other back references
        # in the streams, the same snapshot
        shared += shared_snapshot != flink_snapshot
        assert read_back(shared_snapshot).row_type.field_types == row_type.field_types, (
            f"{row_type}: the snapshot of its types sharing objects read as {read_back(shared_snapshot).row_type}")
        compared += 1
        nested += _nested_elements(row_type)
        written = versioned(snapshot)
        assert written == flink_snapshot, f"{row_type}: snapshot {written.hex()}, Flink's {flink_snapshot.hex()}"
        read = read_back(flink_snapshot)
        assert isinstance(read, RowDataSerializerSnapshot)
        assert read.row_type.field_types == row_type.field_types, f"{row_type}: read {read.row_type}"
        assert versioned(read) == flink_snapshot, f"{row_type}: rewritten differently"
        assert read.resolve_schema_compatibility(snapshot).is_compatible_as_is()
    assert compared == len(cases), f"only {compared} of {len(cases)} snapshots compared"
    # the drawn set must reach collections of rows, arrays and maps (about one case in twelve)
    assert shared >= 10, f"only {shared} snapshots changed when their types share objects"
    assert nested >= 15 + len(FIXED_TYPES), f"only {nested} of {len(cases)} drawn types hold a collection of rows, arrays or maps"


# -- a job's RowData state: read, evolved, refused by Flink, migrated, restored by Flink -------
DEVICE = [("userId", sql.IntType()), ("timestamp", sql.BigIntType()), ("deviceType", sql.VarCharType())]
EVENTS_V1 = sql.RowType([
    ("id", sql.BigIntType(False)), ("device", sql.RowType(DEVICE)), ("amount", sql.DecimalType(24, 4)),
    ("at", sql.TimestampType(9)), ("tags", sql.ArrayType(sql.VarCharType())),
    ("counts", sql.MapType(sql.VarCharType(), sql.IntType())), ("bag", sql.MultisetType(sql.VarCharType())),
])
# FLIP-527's example: the nested row gains a nullable field. Flink's snapshot of the state keeps
# no top-level names (the fields read back as f0..fN), the nested row's names it keeps.
EVOLVED_DEVICE = sql.RowType([*DEVICE, ("osVersion", sql.VarCharType())])
EVENTS_V2 = sql.RowType([(f"f{i}", EVOLVED_DEVICE if name == "device" else t)
                         for i, (name, t, _) in enumerate(EVENTS_V1.fields)])
JOB_ROWS = 40


def events_v2(old):
    """The oracle, written from FLIP-527's rule: the nested row's added field is null."""
    device = old[1]
    if device is not None:
        device = Row((*device, None), device.kind) if type(device) is Row else (*device, None)
    values = (old[0], device, *old[2:])
    return Row(values, old.kind) if type(old) is Row else values


def _conformance(directory, *args):
    return subprocess.run([sys.executable, "-m", "conformance", *args], cwd=directory, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def _check(savepoint, directory) -> dict:
    ran = _conformance(directory, "savepoint", "check", str(savepoint), "--serializers", "evolved_job:DESCRIPTORS",
                       "--json", "-")
    assert ran.returncode in (0, 1), f"conformance savepoint check failed: {ran.stdout}{ran.stderr}"
    (state,) = json.loads(ran.stdout)["states"]
    return state


def test_a_job_s_rowdata_state_evolves_as_flip_527_says_and_flink_restores_it(rowdata_job, rowdata_java, tmp_path):
    values = []

    @settings(max_examples=JOB_ROWS, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategies.rowdata_values(EVENTS_V1, allow_none=False))
    def draw(value) -> None:
        values.append(value)

    draw()
    lines = [f"{EVENTS_V1}\t{' '.join(tokens(EVENTS_V1, v))}" for v in values]
    savepoint = rowdata_job(lines, tmp_path)

    # read value for value
    state = read_flink_savepoint(savepoint).operator("rows").keyed_state("row")
    got = {entry.key: entry.value for entry in state.entries()}
    assert sorted(got) == list(range(len(values))), f"keys {sorted(got)}"
    for key, value in enumerate(values):
        assert values_equal(got[key], value), f"key {key}: read {got[key]!r}, the job wrote {value!r}"

    # Flink 2.3 refuses the original savepoint for the evolved type
    expected = [f"{EVENTS_V2}\t{' '.join(tokens(EVENTS_V2, events_v2(v)))}" for v in values]
    cases = tmp_path / "evolved.txt"
    cases.write_text("".join(line + "\n" for line in expected), encoding="utf-8")

    def restore(path) -> list[str]:
        ran = subprocess.run([*rowdata_java, "RowDataJob", "restore", str(cases), str(path)],
                             capture_output=True, text=True, timeout=900)
        assert ran.returncode == 0, f"RowDataJob restore failed: {ran.stderr[-3000:]}"
        return [line for line in ran.stdout.splitlines() if line.startswith(("READ", "REFUSED"))]

    (tmp_path / "evolved_job.py").write_text(
        "from reference import sqltypes as sql\n"
        "from reference.backends import ValueStateDescriptor\n"
        "from reference.serializers import RowDataSerializer\n"
        f"EVENTS = sql.RowType({EVENTS_V2.fields!r})\n".replace("LogicalType(", "sql.LogicalType(")
        + "DESCRIPTORS = {'rows': {'row': ValueStateDescriptor('row', RowDataSerializer(EVENTS))}}\n",
        encoding="utf-8")
    refused = restore(savepoint)
    assert len(refused) == 1 and refused[0].startswith("REFUSED") and "incompatible" in refused[0], refused

    # conformance savepoint check says the same of Flink, and that conformance migrate can migrate it
    checked = _check(savepoint, tmp_path)
    assert checked["flink_verdict"] == "incompatible" and checked["migratable_by_conformance"] is True, checked

    # the reference: the top-level fields named f0..fN, nested rows by name -> FLIP-527 migration
    descriptors = {"rows": {"row": ValueStateDescriptor("row", RowDataSerializer(EVENTS_V2))}}
    with pytest.raises(StateMigrationError, match="schema_evolution=True"):
        migrate_flink_savepoint(savepoint, tmp_path / "refused", descriptors)
    migrated = tmp_path / "migrated"
    ran = _conformance(tmp_path, "migrate", str(savepoint), "--serializers", "evolved_job:DESCRIPTORS", "--out",
                       str(migrated), "--schema-evolution")
    assert ran.returncode == 0, f"conformance migrate failed: {ran.stdout}{ran.stderr}"
    assert _check(migrated, tmp_path)["flink_verdict"] == "compatible_as_is"

    # Flink 2.3 restores the migrated savepoint and reads every old value with the new field null
    read = restore(migrated)
    assert sorted(read) == sorted(f"READ {key} OK" for key in range(len(values))), read
