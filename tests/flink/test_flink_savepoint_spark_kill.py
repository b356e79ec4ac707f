"""A Flink savepoint migration killed mid-write (SIGKILL to its process group: the driver, and
with Spark its JVM and Python workers) leaves no savepoint at the output (no ``_metadata``, so
every reader refuses it), the input savepoint byte for byte as it was, and a rerun to the same
output succeeds and removes what the killed attempt left: in one process and on Spark, on a
local disk and in an object store (moto's S3 server on loopback).

The kill lands mid-write: the migration's task hook (``_fault``, tests only) makes one task
create a marker file and sleep once earlier tasks wrote their files; the test checks that files
of the attempt are there, then kills."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import flink_spark_support as sup
import pytest
from test_flink_savepoint_spark import _streams
from test_flink_savepoint_writer import KEPT

from reference import _classes
from reference.backends import migrate_flink_savepoint
from reference.savepoint import (
    SavepointFormatError,
    file_tree,
    is_flink_savepoint,
    locate,
    read_flink_savepoint,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "storage"))
from storage_support import objects  # noqa: E402

pytestmark = [pytest.mark.slow]

SOURCE = next(d for d in KEPT if d.parent.name == "hashmap_files_long")
#: The task that hangs: earlier ones have written their files by then.
HANG_AT = 3


@pytest.fixture(autouse=True)
def _pojo_with_note_is_savepoint_pojo(monkeypatch):
    monkeypatch.setitem(_classes._TYPES, "SavepointPojo", sup.PojoWithNote)
    monkeypatch.setitem(_classes._JAVA_NAMES, sup.PojoWithNote, "SavepointPojo")


def _hashes(directory: Path) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in file_tree(directory).items()}


def _written(out: str, tmp_path: Path, bucket: str | None) -> list[str]:
    """The files the running attempt has written so far."""
    if bucket is not None:
        return sorted(objects(bucket, out.split("/", 3)[3] + "/"))
    return sorted(str(p.relative_to(tmp_path)) for t in tmp_path.glob(".out.tmp-*") for p in t.iterdir())


def _kill_mid_write(tmp_path: Path, out: str, spark: bool, bucket: str | None) -> int:
    """Start the migration in a process group of its own, SIGKILL it mid-write; its pid."""
    marker = tmp_path / "writing"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path[:0] = [{str(ROOT)!r}, {str(HERE)!r}]
        import flink_spark_support as sup
        import reference
        reference.register_type(sup.PojoWithNote, "SavepointPojo")

        def hang(task):
            if task == {HANG_AT}:
                open({str(marker)!r}, "w").close()
                time.sleep(600)

        if {spark!r}:
            from conformance.spark import get_session, migrate_flink_savepoint_spark
            session = get_session("local[2]")
            session.sparkContext.addPyFile(sup.__file__)
            migrate_flink_savepoint_spark({str(SOURCE)!r}, {out!r}, sup.new_states(), schema_evolution=True,
                                          spark=session, piece_bytes=1, _fault=hang)
        else:
            from reference.backends import migrate_flink_savepoint
            migrate_flink_savepoint({str(SOURCE)!r}, {out!r}, sup.new_states(), schema_evolution=True,
                                    piece_bytes=1, _fault=hang)
    """)
    scratch = tmp_path / "driver-tmp"
    scratch.mkdir()
    log_path = tmp_path / "driver.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True, stdout=log,
                                stderr=subprocess.STDOUT, env={**os.environ, "TMPDIR": str(scratch)})
        try:
            deadline = time.monotonic() + 240
            while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.2)
            if not marker.exists():
                tail = log_path.read_text(errors="replace")[-2000:]
                raise AssertionError(f"got no write in progress (exit {proc.poll()}): {tail}")
            time.sleep(0.5)  # the other Spark task's files
            written = _written(out, tmp_path, bucket)
            assert written, "got no file of the attempt before the kill, should be some (the kill is mid-write)"
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
    return proc.pid


@pytest.mark.parametrize("spark", [False, pytest.param(True, marks=[pytest.mark.spark, pytest.mark.xdist_group("spark")])],
                         ids=["one-process", "spark"])
@pytest.mark.parametrize("store", ["local", "s3"])
def test_a_killed_migration_leaves_no_savepoint_and_a_rerun_succeeds(spark, store, tmp_path, request):
    bucket = request.getfixturevalue("s3_bucket") if store == "s3" else None
    out = f"{bucket}/out" if bucket is not None else str(tmp_path / "out")
    before = _hashes(SOURCE)
    pid = _kill_mid_write(tmp_path, out, spark, bucket)

    assert _hashes(SOURCE) == before, "the killed migration changed the input savepoint"
    assert not is_flink_savepoint(out), f"{out}: a Flink savepoint after the kill, should be none"
    with pytest.raises(SavepointFormatError, match="no _metadata"):
        read_flink_savepoint(out)
    if bucket is None:
        assert not locate(out).exists(), f"{out} exists after the kill, should not"
        left = [n for n in os.listdir(tmp_path) if n.startswith(".out.tmp-")]
        assert left, "the killed attempt's temporary directory is gone: the kill did not land mid-write"
    else:
        left = [k for k in objects(bucket) if f"-{pid}-" in k]
        assert left and not any(k.endswith("/_metadata") for k in objects(bucket)), (
            f"got objects {sorted(objects(bucket))}: should be the killed attempt's files and no _metadata")

    done = migrate_flink_savepoint(SOURCE, out, sup.new_states(), schema_evolution=True)
    want = migrate_flink_savepoint(SOURCE, tmp_path / "want", sup.new_states(), schema_evolution=True)
    assert _streams(done) == _streams(want), "the rerun wrote other streams than a migration never interrupted"
    if bucket is None:
        left = [n for n in os.listdir(tmp_path) if ".tmp-" in n]
        assert left == [], f"got {left} after the rerun, should be no temporary of the killed attempt"
    else:
        left = [k for k in objects(bucket) if f"-{pid}-" in k]
        assert left == [], f"got {left} after the rerun, should be none of the killed attempt's files"
    assert _hashes(SOURCE) == before, "the rerun changed the input savepoint"
