"""What the engine's jobs share (private to ``conformance.spark``; the package re-exports the
public names): the driver-side plan of a migration, which ``migrate_savepoint`` runs and
``plan_migration`` only shows; snapshots and serializers restored from a savepoint's bytes;
the refusal to unpickle; and running a Spark job so that its failure says what failed.

Nothing here imports pyspark at import time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from reference import (
    StateError,
    StateMigrationError,
    TypeSerializer,
    TypeSerializerSnapshot,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.backends import MigrationPlan, descriptor_unpickles, pickle_allowed, plan_access
from reference.savepoint import (
    SavepointFormatError,
    SavepointMetadata,
    StateMetadata,
    read_savepoint_metadata,
)

from .._engine.errors import ConformanceError

__all__ = [
    "MODES", "MARK", "SparkJobError", "StatePlan", "normalize_descriptors", "plan_states", "snapshot_of",
    "restored_serializer", "refuse_unpickling", "short", "run_job", "OFF", "without_spark",
]

#: The migration modes: ``bytes`` runs the backends' migration plan over the stored bytes,
#: ``heap`` deserializes, migrates and serializes each value.
MODES = ("bytes", "heap")
#: The master that runs a job without Spark: the executor side of the job (the very functions
#: Spark's executors run) called in this process, one task after the other. For savepoints
#: small enough for one process, where a Spark session's start costs more than the job.
OFF = "off"
#: Prefix of every message raised on purpose in an executor, so the driver can find it in
#: Spark's wrapped traceback.
MARK = "[state-conformance] "


class SparkJobError(StateError, ConformanceError):
    """A Spark job failed while running (in an executor or in Spark itself)."""


# -- the driver-side plan of a migration -------------------------------------------------------
@dataclass(frozen=True)
class StatePlan:
    """What executors do with one state's value column (pickled and shipped)."""

    name: str
    kind: str
    action: str  # "copy" | "migrate" (bytes mode) | "heap" (deserialize, migrate, serialize)
    prior: TypeSerializer[Any] | None = None
    new: TypeSerializer[Any] | None = None
    new_snapshot: TypeSerializerSnapshot[Any] | None = None
    migrate: bool = False
    migration: MigrationPlan | None = None


def normalize_descriptors(serializers: Any) -> dict[str, Any]:
    """A mapping state name -> state descriptor, from a mapping or an iterable of
    descriptors (``reference.backends`` ``ValueStateDescriptor`` & co.)."""
    from reference.backends import StateDescriptor

    if isinstance(serializers, StateDescriptor):
        serializers = [serializers]
    if isinstance(serializers, Mapping):
        items = list(serializers.items())
    elif isinstance(serializers, Iterable) and not isinstance(serializers, (str, bytes)):
        items = [(getattr(d, "name", None), d) for d in serializers]
    else:
        raise StateError(
            f"new serializers must be a mapping of state name to state descriptor or a list of "
            f"descriptors, got {type(serializers).__name__}"
        )
    result: dict[str, Any] = {}
    for name, descriptor in items:
        if not isinstance(descriptor, StateDescriptor):
            raise StateError(
                f"state {name!r}: expected a ValueStateDescriptor, ListStateDescriptor or "
                f"MapStateDescriptor, got {type(descriptor).__name__}"
            )
        if name != descriptor.name:
            raise StateError(
                f"the mapping key {name!r} differs from its descriptor's name {descriptor.name!r}; "
                "use the state's name as the key"
            )
        result[name] = descriptor
    return result


def snapshot_of(data: bytes | None, what: str, allow_pickle: bool = False) -> TypeSerializerSnapshot[Any] | None:
    """The snapshot stored as ``data`` (None for None); ``SavepointFormatError`` naming ``what``
    when it does not decode. A PickleSerializer it restores unpickles only with
    ``allow_pickle`` (the caller's opt-in for the state)."""
    if data is None:
        return None
    try:
        return snapshot_from_bytes(data, allow_pickle=allow_pickle)
    except StateError as exc:
        raise SavepointFormatError(f"{what}: {exc}") from None


def restored_serializer(data: bytes | None, what: str, allow_pickle: bool = False) -> TypeSerializer[Any] | None:
    """The serializer restored from the snapshot stored as ``data`` (None for None)."""
    snapshot = snapshot_of(data, what, allow_pickle)
    return None if snapshot is None else snapshot.restore_serializer()


