"""FLIP-527's ``Events`` example on a real Flink 2.3 SQL job (SqlJob.java): a deduplication
(``ROW_NUMBER() OVER (PARTITION BY id ORDER BY proctime DESC) = 1``) over a table with a nested
``device ROW<userId INT, `timestamp` BIGINT, deviceType STRING>`` column keeps the last input row
of every id in the planner's value state ``deduplicate-state``; a stop-with-savepoint takes it.

Then the nested row gains a nullable field (``region STRING``): Flink refuses to restore the
original savepoint into the new job, ``conformance savepoint check`` says the same and that
``conformance migrate`` can migrate it, ``conformance migrate --schema-evolution`` (with the new
job's descriptors, a ``RowDataSerializer`` of the new state row) rewrites it, and the new job
restores the result: fed a new row for every id, the deduplication emits the row it restored
(``-U``) before the new one (``+U``), every old value in place and ``region`` null. Expected
values are the rows Flink's job emitted before the savepoint, and the snapshots of the state row
that Flink's planner makes for the old and the new job (SqlJob's ``INPUT-SNAPSHOT``).

The operator ids: with the planner's defaults (``table.exec.uid.generation`` PLAN_ONLY and no
compiled plan) the SQL operators have no uid and their ids are hashes of the job graph's shape,
the same after the schema change. With ``table.exec.uid.generation=ALWAYS`` they get uids
``<exec node id>_<transformation>``, the exec node ids counted per JVM: the same job planned a
second time in one JVM has other uids (Flink says which, ``SqlJob plan``), and its restore fails
unless ``conformance migrate --operator-uid OLD=NEW`` moves the state to the new uid.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reference import DataOutputView, write_versioned_snapshot
from reference.savepoint import read_flink_savepoint
from reference.serializers import RowDataSerializer

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

IDS = 30
STATE = "deduplicate-state"
DEVICE_TYPES = ["phone", "tablet", "", "tablette ✓", "a device type longer than seven bytes"]


def rows_v1() -> list[tuple]:
    """The old job's input: one row per id, nulls at every level."""
    rows = []
    for i in range(IDS):
        device = None if i % 7 == 3 else (None if i % 5 == 2 else i * 11 - 40, 1_700_000_000_000 + 997 * i,
                                           None if i % 6 == 4 else DEVICE_TYPES[i % len(DEVICE_TYPES)])
        rows.append((i, device, None if i % 4 == 1 else f"note {i}"))
    return rows


def rows_v2() -> list[tuple]:
    """The new job's input: every id again, the device with its new field."""
    return [(i, (i, 1_800_000_000_000 + i, "watch", None if i % 3 == 0 else f"eu-{i % 4}"), f"after {i}")
            for i in range(IDS)]


def token(value) -> str:
    """A value as SqlJob.java reads and prints it (see its header)."""
    if value is None:
        return "N"
    if isinstance(value, str):
        return "x" + value.encode("utf-8").hex()
    if isinstance(value, tuple):
        return ",".join(token(v) for v in value)
    return str(value)


def untoken(text: str):
    if text == "N":
        return None
    if text.startswith("x"):
        return bytes.fromhex(text[1:]).decode("utf-8")
    return int(text)


def emitted(line: str) -> tuple[str, tuple]:
    """An ``EMIT KIND ID DEVICE NOTE`` line as (kind, (id, device, note))."""
    _, kind, key, device, note = line.split(" ")
    return kind, (untoken(key), None if device == "N" else tuple(untoken(t) for t in device.split(",")), untoken(note))


def write_rows(rows, path: Path) -> Path:
    path.write_text("".join(f"{token(r[0])}\t{token(r[1])}\t{token(r[2])}\n" for r in rows), encoding="utf-8")
    return path


def run(java, *args) -> tuple[list[str], float]:
    started = time.monotonic()
    ran = subprocess.run([*java, *map(str, args)], capture_output=True, text=True, timeout=900)
    seconds = time.monotonic() - started
    assert ran.returncode == 0, f"SqlJob {args[0]} failed after {seconds:.0f} s: {ran.stdout[-2000:]}{ran.stderr[-4000:]}"
    print(f"SqlJob {args[0]}: {seconds:.1f} s")
    return ran.stdout.splitlines(), seconds


