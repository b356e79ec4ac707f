"""Benchmark: ``conformance certify --builtins`` with every family including Spark, against
the same command without Spark (the baseline), measured in the same run.

Each command runs in its own process tree; wall time is measured around it, and CPU time is
summed over the processes it started (sampled from /proc every 0.3 s: the Python processes,
the JVM, the PySpark workers), so the report also says where the time goes.

    python bench/bench_certify.py [--master local[2]] [--entries N] [--seed 20261121] [--repeat 2]

The target: with Spark on ``local[2]`` at the default 100k entries per subject, at most 45 s
wall on 2 cores. Measured on a quiet 2-core machine, 28 built-ins, ``--seed 1 --repeat 1``: 81 s
against a 24 s baseline before the history was written per period, executors decoded their own
row groups in plain task jobs and fresh-process restores were forked from a zygote; 41.5 s
against 19.1 s (2.18x) with them, 76 s CPU: the harness processes 45.0 s, PySpark workers 19.6 s,
the JVM 9.2 s, fresh-process restores 1.9 s. With 30 built-ins and the checks added since
(``spark.releases`` of every recorded release among them), ``--seed 1 --repeat 1`` on a quiet
machine: 68.8 s against 29.2 s (2.35x), 129 s CPU (harness 76.7 s, PySpark workers 39.0 s, the
JVM 12.2 s): over the 45 s target.
"""

from __future__ import annotations

import argparse
import collections
import os
import shutil
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")


def _group(command: str) -> str:
    if "java" in command.split(" ", 1)[0] or "org.apache.spark" in command:
        return "jvm"
    if "pyspark" in command:
        return "pyspark workers"
    if "_fresh_restore" in command:
        return "fresh-process restores"
    if "conformance" in command:
        return "harness processes"
    return "other"


def _sample(seen: dict[int, tuple[str, float]], since: float) -> None:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{entry}/cmdline") as f:
                command = f.read().replace("\0", " ").strip()
        except OSError:
            continue
        if int(fields[19]) / HZ < since:  # started before this run: not ours
            continue
        seen[int(entry)] = (command, (int(fields[11]) + int(fields[12])) / HZ)


def measure(argv: list[str]) -> tuple[float, dict[str, float]]:
    with open("/proc/uptime") as f:
        since = float(f.read().split()[0]) - 0.5
    seen: dict[int, tuple[str, float]] = {}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None:
        _sample(seen, since)
        time.sleep(0.3)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr.read()[-2000:]}")
    cpu: dict[str, float] = collections.Counter()
    for pid, (command, seconds) in seen.items():
        if pid != os.getpid():
            cpu[_group(command)] += seconds
    return wall, dict(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--entries", type=int, default=None, help="spark entries per subject (default: the harness's)")
    parser.add_argument("--seed", default="20261121")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    if not os.path.isdir("/proc"):
        sys.exit("this benchmark samples /proc (Linux)")
    conformance = shutil.which("conformance") or sys.exit("the conformance command is not installed")
    base = [conformance, "certify", "--builtins", "--seed", args.seed]
    spark = [*base, "--spark", args.master] + ([] if args.entries is None else ["--spark-entries", str(args.entries)])
    for run in range(args.repeat):
        base_wall, base_cpu = measure(base)
        spark_wall, spark_cpu = measure(spark)
        print(f"run {run + 1}: without Spark {base_wall:.1f} s wall, {sum(base_cpu.values()):.0f} s CPU; "
              f"with Spark ({args.master}) {spark_wall:.1f} s wall, {sum(spark_cpu.values()):.0f} s CPU; "
              f"ratio {spark_wall / base_wall:.2f}x")
        for group, seconds in sorted(spark_cpu.items(), key=lambda item: -item[1]):
            print(f"    {group:<24} {seconds:6.1f} s CPU")


if __name__ == "__main__":
    main()
