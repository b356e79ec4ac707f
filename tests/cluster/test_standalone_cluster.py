"""The Spark jobs on a standalone cluster (a Master and two Workers on loopback, started from
pyspark's spark-class): ``conformance migrate --spark spark://...`` migrates exactly as the
bytes backend does, the spark check family certifies a built-in there, and stopping the cluster
leaves no process behind. Each command runs as its own driver process, as a user would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import spark_support as sup

pytestmark = [pytest.mark.slow, pytest.mark.cluster]

KEYS = 3000
DRIVER_TIMEOUT = 900


def driver_environment() -> dict[str, str]:
    """The driver's environment: this interpreter's import path plus the Spark tests' helper
    module, and the driver bound to loopback like the cluster."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (os.path.dirname(sup.__file__), os.environ.get("PYTHONPATH"))))
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    env["CONFORMANCE_NO_WARMUP"] = "1"
    return env


def conformance(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "conformance", *argv], env=driver_environment(),
                          capture_output=True, text=True, timeout=DRIVER_TIMEOUT, cwd=cwd)


def applications(cluster) -> list[dict]:
    status = cluster.status() or {}
    return status.get("activeapps", []) + status.get("completedapps", [])


def executor_folders(cluster, app_id: str) -> list[Path]:
    """The executors' work folders an application left on each worker (``work-N/APP/EXECUTOR``)."""
    return sorted(p for p in cluster.base.glob(f"work-*/{app_id}/*") if p.is_dir())


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def test_workers_registered_on_loopback(standalone_cluster):
    status = standalone_cluster.status()
    assert status is not None and status["status"] == "ALIVE", f"got master status {status}, should be ALIVE"
    workers = [w for w in status["workers"] if w["state"] == "ALIVE"]
    assert len(workers) == 2, f"got {len(workers)} alive workers, should be 2"
    hosts = {w["host"] for w in workers}
    assert hosts == {"127.0.0.1"}, f"got worker hosts {hosts}, should be loopback only"
    assert status["url"] == standalone_cluster.master_url, f"got {status['url']}, should be {standalone_cluster.master_url}"


def test_cli_migrate_on_the_cluster_equals_the_bytes_backend(standalone_cluster, tmp_path):
    source = str(tmp_path / "in")
    content = sup.write_history(source, KEYS)
    want = sup.backend_migrated(source, str(tmp_path / "bytes-backend"), "bytes")
    before = {a["id"] for a in applications(standalone_cluster)}
    out = str(tmp_path / "out")
    done = conformance("migrate", source, "--serializers", "spark_support:new_descriptors", "--out", out,
                       "--schema-evolution", "--parallelism", "4", "--spark", standalone_cluster.master_url)
    assert done.returncode == 0, f"got exit {done.returncode}, should be 0: {done.stderr[-3000:]}"

    ran = [a for a in applications(standalone_cluster) if a["id"] not in before]
    assert len(ran) == 1, f"got applications {ran}, should be the one migrate job on the cluster"
    folders = executor_folders(standalone_cluster, ran[0]["id"])
    workers = {p.parent.parent.name for p in folders}
    assert workers == {"work-0", "work-1"}, f"got executors on {sorted(workers)}, should be on both workers"

    sup.assert_same_savepoint_content(out, want, "migrated on the cluster vs the bytes backend")
    got = sup.read_back(out, KEYS)
    expected = sup.expected_after_migration(content)
    assert got == expected, "got other values restored from the cluster's savepoint, should be the oracle's"


def test_cli_migrate_on_the_cluster_between_s3_uris(standalone_cluster, s3_bucket, tmp_path):
    """Executors reach the savepoints only over the network: input and output live in the
    loopback S3 server, and nothing of either lands on a local disk."""
    source, out = f"{s3_bucket}/in", f"{s3_bucket}/out"
    content = sup.write_history(source, KEYS)
    want = sup.backend_migrated(source, str(tmp_path / "bytes-backend"), "bytes")
    driver = tmp_path / "driver"
    driver.mkdir()
    done = conformance("migrate", source, "--serializers", "spark_support:new_descriptors", "--out", out,
                       "--schema-evolution", "--parallelism", "4", "--spark", standalone_cluster.master_url,
                       cwd=driver)
    assert done.returncode == 0, f"got exit {done.returncode}, should be 0: {done.stderr[-3000:]}"
    sup.assert_same_savepoint_content(out, want, "migrated on the cluster in S3 vs the bytes backend")
    assert sup.read_back(out, KEYS) == sup.expected_after_migration(content), (
        "got other values restored from S3, should be the oracle's")
    local = [str(p) for root in (driver, standalone_cluster.base) for p in root.rglob("*.parquet")]
    assert not local, f"got savepoint files on the local disk {local[:5]}, should be in the bucket only"


def test_spark_family_certifies_a_builtin_on_the_cluster(standalone_cluster, tmp_path):
    report = tmp_path / "certificate.json"
    done = conformance("certify", "conformance._builtins.subjects:row", "--check", "spark", "--spark",
                       standalone_cluster.master_url, "--spark-entries", "5000", "--seed", "20261124",
                       "--json", str(report))
    assert done.returncode == 0, f"got exit {done.returncode}, should be 0: {done.stdout[-2000:]}{done.stderr[-2000:]}"
    certificate = json.loads(report.read_text())
    statuses = {c["id"]: c["status"] for c in certificate["checks"]}
    want = {"spark.history": "passed", "spark.migration": "passed", "spark.incompatible": "passed",
            "spark.releases": "passed"}
    assert statuses == want, f"got {statuses}, should be {want}"
    assert certificate["options"]["spark"] == standalone_cluster.master_url, (
        f"got spark option {certificate['options']['spark']}, should be {standalone_cluster.master_url}"
    )


def test_stop_ends_daemons_executors_and_python_workers(tmp_path):
    """A second, one-worker cluster with an application running on it (an executor and its
    Python workers alive): stopping the cluster leaves none of their processes."""
    from standalone import StandaloneCluster

    from conformance.spark import SCRATCH_PARENT

    cluster = StandaloneCluster(tmp_path / "cluster", workers=1).start()
    driver = None
    try:
        script = textwrap.dedent(f"""
            import sys
            from conformance.spark import get_session
            spark = get_session({cluster.master_url!r})
            print(spark.sparkContext.parallelize(range(8), 2).map(lambda x: x * 2).sum(), flush=True)
            sys.stdin.read()  # keep the application (and its executor) alive until told
        """)
        driver = subprocess.Popen([sys.executable, "-c", script], env=driver_environment(), text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = driver.stdout.readline()
        assert line.strip() == "56", f"got {line!r} from the driver, should be the job's result 56"
        commands = {pid: command_line(pid) for pid in cluster.remember()}
        executors = [pid for pid, c in commands.items() if "CoarseGrainedExecutorBackend" in c]
        pythons = [pid for pid, c in commands.items() if "pyspark" in c and sys.executable in c]
        assert executors and pythons, f"got cluster processes {commands}, should include an executor and Python workers"
        # The driver's scratch directory exists on the driver's machine only.
        borrowed = [commands[pid] for pid in executors if SCRATCH_PARENT in commands[pid]]
        assert not borrowed, f"got executors {borrowed} using the driver's scratch directory, should use their worker's"
    finally:
        cluster.stop()
        if driver is not None:
            driver.stdin.close()
            driver.wait(timeout=120)
    left = cluster.running_processes()
    assert not left, f"got processes {sorted(left)} still running after stop, should be none"
    assert cluster.status() is None, "got the master answering after stop, should be gone"