def operators(lines) -> dict[str, tuple[str, str | None]]:
    """``OPERATOR id uid=UID name=NAME`` lines as {name: (operator id, uid or None)}."""
    out = {}
    for line in lines:
        if line.startswith("OPERATOR "):
            _, operator_id, uid, name = line.split(" ", 3)
            out[name[len("name="):]] = (operator_id, None if uid == "uid=-" else uid[len("uid="):])
    return out


def input_snapshot(lines) -> bytes:
    """The ``INPUT-SNAPSHOT`` line: Flink's versioned snapshot of the planner's serializer of the
    deduplication's input row."""
    (found,) = [line.split(" ")[1] for line in lines if line.startswith("INPUT-SNAPSHOT ")]
    return bytes.fromhex(found)


def versioned(snapshot) -> bytes:
    out = DataOutputView()
    write_versioned_snapshot(out, snapshot, dialect="flink")
    return out.getvalue()


def deduplicate(ops: dict[str, tuple[str, str | None]]) -> tuple[str, str | None]:
    (found,) = [v for k, v in ops.items() if k.startswith("Deduplicate[")]
    return found


def write_job(java, directory: Path, *options: str) -> dict:
    lines, seconds = run(java, "write", write_rows(rows_v1(), directory / "rows-v1.txt"), directory / "savepoints",
                         *options)
    (path,) = [line[len("SAVEPOINT file:"):] for line in lines if line.startswith("SAVEPOINT ")]
    return {"savepoint": Path(path), "emitted": [emitted(line) for line in lines if line.startswith("EMIT ")],
            "operators": operators(lines), "snapshot": input_snapshot(lines), "seconds": seconds}


def restore_jobs(java, directory: Path, savepoints, *options: str) -> tuple[list[dict], float]:
    lines, seconds = run(java, "restore", write_rows(rows_v2(), directory / "rows-v2.txt"), *savepoints, *options)
    jobs: list[dict] = []
    for line in lines:
        if line.startswith("JOB "):
            jobs.append({"lines": [], "verdict": None, "causes": []})
        elif line.startswith(("RESTORED ", "REFUSED ")):
            jobs[-1]["verdict"] = line.split(" ")[0]
        elif line.startswith("CAUSE "):
            jobs[-1]["causes"].append(line[len("CAUSE "):])
        elif jobs:
            jobs[-1]["lines"].append(line)
    for job in jobs:
        job["operators"] = operators(job["lines"])
        job["snapshot"] = input_snapshot(job["lines"])
        job["emitted"] = [emitted(line) for line in job["lines"] if line.startswith("EMIT ")]
    assert len(jobs) == len(savepoints), f"SqlJob restore ran {len(jobs)} jobs for {len(savepoints)} savepoints"
    return jobs, seconds


DESCRIPTORS_MODULE = '''\
from reference import sqltypes as sql
from reference.backends import ValueStateDescriptor
from reference.serializers import RowDataSerializer

DEVICE = sql.RowType([("userId", sql.IntType()), ("timestamp", sql.BigIntType()),
                      ("deviceType", sql.VarCharType()), ("region", sql.VarCharType())])
# The deduplication keeps its input row: the table's columns and the PROCTIME() column, named
# f0..fN (Flink's RowData snapshot keeps no top-level names; nested rows keep theirs).
EVENTS = sql.RowType([("f0", sql.BigIntType()), ("f1", DEVICE), ("f2", sql.VarCharType()),
                      ("f3", sql.LocalZonedTimestampType(3, nullable=False, kind="PROCTIME"))])
DEDUPLICATE = "{operator}"
DESCRIPTORS = {{DEDUPLICATE: {{"deduplicate-state": ValueStateDescriptor("deduplicate-state",
                                                                      RowDataSerializer(EVENTS))}}}}
'''


