"""`conformance savepoint check` against the real Flink 2.3: for each evolution below, the check
judges a savepoint Flink wrote with the new job's descriptors, Flink restores the same savepoint
with the equivalent new job (one JVM run for every case and savepoint), and the two must agree:
Flink restores <-> the check says compatible (exit 0); Flink fails the restore over the
state's serializers <-> the check says incompatible (exit 1).

The evolutions: nothing changed (as is), a field added to the POJO (Flink migrates), a field
added to a flink-core Row (Flink refuses; `conformance migrate --schema-evolution` can migrate
it), a value type changed from Long to String (refused), an enum constant removed (refused) and
the key type changed (refused). The new user classes (SavepointPojo with a field `note`,
SavepointColor without BLUE) are compiled for the restores; each request leaves the states of
the user classes it does not evolve undeclared (`skip`). Two JVM runs: Flink cannot restore a
savepoint at all once an enum class on its classpath lost a constant the savepoint's snapshot
names, declared or not, so the enum case runs on its own classpath and every other case in one
run with the new POJO.

The check runs as a command in a process of its own (the Python stand-ins register the Java
class names, which must not leak into the other tests' process).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import savepoints

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

ROOT = Path(__file__).resolve().parents[2]
SAVEPOINTS = ("rocksdb_inline_string", "hashmap_files_long")
USER_STATES = ("pojo", "color")

POJO_WITH_A_NOTE = """
public class SavepointPojo {
    public String name;
    public long total;
    public double ratio;
    public Integer tag;
    public String note;

    public SavepointPojo() {}

