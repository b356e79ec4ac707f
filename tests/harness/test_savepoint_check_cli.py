"""`conformance savepoint check` without a JDK: on the real Flink 2.3 savepoints kept in
tests/data/flink_savepoints (a String-keyed RocksDB one), and on this project's own savepoints.
What Flink itself does with these evolutions is checked in tests/flink/test_flink_savepoint_check.py;
here: the exit statuses, the errors naming what exists, the JSON report's shape, and the
FLIP-527 verdict `conformance migrate --schema-evolution` would give a Row Flink refuses."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "flink_savepoints" / "rocksdb_inline_string"
SAVEPOINT = str(next(DATA.glob("savepoint-*")))
FIELDS = {"operator", "state", "kind", "verdict", "flink_verdict", "reason", "location",
          "migratable_by_conformance", "migrate"}

JOBS = '''
from reference import types as t
from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from reference.serializers import (DoubleSerializer, LongSerializer, RowSerializer, StringSerializer,
                                   TimeWindowSerializer, TupleSerializer)

def row(*fields):
    return RowSerializer([(name, serializer, True) for name, serializer in fields])

OLD = [("f0", StringSerializer()), ("f1", LongSerializer()), ("f2", DoubleSerializer())]
NAMED = [("label", StringSerializer()), ("amount", LongSerializer()), ("ratio", DoubleSerializer())]

def states(**descriptors):
    return {"keyed-states": descriptors}

UNCHANGED = states(
    count=ValueStateDescriptor("count", LongSerializer()),
    tuple=ValueStateDescriptor("tuple", TupleSerializer(StringSerializer(), LongSerializer())),
    row=ValueStateDescriptor("row", row(*OLD)),
    names=ListStateDescriptor("names", StringSerializer()),
    amounts=MapStateDescriptor("amounts", StringSerializer(), LongSerializer()),
    fresh=ValueStateDescriptor("fresh", LongSerializer()),
)
BY_OPERATOR_ID = {"e4c6119018dff3585d3b978792ad75c8": {"count": ValueStateDescriptor("count", LongSerializer())}}
LONG_TO_STRING = states(count=ValueStateDescriptor("count", StringSerializer()))
ROW_FIELD_ADDED = states(row=ValueStateDescriptor("row", row(*OLD, ("f3", LongSerializer()))))
NAMED_ROW_FIELD_ADDED = states(row=ValueStateDescriptor("row", row(*NAMED, ("note", StringSerializer()))))
ROW_FIELD_RETYPED = states(row=ValueStateDescriptor("row", row(OLD[0], ("f1", StringSerializer()), OLD[2])))
OLD_ROW = {"keyed-states": {"row": row(*NAMED)}}
OLD_ROW_TYPE = {"keyed-states": {"row": t.RowType((t.RowField("label", t.StringType()),
                                                     t.RowField("amount", t.LongType()),
                                                     t.RowField("ratio", t.DoubleType())))}}
WRONG_OLD_ROW = {"keyed-states": {"row": row(*NAMED[:2])}}
LIST_AS_VALUE = states(names=ValueStateDescriptor("names", StringSerializer()))
MAP_KEY_CHANGED = states(amounts=MapStateDescriptor("amounts", LongSerializer(), LongSerializer()))
REDUCING_AS_VALUE = states(sum=ValueStateDescriptor("sum", LongSerializer()))
WINDOWED = states(count=ValueStateDescriptor("count", LongSerializer(), TimeWindowSerializer()))
NO_SUCH_STATE = states(counter=ValueStateDescriptor("counter", LongSerializer()))
NO_SUCH_OPERATOR = {"keyed": {"count": ValueStateDescriptor("count", LongSerializer())}}
OPERATOR_STATE = {"opstate": {"seen-split": ListStateDescriptor("seen-split", StringSerializer())}}
FLAT = {"count": ValueStateDescriptor("count", LongSerializer())}
NOT_A_DESCRIPTOR = states(count=LongSerializer())
LONG_KEY = LongSerializer()
STRING_KEY = StringSerializer()
KEYS_BY_OPERATOR = {"keyed-states": LongSerializer()}
'''


@pytest.fixture
def jobs(tmp_path, monkeypatch):
    (tmp_path / "check_jobs.py").write_text(JOBS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("check_jobs", None)
    yield tmp_path
    sys.modules.pop("check_jobs", None)


def _check(jobs, capsys, attribute, *options, savepoint=SAVEPOINT):
    out = jobs / f"{attribute}.json"
    out.unlink(missing_ok=True)
    status = main(["savepoint", "check", savepoint, "--serializers", f"check_jobs:{attribute}",
                   "--json", str(out), *options])
    captured = capsys.readouterr()
    report = json.loads(out.read_text()) if out.exists() else None
    return status, report, captured.out + captured.err


def _states(report):
    return {s["state"]: s for s in report["states"]}


def test_unchanged_states_restore_as_is_with_exit_0_and_the_documented_json(jobs, capsys):
    status, report, output = _check(jobs, capsys, "UNCHANGED")
    assert status == 0, f"got exit {status}, should be 0:\n{output}"
    assert report["format"] == "flink" and report["restores"] is True, f"got {report}"
    assert report["savepoint"] == SAVEPOINT, f"got savepoint {report['savepoint']!r}, should be {SAVEPOINT!r}"
    states = _states(report)
    assert set(states) == {"count", "tuple", "row", "names", "amounts", "fresh"}, f"got {sorted(states)}"
    for name, state in states.items():
        assert set(state) == FIELDS, f"{name}: fields {sorted(state)}, should be {sorted(FIELDS)}"
        assert state["operator"] == "keyed-states", f"{name}: operator {state['operator']!r}"
        assert state["verdict"] == state["flink_verdict"] == "compatible_as_is", f"{name}: {state}"
        assert state["migratable_by_conformance"] is None and state["location"] is None, f"{name}: {state}"
    assert states["names"]["kind"] == "list" and states["amounts"]["kind"] == "map", f"got {states}"
    assert "6 of 6 named states restore" in output, f"got {output!r}"


def test_an_operator_is_named_by_its_uid_or_its_operator_id(jobs, capsys):
    status, report, output = _check(jobs, capsys, "BY_OPERATOR_ID")
    assert status == 0, f"got exit {status}, should be 0:\n{output}"
    assert _states(report)["count"]["operator"] == "e4c6119018dff3585d3b978792ad75c8", f"got {report}"


def test_a_value_type_changed_is_refused_with_exit_1(jobs, capsys):
    status, report, output = _check(jobs, capsys, "LONG_TO_STRING")
    assert status == 1, f"got exit {status}, should be 1:\n{output}"
    count = _states(report)["count"]
    assert count["verdict"] == count["flink_verdict"] == "incompatible", f"got {count}"
    assert count["location"] == "value" and count["migratable_by_conformance"] is False, f"got {count}"
    assert "LongSerializer" in count["reason"] and "StringSerializer" in count["reason"], f"got {count['reason']!r}"
    assert report["restores"] is False and "REFUSED" in output, f"got {report}, {output!r}"


def test_a_row_field_added_is_refused_by_flink_and_migratable_with_schema_evolution(jobs, capsys):
    status, report, output = _check(jobs, capsys, "ROW_FIELD_ADDED")
    assert status == 1, f"got exit {status}, should be 1 (Flink 2.3 refuses a Row of another arity):\n{output}"
    row = _states(report)["row"]
    assert row["flink_verdict"] == "incompatible" and row["location"] == "value", f"got {row}"
    assert row["migratable_by_conformance"] is True, f"got {row}"
    assert row["migrate"].startswith(f"conformance migrate {SAVEPOINT} --serializers check_jobs:ROW_FIELD_ADDED"), (
        f"got {row['migrate']!r}")
    assert row["migrate"].endswith("--schema-evolution"), f"got {row['migrate']!r}"
    assert "f0..fN" in row["reason"] and "--old-row-type" in row["reason"], f"got {row['reason']!r}"


def test_old_row_type_names_the_fields_of_the_old_row(jobs, capsys):
    # The new job's names: without the old job's names the savepoint's row is f0..f2 and
    # every field looks renamed, which FLIP-527 refuses.
    status, report, output = _check(jobs, capsys, "NAMED_ROW_FIELD_ADDED")
    assert status == 1 and _states(report)["row"]["migratable_by_conformance"] is False, f"got {report}\n{output}"
    assert "give --old-row-type" in _states(report)["row"]["reason"], f"got {report}"
    for old in ("OLD_ROW", "OLD_ROW_TYPE"):
        status, report, output = _check(jobs, capsys, "NAMED_ROW_FIELD_ADDED", "--old-row-type", f"check_jobs:{old}")
        row = _states(report)["row"]
        assert status == 1 and row["flink_verdict"] == "incompatible", f"{old}: got exit {status}, {row}"
        assert row["migratable_by_conformance"] is True, f"{old}: got {row}"
        assert "'label', 'amount', 'ratio'" in row["reason"], f"{old}: got {row['reason']!r}"


def test_a_row_field_retyped_is_not_migratable(jobs, capsys):
    status, report, output = _check(jobs, capsys, "ROW_FIELD_RETYPED")
    row = _states(report)["row"]
    assert status == 1 and row["migratable_by_conformance"] is False and row["migrate"] is None, f"got {row}"


def test_an_old_row_type_that_does_not_read_the_savepoint_is_unusable(jobs, capsys):
    status, report, output = _check(jobs, capsys, "NAMED_ROW_FIELD_ADDED", "--old-row-type", "check_jobs:WRONG_OLD_ROW")
    assert status == 2 and report is None, f"got exit {status}, should be 2:\n{output}"
    assert "--old-row-type" in output and "3 fields" in output, f"got {output!r}"


def test_a_kind_change_is_refused(jobs, capsys):
    status, report, output = _check(jobs, capsys, "LIST_AS_VALUE")
    names = _states(report)["names"]
    assert status == 1 and names["location"] == "kind" and names["verdict"] == "incompatible", f"got {names}"
    assert "holds list state" in names["reason"] and "ListStateDescriptor" in names["reason"], f"got {names['reason']!r}"
    status, report, output = _check(jobs, capsys, "REDUCING_AS_VALUE")
    total = _states(report)["sum"]
    assert status == 1 and total["location"] == "kind", f"got {total}"
    assert "no ReducingStateDescriptor" in total["reason"], f"got {total['reason']!r}"


def test_a_map_key_or_namespace_changed_is_refused_where_it_changed(jobs, capsys):
    status, report, output = _check(jobs, capsys, "MAP_KEY_CHANGED")
    amounts = _states(report)["amounts"]
    assert status == 1 and amounts["location"] == "user key", f"got {amounts}"
    status, report, output = _check(jobs, capsys, "WINDOWED")
    count = _states(report)["count"]
    assert status == 1 and count["location"] == "namespace", f"got {count}"


def test_a_changed_key_serializer_is_refused(jobs, capsys):
    for keys in ("LONG_KEY", "KEYS_BY_OPERATOR"):
        status, report, output = _check(jobs, capsys, "UNCHANGED", "--key-serializer", f"check_jobs:{keys}")
        assert status == 1, f"{keys}: got exit {status}, should be 1:\n{output}"
        for name, state in _states(report).items():
            assert state["location"] == "key" and state["verdict"] == "incompatible", f"{keys}, {name}: {state}"
            assert state["migratable_by_conformance"] is False, f"{keys}, {name}: {state}"
    status, report, output = _check(jobs, capsys, "UNCHANGED", "--key-serializer", "check_jobs:STRING_KEY")
    assert status == 0, f"the savepoint's own key serializer: got exit {status}, should be 0:\n{output}"


@pytest.mark.parametrize("attribute, says", [
    ("NO_SUCH_STATE", ["no keyed state 'counter'", "'count'", "'amounts'", "'_timer_state/event_user-timers'"]),
    ("NO_SUCH_OPERATOR", ["no operator 'keyed'", "'keyed-states'", "'window'"]),
    ("OPERATOR_STATE", ["operator (non-keyed) state"]),
    ("FLAT", ["{operator uid: {state name: ...}}"]),
    ("NOT_A_DESCRIPTOR", ["LongSerializer, not a ValueStateDescriptor"]),
])
def test_what_names_nothing_is_unusable_in_one_sentence(jobs, capsys, attribute, says):
    status, report, output = _check(jobs, capsys, attribute)
    assert status == 2 and report is None, f"got exit {status}, should be 2:\n{output}"
    lines = [line for line in output.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("conformance savepoint: error: "), f"got {output!r}"
    for text in says:
        assert text in output, f"got {output!r}, should say {text!r}"


def test_no_savepoint_there_is_unusable(jobs, capsys):
    status, report, output = _check(jobs, capsys, "UNCHANGED", savepoint=str(jobs / "missing"))
    assert status == 2 and report is None and "missing" in output, f"got exit {status}:\n{output}"


OWN = '''
from reference.backends import ListStateDescriptor, ValueStateDescriptor
from reference.serializers import LongSerializer, RowSerializer, StringSerializer

ROW = [("name", StringSerializer(), True), ("total", LongSerializer(), True)]
UNCHANGED = {"count": ValueStateDescriptor("count", LongSerializer()),
             "row": ValueStateDescriptor("row", RowSerializer(ROW))}
ROW_FIELD_ADDED = {"row": ValueStateDescriptor("row", RowSerializer(ROW + [("note", StringSerializer(), True)]))}
LONG_TO_STRING = {"count": ValueStateDescriptor("count", StringSerializer())}
NO_SUCH_STATE = {"counter": ValueStateDescriptor("counter", LongSerializer())}
OLD_ROW = {"keyed-states": {"row": RowSerializer(ROW)}}
VALUE_AS_LIST = [ListStateDescriptor("count", LongSerializer())]
LONG_KEY = LongSerializer()
'''


@pytest.fixture
def own(tmp_path, monkeypatch):
    from reference.backends import HeapStateBackend, ValueStateDescriptor
    from reference.serializers import LongSerializer, RowSerializer, StringSerializer

    backend = HeapStateBackend(StringSerializer())
    count = backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    row = backend.get_value_state(ValueStateDescriptor(
        "row", RowSerializer([("name", StringSerializer(), True), ("total", LongSerializer(), True)])))
    backend.set_current_key("k")
    count.update(3)
    row.update(("a", 1))
    savepoint = backend.savepoint(str(tmp_path / "own-savepoint"))
    backend.close()
    (tmp_path / "own_jobs.py").write_text(OWN)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("own_jobs", None)
    yield savepoint
    sys.modules.pop("own_jobs", None)


def _own(savepoint, tmp_path, capsys, attribute, *options):
    out = tmp_path / f"own-{attribute}.json"
    out.unlink(missing_ok=True)
    status = main(["savepoint", "check", savepoint, "--serializers", f"own_jobs:{attribute}", "--json", str(out),
                   *options])
    captured = capsys.readouterr()
    return status, json.loads(out.read_text()) if out.exists() else None, captured.out + captured.err


def test_this_projects_savepoints_are_judged_by_the_reference(own, tmp_path, capsys):
    status, report, output = _own(own, tmp_path, capsys, "UNCHANGED")
    assert status == 0 and report["format"] == "reference", f"got exit {status}, {report}:\n{output}"
    for state in report["states"]:
        assert set(state) == FIELDS and state["operator"] is None and state["flink_verdict"] is None, f"got {state}"
        assert state["verdict"] == "compatible_as_is", f"got {state}"
    status, report, output = _own(own, tmp_path, capsys, "LONG_TO_STRING")
    count = _states(report)["count"]
    assert status == 1 and count["verdict"] == "incompatible" and count["migratable_by_conformance"] is False, (
        f"got exit {status}, {count}")
    # FLIP-527 by name: refused without row schema evolution, which conformance migrate can enable.
    status, report, output = _own(own, tmp_path, capsys, "ROW_FIELD_ADDED")
    row = _states(report)["row"]
    assert status == 1 and row["migratable_by_conformance"] is True, f"got exit {status}, {row}"
    assert row["migrate"].endswith("--schema-evolution") and "schema evolution is disabled" in row["reason"], f"got {row}"
    status, report, output = _own(own, tmp_path, capsys, "VALUE_AS_LIST")
    count = _states(report)["count"]
    assert status == 1 and count["location"] == "kind" and count["kind"] == "value", f"got exit {status}, {count}"
    status, report, output = _own(own, tmp_path, capsys, "UNCHANGED", "--key-serializer", "own_jobs:LONG_KEY")
    assert status == 1, f"got exit {status}, should be 1:\n{output}"
    for state in report["states"]:
        assert state["location"] == "key" and state["migratable_by_conformance"] is False, f"got {state}"


def test_this_projects_savepoints_name_what_exists(own, tmp_path, capsys):
    status, report, output = _own(own, tmp_path, capsys, "NO_SUCH_STATE")
    assert status == 2 and "no state 'counter'" in output and "'count', 'row'" in output, f"got {output!r}"
    status, report, output = _own(own, tmp_path, capsys, "UNCHANGED", "--old-row-type", "own_jobs:OLD_ROW")
    assert status == 2 and "Flink savepoints only" in output, f"got exit {status}: {output!r}"
