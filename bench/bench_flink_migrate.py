"""Benchmark: ``conformance migrate`` of a large RocksDB-written Flink savepoint (a POJO state
whose class gained a field), on Spark (``--spark local[2]``) against one process, and against
Flink itself doing the same migration.

The savepoint is written by Flink itself (tests/flink/SavepointJob.java, case options
``bulk=N,bulkstate=pojo``: N more keys with a ``pojo`` value each, SavepointPojo; RocksDB
backend, state files, parallelism 2, max parallelism 128), once, and kept under
``$XDG_CACHE_HOME/state-conformance/bench-savepoints/`` (the cache and the writing of
bench/bench_flink_export.py; needs a JDK and the ``flink`` extra; ``--savepoint DIR`` uses a
savepoint of that job you have instead). The new job's SavepointPojo has a String field
``note`` added, in Python (a dataclass registered under the Java name) and in Java (compiled
for Flink's run).

Three runs, all in this one invocation, on this machine:

- one process: ``reference.backends.migrate_flink_savepoint``;
- Spark: ``conformance.spark.migrate_flink_savepoint_spark`` on ``--master`` (default
  ``local[2]``), the session and its Python workers (with their imports: bench_flink_export's
  ``started_session``) started before the clock starts (their start-up reported apart);
- Flink (the baseline): SavepointJob's remigrate mode, restoring the savepoint with the new
  POJO class on the RocksDB backend (which migrates the state when the operator registers it)
  and taking a new canonical savepoint; the time from submitting the job to the savepoint's
  completion, measured inside the JVM (the JVM's and the MiniCluster's start-up not counted).

The Python runs each run in a fresh process of their own (wall time and the driver's peak
resident memory); their outputs must be the same bytes, and the three outputs must each hold
the N + the job's own ``pojo`` entries. Prints the times, the ratios (one process / Spark: goal
>= 1.5x on two cores; Flink / Spark and Flink / one process), the load average before and after
(a loaded machine slows every run) and the parallel capacity before and after: how much faster
two processes spinning at once go than one, the ceiling of any two-task speed-up at that time
(on a machine that schedules each login session as one group, ``sched_autogroup``, a busy
machine leaves a session about one core's worth or less, however many processes it runs).

    python bench/bench_flink_migrate.py [--keys 1000000] [--savepoint DIR] [--master local[2]]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLINK_TESTS = ROOT / "tests" / "flink"  # the new job's module and its Java twin are the tests'


def _child(mode: str, savepoint: str, out: str, master: str) -> None:
    """One migration in this process; prints {"seconds", "startup", "peak_rss_mb"}."""
    import bench_new_job  # the new job's descriptors (on PYTHONPATH, for the executors too)
    from bench_flink_export import started_session

    from conformance.spark import migrate_flink_savepoint_spark
    from reference.backends import migrate_flink_savepoint

    startup = started_session(master, ("bench_new_job",)) if mode == "spark" else 0.0
    started = time.perf_counter()
    if mode == "spark":
        migrate_flink_savepoint_spark(savepoint, out, bench_new_job.POJO_STATES, master=master)
    else:
        migrate_flink_savepoint(savepoint, out, bench_new_job.POJO_STATES)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "startup": startup, "peak_rss_mb": peak}))


def _run(mode: str, savepoint: str, out: str, master: str, scratch: str) -> dict:
    path = os.pathsep.join([str(ROOT), str(FLINK_TESTS), scratch, os.environ.get("PYTHONPATH", "")])
    ran = subprocess.run([sys.executable, __file__, "--child", mode, savepoint, out, master],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=path), cwd=scratch)
    if ran.returncode != 0:
        sys.exit(f"{mode} migration failed:\n{ran.stderr[-4000:]}")
    return json.loads(ran.stdout.strip().splitlines()[-1])


def _flink(savepoint: str, out: Path, scratch: Path) -> dict:
    sys.path.insert(0, str(FLINK_TESTS))
    import conftest
    import savepoints
    from flink_spark_support import POJO_WITH_A_NOTE  # the evolved class the tests restore with

    jar = conftest._flink_dist_jar()
    javac, java = shutil.which("javac"), shutil.which("java")
    if jar is None or javac is None or java is None:
        sys.exit("needs a JDK and the flink extra (pip install -e .[flink]) for Flink's own migration")
    flink = savepoints.compile_job(jar, javac, java)
    classes = savepoints.compile_user_classes(flink, {"SavepointPojo.java": POJO_WITH_A_NOTE}, scratch / "pojo2")
    request = savepoints.RestoreRequest("remigrate", Path(savepoint), backend="rocksdb", maxp=128, p=2, key="string",
                                        state_types={"pojo": "pojo"})
    return savepoints.remigrate(flink, request, out, classpath_first=[classes])


def _pojo_entries(path: str) -> int:
    from reference.savepoint import read_flink_savepoint

    return read_flink_savepoint(path).operator("keyed-states").count_entries()["pojo"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=1_000_000, help="bulk keys (one pojo entry each)")
    parser.add_argument("--savepoint", default=None, help="a savepoint of SavepointJob to migrate instead")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_flink_export import flink_bulk_savepoint, parallel_capacity

    from reference.savepoint import file_tree

    savepoint = args.savepoint or flink_bulk_savepoint(args.keys, bulkstate="pojo")
    size = sum(f.stat().st_size for f in Path(savepoint).iterdir())
    print(f"savepoint {savepoint} ({size / 2**20:.1f} MiB)")
    load_before = os.getloadavg()
    capacity_before = parallel_capacity()
    with tempfile.TemporaryDirectory(prefix="bench-flink-migrate-") as scratch:
        # Flink's JVMs unpack jars into java.io.tmpdir and, halted, leave them: keep them in here.
        os.environ["JAVA_TOOL_OPTIONS"] = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} -Djava.io.tmpdir={scratch}".strip()
        sys.path.insert(0, str(FLINK_TESTS))
        from flink_spark_support import NEW_JOB_MODULE

        Path(scratch, "bench_new_job.py").write_text(NEW_JOB_MODULE, encoding="utf-8")
        one = _run("one", savepoint, os.path.join(scratch, "one"), args.master, scratch)
        spark = _run("spark", savepoint, os.path.join(scratch, "spark"), args.master, scratch)
        flink = _flink(savepoint, Path(scratch, "flink"), Path(scratch))
        if file_tree(os.path.join(scratch, "one")) != file_tree(os.path.join(scratch, "spark")):
            sys.exit("the Spark output differs from the one-process output")
        counts = {"input": _pojo_entries(savepoint), "one process / Spark": _pojo_entries(os.path.join(scratch, "one")),
                  "Flink": _pojo_entries(flink["savepoint"])}
        if len(set(counts.values())) != 1 or counts["input"] < args.keys:
            sys.exit(f"pojo entries differ: {counts}")
    load_after = os.getloadavg()
    capacity_after = parallel_capacity()
    flink_seconds = flink["millis"] / 1000
    print(f"pojo entries migrated: {counts['input']} (the same count in each output; Spark's output = one process's, "
          "byte for byte)")
    print(f"one process : {one['seconds']:8.1f} s   peak RSS {one['peak_rss_mb']:7.0f} MiB")
    print(f"spark {args.master}: {spark['seconds']:8.1f} s   driver peak RSS {spark['peak_rss_mb']:7.0f} MiB "
          f"(session and Python workers' start-up {spark['startup']:.1f} s, not counted)")
    print(f"Flink 2.3 restore with migration + savepoint (RocksDB, parallelism 2): {flink_seconds:8.1f} s")
    print(f"ratio one-process / Spark: {one['seconds'] / spark['seconds']:.2f}x (goal >= 1.5x)")
    print(f"ratio Flink / Spark: {flink_seconds / spark['seconds']:.2f}x; Flink / one process: "
          f"{flink_seconds / one['seconds']:.2f}x")
    print(f"load average before {', '.join(f'{x:.2f}' for x in load_before)}; "
          f"after {', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} cores); parallel capacity "
          f"(two processes' speed-up over one, 2.0 = two free cores) {capacity_before:.2f} before, "
          f"{capacity_after:.2f} after")


if __name__ == "__main__":
    main()
