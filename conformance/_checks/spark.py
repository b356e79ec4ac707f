"""The harness's spark family: the backends' history at a size no single test would try, run
as Spark jobs with the serializer shipped to executors.

For a subject: a large history (``spark_entries`` option, else the CONFORMANCE_SPARK_ENTRIES
environment variable, default 100,000 entries) across many keys is written as the bytes backend
writes it (the backend writes one period of the history, whose rows later keys repeat under
their own key bytes and key groups: the same files as putting every key through the backend,
at a fraction of the cost); executors read every data file themselves, decode every entry and
compare it with what was written; each compatible evolution is migrated by the Spark migrate
job in bytes and heap mode and compared with the oracle (in the executors) and with the
single-process bytes backend's savepoint (byte for byte); each incompatible evolution must be
refused before anything is written; each release recorded in the subject's golden directory
(``Subject(golden=..., releases={...})``) is upgraded the same way (``spark.releases``): a
savepoint of that release's recorded records, its own bytes under its own snapshot, migrated
by the Spark migrate job to the values its ``Evolution`` declares (undeclared: as recorded;
a release read as is in heap mode only, bytes mode would only copy), or refused when declared
incompatible. The history cycles through the few dozen drawn values,
the biggest less often (``history_cycle``: a 16 KB value once per cycle, values up to 256
bytes 16 times), so the executors' work is per distinct value (the jobs convert and decode
each distinct value of a batch once) while every row is still read, migrated, written and
judged in Spark's executors; the single-process bytes backend, the reference for Spark's
bytes, migrates each distinct stored value once too (``migrate_equal_values_once``) and
writes every entry. Anything that cannot be pickled, or works only in the process that
created it, fails here with a clear message. Imported only when the harness runs with
``--spark`` other than ``off``. The family declares its lane (``declare_family``): its checks
run in the process that owns the Spark session, and in a run of two lanes the other lane
writes the history ahead (``write_history_ahead``, ``take_history_ahead``). Everything Spark
does here goes through the public engine, ``conformance.spark``.
"""

from __future__ import annotations

import functools
import os
import pickle
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from reference import StateError, StateMigrationError, Verdict, class_identity
from reference.backends import SCHEMA_EVOLUTION_ENABLED
from reference.serializers import LongSerializer

from .._engine.providers import Provider, provider
from .._engine.registry import NotApplicable, Violation, check, declare_family

if TYPE_CHECKING:
    from .._engine.runner import CheckContext

__all__ = ["DEFAULT_ENTRIES", "HISTORY", "HISTORY_AHEAD", "history_entries", "take_history_ahead",
           "write_history_ahead"]

DEFAULT_ENTRIES = 100_000
EVOLUTION_CONFIG = SCHEMA_EVOLUTION_ENABLED
#: The history's key serializer.
_KEY_SERIALIZER = LongSerializer
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


#: A history entry's value is repeated less often the bigger it is: a value of up to
#: ``_SMALL`` bytes appears ``_ROUNDS`` times per cycle, one of ``k * _SMALL`` bytes
#: ``_ROUNDS // k`` times, and every value at least once.
_SMALL = 256
_ROUNDS = 16


