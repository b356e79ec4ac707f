"""The Spark pipeline on savepoints in an object store (an S3 server process on loopback):
``conformance migrate s3://... --out s3://...`` migrates exactly what the single-process backend
migrates, ``conformance verify`` reads s3:// savepoints, a refused migration writes no object,
a failed job leaves no savepoint and a retry commits. Executors read and write through pyarrow
(no Hadoop connector)."""

from __future__ import annotations

import os
import sys

import pytest
import spark_support as sup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "storage"))
from storage_support import objects  # noqa: E402

from reference.savepoint import SavepointFormatError, read_savepoint_metadata

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

KEYS = 1500


def _cli(*argv):
    from conformance.cli import main

    return main(list(argv))


def test_migrate_and_verify_between_s3_uris(spark, s3_bucket, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    source, out = f"{s3_bucket}/in", f"{s3_bucket}/out"
    content = sup.write_history(source, KEYS)
    reference = sup.backend_migrated(source, str(tmp_path / "reference"), "bytes")
    spec = "spark_support:new_descriptors"

    status = _cli("migrate", source, "--serializers", spec, "--out", out, "--schema-evolution", "--spark", "local[2]")
    assert status == 0, f"got exit {status}, should be 0: {capsys.readouterr().err}"
    got = sup.read_back(out, KEYS)
    want = sup.expected_after_migration(content)
    for name in want:
        assert got[name] == want[name], f"got other content in state {name!r} of {out}, should be the migrated history"
    status = _cli("verify", out, "--expect", reference, "--spark", "local[2]")
    assert status == 0, f"got exit {status}, should be 0 (same entries as the backend's migration): {capsys.readouterr()}"
    status = _cli("verify", out, "--expect", source, "--spark", "local[2]")
    assert status == 1, f"got exit {status}, should be 1 (content differs from the unmigrated savepoint)"

    # Refused (row evolution without the option): nothing at all is written under the output.
    status = _cli("migrate", source, "--serializers", spec, "--out", f"{s3_bucket}/refused", "--spark", "local[2]")
    assert status == 1, f"got exit {status}, should be 1 (refused)"
    left = objects(s3_bucket, "refused", markers=True)
    assert left == {}, f"got objects {sorted(left)}, should be none under the refused output"
    status = _cli("migrate", source, "--serializers", spec, "--out", out, "--schema-evolution", "--spark", "local[2]")
    assert status == 2, f"got exit {status}, should be 2 (the output exists)"
    assert os.listdir(tmp_path) == ["reference"], f"got local entries {os.listdir(tmp_path)}, should be only the reference"


def test_a_failed_job_leaves_no_savepoint_and_a_retry_commits(spark, s3_bucket, tmp_path):
    from conformance.spark import SparkJobError, migrate_savepoint

    source, out = f"{s3_bucket}/in", f"{s3_bucket}/out"
    content = sup.write_history(source, KEYS)
    before = objects(s3_bucket, "in/")

    def fail_subtask_two(subtask):
        if subtask == 2:
            raise RuntimeError("injected failure in subtask 2")

    with pytest.raises(SparkJobError, match="injected failure in subtask 2"):
        migrate_savepoint(source, sup.descriptors(sup.new_row()), out, parallelism=3,
                          config=sup.EVOLUTION, spark=spark, _fault=fail_subtask_two)
    with pytest.raises(SavepointFormatError, match="not a savepoint"):
        read_savepoint_metadata(out)
    left = objects(s3_bucket, "out/")
    assert left == {}, f"got objects {sorted(left)} after the failed job, should be none (the attempt removes its files)"
    assert objects(s3_bucket, "in/") == before, "got a changed input savepoint, should be untouched"

    report = migrate_savepoint(source, sup.descriptors(sup.new_row()), out, parallelism=3,
                               config=sup.EVOLUTION, spark=spark)
    assert report.rows > 0, f"got {report.rows} rows, should migrate the history"
    got = sup.read_back(out, KEYS)
    want = sup.expected_after_migration(content)
    for name in want:
        assert got[name] == want[name], f"got other content in state {name!r} after the retry"
    files = [f for s in read_savepoint_metadata(out).states for f in s.files]
    assert len(files) == 9, f"got {len(files)} listed files, should be 3 states x parallelism 3"


def test_a_task_still_writing_when_the_job_fails_is_waited_for_and_its_object_removed(spark, s3_bucket, tmp_path):
    """Spark marks an aborted job's stages finished at once, while its other tasks still run
    (their Python workers are killed only seconds later): subtask 1's object appears a second
    after subtask 2 failed the job, and must be removed with the attempt's others."""
    import time

    from conformance.spark import SparkJobError, migrate_savepoint

    source, out = f"{s3_bucket}/in", f"{s3_bucket}/out"
    sup.write_history(source, KEYS)
    writing, failing, returned = (str(tmp_path / name) for name in ("1-writing", "2-failing", "1-returned"))

    def race(subtask):
        import os
        import time

        def wait_for(path):
            deadline = time.monotonic() + 20
            while not os.path.exists(path) and time.monotonic() < deadline:
                time.sleep(0.05)

        if subtask == 1:  # its object appears when this returns
            open(writing, "w").close()
            wait_for(failing)
            time.sleep(1.0)
            open(returned, "w").close()
        elif subtask == 2:
            wait_for(writing)
            open(failing, "w").close()
            raise RuntimeError("injected failure in subtask 2")

    with pytest.raises(SparkJobError, match="injected failure in subtask 2"):
        migrate_savepoint(source, sup.descriptors(sup.new_row()), out, parallelism=3,
                          config=sup.EVOLUTION, spark=spark, _fault=race)
    assert os.path.exists(failing), "got no failure while subtask 1 wrote, should have raced (the test's premise)"
    executors = spark.sparkContext._jsc.sc().statusTracker()
    deadline = time.monotonic() + 60
    while any(e.numRunningTasks() for e in executors.getExecutorInfos()) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)  # the object's upload after the fault returned
    assert os.path.exists(returned), "got subtask 1 stopped before it wrote, should have written (the test's premise)"
    left = objects(s3_bucket, "out/")
    assert left == {}, f"got objects {sorted(left)} after the failed job, should be none (its tasks are waited for)"


