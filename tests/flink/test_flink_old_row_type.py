"""``--old-row-type`` (and ``old_row_types=`` of ``migrate_flink_savepoint``) held to Flink 2.3.

Flink's RowSerializer snapshot keeps no field names, so a flink-core Row read from a Flink
savepoint has fields ``f0..fN``; FLIP-527's name-based rules then see a reordered row as fields
removed and added. Given the old job's names, the same evolution (the row
``(name, total, ratio)`` becoming ``(ratio, name, total, note)``: reordered, one nullable field
added) is judged by name: ``conformance savepoint check`` says Flink refuses it and ``conformance
migrate --schema-evolution`` can migrate it, the migration moves every field to its new place,
and Flink restores the migrated savepoint with the new job's row type (SavepointJob, one JVM run
for every case), reading back each value the old job wrote in its new position.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import savepoints

from reference.backends import ValueStateDescriptor, migrate_flink_savepoint
from reference.serializers import DoubleSerializer, LongSerializer, RowSerializer, StringSerializer

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

ROOT = Path(__file__).resolve().parents[2]
NEW_JOB = '''
from reference import serializers as s
from reference.backends import ValueStateDescriptor

ROW = s.RowSerializer([("ratio", s.DoubleSerializer(), True), ("name", s.StringSerializer(), True),
                       ("total", s.LongSerializer(), True), ("note", s.StringSerializer(), True)])
STATES = {"keyed-states": {"row": ValueStateDescriptor("row", ROW)}}
'''
NEW_ROW = RowSerializer([("ratio", DoubleSerializer(), True), ("name", StringSerializer(), True),
                         ("total", LongSerializer(), True), ("note", StringSerializer(), True)])
CASES = ("rocksdb_inline_string", "hashmap_files_long", "rocksdb_compressed_long")


def _cli(work: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    (work / "new_job.py").write_text(NEW_JOB, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "conformance", *argv], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)


def _check(work: Path, directory: Path, *more: str) -> dict[str, Any]:
    ran = _cli(work, "savepoint", "check", str(directory), "--serializers", "new_job:STATES",
               "--json", str(work / "check.json"), *more)
    assert ran.returncode == 1, f"exit {ran.returncode}, should be 1 (Flink refuses the row): {ran.stderr}"
    report = json.loads((work / "check.json").read_text(encoding="utf-8"))
    (row,) = report["states"]
    return row  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def migrated(flink_savepoints, flink_restore, tmp_path_factory) -> dict[str, Any]:
    """Per case: the check's verdicts with and without the old names, and Flink's restore of
    the savepoint migrated with them (the first through the CLI, the others through the library)."""
    work = tmp_path_factory.mktemp("old-row-type")
    out: dict[str, Any] = {}
    requests = []
    for i, name in enumerate(CASES):
        directory, expected = flink_savepoints[name]
        unnamed = _check(work, directory)
        named = _check(work, directory, "--old-row-type", "keyed-states/row=name,total,ratio")
        target = work / f"migrated-{name}"
        if i == 0:
            ran = _cli(work, "migrate", str(directory), "--serializers", "new_job:STATES", "--out", str(target),
                       "--schema-evolution", "--old-row-type", "keyed-states/row=name:string,total:long,ratio:double")
            assert ran.returncode == 0, f"conformance migrate exit {ran.returncode}: {ran.stderr}"
        else:
            migrate_flink_savepoint(directory, target, {"keyed-states": {"row": ValueStateDescriptor("row", NEW_ROW)}},
                                    schema_evolution=True,
                                    old_row_types={"keyed-states": {"row": ["name", "total", "ratio"]}})
        requests.append(savepoints.RestoreRequest.of(name, target, expected,
                                                     state_types={"row": "row<double,string,long,string>"}))
        want = []
        for line in savepoints.restorable(expected):
            entry = json.loads(line)
            if entry["state"] == "row":
                name_, total, ratio = entry["value"]["fields"]
                entry["value"]["fields"] = [ratio, name_, total, None]
            want.append(savepoints.canonical(entry))
        out[name] = {"unnamed": unnamed, "named": named, "want": sorted(want)}
    for name, result in flink_restore(requests).items():
        out[name]["result"] = result
    return out


@pytest.mark.parametrize("case", CASES)
def test_the_check_judges_the_row_by_the_old_names(migrated, case):
    unnamed, named = migrated[case]["unnamed"], migrated[case]["named"]
    assert unnamed["flink_verdict"] == "incompatible" and unnamed["migratable_by_conformance"] is False, (
        f"{case}: without the old names the fields are f0..f2, so the reorder is fields removed: {unnamed}")
    assert "--old-row-type" in unnamed["reason"], unnamed["reason"]
    assert named["flink_verdict"] == "incompatible" and named["migratable_by_conformance"] is True, (
        f"{case}: with the old names the reorder and the added field migrate by name: {named}")
    assert "['name', 'total', 'ratio']" in named["reason"], named["reason"]


@pytest.mark.parametrize("case", CASES)
def test_flink_restores_the_row_migrated_by_name(migrated, case):
    result, want = migrated[case]["result"], migrated[case]["want"]
    assert result.verdict == "restored", f"{case}: Flink refused the migrated savepoint: {result.error}"
    got = savepoints.read_back(result)
    rows = [g for g in got if '"state": "row"' in g]
    assert rows, f"{case}: Flink read no row"
    assert got == want, (f"{case}: Flink read back differs; missing {sorted(set(want) - set(got))[:3]}, "
                         f"unexpected {sorted(set(got) - set(want))[:3]}")
