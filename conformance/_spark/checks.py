"""The harness's spark family: the backends' history at a size no single test would try, run
as Spark jobs with the serializer shipped to executors.

For a subject: a large history (``spark_entries`` option, else the CONFORMANCE_SPARK_ENTRIES
environment variable, default 100,000 entries) across many keys is written through the bytes
backend; executors decode every entry and compare it with what was written; each compatible
evolution is migrated by the Spark migrate job in bytes and heap mode and compared with the
oracle (in the executors) and with the single-process bytes backend's savepoint (byte for
byte); each incompatible evolution must be refused before anything is written. Anything that
cannot be pickled, or works only in the process that created it, fails here with a clear
message. Imported only when the harness runs with ``--spark`` other than ``off``.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from reference import StateError, StateMigrationError
from reference.serializers import LongSerializer

from .._registry import NotApplicable, Violation, check

__all__ = ["DEFAULT_ENTRIES", "history_entries"]

DEFAULT_ENTRIES = 100_000
EVOLUTION_CONFIG = {"state.schema-evolution.enable": True}
#: Share of the keys that also hold list state (3 elements) and map state (2 entries).
_EVERY = 4


def history_entries(ctx: Any) -> int:
    given = ctx.options.get("spark_entries") or os.environ.get("CONFORMANCE_SPARK_ENTRIES")
    entries = int(given) if given else DEFAULT_ENTRIES
    if entries < 1:
        raise NotApplicable(f"spark_entries is {entries}; give a positive number of entries")
    return entries


def _layout(key: int, values: list[Any], migrate: Callable[[Any], Any] | None = None) -> tuple[Any, Any, Any]:
    """(value, list or None, map or None) of ``key`` in the large history; ``migrate`` maps
    each old value to the expected new one (the oracle)."""
    n = len(values)
    fix = migrate or (lambda v: v)
    value = fix(values[key % n])
    if key % _EVERY:
        return value, None, None
    elements = [fix(values[(key + j) % n]) for j in range(3)]
    entries = {"a": value, "b": fix(values[(key + 1) % n])}
    return value, elements, entries


def _keys_for(entries: int) -> int:
    # value: 1 row per key; every _EVERY-th key adds 1 list row and 2 map rows.
    return max(1, (entries * _EVERY) // (_EVERY + 3))


def _spark(ctx: Any) -> Any:
    from .session import get_session

    try:
        return get_session(ctx.spark)
    except StateError as exc:
        raise NotApplicable(f"Spark is not usable here: {exc}") from None


def _shippable(serializer: Any, what: str) -> None:
    from pyspark import cloudpickle

    try:
        clone = cloudpickle.loads(cloudpickle.dumps(serializer))
    except Exception as exc:
        raise Violation(
            f"{what} {serializer!r} cannot be pickled to ship it to Spark executors "
            f"({type(exc).__name__}: {exc}), should be picklable (no locks, open files or "
            "process-bound resources)"
        ) from None
    if clone != serializer:
        raise Violation(
            f"{what} {serializer!r} is not equal to itself after pickling (got {clone!r}), "
            "should be: executors would run a different serializer"
        )


def _work(ctx: Any, what: str) -> str:
    return os.path.join(ctx.work_dir, f"spark-{what}-{uuid.uuid4().hex[:8]}")


def _write_history(ctx: Any, serializer: Any, values: list[Any], keys: int) -> str:
    from reference.backends import BytesStateBackend

    from .._state_layout import descriptors

    value_d, list_d, map_d = descriptors(serializer)
    backend = BytesStateBackend(LongSerializer())
    try:
        vs, ls, ms = backend.get_value_state(value_d), backend.get_list_state(list_d), backend.get_map_state(map_d)
        for key in range(keys):
            value, elements, entries = _layout(key, values)
            backend.set_current_key(key)
            vs.update(serializer.copy(value))
            if elements is not None:
                ls.update([serializer.copy(e) for e in elements])
                ms.put_all({k: serializer.copy(v) for k, v in entries.items()})
        return backend.savepoint(_work(ctx, "history"))  # type: ignore[no-any-return]
    except StateError as exc:
        raise Violation(f"writing the large history through the bytes backend failed: {exc}") from None
    finally:
        backend.close()


def _oracle_job(values: list[Any], migrate: Callable[[Any], Any] | None, kind: str,
                serializer: Any, sample: int = 3) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """Executor side: decode each row of one state and compare it with the history's value
    (migrated by the oracle); per batch (rows, mismatches, samples)."""
    from reference.backends import decode_list_value

    from .._canonical import canonical, show

    keys = LongSerializer()
    user_keys = None
    if kind == "map":
        from reference.serializers import StringSerializer

        user_keys = StringSerializer()

    def expected(key: int, user_key: Any) -> Any:
        value, elements, entries = _layout(key, values, migrate)
        if kind == "value":
            return value
        if kind == "list":
            return elements
        return None if entries is None else entries.get(user_key, KeyError)

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa

        for batch in batches:
            bad, found = 0, []
            columns = [batch.column(i).to_pylist() for i in (1, 3, 4)]
            for key_bytes, user_key_bytes, data in zip(*columns, strict=True):
                key = keys.from_bytes(key_bytes)
                user_key = None if user_keys is None else user_keys.from_bytes(user_key_bytes)
                try:
                    if data is None:
                        got = None
                    elif kind == "list":
                        got = [serializer.from_bytes(e) for e in decode_list_value(data, serializer)]
                    else:
                        got = serializer.from_bytes(data)
                    want = expected(key, user_key)
                    same = canonical(got) == canonical(want)
                    problem = None if same else f"key {key}{'' if user_key is None else f' map key {user_key!r}'}: got {show(got)}, should be {show(want)}"
                except Exception as exc:
                    problem = f"key {key}: reading it in an executor raised {type(exc).__name__}: {exc}"
                if problem:
                    bad += 1
                    if len(found) < sample:
                        found.append(problem)
            yield pa.RecordBatch.from_arrays(
                [pa.array([batch.num_rows], pa.int64()), pa.array([bad], pa.int64()),
                 pa.array([found], pa.list_(pa.string()))],
                names=["rows", "bad", "samples"],
            )

    return run


def _oracle_summaries(spark: Any, savepoint: str, values: list[Any], migrate: Callable[[Any], Any] | None,
                      expected_rows: int, where: str, first: int) -> tuple[list[Any], Callable[[list[Any]], None]]:
    """Per-state summary frames comparing every entry with the oracle in the executors
    (tagged ``first``, ``first + 1``, ..., to run in one Spark job with other summaries), and a
    function of their totals that raises the Violation they show."""
    from pyspark.sql import functions as F

    from reference import snapshot_from_bytes
    from reference.backends import read_savepoint_metadata

    from .datasets import read_state_dataframe

    metadata = read_savepoint_metadata(savepoint)
    summaries = []
    for index, state in enumerate(metadata.states):
        serializer = snapshot_from_bytes(state.value_serializer_snapshot).restore_serializer()
        _shippable(serializer, f"{where}: the serializer restored for state {state.name!r}")
        job = _oracle_job(values, migrate, state.kind, serializer)
        summaries.append(read_state_dataframe(spark, savepoint, state)
                         .mapInArrow(job, "rows long, bad long, samples array<string>")
                         .withColumn("state", F.lit(first + index)))

    def judge(totals: list[Any]) -> None:
        total = 0
        for (rows, bad, samples), state in zip(totals, metadata.states, strict=True):
            total += rows
            if bad:
                raise Violation(
                    f"{where}: {bad} of {rows} entries of {state.kind} state read back other values "
                    f"in Spark executors, should equal the oracle's",
                    example="; ".join(samples),
                )
        if total != expected_rows:
            raise Violation(f"{where}: {total} entries read back, should be {expected_rows}")

    return summaries, judge


def _read_back(spark: Any, savepoint: str, values: list[Any], migrate: Callable[[Any], Any] | None,
               expected_rows: int, where: str, expect: str | None = None) -> tuple[Any, Callable[[], None]]:
    """Decode every entry of ``savepoint`` with its own serializers (``verify_savepoint``'s
    decoders) and compare it with the oracle, both in one Spark job: a job's fixed cost
    dominates for small histories. Returns the verification report's maker (which compares
    with ``expect`` in its own job) and the oracle's judge."""
    from .jobs import _collect_summaries, _verification

    decoders, finish = _verification(spark, savepoint, expect=expect, sample=3)
    oracle, judge = _oracle_summaries(spark, savepoint, values, migrate, expected_rows, where, len(decoders))
    totals = _collect_summaries(f"{where}, reading it back", decoders + oracle, 3)
    return (lambda: finish(totals[:len(decoders)])), (lambda: judge(totals[len(decoders):]))


