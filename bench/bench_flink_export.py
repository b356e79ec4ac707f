"""Benchmark: ``conformance savepoint export`` of a large RocksDB-written Flink savepoint, on
Spark (``--spark local[2]``) against one process.

The savepoint is written by Flink itself (tests/flink/SavepointJob.java, case option ``bulk=N``:
N more keys with a ``count`` value and one ``amounts`` map entry each, so 2N keyed entries plus
the job's own; RocksDB backend, state files, parallelism 2, max parallelism 128), once, and kept
under ``$XDG_CACHE_HOME/state-conformance/bench-savepoints/`` (needs a JDK and the ``flink``
extra, as the ``flink`` tests do; ``--savepoint DIR`` uses a savepoint you have instead).

Each export runs in a fresh Python process of its own, which reports its wall time and its peak
resident memory (``ru_maxrss``: the driver's; Spark's JVM and Python workers are other
processes). Both import the code before the clock starts; the Spark session and its Python
workers, with their imports, are started before it too (``started_session``, their start-up
reported apart, as a session's fixed cost), so the ratio compares the exports themselves. Both
exports are checked to hold the same rows. Prints both times, the ratio one-process/Spark (goal
>= 1.5x on two cores), the load average and the parallel capacity (``parallel_capacity``: the
ceiling of any two-task speed-up at the time) before and after.

    python bench/bench_flink_export.py [--keys 500000] [--savepoint DIR] [--master local[2]]
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


def started_session(master: str, modules: tuple[str, ...] = ()) -> float:
    """The Spark session of ``master`` started, with its Python workers and their imports
    (``modules`` too: what the measuring process imported before its clock), as the harness's
    warm-up does; worker reuse keeps them for the job measured next. Returns the seconds it took
    (start-up, reported apart from the job)."""
    from conformance.spark import get_session, warm_workers

    started = time.perf_counter()
    warm_workers(get_session(master), modules)
    return time.perf_counter() - started


def _spin(n: int) -> None:
    total = 0
    for i in range(n):
        total += i * i


def parallel_capacity(n: int = 3_000_000) -> float:
    """How many cores this process group actually gets now: the time of one process spinning,
    doubled, over the time of two spinning at once (2.0: two free cores; 1.0: no more than one,
    e.g. a loaded machine that schedules each session as one group)."""
    import multiprocessing

    context = multiprocessing.get_context("fork")

    def timed(processes: int) -> float:
        started = time.perf_counter()
        running = [context.Process(target=_spin, args=(n,)) for _ in range(processes)]
        for process in running:
            process.start()
        for process in running:
            process.join()
        return time.perf_counter() - started

    return 2 * timed(1) / timed(2)


def _child(mode: str, savepoint: str, out: str, master: str) -> None:
    """One export in this process; prints {"seconds", "startup", "peak_rss_mb", "rows"}."""
    from conformance.spark import export_savepoint_spark
    from reference.savepoint import export_savepoint

    startup = started_session(master) if mode == "spark" else 0.0
    started = time.perf_counter()
    if mode == "spark":
        report = export_savepoint_spark(savepoint, out, master=master)
    else:
        report = export_savepoint(savepoint, out)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "startup": startup, "peak_rss_mb": peak,
                      "rows": sum(d["rows"] for d in report.datasets)}))


def flink_bulk_savepoint(keys: int, **options: object) -> str:
    """A RocksDB savepoint Flink wrote with ``keys`` bulk keys (SavepointJob's ``bulk``; more
    case ``options`` such as ``bulkstate="pojo"``), written once and kept in the cache."""
    sys.path.insert(0, str(ROOT / "tests" / "flink"))
    import conftest  # the jar and JDK lookup of the flink tests
    import savepoints

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    label = "".join(f"-{k}-{v}" for k, v in sorted(options.items()))
    cache = Path(base) / "state-conformance" / "bench-savepoints" / f"rocksdb-bulk-{keys}{label}"
    done = list(cache.glob("bulk/savepoint-*/_metadata"))
    if done:
        return str(done[0].parent)
    jar = conftest._flink_dist_jar()
    javac, java = shutil.which("javac"), shutil.which("java")
    if jar is None or javac is None or java is None:
        sys.exit("needs a JDK and the flink extra (pip install -e .[flink]) to write the savepoint, "
                 "or --savepoint DIR")
    flink = savepoints.compile_job(jar, javac, java)
    scratch = Path(tempfile.mkdtemp(prefix="writing-", dir=cache.parent if cache.parent.exists() else None))
    case = {"bulk": dict(backend="rocksdb", storage="files", compression=False, maxp=128, p=2, key="string",
                         bulk=keys, **options)}
    print(f"writing a RocksDB savepoint with {keys} bulk keys {options or ''} with Flink ...", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-export-jvm-") as jvm_tmp:
        os.environ["JAVA_TOOL_OPTIONS"] = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} -Djava.io.tmpdir={jvm_tmp}".strip()
        written, seconds = savepoints.write_savepoints(flink, scratch, case, timeout=3600)
    print(f"  written in {seconds:.0f} s", flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    scratch.rename(cache)
    return str(next(cache.glob("bulk/savepoint-*")))


def _run(mode: str, savepoint: str, out: str, master: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ran = subprocess.run([sys.executable, __file__, "--child", mode, savepoint, out, master],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    if ran.returncode != 0:
        sys.exit(f"{mode} export failed:\n{ran.stderr[-4000:]}")
    return json.loads(ran.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=500_000, help="bulk keys (2 keyed entries each)")
    parser.add_argument("--savepoint", default=None, help="a Flink savepoint to export instead")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1], args.child[2], args.child[3])
        return
    savepoint = args.savepoint or flink_bulk_savepoint(args.keys)
    size = sum(f.stat().st_size for f in Path(savepoint).iterdir())
    print(f"savepoint {savepoint} ({size / 2**20:.1f} MiB)")
    load_before = os.getloadavg()
    capacity_before = parallel_capacity()
    with tempfile.TemporaryDirectory(prefix="bench-export-") as scratch:
        # Flink's JVMs unpack jars into java.io.tmpdir and, halted, leave them: keep them in here.
        os.environ["JAVA_TOOL_OPTIONS"] = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} -Djava.io.tmpdir={scratch}".strip()
        one = _run("one", savepoint, os.path.join(scratch, "one"), args.master)
        spark = _run("spark", savepoint, os.path.join(scratch, "spark"), args.master)
        import pyarrow.parquet as pq

        manifest = json.loads(Path(scratch, "one", "_export.json").read_text())
        for dataset in manifest["datasets"]:
            a = pq.read_table(Path(scratch, "one", dataset["path"]))
            b = pq.read_table(Path(scratch, "spark", dataset["path"]))
            if not a.equals(b):
                sys.exit(f"{dataset['path']}: the Spark export differs from the one-process export")
    load_after = os.getloadavg()
    capacity_after = parallel_capacity()
    print(f"rows exported: {one['rows']} (one process), {spark['rows']} (Spark)")
    print(f"one process : {one['seconds']:8.1f} s   peak RSS {one['peak_rss_mb']:7.0f} MiB")
    print(f"spark {args.master}: {spark['seconds']:8.1f} s   driver peak RSS {spark['peak_rss_mb']:7.0f} MiB "
          f"(session and Python workers' start-up {spark['startup']:.1f} s, not counted)")
    print(f"ratio one-process / Spark: {one['seconds'] / spark['seconds']:.2f}x (goal >= 1.5x)")
    print(f"load average before {', '.join(f'{x:.2f}' for x in load_before)}; "
          f"after {', '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} cores); parallel capacity "
          f"{capacity_before:.2f} before, {capacity_after:.2f} after")


if __name__ == "__main__":
    main()
