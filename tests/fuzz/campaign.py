"""A fuzzing campaign: N mutated inputs (records, snapshots, savepoints, Flink savepoints) against every reader.

    python tests/fuzz/campaign.py --inputs 200000 --seed 1 --json campaign.json

Runs in one process under an address-space limit (its size at start plus ``--memory`` MiB),
with the canary and the per-input limits of ``fuzzing.run_guarded``, and prints the counts of
non-StateError exceptions, hangs, memory growth, imports and unpicklings without opt-in. Exit
status 1 when any was found. Long: run it under ``nice``.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))

import fuzzing  # noqa: E402

KINDS = ("escape", "hang", "memory", "import", "unpickle")


def _address_space() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[0]) * resource.getpagesize()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mix", default="60:30:10:10",
                        help="records:snapshots:savepoints:flink weights (flink: mutated real Flink savepoints)")
    parser.add_argument("--memory", type=int, default=1024, help="MiB of address space beyond the start")
    parser.add_argument("--json", default=None, help="write the summary here")
    parser.add_argument("--findings", type=int, default=100, help="findings kept in the summary")
    args = parser.parse_args(argv)

    weights = [int(w) for w in args.mix.split(":")]
    weights += [0] * (4 - len(weights))
    rng = random.Random(args.seed)
    source = fuzzing.RandomSource(rng)
    root = tempfile.mkdtemp(prefix="fuzz-campaign-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    counts: collections.Counter[str] = collections.Counter()
    per_entry: collections.Counter[str] = collections.Counter()
    findings: list[dict[str, object]] = []
    slowest = 0.0
    start = time.monotonic()
    try:
        bases = fuzzing.make_bases(os.path.join(root, "bases"))
        scratch = os.path.join(root, "scratch")
        os.mkdir(scratch)
        fuzzing.warm_up(bases)
        fuzzing.canary()
        limit = _address_space() + (args.memory << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
        for i in range(args.inputs):
            kind = rng.choices(("record", "snapshot", "savepoint", "flink"), weights)[0]
            if kind == "record":
                config, entry, data, call = fuzzing.record_input(source)
            elif kind == "snapshot":
                config, entry, data, call = fuzzing.snapshot_input(source)
            elif kind == "savepoint":
                config, entry, data, call = fuzzing.savepoint_input(source, bases, scratch)
            else:
                config, entry, data, call = fuzzing.flink_input(source, scratch)
            outcome = fuzzing.run_guarded(config, entry, data, call)
            counts[kind] += 1
            per_entry[entry.split("[")[0]] += 1
            slowest = max(slowest, outcome.seconds)
            if outcome.problem is not None:
                counts[outcome.problem] += 1
                if len(findings) < args.findings:
                    findings.append({"input": i, "problem": outcome.problem, "config": outcome.config,
                                     "entry": outcome.entry, "detail": outcome.detail,
                                     "data": outcome.data.hex()})
                    print(fuzzing.describe(outcome)[:600], flush=True)
            if (i + 1) % 10000 == 0:
                print(f"{i + 1} inputs, {time.monotonic() - start:.0f} s, "
                      f"{ {k: counts[k] for k in KINDS} }", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    summary = {
        "inputs": args.inputs, "seed": args.seed, "seconds": round(time.monotonic() - start, 1),
        "by_kind": {k: counts[k] for k in ("record", "snapshot", "savepoint", "flink")},
        "by_entry": dict(per_entry), "problems": {k: counts[k] for k in KINDS},
        "slowest_input_seconds": round(slowest, 3),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10,
        "findings": findings,
    }
    text = json.dumps(summary, indent=1)
    print(text if len(text) < 4000 else json.dumps({k: v for k, v in summary.items() if k != "findings"}, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            handle.write(text)
    return 1 if any(counts[k] for k in KINDS) else 0


if __name__ == "__main__":
    sys.exit(main())