def conformance(directory: Path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "conformance", *map(str, args)], cwd=directory, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def check(directory: Path, savepoint: Path) -> tuple[dict, str]:
    ran = conformance(directory, "savepoint", "check", savepoint, "--serializers", "events_v2:DESCRIPTORS")
    assert ran.returncode in (0, 1), f"conformance savepoint check failed: {ran.stdout}{ran.stderr}"
    as_json = conformance(directory, "savepoint", "check", savepoint, "--serializers", "events_v2:DESCRIPTORS",
                          "--json", "-")
    (state,) = json.loads(as_json.stdout)["states"]
    return state, ran.stdout


def expected_restored(written: dict) -> dict[int, tuple]:
    """What the new job must emit as the row it restored for each id: the row the old job
    emitted, the nested row's new field null (FLIP-527)."""
    out = {}
    for kind, (key, device, note) in written["emitted"]:
        assert kind == "+I", f"the old job emitted {kind} for id {key}, should be +I (one row per id)"
        out[key] = (key, None if device is None else (*device, None), note)
    return out


def check_restored(job: dict, written: dict) -> int:
    """The restored job's changelog against the old job's output; returns the values compared."""
    restored = {row[0]: row for kind, row in job["emitted"] if kind == "-U"}
    assert restored == expected_restored(written), (
        f"the restored rows (-U) differ from what the old job emitted, region null: "
        f"{sorted(set(restored.items()) ^ set(expected_restored(written).items()))[:6]}")
    after = sorted(row for kind, row in job["emitted"] if kind == "+U")
    assert after == sorted(rows_v2()), f"the new rows (+U): {after[:3]}..., should be the new input"
    assert len(job["emitted"]) == 2 * IDS, f"{len(job['emitted'])} rows emitted, should be -U and +U per id"
    return sum(3 + (0 if row[1] is None else 4) for row in restored.values())


def test_flip_527_events_on_a_sql_job(sql_job_java, tmp_path):
    written = write_job(sql_job_java, tmp_path)
    savepoint = written["savepoint"]
    assert sorted(row for _, row in written["emitted"]) == sorted(rows_v1()), "the old job's output"

    # the reference reads the planner's state value for value: what the job emitted, proctime null
    old_id, old_uid = deduplicate(written["operators"])
    assert old_uid is None, f"with the planner's defaults the deduplication has no uid, Flink gave {old_uid!r}"
    state = read_flink_savepoint(savepoint).operator(old_id).keyed_state(STATE)
    got = {entry.key: entry.value for entry in state.entries()}
    want = {(row[0],): (*row, None) for _, row in written["emitted"]}
    assert got == want, f"state read: {sorted(set(got.items()) ^ set(want.items()))[:4]}"

    # the state's snapshot as read (its PROCTIME() column a time attribute) writes Flink's bytes
    assert versioned(state.value_serializer) == written["snapshot"], "the old row's snapshot differs from Flink's"
    # inspect names the row the descriptors must declare, as Flink's summary prints it
    shown = conformance(tmp_path, "savepoint", "inspect", savepoint)
    row = ("ROW<`f0` BIGINT, `f1` ROW<`userId` INT, `timestamp` BIGINT, `deviceType` STRING>, `f2` STRING, "
           "`f3` TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*>")
    assert shown.returncode == 0 and f"{STATE} value: {row}" in shown.stdout, (
        f"got {shown.stdout}{shown.stderr}, should show the state's value row {row}")

    (tmp_path / "events_v2.py").write_text(DESCRIPTORS_MODULE.format(operator=old_id), encoding="utf-8")
    new_type = descriptors_module(tmp_path, "events_v2").EVENTS
    checked, text = check(tmp_path, savepoint)
    assert checked["flink_verdict"] == "incompatible" and checked["migratable_by_conformance"] is True, checked
    assert "conformance migrate" in text and "--schema-evolution" in text, text

    migrated = tmp_path / "migrated"
    refused = conformance(tmp_path, "migrate", savepoint, "--serializers", "events_v2:DESCRIPTORS", "--out",
                          tmp_path / "refused")
    assert refused.returncode == 1 and "--schema-evolution" in refused.stderr, refused.stderr
    ran = conformance(tmp_path, "migrate", savepoint, "--serializers", "events_v2:DESCRIPTORS", "--out", migrated,
                      "--schema-evolution")
    assert ran.returncode == 0, f"conformance migrate failed: {ran.stdout}{ran.stderr}"
    assert check(tmp_path, migrated)[0]["flink_verdict"] == "compatible_as_is"

    (original, restored), seconds = restore_jobs(sql_job_java, tmp_path, [savepoint, migrated])
    assert original["verdict"] == "REFUSED", f"Flink restored the original savepoint into the evolved job: {original}"
    assert any("StateMigrationException" in cause or "ncompatible" in cause for cause in original["causes"]), (
        original["causes"])
    assert restored["verdict"] == "RESTORED", f"Flink refused the migrated savepoint: {restored['causes']}"
    assert deduplicate(restored["operators"]) == (old_id, None), (
        f"the new job's deduplication {deduplicate(restored['operators'])}, the old one's {old_id}")
    assert versioned(RowDataSerializer(new_type).snapshot_configuration()) == restored["snapshot"], (
        "the descriptors' row snapshot differs from the one Flink's planner makes for the new job")
    compared = check_restored(restored, written)
    print(f"{IDS} rows, {compared} values compared; Flink: write {written['seconds']:.1f} s, restore {seconds:.1f} s")


