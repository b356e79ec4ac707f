"""Benchmark: certify one user-written serializer (no Spark), 100 examples per check.

Target: <= 5 s wall on one core. Prints where the time goes (per family and the slowest checks)
and, as the baseline measured in the same run, one plain hypothesis round-trip property over
the same values with the same number of examples.

    python bench/bench_harness.py [--examples 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    SnapshotFormatError,
    TypeSerializer,
    TypeSerializerSnapshot,
)


class AccountSerializer(TypeSerializer[tuple]):
    """A user serializer: (owner: str, balance: int, tags: list[str]) with a versioned format."""

    def __init__(self, with_tags: bool = True) -> None:
        self.with_tags = with_tags

    def serialize(self, value: tuple, target: DataOutputView) -> None:
        target.write_utf(value[0])
        target.write_long(value[1])
        if self.with_tags:
            target.write_int(len(value[2]))
            for tag in value[2]:
                target.write_utf(tag)

    def deserialize(self, source: DataInputView) -> tuple:
        owner, balance = source.read_utf(), source.read_long()
        if not self.with_tags:
            return (owner, balance)
        n = source.read_int()
        if n < 0 or n * 2 > source.available():
            from reference import SerializationError

            raise SerializationError(f"corrupt tag count {n}")
        return (owner, balance, [source.read_utf() for _ in range(n)])

    def copy(self, value: tuple) -> tuple:
        return (value[0], value[1], list(value[2])) if self.with_tags else value

    def snapshot_configuration(self) -> AccountSnapshot:
        return AccountSnapshot(self.with_tags)


class AccountSnapshot(TypeSerializerSnapshot[tuple]):
    def __init__(self, with_tags: bool = True) -> None:
        self.with_tags = with_tags

    def get_current_version(self) -> int:
        return 2

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_boolean(self.with_tags)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version != 2:
            raise SnapshotFormatError(f"AccountSnapshot: unknown version {read_version}")
        self.with_tags = source.read_boolean()

    def restore_serializer(self) -> AccountSerializer:
        return AccountSerializer(self.with_tags)

    def resolve_schema_compatibility(self, old_snapshot: Any) -> SchemaCompatibility[tuple]:
        if not isinstance(old_snapshot, AccountSnapshot):
            return SchemaCompatibility.incompatible("not an account")
        if old_snapshot.with_tags == self.with_tags:
            return SchemaCompatibility.compatible_as_is()
        if self.with_tags:
            return SchemaCompatibility.compatible_after_migration()
        return SchemaCompatibility.incompatible("tags would be dropped")

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        migrated = element if len(element) == 3 else (element[0], element[1], [])
        if target is not None:
            new.serialize(migrated, target)
        return migrated


TEXT = st.text(max_size=12)
LONGS = st.integers(-(2**63), 2**63 - 1)
ACCOUNTS = st.tuples(TEXT, LONGS, st.lists(TEXT, max_size=4))
OLD_ACCOUNTS = st.tuples(TEXT, LONGS)


def subject() -> Any:
    from conformance import Evolution, Subject

    return Subject(
        AccountSerializer(with_tags=False), OLD_ACCOUNTS,
        evolutions=[
            Evolution(AccountSerializer(with_tags=True), "compatible_after_migration",
                      migrate=lambda old: (old[0], old[1], [])),
        ],
        name="bench:AccountSerializer", locator="bench_harness:SUBJECT",
    )


def __getattr__(name: str) -> Any:  # the fresh-process restore finds the subject here
    if name == "SUBJECT":
        return subject()
    raise AttributeError(name)


def baseline(examples: int) -> float:
    """One ordinary property test: round trip over the same values, same example count."""
    import hypothesis
    from hypothesis import given

    s = AccountSerializer(with_tags=False)

    @hypothesis.seed(1)
    @hypothesis.settings(max_examples=examples, database=None, deadline=None)
    @given(OLD_ACCOUNTS)
    def roundtrip(value: tuple) -> None:
        out = DataOutputView()
        s.serialize(value, out)
        assert s.deserialize(DataInputView(out.getvalue())) == value

    started = time.perf_counter()
    roundtrip()
    return time.perf_counter() - started


def run(examples: int, repeat: int) -> int:
    from conformance import RunConfig, check_serializer

    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    best = None
    for _ in range(repeat):
        base = baseline(examples)
        started = time.perf_counter()
        report = check_serializer(subject(), RunConfig(examples=examples, seed=1, spark="off"))
        wall = time.perf_counter() - started
        if best is None or wall < best[0]:
            best = (wall, base, report)
    assert best is not None
    wall, base, report = best
    if not report.certified:
        print(report.summary())
        return 1
    families: dict[str, float] = {}
    for r in report.results:
        families[r.family] = families.get(r.family, 0.0) + r.seconds
    print(f"certify one user subject, {examples} examples/check, no Spark, one core")
    print(f"  wall: {wall:.2f} s (target <= 5 s)  checks: {len(report.results)}  "
          f"baseline (one plain hypothesis round trip): {base:.3f} s  ratio: {wall / base:.1f}x")
    for family, seconds in sorted(families.items(), key=lambda kv: -kv[1]):
        print(f"  {family:<11} {seconds:6.2f} s  {100 * seconds / wall:5.1f} %")
    print("  slowest checks:")
    for r in sorted(report.results, key=lambda r: -r.seconds)[:6]:
        print(f"    {r.id:<32} {r.seconds:6.2f} s")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    return run(args.examples, args.repeat)


if __name__ == "__main__":
    # Re-enter as the module ``bench_harness`` so the classes have an importable home (the
    # fresh-process restore imports them by name).
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench_harness

    sys.exit(bench_harness.main())