def _history(ctx: Any) -> tuple[str, list[Any], int]:
    if "spark_history" not in ctx.cache:
        ctx.result("spark.history")
    if "spark_history" not in ctx.cache:
        raise NotApplicable("spark.history did not pass")
    return ctx.cache["spark_history"]  # type: ignore[no-any-return]


@check(id="spark.history", family="spark", requires=("roundtrip.bit_exact", "snapshot.restore"))
def spark_history(ctx) -> None:  # type: ignore[no-untyped-def]
    """A large history written through the bytes backend reads back exactly in Spark executors."""
    from reference.backends import read_savepoint_metadata

    from .._checks._backends import bulk_values

    entries = history_entries(ctx)
    serializer = ctx.serializer()
    _shippable(serializer, "the serializer")
    values = bulk_values(ctx)
    spark = _spark(ctx)
    savepoint = _write_history(ctx, serializer, values, _keys_for(entries))
    rows = sum(s.rows for s in read_savepoint_metadata(savepoint).states)
    try:
        verification, judge = _read_back(spark, savepoint, values, None, rows, "the large history")
        report = verification()
    except StateError as exc:
        raise Violation(f"reading the large history in Spark executors failed: {exc}") from None
    if not report.ok:
        bad = [s for s in report.states if not s.ok]
        raise Violation(
            f"{sum(s.bad_entries for s in bad)} of {report.entries} entries do not decode in Spark "
            f"executors with nothing left over, should all decode",
            example="; ".join(sample for s in bad for sample in s.samples[:3]),
        )
    judge()
    ctx.cache["spark_history"] = (savepoint, values, rows)


