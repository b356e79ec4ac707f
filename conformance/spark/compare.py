"""``compare_savepoints``: whether two savepoints hold the same states, snapshots and entries,
counting and sampling the entries that differ, as Spark jobs; ``identical_savepoints``: whether
they are byte for byte the same, on the driver.

Cheapest first: states whose part files are byte-identical hold identical rows (the usual case
when both sides wrote the same rows at the same parallelism). Then a digest of each remaining
state's rows on both sides (one scan each, no shuffle of rows): equal digests mean equal row
multisets. Only states whose digests differ go through the full outer join that counts and
samples the mismatches. The driver never collects state rows: only counts, digests and a
bounded sample of mismatches, decoded for display, come back. With ``master="off"`` the states
whose files differ are joined in this process instead (``_count_mismatches_here``), without
Spark.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from reference.backends import pickle_allowed
from reference.savepoint import (
    SavepointMetadata,
    StateMetadata,
    decode_list_value,
    locate,
    read_savepoint_metadata,
    same_bytes,
    state_data_files,
)

from . import datasets
from ._common import refuse_unpickling, restored_serializer, run_job, short, without_spark

__all__ = ["StateComparison", "ComparisonReport", "compare_savepoints", "identical_savepoints"]


@dataclass
class StateComparison:
    """One state present in both savepoints: what of its description differs (``differences``:
    its kind, its serializer snapshots) and how many of its entries differ (``mismatches``,
    entries only, with up to ``sample`` of them described in ``samples``)."""

    name: str
    kind: str
    mismatches: int = 0
    samples: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.mismatches == 0 and not self.differences


@dataclass
class ComparisonReport:
    """What ``compare_savepoints`` found: problems of the savepoints as a whole (max
    parallelism, key serializer, the set of states) and, per state present in both (in the
    expected savepoint's order), its mismatches."""

    savepoint: str
    expect: str
    states: list[StateComparison] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and all(s.ok for s in self.states)

    @property
    def mismatches(self) -> int:
        return sum(s.mismatches for s in self.states)

    def format(self) -> str:
        verdict = "same" if self.ok else "DIFFERENT"
        lines = [f"compare {self.savepoint} with {self.expect}: {verdict}, {self.mismatches} mismatching"]
        lines += [f"  {p}" for p in self.problems]
        for s in self.states:
            lines.append(f"  {s.name!r} ({s.kind}): {s.mismatches} mismatching")
            lines += [f"    {difference}" for difference in s.differences]
            lines += [f"    {sample}" for sample in s.samples]
        return "\n".join(lines)


def compare_savepoints(
    savepoint: str | os.PathLike[str],
    expect: str | os.PathLike[str],
    *,
    sample: int = 5,
    master: str | None = None,
    spark: Any = None,
    allow_pickle: bool | Iterable[str] = (),
) -> ComparisonReport:
    """Compare ``savepoint`` with ``expect`` (e.g. the oracle's or a single-process backend's):
    same max parallelism, key serializer snapshot and states, each with the same kind and
    snapshots and byte-identical entries (key group, key, namespace, map key, value), whatever
    the files they sit in. Never raises for what it finds: the report says it, with up to
    ``sample`` mismatching entries per state, decoded for display. Raises
    ``SavepointFormatError`` for an unusable savepoint, ``PickleNotAllowedError`` (before
    Spark starts) for a state written with PickleSerializer that ``allow_pickle`` (state
    names, or True) does not name (showing a sample would unpickle), ``SparkJobError`` if a
    job fails. ``spark`` is a session to run on, else ``master``'s (``get_session``);
    ``master="off"`` compares the entries in this process, without Spark (the same join)."""
    refuse_unpickling(savepoint, allow_pickle)
    refuse_unpickling(expect, allow_pickle)
    source = locate(savepoint).uri
    metadata, expected = read_savepoint_metadata(source), read_savepoint_metadata(expect)
    report = ComparisonReport(savepoint=source, expect=locate(expect).uri)
    if metadata.max_parallelism != expected.max_parallelism:
        report.problems.append(
            f"max parallelism {metadata.max_parallelism}, should be {expected.max_parallelism}"
        )
    if metadata.key_serializer_snapshot != expected.key_serializer_snapshot:
        report.problems.append("key serializer snapshot differs from the expected savepoint's")
    names = [s.name for s in metadata.states]
    expected_names = [s.name for s in expected.states]
    if sorted(names) != sorted(expected_names):
        report.problems.append(f"states {sorted(names)}, should be {sorted(expected_names)}")
    compared = []  # (state, result, expected state) of the states whose entries are compared
    for exp_state in expected.states:
        if exp_state.name not in names:
            continue
        state = metadata.state(exp_state.name)
        result = StateComparison(state.name, state.kind)
        report.states.append(result)
        for attr in ("kind", "value_serializer_snapshot", "namespace_serializer_snapshot",
                     "user_key_serializer_snapshot"):
            if getattr(state, attr) != getattr(exp_state, attr):
                result.differences.append(f"{attr.replace('_', ' ')} differs from the expected savepoint's")
        if state.kind != exp_state.kind:
            continue
        compared.append((state, result, exp_state))
    expect_path = os.fspath(expect)
    compared = [entry for entry in compared if not _same_files(source, entry[0], expect_path, entry[2])]
    if not compared:
        return report
    if without_spark(spark, master):
        run_job(f"comparing {source} with {expect}", lambda: _count_mismatches_here(
            source, metadata, expect_path, expected, compared, sample, allow_pickle), in_process=True)
        return report
    if spark is None:
        from .session import get_session

        spark = get_session(master)
    compared = _differing(spark, source, expect_path, compared)
    if compared:
        _count_mismatches(spark, source, metadata, expect_path, expected, compared, sample, allow_pickle)
    return report


def _count_mismatches(
    spark: Any, source: str, metadata: SavepointMetadata, expect: str, expected: SavepointMetadata,
    compared: list[tuple[StateMetadata, StateComparison, StateMetadata]], sample: int,
    allow_pickle: bool | Iterable[str] = (),
) -> None:
    """One full outer join over the ``compared`` states (each side a union tagged with the
    state's index) counts every state's mismatches in one Spark job; samples are fetched only
    for the states that have some."""
    from pyspark.sql import functions as F

    got = functools.reduce(lambda a, b: a.unionByName(b), [
        datasets.read_state_dataframe(spark, source, state).withColumn("state", F.lit(index))
        for index, (state, _, _) in enumerate(compared)
    ]).withColumnRenamed("value", "got")
    want = functools.reduce(lambda a, b: a.unionByName(b), [
        datasets.read_state_dataframe(spark, expect, exp_state).withColumn("state", F.lit(index))
        for index, (_, _, exp_state) in enumerate(compared)
    ]).withColumnRenamed("value", "want")
    cols = ["state", "key_group", "key", "namespace", "user_key"]
    cond = [got[c].eqNullSafe(want[c]) for c in cols]
    joined = got.join(want, cond, "full_outer").select(
        *[F.coalesce(got[c], want[c]).alias(c) for c in cols],
        F.when(got["key"].isNull(), F.lit("missing")).when(want["key"].isNull(), F.lit("unexpected"))
        .otherwise(F.lit("differs")).alias("what"),
        F.col("got"), F.col("want"),
        got["key"].isNull().alias("_no_got"), want["key"].isNull().alias("_no_want"),
    )
    bad = joined.where(F.col("_no_got") | F.col("_no_want") | ~F.col("got").eqNullSafe(F.col("want")))
    counts = {
        int(row[0]): int(row[1]) for row in run_job(
            f"comparing {source} with {expect}", lambda: bad.groupBy("state").count().collect()
        )
    }
    for index, (state, result, exp_state) in enumerate(compared):
        count = counts.get(index, 0)
        result.mismatches += count
        if count:
            rows = run_job(f"comparing state {state.name!r}", bad.where(F.col("state") == index).limit(sample).collect)
            for r in rows:
                result.samples.append(_describe_mismatch(state, metadata, exp_state, r, allow_pickle))


def _count_mismatches_here(
    source: str, metadata: SavepointMetadata, expect: str, expected: SavepointMetadata,
    compared: list[tuple[StateMetadata, StateComparison, StateMetadata]], sample: int,
    allow_pickle: bool | Iterable[str] = (),
) -> None:
    """``_count_mismatches`` without Spark, state by state in this process: the same full
    outer join on (key group, key, namespace, map key), the same verdict per joined row
    (``missing``, ``unexpected``, or ``differs`` when the values are not the same bytes), the
    samples taken in savepoint order. For savepoints one process holds."""

    def entries(path: str, state: StateMetadata) -> dict[tuple[Any, ...], list[Any]]:
        found: dict[tuple[Any, ...], list[Any]] = {}
        for file in state_data_files(path, state):
            for row in datasets.read_parquet(file).to_pylist():
                where = (row["key_group"], row["key"], row["namespace"], row["user_key"])
                found.setdefault(where, []).append(row["value"])
        return found

    def order(where: tuple[Any, ...]) -> tuple[Any, ...]:
        return (*where[:3], where[3] is not None, where[3] or b"")  # nulls first, as Spark sorts

    for state, result, exp_state in compared:
        got, want = entries(source, state), entries(expect, exp_state)
        shown = 0
        for where in sorted(got.keys() | want.keys(), key=order):
            mine, theirs = got.get(where, []), want.get(where, [])
            if not mine:
                rows = [("missing", None, w) for w in theirs]
            elif not theirs:
                rows = [("unexpected", g, None) for g in mine]
            else:
                rows = [("differs", g, w) for g in mine for w in theirs if g != w]
            for what, g, w in rows:
                result.mismatches += 1
                if shown < sample:
                    shown += 1
                    row = {"key": where[1], "user_key": where[3], "got": g, "want": w, "what": what}
                    result.samples.append(_describe_mismatch(state, metadata, exp_state, row, allow_pickle))


def _same_files(source: str, state: StateMetadata, expect: str, exp_state: StateMetadata) -> bool:
    """Whether both states' part files are pairwise byte-identical (read on the driver)."""
    mine, theirs = state_data_files(source, state), state_data_files(expect, exp_state)
    return len(mine) == len(theirs) and all(
        datasets.part_number(a) == datasets.part_number(b) and same_bytes(locate(a), locate(b))
        for a, b in zip(mine, theirs, strict=True)
    )


def identical_savepoints(one: str | os.PathLike[str], other: str | os.PathLike[str]) -> bool:
    """Whether two savepoints are byte for byte the same: equal metadata (states, snapshots,
    layout) and pairwise identical part files. Read on the driver, no Spark job."""
    mine, theirs = read_savepoint_metadata(one), read_savepoint_metadata(other)
    if mine != theirs:
        return False
    return all(_same_files(os.fspath(one), state, os.fspath(other), state) for state in mine.states)


def _row_digests(frame: Any) -> Any:
    """Per (side, state): the row count and sums of two independent 64-bit and 32-bit row
    hashes, split into 32-bit halves so that a sum cannot overflow. Nulls are hashed as flags
    (Spark's hashes skip null inputs), so moving a value between columns changes the digest."""
    from pyspark.sql import functions as F

    parts = []
    for name in ("user_key", "value"):
        parts += [F.coalesce(F.col(name), F.lit(b"")), F.col(name).isNull()]
    columns = [F.col("key_group"), F.col("key"), F.col("namespace"), *parts]
    wide = F.xxhash64(*columns)
    low32 = F.lit(0xFFFFFFFF)
    return frame.groupBy("side", "state").agg(
        F.count(F.lit(1)).alias("rows"),
        F.sum(wide.bitwiseAND(low32)).alias("low"),
        F.sum(F.shiftrightunsigned(wide, 32)).alias("high"),
        F.sum(F.hash(*columns).cast("long").bitwiseAND(low32)).alias("other"),
    )


def _differing(spark: Any, source: str, expect: str, compared: list[Any]) -> list[Any]:
    """The entries of ``compared`` (state, result, expected state) whose rows differ between
    the two savepoints by their digests, all computed in one Spark job."""
    from pyspark.sql import functions as F

    sides = []
    for index, (state, _, exp_state) in enumerate(compared):
        for side, path, st in ((0, source, state), (1, expect, exp_state)):
            sides.append(datasets.read_state_dataframe(spark, path, st)
                         .withColumn("side", F.lit(side)).withColumn("state", F.lit(index)))
    frame = functools.reduce(lambda a, b: a.unionByName(b), sides)
    digests: dict[tuple[int, int], tuple[Any, ...]] = {}
    for row in run_job(f"comparing {source} with {expect}", _row_digests(frame).collect):
        digests[(int(row["side"]), int(row["state"]))] = (row["rows"], row["low"], row["high"], row["other"])
    empty = (0, None, None, None)
    return [entry for index, entry in enumerate(compared)
            if digests.get((0, index), empty) != digests.get((1, index), empty)]


def _describe_mismatch(state: StateMetadata, metadata: SavepointMetadata, exp_state: StateMetadata, row: Any,
                       allow_pickle: bool | Iterable[str] = ()) -> str:
    """One mismatching entry, decoded for display (only a sample ever reaches the driver); the
    serializers of a state ``allow_pickle`` names (True: every state's and the key's) may
    unpickle."""
    from conformance._engine.canonical import show

    def decode(snapshot: bytes | None, data: Any, as_list: bool = False, key: bool = False) -> str:
        if data is None:
            return "null"
        data = bytes(data)
        trusted = allow_pickle is True if key else pickle_allowed(allow_pickle, state.name)
        try:
            serializer = restored_serializer(snapshot, state.name, trusted)
            if serializer is None:
                return short(data)
            if as_list:
                return show([serializer.from_bytes(e) for e in decode_list_value(data, serializer)])
            return show(serializer.from_bytes(data))
        except Exception:
            return short(data)

    is_list = state.kind == "list"
    where = f"key {decode(metadata.key_serializer_snapshot, row['key'], key=True)}"
    if row["user_key"] is not None:
        where += f", map key {decode(state.user_key_serializer_snapshot, row['user_key'])}"
    got = decode(state.value_serializer_snapshot, row["got"], is_list)
    want = decode(exp_state.value_serializer_snapshot, row["want"], is_list)
    if row["what"] == "missing":
        return f"{where}: missing, should be {want}"
    if row["what"] == "unexpected":
        return f"{where}: present ({got}) but not expected"
    return f"{where}: got {got}, should be {want}"
