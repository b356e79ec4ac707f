"""reference.backends.migrate_flink_savepoint: the values of a Flink canonical savepoint migrated
to a new job's serializers, judged first (refusals before anything is written), every other
state carried over, and REAL Flink 2.3 restoring the output with the new types: a POJO that
gained a field (its Python stand-in registered under the Java name) and a flink-core Row with a
nullable field added at the end (which Flink itself refuses on the original savepoint).

The checks without a JVM use the savepoints kept in tests/data/flink_savepoints and their
expected.json (what Flink wrote, rendered by the Java side); the ``flink`` one every case of the
``flink_savepoints`` fixture.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import pytest
import savepoints
from flink_spark_support import NEW_JOB_MODULE, POJO_WITH_A_NOTE, PojoWithNote, new_states
from test_flink_savepoint_writer import KEPT, _content

import reference
from reference import StateMigrationError, _classes
from reference import serializers as s
from reference.backends import ListStateDescriptor, ValueStateDescriptor, migrate_flink_savepoint
from reference.savepoint import decode_list_value, file_tree, read_flink_savepoint


@pytest.fixture(autouse=True)
def _pojo_with_note_is_savepoint_pojo(monkeypatch):
    """PojoWithNote stands in for the Java class SavepointPojo during each test only (a
    registration for the whole session would change how other tests read that class)."""
    monkeypatch.setitem(_classes._TYPES, "SavepointPojo", PojoWithNote)
    monkeypatch.setitem(_classes._JAVA_NAMES, PojoWithNote, "SavepointPojo")


def _new_states() -> dict[str, dict[str, ValueStateDescriptor]]:
    return new_states()


def _expected(directory: Path) -> dict[str, Any]:
    return json.loads((directory.parent / "expected.json").read_text(encoding="utf-8"))


def _key(key: Any) -> str:
    return json.dumps(list(key) if isinstance(key, tuple) else key)


def _f64(value: float) -> dict[str, str]:
    return {"f64": struct.pack(">d", value).hex()}


def _values(path: str, state: str) -> dict[str, Any]:
    return {_key(e.key): e.value for e in read_flink_savepoint(path).operator("keyed-states").keyed_state(state).entries()}


@pytest.mark.parametrize("directory", KEPT, ids=lambda p: p.parent.name)
def test_pojo_and_row_migrate_with_every_value_in_place(directory, tmp_path):
    before = file_tree(directory)
    out = migrate_flink_savepoint(directory, tmp_path / "out", _new_states(), schema_evolution=True)
    assert file_tree(directory) == before, f"{directory}: migrating modified the input"
    states = _expected(directory)["operators"]["keyed-states"]["states"]
    pojos = _values(out, "pojo")
    want = {_key(e["key"] if not isinstance(e["key"], list) else tuple(e["key"])): e["value"]
            for e in states["pojo"]["entries"]}
    assert len(want) > 5 and set(pojos) == set(want), f"pojo keys {sorted(pojos)}, should be {sorted(want)}"
    for key, value in pojos.items():
        assert isinstance(value, PojoWithNote), f"pojo of {key} read as {value!r}, should be a PojoWithNote"
        got = {"name": value.name, "total": value.total, "ratio": _f64(value.ratio), "tag": value.tag}
        assert got == want[key] and value.note is None, f"pojo of {key}: got {value!r}, should be {want[key]} and note None"
    rows = _values(out, "row")
    want = {_key(e["key"] if not isinstance(e["key"], list) else tuple(e["key"])): e["value"]["fields"]
            for e in states["row"]["entries"]}
    assert set(rows) == set(want), f"row keys {sorted(rows)}, should be {sorted(want)}"
    for key, row in rows.items():
        got = [row[0], row[1], None if row[2] is None else _f64(row[2])]
        assert len(row) == 4 and got == want[key] and row[3] is None, f"row of {key}: got {row!r}, should be {want[key]} + [None]"
    migrated = read_flink_savepoint(out).operator("keyed-states")
    verdict = reference.resolve_compatibility(s.PojoSerializer(PojoWithNote), migrated.keyed_state("pojo").value_serializer)
    assert verdict.is_compatible_as_is(), f"the new POJO judges the migrated snapshot {verdict.kind}, should be as is"
    row_snapshot = migrated.keyed_state("row").value_serializer
    assert row_snapshot.positional, "the migrated Row snapshot should be in Flink's form (no field names)"
    assert len(row_snapshot.nested_snapshots) == 4, f"the migrated Row snapshot has {len(row_snapshot.nested_snapshots)} fields, should be 4"
    got, want_all = _content(out), _content(directory)
    migrated_states = {("keyed-states", "pojo"), ("keyed-states", "row")}
    changed = sorted(str(k) for k in want_all if k not in migrated_states and got.get(k) != want_all[k])
    assert set(got) == set(want_all) and not changed, f"states changed by the migration besides pojo and row: {changed}"


def test_row_evolution_needs_schema_evolution(tmp_path):
    with pytest.raises(StateMigrationError, match=r"operator 'keyed-states': state 'row' needs migration of row fields f3.*schema_evolution=True"):
        migrate_flink_savepoint(KEPT[0], tmp_path / "out", {"keyed-states": {"row": _new_states()["keyed-states"]["row"]}})
    assert os.listdir(tmp_path) == [], f"a refused migration left {os.listdir(tmp_path)}"


def test_pojo_migrates_without_schema_evolution(tmp_path):
    out = migrate_flink_savepoint(KEPT[0], tmp_path / "out", {"keyed-states": {"pojo": _new_states()["keyed-states"]["pojo"]}})
    values = _values(out, "pojo")
    assert values and all(isinstance(v, PojoWithNote) and v.note is None for v in values.values()), f"got {values}"


@pytest.mark.parametrize("state, descriptor, why", [
    ("count", ValueStateDescriptor("count", s.StringSerializer()), "state 'count'.*must not be incompatible"),
    ("names", ValueStateDescriptor("names", s.StringSerializer()), "state 'names' holds list state"),
    ("row", ValueStateDescriptor("row", s.RowSerializer([("f0", s.LongSerializer(), True)])), "state 'row'"),
    ("_timer_state/event_user-timers", ValueStateDescriptor("_timer_state/event_user-timers", s.LongSerializer()),
     "a timers state cannot be migrated"),
])
def test_incompatible_states_are_refused_before_anything_is_written(state, descriptor, why, tmp_path):
    descriptors = {"keyed-states": {"pojo": _new_states()["keyed-states"]["pojo"], state: descriptor}}
    with pytest.raises(StateMigrationError, match=f"operator 'keyed-states'.*{why}"):
        migrate_flink_savepoint(KEPT[0], tmp_path / "out", descriptors, schema_evolution=True)
    assert os.listdir(tmp_path) == [], f"a refused migration left {os.listdir(tmp_path)}"


def test_unknown_operators_and_states_are_refused(tmp_path):
    with pytest.raises(StateMigrationError, match="no operator 'nope'"):
        migrate_flink_savepoint(KEPT[0], tmp_path / "a", {"nope": {}})
    with pytest.raises(StateMigrationError, match="has no keyed state 'nope'"):
        migrate_flink_savepoint(KEPT[0], tmp_path / "b", {"keyed-states": {"nope": ValueStateDescriptor("nope", s.LongSerializer())}})
    assert os.listdir(tmp_path) == [], f"a refused migration left {os.listdir(tmp_path)}"


def test_states_compatible_as_is_are_carried_over(tmp_path):
    directory = KEPT[0]
    descriptors = {"keyed-states": {"count": ValueStateDescriptor("count", s.LongSerializer()),
                                    "names": ListStateDescriptor("names", s.StringSerializer())}}
    out = migrate_flink_savepoint(directory, tmp_path / "out", descriptors)
    assert _content(out) == _content(directory), "states compatible as is changed in the migration"


def restored_after_migration(expected: dict[str, Any]) -> list[str]:
    """What the new job reads back from a savepoint the Java job wrote (``expected``), migrated to
    ``new_states()``: every value as written, the POJO's added ``note`` and the Row's added
    field null (sorted canonical lines, as ``savepoints.read_back`` gives them)."""
    want = []
    for line in savepoints.restorable(expected):
        entry = json.loads(line)
        if entry["state"] == "pojo":
            entry["value"]["note"] = None
        elif entry["state"] == "row":
            entry["value"]["fields"].append(None)
        want.append(savepoints.canonical(entry))
    return sorted(want)


@pytest.mark.flink
@pytest.mark.xdist_group("flink")
def test_flink_restores_migrated_savepoints_with_the_new_types(flink_savepoints, flink_job, flink_restore, tmp_path):
    classes = savepoints.compile_user_classes(flink_job, {"SavepointPojo.java": POJO_WITH_A_NOTE}, tmp_path / "pojo2")
    requests, wants = [], {}
    new_row = {"row": "row<string,long,double,string>"}
    for name, (directory, expected) in sorted(flink_savepoints.items()):
        out = migrate_flink_savepoint(directory, tmp_path / name, _new_states(), schema_evolution=True)
        requests.append(savepoints.RestoreRequest.of(name, Path(out), expected, state_types=new_row))
        wants[name] = restored_after_migration(expected)
    original_dir, original = flink_savepoints["rocksdb_files_tuple"]
    requests.append(savepoints.RestoreRequest.of("original-row", original_dir, original, state_types=new_row))
    results = flink_restore(requests, classpath_first=[classes])
    refused = results["original-row"]
    assert refused.verdict == "failed" and refused.error["state_migration_exception"], (
        f"Flink should refuse the original savepoint's Row with a field added, got {refused.verdict}: {refused.error}")
    for name, want in wants.items():
        result = results[name]
        assert result.verdict == "restored", f"Flink failed to restore the migrated {name}: {result.error}"
        got = savepoints.read_back(result)
        assert got == want, (f"{name}: Flink read back differs; missing {sorted(set(want) - set(got))[:3]}, "
                             f"unexpected {sorted(set(got) - set(want))[:3]}")


def _cli(tmp_path: Path, *argv: str) -> Any:
    import subprocess
    import sys

    (tmp_path / "new_job.py").write_text(NEW_JOB_MODULE, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(Path(__file__).parent),
                                                      os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "conformance", "migrate", *argv], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_migrates_a_flink_savepoint(tmp_path):
    directory = KEPT[0]
    refused = _cli(tmp_path, str(directory), "--serializers", "new_job:STATES", "--out", str(tmp_path / "a"))
    assert refused.returncode == 1, f"exit {refused.returncode}, should be 1 (row evolution refused): {refused.stderr}"
    assert "state 'row'" in refused.stderr and "--schema-evolution" in refused.stderr, refused.stderr
    assert not (tmp_path / "a").exists(), "a refused migration wrote its output"
    spark_only = _cli(tmp_path, str(directory), "--serializers", "new_job:STATES", "--out", str(tmp_path / "b"),
                      "--parallelism", "3")
    assert spark_only.returncode == 2 and "--parallelism" in spark_only.stderr, spark_only.stderr
    done = _cli(tmp_path, str(directory), "--serializers", "new_job:STATES", "--out", str(tmp_path / "c"),
                "--schema-evolution", "--json", str(tmp_path / "c.json"))
    assert done.returncode == 0, f"exit {done.returncode}: {done.stderr}"
    report = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert report["format"] == "flink" and len(report["states"]) == 2, report
    rows = _values(str(tmp_path / "c"), "row")
    assert rows and all(len(r) == 4 and r[3] is None for r in rows.values()), f"rows after the CLI: {rows}"


def test_list_map_and_ttl_values_migrate_element_by_element():
    from reference.backends._flink_migrate import _list_function, _map_function, _value_function
    from reference.backends._plan import migration_plan

    state = read_flink_savepoint(KEPT[0]).operator("keyed-states").keyed_state("pojo")
    raws = [raw.value for raw in state.raw_entries()][:3]
    new = s.PojoSerializer(PojoWithNote)
    plan = migration_plan(state.value_serializer, new)
    old = state.value_serializer.restore_serializer()
    want = [PojoWithNote(**{f: getattr(old.from_bytes(r), f) for f in ("name", "total", "ratio", "tag")}) for r in raws]
    stamp = (1234567).to_bytes(8, "big")

    got = new.from_bytes(_value_function(plan, False)(raws[0]))
    assert got == want[0], f"value: got {got!r}, should be {want[0]!r}"
    ttl = _value_function(plan, True)(stamp + raws[0])
    assert ttl[:8] == stamp and new.from_bytes(ttl[8:]) == want[0], f"TTL value: got {ttl.hex()}"
    assert _map_function(plan, False)(b"\x01") == b"\x01", "a null map value should stay null"
    mapped = _map_function(plan, True)(b"\x00" + stamp + raws[1])
    assert mapped[:9] == b"\x00" + stamp and new.from_bytes(mapped[9:]) == want[1], f"TTL map value: got {mapped.hex()}"
    for ttl_on in (False, True):
        prefix = stamp if ttl_on else b""
        listed = _list_function(plan, ttl_on)(b",".join(prefix + r for r in raws))
        element = s.TtlSerializer(s.LongSerializer(), new) if ttl_on else new
        elements = [element.from_bytes(e) for e in decode_list_value(listed, element)]
        values = [e.value if ttl_on else e for e in elements]
        assert values == want, f"list (TTL {ttl_on}): got {values!r}, should be {want!r}"
        if ttl_on:
            assert all(e.last_access == 1234567 for e in elements), f"TTL timestamps changed: {elements!r}"
