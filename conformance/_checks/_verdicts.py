"""Verdicts as values, the pre-1.7 snapshot form refused unless allowed, and create_instance().

- ``migration.verdict_values``: compatibility results (``reference.SchemaCompatibility``)
  compare and hash as values: resolving the same pair of snapshots twice gives equal results
  with equal hashes (usable as dict keys), equal to a fresh result of the same kind, and unequal
  to results of every other kind. The pairs are the serializer's own snapshot against itself and
  each declared evolution.
- ``versioning.legacy_form``: a golden file in the pre-1.7 form (``<golden>/pre-1.7/
  snapshot.bin``: the pickled serializer instead of a snapshot) is refused by
  ``snapshot_from_bytes`` by default (unpickling savepoint bytes runs code from them), and read
  only when the caller allows it, giving back a serializer equal to the subject's.
- ``api.create_instance``: ``create_instance()`` is the schema's zero (``strategies.zero_value``:
  Java's defaults) and round-trips through serialize and deserialize.
"""

from __future__ import annotations

import os
from typing import Any

from reference import (
    DataInputView,
    SchemaCompatibility,
    SnapshotFormatError,
    read_serializer_snapshot,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)

from .._engine.canonical import show
from .._engine.property import guarded
from .._engine.registry import NotApplicable, Violation, check
from ._migration import declared_steps

#: A fresh result of each kind but the reconfigured one (which carries a serializer).
_PLAIN = {
    "compatible_as_is": SchemaCompatibility.compatible_as_is,
    "compatible_after_migration": SchemaCompatibility.compatible_after_migration,
    "incompatible": SchemaCompatibility.incompatible,
}


def _resolved(new: Any, old: Any, step: Any = None) -> Any:
    def once() -> Any:
        old_snapshot = snapshot_from_bytes(snapshot_to_bytes(old.snapshot_configuration()), allow_pickle=True)
        return resolve_compatibility(new.snapshot_configuration(), old_snapshot)

    if step is None:
        return guarded("resolve_schema_compatibility", once)
    with step.active():
        return guarded(f"{step.label}: resolve_schema_compatibility", once)


def _judge_values(a: Any, b: Any, where: str) -> None:
    if not isinstance(a, SchemaCompatibility):
        raise Violation(f"{where}: the result is a {type(a).__name__}, should be a reference.SchemaCompatibility")
    if not (a == b) or a != b:
        raise Violation(f"{where}: resolving twice gave {a!r} and {b!r}, which compare unequal, should be equal")
    if hash(a) != hash(b):
        raise Violation(f"{where}: equal results {a!r} hash to {hash(a)} and {hash(b)}, should hash equally")
    if {a: where}.get(b) != where:
        raise Violation(f"{where}: {b!r} does not find the equal {a!r} as a dict key, should")
    for kind, make in _PLAIN.items():
        other = make()
        if (a == other) != (kind == a.kind) or (a != other) != (kind != a.kind):
            raise Violation(
                f"{where}: {a!r} == {other!r} is {a == other}, should be {kind == a.kind} (results "
                "compare by kind and reconfigured serializer)")
    if a == object():
        raise Violation(f"{where}: {a!r} equals a non-result, should equal only SchemaCompatibility values")


@check(id="migration.verdict_values", family="migration", requires=("snapshot.exact_read",))
def verdict_values(ctx) -> None:  # type: ignore[no-untyped-def]
    """Compatibility results compare and hash as values (by kind and reconfigured serializer)."""
    s = ctx.serializer()
    _judge_values(_resolved(s, s), _resolved(ctx.serializer(), s), "the serializer's own snapshot")
    for step in declared_steps(ctx):
        _judge_values(_resolved(step.new, step.old, step), _resolved(step.new, step.old, step), step.label)


LEGACY = os.path.join("pre-1.7", "snapshot.bin")


@check(id="versioning.legacy_form", family="versioning", requires=("snapshot.exact_read",))
def legacy_form(ctx) -> None:  # type: ignore[no-untyped-def]
    """A recorded pre-1.7 (pickled serializer) snapshot is refused by default, read only when allowed."""
    directory = ctx.subject.golden
    path = None if directory is None else os.path.join(directory, LEGACY)
    if path is None or not os.path.isfile(path):
        raise NotApplicable(f"no golden file in the pre-1.7 form (<golden>/{LEGACY})")
    with open(path, "rb") as fh:
        data = fh.read()
    # Both public readers of savepoint snapshot bytes, each with its defaults.
    for reader, read in (("snapshot_from_bytes", lambda: snapshot_from_bytes(data)),
                         ("read_serializer_snapshot", lambda: read_serializer_snapshot(DataInputView(data)))):
        try:
            snapshot = read()
        except SnapshotFormatError as exc:
            if "pre-1.7" not in str(exc):
                raise Violation(f"{path}: {reader} refused it with {exc!r}, should say it is the pre-1.7 form") from None
        except Exception as exc:
            raise Violation(f"{path}: {reader} raised {type(exc).__name__}: {exc}, should raise "
                            "SnapshotFormatError naming the pre-1.7 form") from None
        else:
            raise Violation(
                f"{path}: {reader} read the pre-1.7 pickled form by default (got {show(snapshot)}), "
                "should refuse it unless allow_pickled_serializer=True (unpickling runs savepoint code)")
    allowed = _read_allowed(data, path)
    restored = guarded("restore_serializer of the pre-1.7 snapshot", allowed.restore_serializer)
    if restored != ctx.serializer():
        raise Violation(f"{path}: the pre-1.7 snapshot restores {show(restored)}, should restore "
                        f"{show(ctx.serializer())}")


def _read_allowed(data: bytes, path: str) -> Any:
    try:
        return snapshot_from_bytes(data, allow_pickled_serializer=True)
    except Exception as exc:
        raise Violation(f"{path}: with allow_pickled_serializer=True reading raised {type(exc).__name__}: "
                        f"{exc}, should read the pickled serializer") from None


@check(id="api.create_instance", family="roundtrip", requires=("api.valid",))
def create_instance(ctx) -> None:  # type: ignore[no-untyped-def]
    """create_instance() (what a restore fills a new field with) is the schema's zero and a value
    serialize writes and deserialize reads back (None, a type without a zero as Flink allows,
    only where the schema's zero is None)."""
    from ._roundtrip import expect_equal, read_one, write

    serializer = ctx.serializer()
    instance = guarded("create_instance", serializer.create_instance)
    schema = getattr(ctx.subject, "schema", None)
    if schema is not None:
        import strategies

        expect_equal(instance, strategies.zero_value(schema), "create_instance()")
    if instance is not None:
        expect_equal(read_one(serializer, write(serializer, instance)), instance,
                     "reading back create_instance() written by serialize")