def test_a_killed_driver_leaves_no_savepoint_in_the_bucket_and_a_rerun_commits(spark, s3_bucket, tmp_path):
    import signal
    import subprocess
    import textwrap
    import time

    from conformance.spark import migrate_savepoint

    source, out = f"{s3_bucket}/in", f"{s3_bucket}/out"
    content = sup.write_history(source, KEYS)
    before = objects(s3_bucket, "in/")
    marker = tmp_path / "writing"
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
        import spark_support as sup
        from conformance.spark import migrate_savepoint
        from conformance.spark import get_session
        spark = get_session("local[2]")
        spark.sparkContext.addPyFile(sup.__file__)
        def hang(subtask):
            if subtask == 1:
                open({str(marker)!r}, "w").close()
                time.sleep(600)
        migrate_savepoint({source!r}, sup.descriptors(sup.new_row()), {out!r}, parallelism=2,
                          config=sup.EVOLUTION, spark=spark, _fault=hang)
    """)
    log = open(tmp_path / "driver.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 300
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        if not marker.exists():
            tail = (tmp_path / "driver.log").read_text(errors="replace")[-1500:]
            raise AssertionError(f"got no write in progress (exit {proc.poll()}): {tail}, should have reached the write")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver, its JVM and Python workers
        proc.wait(timeout=60)
        log.close()
    with pytest.raises(SavepointFormatError, match="not a savepoint"):
        read_savepoint_metadata(out)
    assert objects(s3_bucket, "in/") == before, "got a changed input savepoint, should be untouched"
    left = objects(s3_bucket, "out/")
    assert f"out/{'_metadata.json'}" not in left, f"got {sorted(left)}, should hold no metadata"

    migrate_savepoint(source, sup.descriptors(sup.new_row()), out, parallelism=2, config=sup.EVOLUTION, spark=spark)
    now = objects(s3_bucket, "out/")
    assert not set(left) & set(now), f"got {sorted(set(left) & set(now))}, should have removed the killed attempt's files"
    got, want = sup.read_back(out, KEYS), sup.expected_after_migration(content)
    for name in want:
        assert got[name] == want[name], f"got other content in state {name!r} after the rerun"
