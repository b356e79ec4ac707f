"""Benchmark: the CPU time of the main job (``conformance certify --builtins``) against the same
command on another revision's tree, the baseline, measured in alternating runs of one session.

    python bench/bench_main_job.py [--against 2448fb4] [--pairs 3] [--seed 20261121] [--jobs 2]

The baseline's tree is checked out into a temporary git worktree (removed at the end) and both
trees are compiled to bytecode first, so no run pays for it. Pairs alternate their order (the
baseline first, then this tree first, ...), each command in a fresh interpreter with
``PYTHONPATH`` set to its tree. CPU is user + system time of the command and every process it waited for (its workers,
fresh-process restores), from ``getrusage(RUSAGE_CHILDREN)``. Reported: each run's CPU and wall
time, each pair's CPU ratio, and their mean and range. Alternating keeps a drift of the machine
(another tenant, clock speed) out of the ratio; a ratio's spread between pairs says how far one
pair can be trusted.

The bound of the harness-power work: the main job within 1.2x the CPU of 2448fb4, the tree
before it. Measured on a 2-core machine, 37 built-ins against 30 there, four pairs: mean 1.15x
(1.12-1.17x; 58.9 s there, 67.9 s here, mean user + system), 1.05x wall.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(tree: str, seed: int, jobs: int) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of the main job on ``tree``."""
    env = dict(os.environ, PYTHONPATH=tree)
    command = [sys.executable, "-m", "conformance", "certify", "--builtins", "--seed", str(seed), "--jobs", str(jobs)]
    cpu, start = _cpu_of_children(), time.perf_counter()
    done = subprocess.run(command, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        print(f"  {tree}: exit {done.returncode}: {done.stderr.strip()[-400:]}", file=sys.stderr)
    return _cpu_of_children() - cpu, wall, done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", default="2448fb4", help="the baseline revision (default 2448fb4)")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)

    parent = tempfile.mkdtemp(prefix="bench-main-job-")
    baseline = os.path.join(parent, "tree")
    try:
        subprocess.run(["git", "-C", HERE, "worktree", "add", "--detach", "-f", baseline, args.against],
                       check=True, capture_output=True)
        for tree in (baseline, HERE):
            subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", tree], capture_output=True, check=False)
        ratios = []
        print(f"main job: conformance certify --builtins --seed {args.seed} --jobs {args.jobs}")
        print(f"{'pair':>4}  {args.against + ' CPU':>14}  {'this CPU':>9}  {'ratio':>6}  {'wall there':>10}  {'wall here':>9}")
        for pair in range(1, args.pairs + 1):
            if pair % 2:
                old_cpu, old_wall, old_status = run_once(baseline, args.seed, args.jobs)
                new_cpu, new_wall, new_status = run_once(HERE, args.seed, args.jobs)
            else:
                new_cpu, new_wall, new_status = run_once(HERE, args.seed, args.jobs)
                old_cpu, old_wall, old_status = run_once(baseline, args.seed, args.jobs)
            if old_status or new_status:
                print(f"pair {pair}: a run failed (exit {old_status} there, {new_status} here); no ratio")
                return 1
            ratios.append(new_cpu / old_cpu)
            print(f"{pair:>4}  {old_cpu:>12.1f} s  {new_cpu:>7.1f} s  {ratios[-1]:>5.2f}x  {old_wall:>8.1f} s  "
                  f"{new_wall:>7.1f} s")
        print(f"CPU ratio: mean {sum(ratios) / len(ratios):.2f}x, {min(ratios):.2f}-{max(ratios):.2f}x over "
              f"{len(ratios)} pairs (bound: 1.2x against 2448fb4)")
        return 0
    finally:
        removed = subprocess.run(["git", "-C", HERE, "worktree", "remove", "--force", baseline],
                                 capture_output=True, check=False)
        shutil.rmtree(parent, ignore_errors=True)
        if removed.returncode:  # forget the worktree whose folder is gone
            subprocess.run(["git", "-C", HERE, "worktree", "prune"], capture_output=True, check=False)


if __name__ == "__main__":
    sys.exit(main())