def history_cycle(serializer: Any, values: list[Any]) -> list[Any]:
    """The sequence the large history cycles through (``_layout`` indexes it by key): every
    drawn value, the bigger ones less often, so that the few values drawn at the widest
    encoding boundaries (strings of 16,384 units, 40 KB lists) still travel through every
    Spark path many times while the history stays one of many keys rather than of many bytes.
    Interleaved round by round (a small value recurs every few keys). The values themselves,
    not copies; when every value weighs the same, the values as they are."""
    from ._support import write

    weights = [max(1, min(_ROUNDS, _ROUNDS * _SMALL // max(1, len(write(serializer, v))))) for v in values]
    if len(set(weights)) <= 1:
        return list(values)
    return [v for r in range(_ROUNDS) for v, w in zip(values, weights, strict=True) if w > r]


def _keys_for(entries: int) -> int:
    # value: 1 row per key; every _EVERY-th key adds 1 list row and 2 map rows.
    return max(1, (entries * _EVERY) // (_EVERY + 3))


def _spark(ctx: Any) -> Any:
    from ..spark import HARNESS_CONFIG, get_session

    try:
        return get_session(ctx.spark, config=HARNESS_CONFIG)
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


def _write_history(ctx: Any, serializer: Any, values: list[Any], keys: int, path: str | None = None) -> str:
    """The large history of ``keys`` keys cycling through ``values`` (``_layout``), as the
    bytes backend writes it. The backend writes the first period of keys (``len(values) *
    _EVERY``, after which every key's state repeats that of its key modulo the period) from
    the values themselves; every later key's rows are those of its key modulo the period
    under its own key bytes and key group (the backend's rules: ``key_serializer.to_bytes``,
    ``key_groups_for``), so that each distinct value is serialized once rather than once per
    entry. The files are the very ones the bytes backend writes for the whole history (tests
    compare them byte for byte)."""
    import pyarrow.parquet as pq

    from reference.savepoint import read_savepoint_metadata, state_data_files, write_savepoint_rows

    period = len(values) * _EVERY
    try:
        if keys <= period:
            return _write_through_backend(ctx, serializer, values, range(keys), path or _work(ctx, "history"))
        template = _write_through_backend(ctx, serializer, values, range(period), _work(ctx, "history-period"))
        metadata = read_savepoint_metadata(template)
        history_keys = _history_keys(keys, metadata.max_parallelism)

        def states() -> Any:
            for state in metadata.states:
                (file,) = state_data_files(template, state)
                table = pq.read_table(file)
                positions: dict[bytes, list[int]] = {}  # a period key's bytes -> its rows in the template
                for row, data in enumerate(table.column(1).to_pylist()):
                    positions.setdefault(data, []).append(row)
                period_rows = [positions.get(history_keys.data[key], ()) for key in range(period)]
                taken: list[int] = []  # per row of the history: its template row and its key's place in key order
                owner: list[int] = []
                for place, key in enumerate(history_keys.in_order):
                    for row in period_rows[key % period]:
                        taken.append(row)
                        owner.append(place)
                rows = table.take(taken)
                yield state, rows.set_column(0, rows.schema.field(0), history_keys.groups.take(owner)).set_column(
                    1, rows.schema.field(1), history_keys.column.take(owner))

        return write_savepoint_rows(path or _work(ctx, "history"), states(), max_parallelism=metadata.max_parallelism,
                                    key_serializer_snapshot=metadata.key_serializer_snapshot)
    except StateError as exc:
        raise Violation(f"writing the large history through the bytes backend failed: {exc}") from None


class _HistoryKeys(NamedTuple):
    """The history's keys as the bytes backend stores them (the same for every subject)."""

    data: list[bytes]  # each key's bytes, by key
    in_order: list[int]  # the keys in savepoint order (key group, then key bytes)
    groups: Any  # the key group of each key in that order (Arrow int32)
    column: Any  # the bytes of each key in that order (Arrow binary)


@functools.lru_cache(maxsize=2)
def _history_keys(keys: int, max_parallelism: int) -> _HistoryKeys:
    import pyarrow as pa

    from reference.savepoint import key_groups_for

    serializer = _KEY_SERIALIZER()
    data = [serializer.to_bytes(key) for key in range(keys)]
    order = sorted(zip(key_groups_for(data, max_parallelism), data, range(keys), strict=True))
    return _HistoryKeys(data, [key for _, _, key in order], pa.array([group for group, _, _ in order], pa.int32()),
                        pa.array([key_bytes for _, key_bytes, _ in order], pa.binary()))


def _write_through_backend(ctx: Any, serializer: Any, values: list[Any], keys: range, path: str) -> str:
    from reference.backends import BytesStateBackend

    from .._fresh.layout import descriptors

    value_d, list_d, map_d = descriptors(serializer)
    backend = BytesStateBackend(_KEY_SERIALIZER())
    try:
        vs, ls, ms = backend.get_value_state(value_d), backend.get_list_state(list_d), backend.get_map_state(map_d)
        for key in keys:
            value, elements, entries = _layout(key, values)
            backend.set_current_key(key)
            # No copies: the bytes backend serializes at once, so shared values are safe.
            vs.update(value)
            if elements is not None:
                ls.update(elements)
                ms.put_all(entries)
        return backend.savepoint(path)  # type: ignore[no-any-return]
    finally:
        backend.close()


def _oracle_judge(values: list[Any], migrate: Callable[[Any], Any] | None, kind: str) -> Callable[..., Any]:
    """Compare each decoded entry of one state with the history's value (migrated by the
    oracle), in the executors. The expected value depends only on the key modulo
    ``len(values) * _EVERY`` (and the map key); its canonical form is made here, on the driver,
    for every place of one period: shipped to an executor, a value of a class that is not
    importable by its name (a dataclass defined in a function) arrives as an instance of a copy
    of its class that keeps no qualified name, and canonical forms compare classes by that name.
    The values travel too, for messages only. Each distinct decoded object is canonicalised
    once (the decoder gives one object per distinct bytes)."""
    from .._engine.canonical import canonical, show

    period = len(values) * _EVERY
    if migrate is not None:
        migrated: dict[int, Any] = {}  # id of a history value (the cycle repeats them) -> its oracle value
        for value in values:
            if id(value) not in migrated:
                migrated[id(value)] = migrate(value)
        values = [migrated[id(value)] for value in values]
    forms: dict[int, Any] = {}  # id of an expected value -> its canonical form

    def form(item: Any) -> Any:
        if id(item) not in forms:
            forms[id(item)] = canonical(item)
        return forms[id(item)]

    #: (key modulo the period, map key) -> (the canonical form expected there, the value).
    wanted: dict[tuple[int, Any], tuple[Any, Any]] = {}
    for k in range(period):
        value, elements, entries = _layout(k, values)
        if kind == "value":
            wanted[(k, None)] = (form(value), value)
        elif kind == "list":
            wanted[(k, None)] = (canonical(elements), elements)
        elif entries is not None:
            for user_key, entry in entries.items():
                wanted[(k, user_key)] = (form(entry), entry)
    unexpected = (canonical(KeyError), KeyError)  # a map key the history never wrote there
    canonical_of: dict[int, tuple[Any, Any]] = {}  # id -> (the decoded object, its canonical form)

    def canonical_once(item: Any) -> Any:
        found = canonical_of.get(id(item))
        if found is None or found[0] is not item:
            found = canonical_of[id(item)] = (item, canonical(item))
        return found[1]

    #: (key modulo the period, map key) -> the last object found equal to the oracle's there.
    passed: dict[tuple[int, Any], Any] = {}

    def judge(key: Any, namespace: Any, user_key: Any, got: Any) -> str | None:
        place = (key % period, user_key)
        if passed.get(place, _NOTHING) is got:
            return None
        want_form, want = wanted.get(place, unexpected)
        if canonical_once(got) == want_form:
            passed[place] = got
            return None
        where = "" if user_key is None else f" map key {user_key!r}"
        return f"key {key}{where}: got {show(got)}, should be {show(want)}"

    return judge


_NOTHING = object()


def _read_back(spark: Any, savepoint: str, values: list[Any], migrate: Callable[[Any], Any] | None,
               expected_rows: int, where: str, expect: str | None = None) -> tuple[Any, Callable[[], None]]:
    """Decode every entry of ``savepoint`` with its own serializers (``verify_savepoint``) and
    compare it with the oracle in the same pass (its ``judges``): one Spark job, each entry
    decoded once, then the comparison with ``expect`` if given. Returns the verification
    report's maker and the oracle's judge, a function raising the Violation it shows."""
    from ..spark import verify_savepoint

    def judges(state: Any, serializer: Any) -> Callable[..., Any]:
        _shippable(serializer, f"{where}: the serializer restored for state {state.name!r}")
        return _oracle_judge(values, migrate, state.kind)

    report = verify_savepoint(savepoint, expect=expect, sample=3, spark=spark, allow_pickle=True, judges=judges)

    def judge() -> None:
        for state in report.states:
            if state.rejected:
                raise Violation(
                    f"{where}: {state.rejected} of {state.entries} entries of {state.kind} state read "
                    f"back other values in Spark executors, should equal the oracle's",
                    example="; ".join(state.rejected_samples),
                )
        if report.entries != expected_rows:
            raise Violation(f"{where}: {report.entries} entries read back, should be {expected_rows}")

    return (lambda: report), judge


def write_history_ahead(ctx: Any, directory: str) -> dict[str, Any] | None:
    """The family's ``prepare_ahead`` (``declare_family`` below), for a run in two lanes: write
    the subject's large history into ``directory`` (which outlives this runner) in the process
    that ran the other families, so that the Spark lane only reads it. Returns what
    ``spark.history`` needs to take it (the values in canonical form, to confirm it draws the
    same ones), or None if it is not written here (then spark.history writes it itself and
    reports any problem)."""
    from .._engine.canonical import canonical
    from .backends import bulk_values

    if not all(ctx.result(pre).passed for pre in ("roundtrip.bit_exact", "snapshot.restore")):
        return None
    try:
        keys = _keys_for(history_entries(ctx))
        values = bulk_values(ctx)
        serializer = ctx.serializer()
        savepoint = _write_history(ctx, serializer, history_cycle(serializer, values), keys,
                                   os.path.join(directory, "history"))
    except (Violation, NotApplicable, StateError):
        return None
    try:  # the values themselves, so the Spark lane uses these rather than drawing again
        pickled: bytes | None = pickle.dumps(values)
    except Exception:
        pickled = None
    return {"savepoint": savepoint, "keys": keys, "values": [canonical(v) for v in values], "pickled": pickled}


#: What lane one wrote ahead for spark.history (``write_history_ahead``), when it did.
HISTORY_AHEAD: Provider[dict[str, Any]] = provider("spark_history_ahead")
#: (savepoint, the values it cycles through (``history_cycle``), rows) of the large history
#: spark.history verified.
HISTORY: Provider[tuple[str, list[Any], int]] = provider("spark_history")


def take_history_ahead(runner: Any, ahead: dict[str, Any]) -> None:
    """The family's ``take_ahead``, the Spark lane's side of ``write_history_ahead``: offer the
    history to spark.history and, when they travel, the very values it was written with. Hypothesis' draws can differ
    between processes that imported different modules (it mixes constants found in local
    modules into its choices), so a history is used only for values equal to its own."""
    from .._engine.canonical import canonical
    from .backends import BULK_VALUES

    runner.put(HISTORY_AHEAD, ahead)
    if ahead.get("pickled") is None or runner.has(BULK_VALUES):
        return
    try:
        values = pickle.loads(ahead["pickled"])  # written by this run's own lane-one process
    except Exception:
        return
    if [canonical(v) for v in values] == ahead["values"]:
        runner.put(BULK_VALUES, values)


declare_family("spark", lane="spark", prepare_ahead=write_history_ahead, take_ahead=take_history_ahead)


def _history_written_ahead(ctx: Any, values: list[Any], keys: int) -> str | None:
    from .._engine.canonical import canonical

    ahead = ctx.get(HISTORY_AHEAD) if ctx.has(HISTORY_AHEAD) else None
    if ahead is None or ahead["keys"] != keys or ahead["values"] != [canonical(v) for v in values]:
        return None
    return ahead["savepoint"]  # type: ignore[no-any-return]


def _history(ctx: Any) -> tuple[str, list[Any], int]:
    if not ctx.has(HISTORY):
        ctx.result("spark.history")
    if not ctx.has(HISTORY):
        raise NotApplicable("spark.history did not pass")
    return ctx.get(HISTORY)


@check(id="spark.history", family="spark", requires=("roundtrip.bit_exact", "snapshot.restore"))
def spark_history(ctx: CheckContext) -> None:
    """A large history written through the bytes backend reads back exactly in Spark executors."""
    from reference.savepoint import read_savepoint_metadata

    from .backends import bulk_values

    entries = history_entries(ctx)
    serializer = ctx.serializer()
    _shippable(serializer, "the serializer")
    values = bulk_values(ctx)
    spark = _spark(ctx)
    cycle = history_cycle(serializer, values)
    savepoint = _history_written_ahead(ctx, values, _keys_for(entries))
    if savepoint is None:
        savepoint = _write_history(ctx, serializer, cycle, _keys_for(entries))
    rows = sum(s.rows for s in read_savepoint_metadata(savepoint).states)
    try:
        verification, judge = _read_back(spark, savepoint, cycle, None, rows, "the large history")
        report = verification()
    except StateError as exc:
        raise Violation(f"reading the large history in Spark executors failed: {exc}") from None
    bad = [s for s in report.states if s.bad_entries or s.mismatches]  # the oracle's verdict is judge()'s
    if bad or report.problems:
        raise Violation(
            f"{sum(s.bad_entries for s in bad)} of {report.entries} entries do not decode in Spark "
            f"executors with nothing left over, should all decode (executors are other processes: "
            f"is some state kept only in the writing process?)",
            example="; ".join(sample for s in bad for sample in s.samples[:3]),
        )
    judge()
    ctx.put(HISTORY, (savepoint, cycle, rows))


def _single_process(ctx: Any, savepoint: str, new: Any) -> str:
    from reference.backends import BytesStateBackend

    from .._fresh.layout import descriptors

    # Each distinct stored value migrated once: the history repeats a few dozen values, and
    # equal bytes migrate to equal bytes (the backends family demands deterministic serializers).
    backend = BytesStateBackend.restore(savepoint, _KEY_SERIALIZER(), config=EVOLUTION_CONFIG, allow_pickle=True,
                                        migrate_equal_values_once=True)
    try:
        value_d, list_d, map_d = descriptors(new)
        backend.get_value_state(value_d)
        backend.get_list_state(list_d)
        backend.get_map_state(map_d)
        return backend.savepoint(_work(ctx, "single-process"))  # type: ignore[no-any-return]
    finally:
        backend.close()


def _migrate_both_modes(ctx: Any, step: Any, savepoint: str, spark: Any,
                        modes: tuple[str, ...] = ("bytes", "heap")) -> dict[str, tuple[str, Any]]:
    """Start the bytes-mode and heap-mode migrate jobs of ``step`` at once, from two threads
    (Spark runs concurrent jobs; their tasks share the cores): mode -> (output, future).
    Each job gets its own unpickled copy of the new serializer, as executors do, so that no
    serializer instance is used from two threads."""
    from concurrent.futures import ThreadPoolExecutor

    from pyspark import cloudpickle

    from .._fresh.layout import descriptors
    from ..spark import migrate_savepoint

    pool = ThreadPoolExecutor(2, thread_name_prefix="conformance-spark-migrate")
    jobs = {}
    for mode in modes:
        out = _work(ctx, f"migrated-{mode}")
        new = cloudpickle.loads(cloudpickle.dumps(step.new))
        jobs[mode] = (out, pool.submit(migrate_savepoint, savepoint, descriptors(new), out, mode=mode,
                                       config=EVOLUTION_CONFIG, spark=spark))
    pool.shutdown(wait=False)
    return jobs


def _wait(jobs: dict[str, tuple[str, Any]]) -> None:
    for _, job in jobs.values():
        job.exception()


@check(id="spark.migration", family="spark", requires=("spark.history", "migration.verdict"))
def spark_migration(ctx: CheckContext) -> None:
    """Each compatible evolution migrates the large history on Spark (bytes and heap mode) to
    the oracle's values and to the single-process bytes backend's savepoint, byte for byte."""
    from .migration import declared_steps

    steps = [s for s in declared_steps(ctx) if s.expect != Verdict.INCOMPATIBLE]
    if not steps:
        raise NotApplicable("no compatible evolutions declared")
    local = {step.label: _known_only_here(step) for step in steps}
    for label, classes in local.items():
        if classes:
            ctx.note(f"{label}: not migrated on Spark: its new class{'es' if len(classes) > 1 else ''} "
                     f"{', '.join(classes)} (defined in a function) {'are' if len(classes) > 1 else 'is'} known "
                     "only in this process, and an executor finds a class by its name")
    steps = [step for step in steps if not local[step.label]]
    if not steps:
        raise NotApplicable("every compatible evolution migrates to classes defined in a function, which Spark "
                            "executors cannot find by their names")
    savepoint, cycle, rows = _history(ctx)
    spark = _spark(ctx)
    for step in steps:
        _migrate_on_spark(ctx, step, savepoint, cycle, rows, spark)


def _known_only_here(step: Any) -> list[str]:
    """The names of ``step``'s new classes (``Evolution(classes=...)``) that are not importable
    by their names (defined in a function): another process resolves such a name to the class
    its module registers, the current one."""
    if step.classes is None:
        return []
    return [class_identity(cls) for cls in step.classes[1] if "<locals>" in cls.__qualname__]


def _migrate_on_spark(ctx: Any, step: Any, savepoint: str, cycle: list[Any], rows: int, spark: Any,
                      what: str = "the large history", modes: tuple[str, ...] = ("bytes", "heap")) -> None:
    """Migrate ``savepoint`` (cycling through ``cycle``, ``rows`` entries) with ``step``'s new
    serializer on Spark, in ``modes``, and compare with the oracle (``step.migrate``, in the
    executors) and with the single-process bytes backend's savepoint, byte for byte."""
    from ..spark import SerializerShippingError, SparkJobError, identical_savepoints

    with step.active():
        _shippable(step.new, f"{step.label}: the new serializer")
        jobs = _migrate_both_modes(ctx, step, savepoint, spark, modes)
        try:
            reference = _single_process(ctx, savepoint, step.new)  # while the jobs run
        except StateError as exc:
            _wait(jobs)
            raise Violation(f"{step.label}: the single-process bytes backend refused {what}: {exc}") from None
        try:
            verified = None
            for mode in modes:
                where = f"{step.label}, Spark {mode} mode"
                out, job = jobs[mode]
                try:
                    job.result()
                except (SparkJobError, SerializerShippingError) as exc:
                    raise Violation(f"{where}: the migrate job failed: {exc}", example=step.label) from None
                except StateError as exc:
                    raise Violation(f"{where}: the migrate job raised {type(exc).__name__}: {exc}, should migrate",
                                    example=step.label) from None
                if verified is not None and identical_savepoints(out, verified):
                    # The same bytes as the other mode's output, whose every entry decoded in
                    # executors and equalled the oracle and the reference: reading them back
                    # again would repeat that verdict.
                    continue
                try:
                    verification, judge = _read_back(spark, out, cycle, step.migrate, rows, where, expect=reference)
                except StateError as exc:
                    raise Violation(f"{where}: {exc}") from None
                judge()
                report = verification()
                if not report.ok:
                    samples = [x for s in report.states for x in s.samples[:2]] + report.problems
                    raise Violation(
                        f"{where}: the migrated savepoint differs from the single-process bytes "
                        f"backend's, should be identical", example="; ".join(samples[:4]))
                verified = out
        finally:
            _wait(jobs)  # a failure in one mode leaves no job running behind the check


@check(id="spark.incompatible", family="spark", requires=("spark.history", "migration.verdict"))
def spark_incompatible(ctx: CheckContext) -> None:
    """Each incompatible evolution is refused by the Spark migrate job before anything is
    written, and the input savepoint is untouched."""

    from .migration import declared_steps

    steps = [s for s in declared_steps(ctx) if s.expect == Verdict.INCOMPATIBLE]
    if not steps:
        raise NotApplicable("no incompatible evolution declared")
    savepoint, _values, _rows = _history(ctx)
    spark = _spark(ctx)
    for step in steps:
        _refused_on_spark(ctx, step, savepoint, spark)


def _refused_on_spark(ctx: Any, step: Any, savepoint: str, spark: Any) -> None:
    """The Spark migrate job refuses ``step`` (declared incompatible) on ``savepoint`` with
    StateMigrationError, writing nothing and leaving the input untouched."""
    from reference.savepoint import file_tree

    from .._fresh.layout import descriptors
    from ..spark import migrate_savepoint

    before = file_tree(savepoint)
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
    if file_tree(savepoint) != before:
        raise Violation(f"{step.label}: the refused migration changed the input savepoint, should leave it untouched")


@check(id="spark.releases", family="spark", requires=("spark.history", "versioning.upgrade_records"))
def spark_releases(ctx: CheckContext) -> None:
    """Each release recorded in the golden directory upgrades on Spark: a savepoint holding
    that release's recorded records (its own bytes and snapshot) migrates to the current
    serializer in Spark executors, bytes and heap mode, to the values the release's Evolution
    declares (undeclared: as recorded) and to the single-process bytes backend's savepoint;
    a release declared incompatible is refused before anything is written.

    The versioning family upgrades the same records in this process; this proves the Spark
    engine's migration of real recorded bytes, with the old and new serializers pickled into
    other processes (a migration that leans on state the driver's process built while judging,
    such as a registry filled by resolve_schema_compatibility, reads the records there and
    fails here)."""
    from reference import snapshot_to_bytes

    from .versioning import RESTORED, _step, releases

    recorded = releases(ctx)
    restored = ctx.get(RESTORED)
    spark = None
    for rel in recorded:
        prior, olds, records = restored[rel.release]
        kept = [i for i, value in enumerate(olds) if value is not None]
        if not kept:
            continue
        step = _step(ctx, rel, prior)
        values = [olds[i] for i in kept]
        _shippable(prior, f"{step.label}: the serializer restored from the recorded snapshot")
        spark = spark or _spark(ctx)
        savepoint = _release_savepoint(ctx, prior, values, [records[i] for i in kept], rel.snapshot,
                                       snapshot_to_bytes(prior.snapshot_configuration()))
        if step.expect == Verdict.INCOMPATIBLE:
            _refused_on_spark(ctx, step, savepoint, spark)
            continue
        rows = sum(s.rows for s in _metadata(savepoint).states)
        # A release read as is migrates nothing: bytes mode would only copy the files, heap
        # mode reads every record with the restored serializer in the executors.
        modes = ("heap",) if step.expect == Verdict.COMPATIBLE_AS_IS else ("bytes", "heap")
        _migrate_on_spark(ctx, step, savepoint, values, rows, spark, what=f"the savepoint of {step.label}",
                          modes=modes)
    if spark is None:
        raise NotApplicable("no recorded release holds a non-null record")


def _metadata(savepoint: str) -> Any:
    from reference.savepoint import read_savepoint_metadata

    return read_savepoint_metadata(savepoint)


def _release_savepoint(ctx: Any, prior: Any, values: list[Any], records: list[bytes], snapshot: bytes,
                       restored_snapshot: bytes) -> str:
    """A savepoint of a recorded release as that release wrote it: the history of ``values``
    (``_layout``, one period of keys) written through the bytes backend with ``prior`` (the
    serializer restored from the recorded snapshot), then every stored value replaced by the
    recorded bytes of its record (``records[i]`` holds ``values[i]``; a list is Flink's
    delimited layout of them) and every value snapshot the backend wrote for ``prior`` by the
    recorded snapshot itself."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from reference.savepoint import encode_list_value, state_data_files, write_savepoint_rows
    from reference.serializers import StringSerializer

    n = len(values)
    template = _write_through_backend(ctx, prior, values, range(n * _EVERY), _work(ctx, "release-template"))
    metadata = _metadata(template)
    keys, map_keys = _KEY_SERIALIZER(), StringSerializer()

    def recorded(kind: str, key: int, user_key: bytes | None) -> bytes:
        if kind == "value":
            return records[key % n]
        if kind == "list":
            return encode_list_value([records[(key + j) % n] for j in range(3)])
        assert user_key is not None  # every map entry has its key
        return records[(key + (0 if map_keys.from_bytes(user_key) == "a" else 1)) % n]

    def states() -> Any:
        from dataclasses import replace

        for state in metadata.states:
            (file,) = state_data_files(template, state)
            table = pq.read_table(file)
            column = [recorded(state.kind, keys.from_bytes(key), user_key) for key, user_key in
                      zip(table.column(1).to_pylist(), table.column(3).to_pylist(), strict=True)]
            table = table.set_column(4, table.schema.field(4), pa.array(column, table.schema.field(4).type))
            if state.value_serializer_snapshot == restored_snapshot:
                state = replace(state, value_serializer_snapshot=snapshot)
            yield state, table

    try:
        return write_savepoint_rows(_work(ctx, "release"), states(), max_parallelism=metadata.max_parallelism,
                                    key_serializer_snapshot=metadata.key_serializer_snapshot)
    except StateError as exc:
        raise Violation(f"writing the recorded release's records as a savepoint failed: {exc}") from None
