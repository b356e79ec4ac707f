"""Benchmark: certifying one table subject with the whole ``table`` family at the default budget
(``conformance certify-table`` with no options), against the same run without the two checks
that judge concurrent histories and row faults (``table.linearizable``, ``table.exactly_once``),
measured in the same process, one after the other.

    python bench/bench_table_certify.py [--repeat 2]

The target: one subject's table certification under 15 s at the default budget on the project's
2-core machine. Reported per subject: wall and CPU seconds of the whole family, of the baseline,
their ratio, and the seconds of each check of the family's run.

Measured on the 2-core machine with little else running (load average about 1): the whole
family 1.3 to 2.0 s wall (as much CPU) per subject, 1.42x to 1.85x the CPU of the family without
the two checks (0.9 to 1.2 s); ``table.linearizable`` 0.5 s and ``table.exactly_once`` 0.2 to
0.3 s of it. Under a load average of about 23 (so wall is several times CPU): the whole family 9.7 to 15.6 s wall, 2.0 to 3.3 s CPU per subject, 1.72x to 1.90x
the CPU of the family without the two checks (4.5 to 8.6 s wall, 1.1 to 1.7 s CPU);
``table.linearizable`` 3.8 to 4.8 s wall and ``table.exactly_once`` 1.4 to 2.0 s wall of it.
Since the store answers reads some yields after taking their value and half the histories are
read/write races, under a load average of about 7, run right after the previous version: the
whole family 1.6 to 3.3 s wall, 1.4 to 2.3 s CPU per subject (previous version: 2.6 to 4.6 s
wall, 1.5 to 2.6 s CPU), 1.52x to 1.87x the CPU of the family without the two checks;
``table.linearizable`` 0.5 to 0.6 s wall (previous version: 0.8 to 1.5 s).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import strategies as st  # noqa: E402

from conformance import TableSubject, certify_table  # noqa: E402
from conformance._engine.registry import all_checks, load_families  # noqa: E402
from reference.table import (  # noqa: E402
    CachingTable,
    CompleteBatching,
    LocalTable,
    RemoteTable,
    RetryPolicy,
    TableWriteFunction,
)

NEW = ("table.linearizable", "table.exactly_once")


def add(value: int, update: int) -> int:
    return value + update


class RowWriter(TableWriteFunction):
    def __init__(self, client: Any) -> None:
        self.client = client

    async def put_async(self, key: Any, value: Any) -> None:
        await self.client.put_async(key, value)

    async def delete_async(self, key: Any) -> None:
        await self.client.delete_async(key)

    async def update_async(self, key: Any, update: Any) -> None:
        await self.client.update_async(key, update)


def subjects() -> dict[str, TableSubject]:
    keys, values, updates = st.integers(0, 3), st.integers(-5, 5), st.integers(-3, 3)

    def subject(factory: Any, **kwargs: Any) -> TableSubject:
        return TableSubject(factory, keys, values, updates, add, **kwargs)

    return {
        "remote": subject(lambda r, w: RemoteTable(r, w)),
        "remote batched + retried": subject(
            lambda r, w: RemoteTable(r, w, batching=CompleteBatching(4, 0.0), write_retry_policy=RetryPolicy(3)),
            write_retries=3),
        "own write function, batched + retried": subject(
            lambda r, w: RemoteTable(r, w, batching=CompleteBatching(3, 0.0), write_retry_policy=RetryPolicy(2)),
            write_retries=2, write_function=RowWriter),
        "caching over batched": subject(lambda r, w: CachingTable(RemoteTable(r, w, batching=CompleteBatching(3, 0.0)))),
        "local with merge": subject(lambda: LocalTable(merge=add)),
    }


def measure(subject: TableSubject, checks: tuple[str, ...] | None) -> tuple[float, float, dict[str, float]]:
    wall, cpu = time.perf_counter(), time.process_time()
    results = certify_table(subject, checks=checks)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    failed = [r.id for r in results if r.failed]
    if failed:
        raise SystemExit(f"bench: {failed} failed on a correct table; fix that before measuring")
    return wall, cpu, {r.id: r.seconds for r in results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    load_families(table=True)
    baseline = tuple(c.id for c in all_checks() if c.family == "table" and c.id not in NEW)
    print(f"{'subject':<40} {'family wall/cpu s':>18} {'baseline wall/cpu s':>20} {'cpu ratio':>9}  per check (s)")
    worst = 0.0
    for name, subject in subjects().items():
        for _ in range(args.repeat):
            base_wall, base_cpu, _ = measure(subject, baseline)
            wall, cpu, per_check = measure(subject, None)
            worst = max(worst, wall)
            checks = ", ".join(f"{cid.split('.', 1)[1]} {s:.1f}" for cid, s in per_check.items() if s >= 0.05)
            print(f"{name:<40} {wall:8.1f} / {cpu:6.1f}   {base_wall:8.1f} / {base_cpu:6.1f}   "
                  f"{cpu / base_cpu:8.2f}x  {checks}")
    print(f"slowest subject: {worst:.1f} s wall (target: under 15 s at the default budget)")


if __name__ == "__main__":
    main()