def _single_process(ctx: Any, savepoint: str, new: Any) -> str:
    from reference.backends import BytesStateBackend

    from .._state_layout import descriptors

    backend = BytesStateBackend.restore(savepoint, LongSerializer(), config=EVOLUTION_CONFIG)
    try:
        value_d, list_d, map_d = descriptors(new)
        backend.get_value_state(value_d)
        backend.get_list_state(list_d)
        backend.get_map_state(map_d)
        return backend.savepoint(_work(ctx, "single-process"))  # type: ignore[no-any-return]
    finally:
        backend.close()


@check(id="spark.migration", family="spark", requires=("spark.history", "migration.verdict"))
def spark_migration(ctx) -> None:  # type: ignore[no-untyped-def]
    """Each compatible evolution migrates the large history on Spark (bytes and heap mode) to
    the oracle's values and to the single-process bytes backend's savepoint, byte for byte."""
    from .._checks._migration import declared_steps
    from .._state_layout import descriptors
    from .jobs import SerializerShippingError, SparkJobError, migrate_savepoint

    steps = [s for s in declared_steps(ctx) if s.expect != "incompatible"]
    if not steps:
        raise NotApplicable("no compatible evolutions declared")
    savepoint, values, rows = _history(ctx)
    spark = _spark(ctx)
    for step in steps:
        with step.active():
            _shippable(step.new, f"{step.label}: the new serializer")
            try:
                reference = _single_process(ctx, savepoint, step.new)
            except StateError as exc:
                raise Violation(f"{step.label}: the single-process bytes backend refused the large history: {exc}") from None
            for mode in ("bytes", "heap"):
                where = f"{step.label}, Spark {mode} mode"
                out = _work(ctx, f"migrated-{mode}")
                try:
                    migrate_savepoint(savepoint, descriptors(step.new), out, mode=mode,
                                      config=EVOLUTION_CONFIG, spark=spark)
                except (SparkJobError, SerializerShippingError) as exc:
                    raise Violation(f"{where}: the migrate job failed: {exc}", example=step.label) from None
                except StateError as exc:
                    raise Violation(f"{where}: the migrate job raised {type(exc).__name__}: {exc}, should migrate",
                                    example=step.label) from None
                try:
                    verification, judge = _read_back(spark, out, values, step.migrate, rows, where, expect=reference)
                except StateError as exc:
                    raise Violation(f"{where}: {exc}") from None
                judge()
                report = verification()
                if not report.ok:
                    samples = [x for s in report.states for x in s.samples[:2]] + report.problems
                    raise Violation(
                        f"{where}: the migrated savepoint differs from the single-process bytes "
                        f"backend's, should be identical", example="; ".join(samples[:4]))


@check(id="spark.incompatible", family="spark", requires=("spark.history", "migration.verdict"))
def spark_incompatible(ctx) -> None:  # type: ignore[no-untyped-def]
    """Each incompatible evolution is refused by the Spark migrate job before anything is
    written, and the input savepoint is untouched."""
    from .._checks._backends import _tree
    from .._checks._migration import declared_steps
    from .._state_layout import descriptors
    from .jobs import migrate_savepoint

    steps = [s for s in declared_steps(ctx) if s.expect == "incompatible"]
    if not steps:
        raise NotApplicable("no incompatible evolution declared")
    savepoint, _values, _rows = _history(ctx)
    spark = _spark(ctx)
    before = _tree(savepoint)
    for step in steps:
        out = _work(ctx, "refused")
        with step.active():
            try:
                migrate_savepoint(savepoint, descriptors(step.new), out, config=EVOLUTION_CONFIG, spark=spark)
            except StateMigrationError:
                pass
            except StateError as exc:
                raise Violation(f"{step.label}: the migrate job raised {type(exc).__name__}: {exc}, "
                                "should refuse with StateMigrationError", example=step.label) from None
            else:
                raise Violation(f"{step.label}: the Spark migrate job accepted an incompatible evolution, "
                                "should refuse it", example=step.label)
        if os.path.lexists(out):
            raise Violation(f"{step.label}: the refused migration wrote {out}, should write nothing")
        if _tree(savepoint) != before:
            raise Violation(f"{step.label}: the refused migration changed the input savepoint, should leave it untouched")