    public SavepointPojo(String name, long total, double ratio, Integer tag) {
        this.name = name;
        this.total = total;
        this.ratio = ratio;
        this.tag = tag;
    }
}
"""
COLOR_WITHOUT_BLUE = "public enum SavepointColor { RED, GREEN }\n"

#: The new job's descriptors, as a user writes them for `--serializers` (Python stand-ins of
#: the new Java classes registered under their Java names).
NEW_JOB = textwrap.dedent('''
    import dataclasses
    import enum
    from typing import Optional

    from reference import register_type
    from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
    from reference.serializers import (DoubleSerializer, EnumSerializer, IntSerializer, LongSerializer,
                                       PojoSerializer, RowSerializer, StringSerializer, TupleSerializer)


    def _field(serializer):
        return dataclasses.field(default=None, metadata={"serializer": serializer})


    @dataclasses.dataclass
    class SavepointPojo:  # the new version: a field `note` added
        name: Optional[str] = _field(StringSerializer())
        total: int = _field(LongSerializer())
        ratio: float = _field(DoubleSerializer())
        tag: Optional[int] = _field(IntSerializer())
        note: Optional[str] = _field(StringSerializer())


    class SavepointColor(enum.Enum):  # the new version: BLUE removed
        RED = 0
        GREEN = 1


    register_type(SavepointPojo, "SavepointPojo")
    register_type(SavepointColor, "SavepointColor")

    ROW = [("f0", StringSerializer(), True), ("f1", LongSerializer(), True), ("f2", DoubleSerializer(), True)]

    UNCHANGED = {"keyed-states": {
        "count": ValueStateDescriptor("count", LongSerializer()),
        "tuple": ValueStateDescriptor("tuple", TupleSerializer(StringSerializer(), LongSerializer())),
        "row": ValueStateDescriptor("row", RowSerializer(ROW)),
        "names": ListStateDescriptor("names", StringSerializer()),
        "amounts": MapStateDescriptor("amounts", StringSerializer(), LongSerializer()),
        "fresh": ValueStateDescriptor("fresh", LongSerializer()),
    }}
    POJO_FIELD_ADDED = {"keyed-states": {"pojo": ValueStateDescriptor("pojo", PojoSerializer(SavepointPojo))}}
    ROW_FIELD_ADDED = {"keyed-states": {
        "row": ValueStateDescriptor("row", RowSerializer(ROW + [("f3", LongSerializer(), True)]))}}
    LONG_TO_STRING = {"keyed-states": {"count": ValueStateDescriptor("count", StringSerializer())}}
    ENUM_CONSTANT_REMOVED = {"keyed-states": {"color": ValueStateDescriptor("color", EnumSerializer(SavepointColor))}}
    KEY_CHANGED = {"keyed-states": {"count": ValueStateDescriptor("count", LongSerializer())}}
    STRING_KEY = StringSerializer()
    LONG_KEY = LongSerializer()
''')

#: case -> (--serializers attribute, the Flink request's changes, Flink's outcome, the check's
#: verdict per named state, migratable by conformance). What Flink 2.3 does is known from its
#: sources and docs/flink-dialect.md; both sides are held to it.
CASES = {
    "unchanged": ("UNCHANGED", {}, "restored", "compatible_as_is", None),
    "pojo_field_added": ("POJO_FIELD_ADDED", {}, "restored", "compatible_after_migration", None),
    "row_field_added": ("ROW_FIELD_ADDED", {"state_types": {"row": "row<string,long,double,long>"}},
                        "failed", "incompatible", True),
    "long_to_string": ("LONG_TO_STRING", {"state_types": {"count": "string"}}, "failed", "incompatible", False),
    "enum_constant_removed": ("ENUM_CONSTANT_REMOVED", {}, "failed", "incompatible", False),
    "key_changed": ("KEY_CHANGED", {"key": "other"}, "failed", "incompatible", False),
}
OTHER_KEY = {"string": ("long", "LONG_KEY"), "long": ("string", "STRING_KEY")}


def _request(case: str, savepoint: str, directory: Path, expected: dict) -> savepoints.RestoreRequest:
    _, changes, _, _, _ = CASES[case]
    changes = dict(changes)
    if changes.get("key") == "other":
        changes["key"] = OTHER_KEY[expected["config"]["key_type"]][0]
    evolved = {"pojo_field_added": "pojo", "enum_constant_removed": "color"}.get(case)
    skip = tuple(s for s in USER_STATES if s != evolved)
    return savepoints.RestoreRequest.of(f"{savepoint}.{case}", directory, expected, skip=skip, **changes)


def _check(case: str, directory: Path, expected: dict, job: Path) -> tuple[int, dict, str]:
    attribute = CASES[case][0]
    command = [sys.executable, "-m", "conformance", "savepoint", "check", str(directory),
               "--serializers", f"new_job:{attribute}", "--json", str(job / f"{case}.json")]
    if case == "key_changed":
        command += ["--key-serializer", f"new_job:{OTHER_KEY[expected['config']['key_type']][1]}"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    ran = subprocess.run(command, cwd=job, env=env, capture_output=True, text=True, timeout=300)
    report = json.loads((job / f"{case}.json").read_text()) if (job / f"{case}.json").exists() else {}
    return ran.returncode, report, ran.stdout + ran.stderr


def _refused_over_serializers(error: dict, case: str) -> bool:
    """Flink failed the restore over the state's serializers: a StateMigrationException, or
    (an enum constant removed) the old enum snapshot that cannot be restored."""
    if error["state_migration_exception"]:
        return True
    messages = " ".join(f"{c['class']}: {c['message']}" for c in error["chain"])
    return case == "enum_constant_removed" and "restore serializer for enum class SavepointColor" in messages


def test_check_agrees_with_flink_restoring_the_same_savepoint(flink_savepoints, flink_job, flink_restore, tmp_path):
    pojo = savepoints.compile_user_classes(flink_job, {"SavepointPojo.java": POJO_WITH_A_NOTE}, tmp_path / "pojo")
    color = savepoints.compile_user_classes(flink_job, {"SavepointColor.java": COLOR_WITHOUT_BLUE}, tmp_path / "color")
    job = tmp_path / "job"
    job.mkdir()
    (job / "new_job.py").write_text(NEW_JOB, encoding="utf-8")
    enum_case = "enum_constant_removed"
    results = flink_restore([_request(case, sp, *flink_savepoints[sp]) for sp in SAVEPOINTS for case in CASES
                             if case != enum_case], classpath_first=[pojo])
    results.update(flink_restore([_request(enum_case, sp, *flink_savepoints[sp]) for sp in SAVEPOINTS],
                                 classpath_first=[color]))
    table = []
    for savepoint in SAVEPOINTS:
        directory, expected = flink_savepoints[savepoint]
        for case, (_, _, flink_outcome, verdict, migratable) in CASES.items():
            result = results[f"{savepoint}.{case}"]
            status, report, output = _check(case, directory, expected, job)
            verdicts = {s["state"]: s["verdict"] for s in report.get("states", [])}
            table.append((savepoint, case, sorted(set(verdicts.values())), result.verdict))
            where = f"{savepoint}, {case}"
            # The two sides agree ...
            if result.verdict == "restored":
                assert status == 0 and verdicts and "incompatible" not in verdicts.values(), (
                    f"{where}: Flink restored the savepoint, but the check says {verdicts} (exit {status}):\n{output}")
            else:
                assert _refused_over_serializers(result.error, case), (
                    f"{where}: Flink failed the restore, not over the state's serializers: {result.error['chain'][:3]}")
                assert status == 1 and "incompatible" in verdicts.values(), (
                    f"{where}: Flink refused the savepoint ({result.error['chain'][0]}), but the check says "
                    f"{verdicts} (exit {status}):\n{output}")
            # ... and each gives what Flink 2.3 is known to do.
            assert result.verdict == flink_outcome, (
                f"{where}: Flink {result.verdict} ({result.error and result.error['chain'][:2]}), should be {flink_outcome}")
            assert set(verdicts.values()) == {verdict}, f"{where}: the check says {verdicts}, should be {verdict}"
            for state in report["states"]:
                assert state["flink_verdict"] == state["verdict"], f"{where}: {state}"
                assert state["migratable_by_conformance"] == migratable, (
                    f"{where}: {state['state']} migratable_by_conformance {state['migratable_by_conformance']}, "
                    f"should be {migratable}")
                if migratable:
                    assert "--schema-evolution" in state["migrate"], f"{where}: {state}"
    print("\n".join(f"{sp:24} {case:22} check {v} / Flink {f}" for sp, case, v, f in table))
