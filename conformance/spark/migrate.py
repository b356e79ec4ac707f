"""``migrate_savepoint``: restore a savepoint with new serializers and write the migrated
savepoint, as Spark jobs (Flink's State Processor API, offline, at any scale); and
``plan_migration``, the same judgement without Spark.

``migrate_savepoint`` judges every state's new serializers against the savepoint's snapshots
once, on the driver, with the backends' own rules (``reference.backends`` ``plan_access``); any
refusal is raised before anything is written. Then the serializers are pickled and shipped to
the executors, which migrate the binary value column batch by batch (file to file in a task
job when the input's files already are the target subtasks', else through ``mapInArrow`` and
a shuffle by key group): in bytes mode through the state's migration plan
(``plan_access(...).migration``, the backends' own; list state element by element over
Flink's delimited layout, map state values only), in heap mode by deserializing,
``migrate_element`` and serializing. Serializers are deterministic (equal bytes decode to
equal values, equal values serialize to equal bytes: the backends family requires it), so
equal stored values of a batch are converted once and the result reused for every row
holding them. The output is partitioned by key group for the target parallelism and
committed atomically (``datasets.write_savepoint``).

With ``master="off"`` there is no Spark: the same executor functions (the value transform, the
file-to-file migration, the routing and part writer of ``datasets``) run in this process, and
write the same savepoint. A small savepoint migrates in well under a second this way, where a
Spark session alone takes tens of seconds to start.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reference import (
    DataOutputView,
    SerializationError,
    StateError,
    TypeSerializer,
    migrated_element,
    snapshot_to_bytes,
)
from reference.backends import normalize_config, resolve_key_serializer
from reference.savepoint import (
    check_parallelism,
    decode_list_value,
    encode_list_value,
    is_uri,
    locate,
    read_savepoint_metadata,
    savepoint_exists,
    state_row_groups,
)

from .._engine.errors import ConformanceError
from . import datasets
from ._common import (
    MARK,
    MODES,
    StatePlan,
    normalize_descriptors,
    plan_states,
    run_job,
    short,
    snapshot_of,
    without_spark,
)

__all__ = [
    "SerializerShippingError",
    "StateMigrationSummary",
    "MigrationReport",
    "StateMigrationPlan",
    "migrate_savepoint",
    "plan_migration",
]


class SerializerShippingError(StateError, ConformanceError):
    """A serializer cannot be pickled and shipped to Spark executors."""


@dataclass(frozen=True)
class StateMigrationSummary:
    """What ``migrate_savepoint`` did with one state."""

    name: str
    kind: str
    verdict: str  # a SchemaCompatibility kind, or "untouched" (no new serializer given)
    action: str  # "copy", "migrate" (bytes mode) or "heap"
    rows: int = 0
    parallelism: int = 1
    #: True when rows went through Spark's shuffle (rescaling, or input files not aligned with
    #: the target subtasks; without Spark: were routed to their subtasks in this process);
    #: False when each input file was migrated to its output file.
    shuffled: bool = True


@dataclass
class MigrationReport:
    """What ``migrate_savepoint`` wrote."""

    source: str
    out: str
    mode: str
    states: list[StateMigrationSummary] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(s.rows for s in self.states)

    def format(self) -> str:
        lines = [f"migrated {self.source} -> {self.out} ({self.mode} mode, {self.rows} rows)"]
        for s in self.states:
            lines.append(
                f"  {s.name!r} ({s.kind}): {s.verdict}, {s.action}, {s.rows} rows, parallelism "
                f"{s.parallelism}{'' if s.shuffled else ' (file to file, no shuffle)'}"
            )
        return "\n".join(lines)


@dataclass(frozen=True)
class StateMigrationPlan:
    """How ``migrate_savepoint`` would treat one state (``plan_migration``)."""

    name: str
    kind: str
    verdict: str  # a SchemaCompatibility kind, or "untouched" (no new serializer given)
    #: The bytes-mode migration plan in words, one step a line.
    lines: tuple[str, ...]


def plan_migration(
    savepoint: str | os.PathLike[str],
    serializers: Any,
    *,
    config: Mapping[str, Any] | None = None,
    key_serializer: TypeSerializer[Any] | None = None,
) -> list[StateMigrationPlan]:
    """Per state of ``savepoint``, in order: its verdict and bytes-mode migration plan, judged
    exactly as ``migrate_savepoint`` judges it (a refusal raises the same
    ``StateMigrationError``); reads only the metadata, no Spark."""
    metadata = read_savepoint_metadata(savepoint)
    judged = plan_states(metadata, normalize_descriptors(serializers), "bytes", normalize_config(config))
    if key_serializer is not None:
        old_key = snapshot_of(metadata.key_serializer_snapshot, "the key serializer")
        assert old_key is not None
        resolve_key_serializer(key_serializer, old_key)
    result = []
    for (plan, _, verdict), state in zip(judged, metadata.states, strict=True):
        if plan.migration is None:
            lines = ["no new serializer: copied as it is"]
        else:
            lines = list(plan.migration.lines())
            if state.kind == "list":
                lines.append("(per element of Flink's delimited list layout)")
            elif state.kind == "map":
                lines.append("(per map value: map keys never migrate, null values stay null)")
        result.append(StateMigrationPlan(state.name, state.kind, str(verdict), tuple(lines)))
    return result


def _check_shippable(plans: Iterable[StatePlan]) -> None:
    """Pickle what goes to the executors now, to fail with a clear message instead of a Spark
    stack trace; workers are separate processes, so whatever cannot be pickled cannot go."""
    from .session import require_pyspark

    require_pyspark()
    from pyspark import cloudpickle

    for plan in plans:
        for role in ("prior", "new", "new_snapshot"):
            part = getattr(plan, role)
            if part is None:
                continue
            what = {"prior": "restored (old) serializer", "new": "new serializer",
                    "new_snapshot": "new serializer's snapshot"}[role]
            try:
                data = cloudpickle.dumps(part)
                pickle.loads(data)
            except Exception as exc:
                raise SerializerShippingError(
                    f"state {plan.name!r}: the {what} {part!r} cannot be pickled to ship it to "
                    f"Spark executors ({type(exc).__name__}: {exc}); serializers must be "
                    "picklable (no open files, locks, sockets or lambdas bound to one process)"
                ) from None


# -- executor side ----------------------------------------------------------------------------
def _converter(plan: StatePlan) -> Callable[[bytes], bytes]:
    """bytes -> bytes for one serialized value (or list element)."""
    prior, new, snapshot = plan.prior, plan.new, plan.new_snapshot
    assert prior is not None and new is not None and snapshot is not None
    out = DataOutputView()

    if plan.action == "migrate":
        assert plan.migration is not None
        return plan.migration.migrate
    if plan.migrate and plan.migration is not None:  # heap mode: the plan's object path
        return plan.migration.migrate_as_objects
    migrate = plan.migrate

    def convert(data: bytes) -> bytes:
        element = prior.from_bytes(data)
        if migrate:
            element = migrated_element(snapshot, prior, new, element)
        out.clear()
        new.serialize(element, out)
        return out.getvalue()

    return convert


def _value_transform(plan: StatePlan) -> Callable[[Any], Any] | None:
    """RecordBatch -> RecordBatch replacing the value column, or None to copy rows as they are."""
    if plan.action == "copy":
        return None
    name, kind, prior = plan.name, plan.kind, plan.prior
    migration = plan.migration if plan.action == "migrate" else None

    def one(convert: Callable[[bytes], bytes], value: bytes | None) -> bytes | None:
        if value is None:
            if kind != "map":
                raise SerializationError(f"a {kind} state row has a null value")
            return None  # a null map value stays null
        if kind == "list":
            if migration is not None:  # bytes mode: the plan walks Flink's list layout itself
                return migration.migrate_list(value)
            assert prior is not None, "a list state's elements are read by its prior serializer"
            return encode_list_value([convert(e) for e in decode_list_value(value, prior)])
        return convert(value)

    def transform(batch: Any) -> Any:
        import pyarrow as pa

        convert = _converter(plan)
        values = batch.column(4).to_pylist()
        # Equal stored values of a batch are converted once (serializers are deterministic:
        # equal bytes give equal results), so repeated values cost a dictionary look-up.
        done: dict[bytes | None, bytes | None] = {}
        try:
            if kind == "value":  # the hot path: one look-up per row, nothing else
                result = [done[v] if v in done else done.setdefault(v, convert(v)) for v in values]
            else:
                result = [done[v] if v in done else done.setdefault(v, one(convert, v)) for v in values]
        except Exception:
            # Find the failing row again, slowly, to say which key it is.
            keys = batch.column(1)
            for i, value in enumerate(values):
                try:
                    one(_converter(plan), value)
                except Exception as exc:
                    raise SerializationError(
                        f"{MARK}state {name!r}, key {short(keys[i].as_py())}, value "
                        f"{short(value)}: {type(exc).__name__}: {exc}"
                    ) from exc
            raise
        return pa.RecordBatch.from_arrays(
            [batch.column(0), batch.column(1), batch.column(2), batch.column(3),
             pa.array(result, pa.binary())],
            names=list(batch.schema.names),
        )

    return transform


# -- the job ----------------------------------------------------------------------------------
def migrate_savepoint(
    savepoint: str | os.PathLike[str],
    serializers: Any,
    out: str | os.PathLike[str],
    *,
    mode: str = "bytes",
    parallelism: int | None = None,
    key_serializer: TypeSerializer[Any] | None = None,
    config: Mapping[str, Any] | None = None,
    master: str | None = None,
    spark: Any = None,
    _fault: Callable[[int], None] | None = None,
) -> MigrationReport:
    """Restore ``savepoint`` with new ``serializers`` (state name -> descriptor, or a list of
    descriptors), migrate what needs it and write a new savepoint at ``out`` (which must not
    exist). States without a new descriptor are copied as they are. ``mode`` is ``bytes`` or
    ``heap``; ``parallelism`` rescales (default: each state's current parallelism);
    ``key_serializer`` replaces the key serializer (its snapshot must accept the old one);
    ``config`` is the backends' configuration (``reference.backends``); ``spark`` a session
    to run on, else ``master``'s (``get_session``); ``master="off"`` runs the executors'
    functions in this process, without Spark (nothing is shipped, so nothing needs pickling),
    writing the same savepoint and report, for savepoints one process migrates quickly. Raises ``StateMigrationError`` before
    writing anything if any state is refused, ``SerializerShippingError`` if a serializer
    cannot be pickled, ``SparkJobError`` if a job fails; the input is only ever read.
    (``_fault`` is the tests' fault injection, called in each writing task.)"""
    if mode not in MODES:
        raise StateError(f"unknown migration mode {mode!r}; use one of {MODES}")
    source, target = locate(savepoint).uri, locate(out).uri
    if target == source or target.startswith(source + ("/" if is_uri(source) else os.sep)):
        raise StateError(
            f"the output {target!r} is the input savepoint or inside it; write to a new directory"
        )
    if savepoint_exists(target):
        raise StateError(f"the output {target!r} already exists; a migration never overwrites, choose a new path")
    metadata = read_savepoint_metadata(source)
    descriptors = normalize_descriptors(serializers)
    plans = plan_states(metadata, descriptors, mode, normalize_config(config))
    key_snapshot_bytes = metadata.key_serializer_snapshot
    if key_serializer is not None:
        old_key = snapshot_of(key_snapshot_bytes, "the key serializer")
        assert old_key is not None
        key_snapshot_bytes = snapshot_to_bytes(
            resolve_key_serializer(key_serializer, old_key).snapshot_configuration()
        )
    local = without_spark(spark, master)
    if not local:
        _check_shippable(plan for plan, _, _ in plans)
    if parallelism is not None:
        check_parallelism(metadata.max_parallelism, parallelism)

    if spark is None and not local:
        from .session import get_session

        spark = get_session(master)
    outputs, summaries, per_state = [], [], {}
    for (plan, out_meta, verdict), state in zip(plans, metadata.states, strict=True):
        p = parallelism or datasets.state_parallelism(source, state)
        per_state[state.name] = p
        # Without rescaling, input files that already are the subtasks' are migrated file to
        # file, one task each (no shuffle), the executors reading them themselves. With fewer
        # files than cores the shuffle can spread the conversion wider, but only over as many
        # tasks as the input has row groups.
        checked = state_row_groups(source, state)  # a damaged file is named with its state, before any job
        aligned = datasets.aligned_files(source, state, metadata.max_parallelism, p)
        if local:  # one process: file to file whenever the files allow it
            outputs.append(datasets.StateOutput(out_meta, None, _value_transform(plan), aligned,
                                                input_files=[file for file, _ in checked]))
            summaries.append((state.name, state.kind, verdict, plan.action, p, aligned is None))
            continue
        if aligned is not None and p < spark.sparkContext.defaultParallelism and sum(g for _, g in checked) > p:
            aligned = None
        if aligned is None:
            frame = datasets.read_state_dataframe(spark, source, state)
        else:
            frame = None
            if locate(source).remote:
                datasets.forward_store_environment(spark)
        outputs.append(datasets.StateOutput(out_meta, frame, _value_transform(plan), aligned, spark))
        summaries.append((state.name, state.kind, verdict, plan.action, p, aligned is None))
    written = run_job(
        f"migrating {source}",
        lambda: datasets.write_savepoint(
            target, outputs, max_parallelism=metadata.max_parallelism,
            key_serializer_snapshot=key_snapshot_bytes, parallelism=per_state, fault=_fault,
        ),
        in_process=local,
    )
    report = MigrationReport(source=source, out=target, mode=mode)
    for (name, kind, verdict, action, p, shuffled), state in zip(summaries, written.states, strict=True):
        report.states.append(StateMigrationSummary(name, kind, verdict, action, state.rows, p, shuffled))
    return report