def plan_states(
    metadata: SavepointMetadata,
    descriptors: Mapping[str, Any],
    mode: str,
    config: Mapping[str, Any],
) -> list[tuple[StatePlan, StateMetadata, str]]:
    """Judge every state (raises before any data is touched); returns per state the executor
    plan, the output metadata (new snapshots) and the verdict (a ``SchemaCompatibility`` kind,
    or ``untouched`` for a state without a new descriptor)."""
    unknown = sorted(set(descriptors) - {s.name for s in metadata.states})
    if unknown:
        raise StateMigrationError(
            f"the savepoint has no state named {', '.join(map(repr, unknown))}; it holds "
            f"{', '.join(repr(s.name) for s in metadata.states) or 'no states'}"
        )
    plans = []
    for state in metadata.states:
        descriptor = descriptors.get(state.name)
        if descriptor is None:
            plans.append((StatePlan(state.name, state.kind, "copy"), state, "untouched"))
            continue
        # As a backend's access: a descriptor using PickleSerializer opts in to unpickling.
        trusted = descriptor_unpickles(descriptor)
        value_snapshot = snapshot_of(state.value_serializer_snapshot, f"state {state.name!r}", trusted)
        ns_snapshot = snapshot_of(state.namespace_serializer_snapshot, f"state {state.name!r} namespace", trusted)
        uk_snapshot = snapshot_of(state.user_key_serializer_snapshot, f"state {state.name!r} map key", trusted)
        assert value_snapshot is not None
        access = plan_access(state.name, state.kind, value_snapshot, ns_snapshot, uk_snapshot, descriptor, config)
        out_meta = StateMetadata(
            name=state.name,
            kind=state.kind,
            value_serializer_snapshot=snapshot_to_bytes(access.value_serializer.snapshot_configuration()),
            namespace_serializer_snapshot=(
                None if access.namespace_serializer is None
                else snapshot_to_bytes(access.namespace_serializer.snapshot_configuration())
            ),
            user_key_serializer_snapshot=(
                None if access.user_key_serializer is None
                else snapshot_to_bytes(access.user_key_serializer.snapshot_configuration())
            ),
        )
        if mode == "heap":
            action = "heap"
        else:
            action = "migrate" if access.migrate else "copy"
        plan = StatePlan(
            name=state.name,
            kind=state.kind,
            action=action,
            prior=access.prior_value_serializer,
            new=access.value_serializer,
            new_snapshot=access.new_value_snapshot,
            migrate=access.migrate,
            migration=access.migration,
        )
        plans.append((plan, out_meta, access.value_result.kind))
    return plans


# -- reading safely ---------------------------------------------------------------------------
def refuse_unpickling(savepoint: str | os.PathLike[str], allow_pickle: bool | Iterable[str] = ()) -> None:
    """Raise ``PickleNotAllowedError`` naming the first state of ``savepoint`` whose values only
    PickleSerializer reads (its snapshots say so) unless ``allow_pickle`` names it (or is True):
    nothing read from a savepoint unpickles unless the caller asked. Reads only the metadata."""
    from reference import PickleNotAllowedError
    from reference.backends import snapshot_unpickles

    for state in read_savepoint_metadata(savepoint).states:
        if pickle_allowed(allow_pickle, state.name):
            continue
        for data in (state.value_serializer_snapshot, state.namespace_serializer_snapshot,
                     state.user_key_serializer_snapshot):
            if data and snapshot_unpickles(snapshot_from_bytes(data)):
                raise PickleNotAllowedError(
                    f"state {state.name!r} of {os.fspath(savepoint)} was written with PickleSerializer, and "
                    "decoding it would unpickle code chosen by the savepoint; allow it only for a "
                    f"savepoint you trust: allow_pickle={{{state.name!r}}} (conformance verify "
                    f"--allow-pickle {state.name}). Nothing was unpickled"
                )


# -- running a job ----------------------------------------------------------------------------
def short(data: bytes | None) -> str:
    """Stored bytes for a message: ``null``, or their first 24 bytes in hex."""
    if data is None:
        return "null"
    return data[:24].hex() + ("..." if len(data) > 24 else "")


def _executor_message(exc: BaseException) -> str:
    """The meaningful line of an executor failure wrapped by Spark/py4j."""
    text = str(exc)
    marked = [line.split(MARK, 1)[1] for line in text.splitlines() if MARK in line]
    if marked:
        return marked[-1].strip()
    errors = [
        line.strip() for line in text.splitlines()
        if re.match(r"^\s*[\w.]+(Error|Exception|Exit|Interrupt)\b.*:", line)
    ]
    if errors:
        return errors[-1][:800]
    return (text.strip().splitlines() or [type(exc).__name__])[0][:800]


def without_spark(spark: Any, master: str | None) -> bool:
    """Whether a job given session ``spark`` and ``master`` runs without Spark (``OFF``)."""
    return spark is None and master == OFF


def run_job(what: str, job: Callable[[], Any], *, in_process: bool = False) -> Any:
    """``job()``; a failure that is not a ``StateError`` (Spark's, py4j's, an executor's) is
    raised as ``SparkJobError`` saying ``what`` failed and the executor's own message.
    ``in_process``: the job's executor side runs in this process (``OFF``), and its failures
    (any but a ``StateError``, or one marked as the executor side's, ``MARK``) are raised the
    same way, saying so."""
    try:
        return job()
    except StateError as exc:
        if in_process and MARK in str(exc):  # raised by the executor side: as Spark reports it
            raise SparkJobError(f"{what} failed (without Spark, in this process): {_executor_message(exc)}") from exc
        raise
    except Exception as exc:
        if in_process:
            raise SparkJobError(
                f"{what} failed (without Spark, in this process): {type(exc).__name__}: "
                f"{_executor_message(exc)}"
            ) from exc
        raise SparkJobError(
            f"{what} failed in Spark: {_executor_message(exc)}. Serializers run in separate "
            "executor processes: one that works only in the process that created it (process-"
            "global registries, open handles, thread-locals) fails there"
        ) from exc
