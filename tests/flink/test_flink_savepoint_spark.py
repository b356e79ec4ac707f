"""Migrating a Flink canonical savepoint on Spark (``conformance.spark.migrate_flink_savepoint_spark``,
``conformance migrate FLINK_SP --spark MASTER``): the tasks of ``reference.backends.
migrate_flink_savepoint`` run by Spark executors write the same savepoint byte for byte as one
process (streams whole or split into key-group pieces), on local disks and in an object store
(moto's S3 server on loopback) with the commit protocol (``_metadata`` last, a failed attempt
leaves no object, the input only read), and REAL Flink 2.3 restores what Spark wrote.

The savepoints are those kept in tests/data/flink_savepoints (Flink wrote them) and, for the
restore, every case of the ``flink_savepoints`` fixture, in one JVM run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import flink_spark_support as sup
import pytest
import savepoints
from test_flink_savepoint_migrate import restored_after_migration
from test_flink_savepoint_writer import KEPT, _content

from reference import _classes
from reference.backends import migrate_flink_savepoint
from reference.savepoint import (
    SavepointFormatError,
    file_tree,
    is_flink_savepoint,
    locate,
    read_flink_metadata,
    read_flink_savepoint,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "storage"))
from storage_support import objects  # noqa: E402


@pytest.fixture(autouse=True)
def _pojo_with_note_is_savepoint_pojo(monkeypatch):
    """PojoWithNote stands in for the Java class SavepointPojo during each test only."""
    monkeypatch.setitem(_classes._TYPES, "SavepointPojo", sup.PojoWithNote)
    monkeypatch.setitem(_classes._JAVA_NAMES, sup.PojoWithNote, "SavepointPojo")


@pytest.fixture(scope="module")
def spark():
    from conformance.spark import get_session

    session = get_session("local[2]")
    # Executors unpickle PojoWithNote by module name: ship its module to them.
    session.sparkContext.addPyFile(str(HERE / "flink_spark_support.py"))
    return session


def _streams(path: str) -> list[tuple[str, bytes]]:
    """Every stream ``_metadata`` names, in order: (inline or file, its bytes), whatever the
    file names (what must be equal between an object-store output, whose names carry the
    attempt's, and a local one)."""
    metadata = read_flink_metadata(path)
    directory = metadata.directory
    assert directory is not None
    found = []
    for op in metadata.operators:
        for subtask in op.subtasks:
            for handle in (subtask.managed_operator_state, subtask.raw_operator_state,
                           subtask.managed_keyed_state, subtask.raw_keyed_state):
                if handle is None:
                    continue
                stream = handle.stream
                offsets = tuple(getattr(handle, "offsets", ()))
                if stream.kind == "inline":
                    found.append((f"inline {offsets}", stream.data or b""))
                else:
                    found.append((f"{stream.kind} {offsets}", directory.child(stream.name).read_bytes()))
    return found


def _spark_migrate(directory: Any, out: Any, spark: Any, **options: Any) -> str:
    from conformance.spark import migrate_flink_savepoint_spark

    return migrate_flink_savepoint_spark(directory, out, sup.new_states(), schema_evolution=True, spark=spark,
                                         **options)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("directory", KEPT, ids=lambda p: p.parent.name)
def test_spark_writes_the_one_process_savepoint_byte_for_byte(directory, spark, tmp_path):
    before = file_tree(directory)
    one = migrate_flink_savepoint(directory, tmp_path / "one", sup.new_states(), schema_evolution=True)
    whole = _spark_migrate(directory, tmp_path / "spark", spark)
    pieces = _spark_migrate(directory, tmp_path / "pieces", spark, piece_bytes=1)
    assert file_tree(directory) == before, f"{directory}: migrating modified the input"
    want = file_tree(one)
    assert len(want) >= 1 and "_metadata" in want, f"the one-process output holds {sorted(want)}"
    for name, got in (("Spark", file_tree(whole)), ("Spark, one task per key group", file_tree(pieces))):
        differ = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        assert not differ, f"{directory.parent.name}: the {name} output differs from one process's in {differ}"
    assert sorted(os.listdir(tmp_path)) == ["one", "pieces", "spark"], (
        f"got {sorted(os.listdir(tmp_path))}: a temporary directory or piece was left behind")
    def raw(path: Any) -> list[bytes]:
        return [e.value for e in read_flink_savepoint(path).operator("keyed-states").keyed_state("pojo").raw_entries()]

    old, new = raw(directory), raw(whole)
    assert len(old) == len(new) > 0 and all(a != b for a, b in zip(old, new, strict=True)), (
        "the POJO values were not migrated (their bytes should all change: a field was added)")


def test_one_process_pieces_equal_whole_streams(tmp_path):
    for directory in KEPT:
        whole = migrate_flink_savepoint(directory, tmp_path / f"{directory.parent.name}-whole", sup.new_states(),
                                        schema_evolution=True)
        split = migrate_flink_savepoint(directory, tmp_path / f"{directory.parent.name}-split", sup.new_states(),
                                        schema_evolution=True, piece_bytes=1)
        assert file_tree(whole) == file_tree(split), (
            f"{directory.parent.name}: a stream written in key-group pieces differs from the stream written whole")
    left = [n for n in os.listdir(tmp_path) if ".tmp-" in n or "piece" in n]
    assert left == [], f"got {left} after the writes, should be no temporary and no piece"


def test_inline_streams_stay_inline_below_flinks_threshold(tmp_path):
    directory = next(d for d in KEPT if d.parent.name == "rocksdb_inline_string")
    out = migrate_flink_savepoint(directory, tmp_path / "out", sup.new_states(), schema_evolution=True)
    assert sorted(os.listdir(out)) == ["_metadata"], (
        f"got {sorted(os.listdir(out))}: streams of at most 20 KiB (Flink's data-inline-threshold) should stay "
        "inline in _metadata")
    kinds = {kind.split()[0] for kind, _ in _streams(out)}
    assert kinds == {"inline"}, f"got stream kinds {kinds}, should all be inline"


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_s3_output_through_the_commit_protocol(spark, s3_bucket, tmp_path):
    directory = next(d for d in KEPT if d.parent.name == "hashmap_files_long")
    before = file_tree(directory)
    local = migrate_flink_savepoint(directory, tmp_path / "local", sup.new_states(), schema_evolution=True)
    one = migrate_flink_savepoint(directory, f"{s3_bucket}/one", sup.new_states(), schema_evolution=True)
    on_spark = _spark_migrate(directory, f"{s3_bucket}/spark", spark, piece_bytes=1)
    assert (one, on_spark) == (f"{s3_bucket}/one", f"{s3_bucket}/spark"), f"got {one}, {on_spark}"
    want = _streams(local)
    for out in (one, on_spark):
        assert is_flink_savepoint(out), f"{out}: no Flink _metadata"
        got = _streams(out)
        assert [k for k, _ in got] == [k for k, _ in want] and got == want, (
            f"{out}: the streams differ from the local output's")
        assert _content(out) == _content(local), f"{out}: reads back other entries than the local output"
        names = [k.rsplit("/", 1)[1] for k in objects(s3_bucket, out.split("/", 3)[3] + "/")]
        assert "_metadata" in names and not any(".piece-" in n for n in names), f"{out}: objects {names}"
    # S3 in, S3 out, on Spark: the same streams again.
    again = _spark_migrate(one, f"{s3_bucket}/again", spark)
    migrated_twice = migrate_flink_savepoint(local, tmp_path / "twice", sup.new_states(), schema_evolution=True)
    assert _streams(again) == _streams(migrated_twice), "S3 -> S3 on Spark differs from the same migration on disk"
    with pytest.raises(SavepointFormatError, match="already holds a savepoint"):
        migrate_flink_savepoint(directory, one, sup.new_states(), schema_evolution=True)
    assert file_tree(directory) == before, "migrating modified the input"


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_a_failed_attempt_leaves_no_object_and_a_retry_commits(spark, s3_bucket, tmp_path):
    from conformance.spark import SparkJobError

    directory = next(d for d in KEPT if d.parent.name == "hashmap_files_long")
    before = file_tree(directory)

    def fail_late(task: int) -> None:
        if task >= 3:
            raise RuntimeError(f"injected failure in task {task}")

    out = f"{s3_bucket}/out"
    with pytest.raises(RuntimeError, match="injected failure in task 3"):
        migrate_flink_savepoint(directory, out, sup.new_states(), schema_evolution=True, piece_bytes=1,
                                _fault=fail_late)
    assert objects(s3_bucket, "out/") == {}, "the failed one-process attempt left objects"
    with pytest.raises(SparkJobError, match="injected failure in task"):
        _spark_migrate(directory, out, spark, piece_bytes=1, _fault=fail_late)
    assert objects(s3_bucket, "out/") == {}, "the failed Spark attempt left objects"
    with pytest.raises(SavepointFormatError, match="no _metadata"):
        read_flink_savepoint(out)
    assert file_tree(directory) == before, "a failed migration modified the input"
    local_failed = tmp_path / "failed"
    with pytest.raises(RuntimeError, match="injected failure"):
        migrate_flink_savepoint(directory, local_failed, sup.new_states(), schema_evolution=True, piece_bytes=1,
                                _fault=fail_late)
    assert os.listdir(tmp_path) == [], f"the failed local attempt left {os.listdir(tmp_path)}"
    done = _spark_migrate(directory, out, spark)
    assert _streams(done) == _streams(migrate_flink_savepoint(directory, tmp_path / "want", sup.new_states(),
                                                              schema_evolution=True)), "the retry wrote other streams"


def _cli(cwd: Path, *argv: str) -> Any:
    (cwd / "new_job.py").write_text(sup.NEW_JOB_MODULE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-m", "conformance", "migrate", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_cli_migrates_a_flink_savepoint_on_spark(tmp_path):
    directory = next(d for d in KEPT if d.parent.name == "hashmap_files_long")
    common = ("--serializers", "new_job:STATES", "--schema-evolution")
    one = _cli(tmp_path, str(directory), *common, "--out", str(tmp_path / "one"))
    assert one.returncode == 0, f"exit {one.returncode}: {one.stderr}"
    on_spark = _cli(tmp_path, str(directory), *common, "--out", str(tmp_path / "spark"), "--spark", "local[2]",
                    "--json", str(tmp_path / "spark.json"))
    assert on_spark.returncode == 0, f"exit {on_spark.returncode}: {on_spark.stderr[-3000:]}"
    report = json.loads((tmp_path / "spark.json").read_text(encoding="utf-8"))
    assert report["format"] == "flink" and report["spark"] == "local[2]", report
    assert file_tree(tmp_path / "spark") == file_tree(tmp_path / "one"), "--spark wrote another savepoint"
    off = _cli(tmp_path, str(directory), *common, "--out", str(tmp_path / "off"), "--spark", "off")
    assert off.returncode == 0 and "in one process" in off.stdout, f"exit {off.returncode}: {off.stdout} {off.stderr}"
    assert file_tree(tmp_path / "off") == file_tree(tmp_path / "one"), "--spark off wrote another savepoint"
    refused = _cli(tmp_path, str(directory), "--serializers", "new_job:STATES", "--out", str(tmp_path / "refused"),
                   "--spark", "local[2]")
    assert refused.returncode == 1 and "--schema-evolution" in refused.stderr, (
        f"exit {refused.returncode}, should be 1 (row evolution refused): {refused.stderr[-2000:]}")
    assert not (tmp_path / "refused").exists(), "a refused migration wrote its output"


@pytest.mark.flink
@pytest.mark.spark
@pytest.mark.xdist_group("flink")
def test_flink_restores_what_spark_migrated(flink_savepoints, flink_job, flink_restore, spark, tmp_path):
    classes = savepoints.compile_user_classes(flink_job, {"SavepointPojo.java": sup.POJO_WITH_A_NOTE},
                                              tmp_path / "pojo2")
    requests, wants = [], {}
    new_row = {"row": "row<string,long,double,string>"}
    for name, (directory, expected) in sorted(flink_savepoints.items()):
        out = _spark_migrate(directory, tmp_path / name, spark, piece_bytes=1 << 10)
        assert locate(out).exists(), f"{name}: nothing at {out}"
        requests.append(savepoints.RestoreRequest.of(name, Path(out), expected, state_types=new_row))
        wants[name] = restored_after_migration(expected)
    results = flink_restore(requests, classpath_first=[classes])
    for name, want in wants.items():
        result = results[name]
        assert result.verdict == "restored", f"Flink failed to restore the Spark-migrated {name}: {result.error}"
        got = savepoints.read_back(result)
        assert got == want, (f"{name}: Flink read back differs; missing {sorted(set(want) - set(got))[:3]}, "
                             f"unexpected {sorted(set(got) - set(want))[:3]}")