def descriptors_module(directory: Path, name: str):
    sys.path.insert(0, str(directory))
    sys.modules.pop(name, None)  # another test's module of the same name
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(directory))


def plans(lines) -> list[dict[str, tuple[str, str | None]]]:
    """``SqlJob plan`` output: the operators of each plan, in order."""
    out: list[list[str]] = []
    for line in lines:
        if line.startswith("PLAN "):
            out.append([])
        elif out:
            out[-1].append(line)
    return [operators(chunk) for chunk in out]


def test_sql_uids_numbered_per_jvm_and_migrate_operator_uid(sql_job_java, tmp_path):
    from reference import StateError
    from reference.backends import migrate_flink_savepoint
    from reference.savepoint import operator_id_for_uid, renamed_operators

    always = "table.exec.uid.generation=ALWAYS"
    # Flink: the evolved job planned three times in one JVM (as the restore run below plans it)
    lines, _ = run(sql_job_java, "plan", 2, 2, 2, always)
    planned = [deduplicate(ops) for ops in plans(lines)]
    written = write_job(sql_job_java, tmp_path, always)
    old_id, old_uid = deduplicate(written["operators"])
    assert old_uid is not None and planned[0] == (old_id, old_uid), (
        f"in a fresh JVM the evolved job's deduplication is {planned[0]}, the old job's ({old_id}, {old_uid}): "
        "the schema change should keep the uid")
    new_id, new_uid = planned[1]
    assert new_uid != old_uid and new_id == operator_id_for_uid(new_uid), (
        f"planned a second time in one JVM, the deduplication is {planned[1]}, should have another uid than {old_uid}")

    savepoint = written["savepoint"]
    (tmp_path / "events_v2.py").write_text(DESCRIPTORS_MODULE.format(operator=new_uid), encoding="utf-8")
    (tmp_path / "events_v2_old_uid.py").write_text(DESCRIPTORS_MODULE.format(operator=old_uid), encoding="utf-8")
    renamed, kept = tmp_path / "renamed", tmp_path / "kept"
    ran = conformance(tmp_path, "migrate", savepoint, "--serializers", "events_v2:DESCRIPTORS", "--out", renamed,
                      "--schema-evolution", "--operator-uid", f"{old_uid}={new_uid}")
    assert ran.returncode == 0, f"conformance migrate --operator-uid failed: {ran.stdout}{ran.stderr}"
    ran = conformance(tmp_path, "migrate", savepoint, "--serializers", "events_v2_old_uid:DESCRIPTORS", "--out", kept,
                      "--schema-evolution")
    assert ran.returncode == 0, f"conformance migrate failed: {ran.stdout}{ran.stderr}"
    moved = read_flink_savepoint(renamed).operator(new_uid)
    assert (moved.operator_id, moved.uid) == (new_id, new_uid), (moved.operator_id, moved.uid)
    with pytest.raises(KeyError):
        read_flink_savepoint(renamed).operator(old_uid)
    # the library: descriptors name the new job's operators; the old uid of a renamed one is refused
    old_named = descriptors_module(tmp_path, "events_v2_old_uid").DESCRIPTORS
    with pytest.raises(StateError, match=f"renames to '{new_uid}'"):
        migrate_flink_savepoint(savepoint, tmp_path / "refused", old_named, schema_evolution=True,
                                operator_uids={old_uid: new_uid})
    bad = conformance(tmp_path, "migrate", savepoint, "--serializers", "events_v2:DESCRIPTORS", "--out",
                      tmp_path / "bad", "--schema-evolution", "--operator-uid", "no-such-uid=x")
    assert bad.returncode == 2 and "--operator-uid 'no-such-uid' -> 'x': no operator" in bad.stderr, bad.stderr
    assert not (tmp_path / "refused").exists() and not (tmp_path / "bad").exists()
    # savepoint check judges under the new job's names as migrate writes them
    checked = conformance(tmp_path, "savepoint", "check", savepoint, "--serializers", "events_v2:DESCRIPTORS",
                          "--operator-uid", f"{old_uid}={new_uid}")
    assert checked.returncode == 1 and f"{new_uid}/deduplicate-state: REFUSED" in checked.stdout, (
        f"got exit {checked.returncode}: {checked.stdout}{checked.stderr}, should be refused as Flink refuses the "
        "evolved row, under the new uid")
    checked = conformance(tmp_path, "savepoint", "check", renamed, "--serializers", "events_v2:DESCRIPTORS")
    assert checked.returncode == 0 and f"{new_uid}/deduplicate-state: compatible_as_is" in checked.stdout, (
        f"got exit {checked.returncode}: {checked.stdout}{checked.stderr}, the migrated savepoint should restore as is")
    unmapped_check = conformance(tmp_path, "savepoint", "check", savepoint, "--serializers", "events_v2:DESCRIPTORS")
    assert unmapped_check.returncode == 2 and f"no operator '{new_uid}'" in unmapped_check.stderr, (
        f"got exit {unmapped_check.returncode}: {unmapped_check.stderr}, should say the savepoint has no such operator")
    old_named_check = conformance(tmp_path, "savepoint", "check", savepoint, "--serializers",
                                  "events_v2_old_uid:DESCRIPTORS", "--operator-uid", f"{old_uid}={new_uid}")
    assert old_named_check.returncode == 2 and f"is the new job's '{new_uid}'" in old_named_check.stderr, (
        f"got exit {old_named_check.returncode}: {old_named_check.stderr}, should say to name it by its new uid")
    read = read_flink_savepoint(savepoint)
    calc = next(op.uid for op in read.operators if op.uid and op.uid.endswith("_calc"))
    with pytest.raises(StateError, match="would all have the id"):
        renamed_operators(read, {old_uid: calc})
    with pytest.raises(StateError, match="has that uid and id already"):
        renamed_operators(read, {old_uid: old_uid})
    assert renamed_operators(read, {old_uid: calc, calc: old_uid}) == {
        old_id: (operator_id_for_uid(calc), calc), operator_id_for_uid(calc): (old_id, old_uid)}, "a swap"
    assert renamed_operators(read, {old_uid: new_id.upper()}) == {old_id: (new_id, None)}, "to an id, no uid"

    (original, restored, unmapped), seconds = restore_jobs(sql_job_java, tmp_path, [savepoint, renamed, kept], always)
    assert [deduplicate(job["operators"]) for job in (original, restored, unmapped)] == planned, "the planned uids"
    assert original["verdict"] == "REFUSED" and any("StateMigrationException" in c for c in original["causes"]), (
        original)
    assert restored["verdict"] == "RESTORED", f"Flink refused the renamed savepoint: {restored['causes']}"
    compared = check_restored(restored, written)
    assert unmapped["verdict"] == "REFUSED" and any(old_id in c for c in unmapped["causes"]), (
        f"Flink should refuse state of the operator {old_id} the job no longer has: {unmapped}")
    print(f"{IDS} rows, {compared} values compared; Flink: write {written['seconds']:.1f} s, restore {seconds:.1f} s")
