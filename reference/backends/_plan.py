"""Migration plans: how the stored bytes of one state go from an old snapshot to a new
serializer, computed once per (old snapshot, new serializer) pair.

``migration_plan(old_snapshot, new_serializer)`` judges the pair as a restore does
(``resolve_compatibility``: incompatible raises ``StateMigrationError``) and builds a tree of
steps, one per serializer node, from the verdicts of the nodes:

- **keep**: nothing needs migration (compatible as is, or with a reconfigured serializer): the
  stored bytes stay as they are and the plan's ``reader`` reads them.
- **copy**: a sub-tree compatible as is inside one that migrates: its bytes are copied by
  scanning the encoding (``TypeSerializer.copy_serialized``; inside a row, the row's code
  generated from its fields' copy fragments), without building Python objects. (A pickled
  sub-tree is decoded and re-encoded instead: only unpickling checks a pickle's bytes.)
- **row**, **tuple**, **nullable**, **list**, **map values**: a built-in composite whose parts
  migrate: rebuilt around its parts (a row copies each kept field's bytes, rebuilds the null
  mask and row kind, writes null for added fields and puts the fields in the new order; a
  list, map or nullable migrates element by element). Used for the exact built-in snapshot
  classes only: a subclass may migrate differently.
- **migrate_state**: the snapshot's own byte-level ``migrate_state`` (Avro's resolving
  decoder, and any top-level snapshot that overrides ``migrate_state``).
- **objects**: everything else (a user snapshot's ``migrate_element``, a reconfigured nested
  serializer): decode with the old serializer, ``reference.migrated_element`` (both FLIP-527
  forms), encode with the new.

This module knows no byte layout: the byte-level work of a composite step is the old
serializer's ``byte_migration(new, ...)`` (``RowSerializer``, ``TupleSerializer``,
``NullableSerializer``, ``ListSerializer``, ``MapSerializer``), given the functions of its
child steps; each format is written in its serializer's module only, next to the generic
methods and the generated-code fragments it shares. The plan reads records through the public
``DataInputView`` API (``mark`` / ``reset`` to redo a record, ``available``).

The plan's result is by definition the object path's: read the record with the restored old
serializer, ``migrated_element`` with the new snapshot, write with the new serializer (or, for
a top-level ``migrate_state`` step, whatever that method writes). When the byte path meets
anything it does not take on itself (a corrupt or non-canonical record, a list size beyond
its bytes, a migration refusing a row kind), it redoes that record on the object path, which
gives the result or raises the reference's error; so both paths fail with the same
``StateError`` kinds.

Flink's list-state layout (elements joined by one 0x2C byte, no lengths) is walked by
``list_element_ends`` (the savepoint layout's), as by every other reader of it.

A plan is a value: ``str(plan)`` is a readable tree (``conformance migrate --explain``), it
pickles (to Spark executors; compiled closures are rebuilt on first use), and plans compare
equal when their trees do. ``plan.migrate(bytes)`` migrates one value-state value,
``plan.migrate_list(bytes)`` one list-state value, ``plan.migrate_map_value(bytes | None)``
one map-state value (None, a null map value, stays None), ``plan.run(source, target)`` one
record of a stream, ``plan.migrate_object(value)`` one object (the heap backend's form),
``plan.migrate_as_objects(bytes)`` one value on the object path only. ``plan.redone`` counts the
records this plan object redid on the object path, and ``plan.bytes_only`` says whether every
step is a byte step (no snapshot's own ``migrate_element`` or ``migrate_state``, whose steps
send a null or a record they do not take to the object path by design): such a plan redoes
none of the records its old serializer writes, only corrupt ones and those the migration
refuses. ``plan.redoes_only_nulls`` says whether its object steps, if any, are of the
reference's own classes, which take every value but a null on themselves: such a plan redoes,
of the records its old serializer writes, only those holding a null where an object step
stands.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._compat import SchemaCompatibility
from .._errors import SerializationError, StateMigrationError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import TypeSerializerSnapshot, migrated_element, resolve_compatibility
from ..savepoint import LIST_DELIMITER, list_element_ends
from ..serializers._avro import AvroSerializerSnapshot
from ..serializers._composites import (
    ListSerializer,
    ListSerializerSnapshot,
    MapSerializer,
    MapSerializerSnapshot,
    NullableSerializer,
    NullableSerializerSnapshot,
    TupleSerializer,
    TupleSerializerSnapshot,
)
from ..serializers._pickle import snapshot_unpickles
from ..serializers._row import RowSerializer, RowSerializerSnapshot

__all__ = [
    "MigrationPlan",
    "Step",
    "migration_plan",
]


class _Detour(Exception):
    """The byte path does not take this record on itself: redo it on the object path."""


# -- steps ----------------------------------------------------------------------------------------
class Step:
    """One node of a plan: migrates one record of ``prior``'s encoding to ``new``'s.

    ``run(source, target)`` is the byte path (it may raise ``_Detour``); ``lines()`` the
    readable tree. Equality is by class, serializers and child steps."""

    name = "step"

    def __init__(self, prior: TypeSerializer[Any], new: TypeSerializer[Any]) -> None:
        self.prior: Any = prior
        self.new: Any = new
        self._cache_run: Callable[[DataInputView, DataOutputView], None] | None = None

    def children(self) -> tuple[Step, ...]:
        return ()

    def _key(self) -> tuple[Any, ...]:
        return (type(self), self.prior, self.new, self.children())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Step) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.children()))

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_cache")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache_run = None

    @property
    def run(self) -> Callable[[DataInputView, DataOutputView], None]:
        run = self._cache_run
        if run is None:
            run = self._cache_run = self._compile()
        return run

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        raise NotImplementedError

    @property
    def part(self) -> Callable[[DataInputView], bytes]:
        """One record's migrated bytes, returned rather than written."""
        part = self.__dict__.get("_cache_part")
        if part is None:
            run = self.run
            part = self.__dict__.get("_cache_part")
            if part is None:
                def part(source: DataInputView) -> bytes:
                    out = DataOutputView()
                    run(source, out)
                    return out.getvalue()

                self._cache_part = part
        return part  # type: ignore[no-any-return]

    def summary(self) -> str:
        return f"{self.name} {self.prior!r}"

    def lines(self, indent: str = "") -> list[str]:
        result = [indent + self.summary()]
        for label, child in self.labelled_children():
            sub = child.lines(indent + "    ")
            sub[0] = f"{indent}  {label}: {sub[0].lstrip()}"
            result.extend(sub)
        return result

    def labelled_children(self) -> list[tuple[str, Step]]:
        return [(f"#{i}", c) for i, c in enumerate(self.children())]

    def __repr__(self) -> str:
        return "\n".join(self.lines())


class CopyStep(Step):
    """Bytes of a sub-tree compatible as is: copied by scanning the encoding."""

    name = "copy bytes"

    def __init__(self, serializer: TypeSerializer[Any]) -> None:
        super().__init__(serializer, serializer)

    def summary(self) -> str:
        return f"copy bytes ({self.prior!r})"

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        return self.prior.copy_serialized


class _SnapshotStep(Step):
    """A step that calls the new snapshot's own migration."""

    def __init__(self, snapshot: TypeSerializerSnapshot[Any], prior: TypeSerializer[Any], new: TypeSerializer[Any]) -> None:
        super().__init__(prior, new)
        self.snapshot = snapshot


class ObjectStep(_SnapshotStep):
    """Decode with the old serializer, ``migrated_element`` with the new snapshot, encode."""

    name = "objects"

    def summary(self) -> str:
        return (f"decode, {type(self.snapshot).__name__}.migrate_element, encode "
                f"({self.prior!r} -> {self.new!r})")

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        snapshot, prior, new = self.snapshot, self.prior, self.new
        deserialize, serialize = prior.deserialize, new.serialize

        def run(source: DataInputView, target: DataOutputView) -> None:
            value = deserialize(source)
            if value is None:
                raise _Detour  # whether null stays null is the enclosing serializer's rule
            migrated = migrated_element(snapshot, prior, new, value)
            if migrated is None:
                raise _Detour
            serialize(migrated, target)

        return run


class MigrateStateStep(_SnapshotStep):
    """The snapshot's own byte-level ``migrate_state``."""

    name = "migrate_state"

    def summary(self) -> str:
        return f"{type(self.snapshot).__name__}.migrate_state ({self.prior!r} -> {self.new!r})"

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        migrate, prior, new = self.snapshot.migrate_state, self.prior, self.new

        def run(source: DataInputView, target: DataOutputView) -> None:
            migrate(prior, new, source, target)

        return run


class RowStep(Step):
    """A row whose fields were added, reordered or migrate: kept fields' bytes are copied (or
    migrated by their own step), the null mask and row kind rebuilt, added fields null."""

    name = "row"

    def __init__(self, prior: Any, new: Any, fields: tuple[tuple[str, int, Step | None], ...]) -> None:
        super().__init__(prior, new)
        #: Per new field: (name, index in the prior row or -1 when added, step or None).
        self.fields = fields

    def children(self) -> tuple[Step, ...]:
        return tuple(s for _, _, s in self.fields if s is not None)

    def _key(self) -> tuple[Any, ...]:
        return (*super()._key(), tuple((n, j) for n, j, _ in self.fields))

    def labelled_children(self) -> list[tuple[str, Step]]:
        return [(repr(n), s) for n, _, s in self.fields if s is not None]

    def summary(self) -> str:
        prior_names = self.prior.field_names
        added = [n for n, j, _ in self.fields if j < 0]
        kept = [n for n, j, _ in self.fields if j >= 0]
        moved = [n for n, j, _ in self.fields if j >= 0] != [n for n in prior_names if n in kept]
        parts = [f"{len(prior_names)} -> {len(self.fields)} fields"]
        if added:
            parts.append(f"added (null): {', '.join(added)}")
        if moved:
            parts.append("reordered")
        if self.prior.supports_row_kind != self.new.supports_row_kind:
            parts.append(f"row kind {'kept' if self.new.supports_row_kind else 'dropped'}")
        return f"row, null mask rebuilt ({'; '.join(parts)})"

    def lines(self, indent: str = "") -> list[str]:
        result = [indent + self.summary()]
        for name, j, step in self.fields:
            if step is None:
                result.append(f"{indent}  {name!r}: added, null")
                continue
            sub = step.lines(indent + "    ")
            source = f" (field {j} before)" if j >= 0 else ""
            result.append(f"{indent}  {name!r}{source}: {sub[0].lstrip()}")
            result.extend(sub[1:])
        return result

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        # Kept fields are copied as bytes by the row itself; the others are rebuilt by their steps.
        order = tuple(j for _, j, _ in self.fields)
        migrated = {j: step.part for _, j, step in self.fields
                    if j >= 0 and step is not None and not isinstance(step, CopyStep)}
        part = self.prior.byte_migration(self.new, order, migrated)
        self._cache_part = part

        def run(source: DataInputView, target: DataOutputView) -> None:
            target.write(part(source))

        return run


class TupleStep(Step):
    """A tuple whose fields migrate: field by field."""

    name = "tuple"

    def __init__(self, prior: Any, new: Any, steps: tuple[Step, ...]) -> None:
        super().__init__(prior, new)
        self.steps = steps

    def children(self) -> tuple[Step, ...]:
        return self.steps

    def summary(self) -> str:
        return f"tuple of {len(self.steps)} fields, field by field"

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        return self.prior.byte_migration(self.new, [step.run for step in self.steps])  # type: ignore[no-any-return]


class _Around(Step):
    """A step around one inner step (the value of a nullable, the elements of a list)."""

    def __init__(self, prior: Any, new: Any, inner: Step) -> None:
        super().__init__(prior, new)
        self.inner = inner

    def children(self) -> tuple[Step, ...]:
        return (self.inner,)


class NullableStep(_Around):
    """A nullable value: the null flag kept, the inner value migrated by its step."""

    name = "nullable"

    def summary(self) -> str:
        return "nullable: flag kept, the value migrated"

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        return self.prior.byte_migration(self.new, self.inner.run)  # type: ignore[no-any-return]


class ListStep(_Around):
    """A list (``ListSerializer``): the size kept, element by element."""

    name = "list"

    def summary(self) -> str:
        return "list, element by element"

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        return self.prior.byte_migration(self.new, self.inner.run)  # type: ignore[no-any-return]


class MapValuesStep(Step):
    """A map (``MapSerializer``) whose keys stay: keys copied, values migrated."""

    name = "map values"

    def __init__(self, prior: Any, new: Any, key: Step, value: Step) -> None:
        super().__init__(prior, new)
        self.key, self.value = key, value

    def children(self) -> tuple[Step, ...]:
        return (self.key, self.value)

    def labelled_children(self) -> list[tuple[str, Step]]:
        return [("key", self.key), ("value", self.value)]

    def summary(self) -> str:
        return "map, entry by entry (null values stay null)"

    def _compile(self) -> Callable[[DataInputView, DataOutputView], None]:
        return self.prior.byte_migration(self.new, self.key.run, self.value.run)  # type: ignore[no-any-return]


# -- building ---------------------------------------------------------------------------------------
def _overrides_migrate_state(snapshot: TypeSerializerSnapshot[Any]) -> bool:
    return type(snapshot).migrate_state is not TypeSerializerSnapshot.migrate_state


def _step(
    new_snapshot: TypeSerializerSnapshot[Any],
    old_snapshot: TypeSerializerSnapshot[Any],
    prior: TypeSerializer[Any],
    new: TypeSerializer[Any],
) -> Step:
    """The step for one nested node, from its verdict."""
    try:
        result = resolve_compatibility(new_snapshot, old_snapshot)
    except Exception:  # a user snapshot failing to judge: migrate the node as objects
        return ObjectStep(new_snapshot, prior, new)
    if result.is_compatible_as_is():
        if snapshot_unpickles(old_snapshot):
            return ObjectStep(new_snapshot, prior, new)  # only unpickling checks a pickle's bytes
        return CopyStep(prior)
    if result.is_compatible_after_migration():
        structural = _structural(new_snapshot, old_snapshot, prior, new)
        if structural is not None:
            return structural
        if type(new_snapshot) is AvroSerializerSnapshot:
            return MigrateStateStep(new_snapshot, prior, new)
    return ObjectStep(new_snapshot, prior, new)


def _structural(
    new_snapshot: TypeSerializerSnapshot[Any],
    old_snapshot: TypeSerializerSnapshot[Any],
    prior: TypeSerializer[Any],
    new: TypeSerializer[Any],
) -> Step | None:
    """A composite built-in's own step, or None when the node is not one: another class, a
    subclass, or a built-in whose migration methods were replaced (its own then decide)."""
    kind = type(new_snapshot)
    if type(old_snapshot) is not kind or _BUILTIN_MIGRATION.get(kind) != (kind.migrate_state, kind.migrate_element):
        return None
    nested_new = getattr(new_snapshot, "nested_snapshots", None)
    nested_old = getattr(old_snapshot, "nested_snapshots", None)
    if nested_new is None or nested_old is None:
        return None
    if kind is RowSerializerSnapshot and type(prior) is RowSerializer and type(new) is RowSerializer:
        return _row_step(new_snapshot, old_snapshot, prior, new)  # type: ignore[arg-type]
    if len(nested_new) != len(nested_old):
        return None
    if kind is TupleSerializerSnapshot and type(prior) is TupleSerializer and type(new) is TupleSerializer:
        return TupleStep(prior, new, tuple(
            _step(n, o, p, s) for n, o, p, s in zip(nested_new, nested_old, prior.fields, new.fields, strict=True)
        ))
    if kind is NullableSerializerSnapshot and type(prior) is NullableSerializer and type(new) is NullableSerializer:
        return NullableStep(prior, new, _step(nested_new[0], nested_old[0], prior.inner, new.inner))
    if kind is ListSerializerSnapshot and type(prior) is ListSerializer and type(new) is ListSerializer:
        return ListStep(prior, new, _step(nested_new[0], nested_old[0], prior.element, new.element))
    if kind is MapSerializerSnapshot and type(prior) is MapSerializer and type(new) is MapSerializer:
        key = _step(nested_new[0], nested_old[0], prior.key, new.key)
        if not isinstance(key, CopyStep):
            return None  # migrated keys may merge: the object path decides
        return MapValuesStep(prior, new, key, _step(nested_new[1], nested_old[1], prior.value, new.value))
    return None


#: The migration methods the structural steps stand for, per built-in composite snapshot.
_BUILTIN_MIGRATION: dict[type, tuple[Any, Any]] = {
    kind: (kind.migrate_state, kind.migrate_element)
    for kind in (RowSerializerSnapshot, TupleSerializerSnapshot, NullableSerializerSnapshot,
                 ListSerializerSnapshot, MapSerializerSnapshot)
}


def _row_step(new_snapshot: Any, old_snapshot: Any, prior: Any, new: Any) -> Step | None:
    if len(prior.fields) != len(old_snapshot.field_names) or len(new.fields) != len(new_snapshot.field_names):
        return None
    if prior.positional or new.positional or new_snapshot.positional or old_snapshot.positional:
        prior_index = {name: i for i, name in enumerate(new.field_names) if i < len(prior.fields)}
    else:
        prior_index = {name: i for i, name in enumerate(prior.field_names)}
    new_snaps = dict(zip(new_snapshot.field_names, new_snapshot.nested_snapshots, strict=True))
    if set(new_snaps) != set(new.field_names):
        return None
    fields: list[tuple[str, int, Step | None]] = []
    for name, serializer, _ in new.fields:
        j = prior_index.get(name, -1)
        if j < 0:
            fields.append((name, -1, None))
            continue
        fields.append((name, j, _step(new_snaps[name], old_snapshot.nested_snapshots[j], prior.fields[j][1], serializer)))
    return RowStep(prior, new, tuple(fields))


class MigrationPlan:
    """How one state's stored bytes migrate from ``old_snapshot`` to ``new_serializer`` (see
    the module docstring). ``needs_migration`` False: the bytes stay, ``reader`` reads them."""

    def __init__(
        self,
        compatibility: SchemaCompatibility[Any],
        prior: TypeSerializer[Any],
        new: TypeSerializer[Any],
        new_snapshot: TypeSerializerSnapshot[Any],
        root: Step | None,
    ) -> None:
        self.compatibility = compatibility
        #: The serializer restored from the old snapshot (reads the stored bytes).
        self.prior = prior
        #: The serializer that reads the bytes after the plan (the new one, or the
        #: reconfigured one when no migration is needed).
        self.reader = new
        self.new_snapshot = new_snapshot
        #: None: no migration, the bytes stay as they are.
        self.root = root
        self._cache_value: Callable[[bytes], bytes] | None = None
        self._cache_redone = 0  # per plan object: a copy sent elsewhere counts its own

    @property
    def redone(self) -> int:
        """How many records this plan object redid on the object path (the byte path did not
        take them on itself)."""
        return self._cache_redone

    @property
    def bytes_only(self) -> bool:
        """Whether every step is a byte step (copies and the built-in composites' rebuilding),
        so that no record its old serializer writes needs the object path."""
        if self.root is None:
            return False
        pending: list[Step] = [self.root]
        while pending:
            step = pending.pop()
            if isinstance(step, (ObjectStep, MigrateStateStep)):
                return False
            pending.extend(step.children())
        return True

    @property
    def redoes_only_nulls(self) -> bool:
        """Whether, of the records its old serializer writes, the byte path redoes only those
        holding a null where an object step stands: every step is a byte step or an object
        step of the reference's own serializers and snapshot class, which migrates every value
        it is given (an object step sends a null to the object path, where the enclosing
        serializer decides it). True of every ``bytes_only`` plan."""
        if self.root is None:
            return False
        pending: list[Step] = [self.root]
        while pending:
            step = pending.pop()
            if isinstance(step, MigrateStateStep):
                return False
            if isinstance(step, ObjectStep) and not all(
                type(part).__module__.split(".")[0] == "reference" for part in (step.snapshot, step.prior, step.new)
            ):
                return False
            pending.extend(step.children())
        return True

    @property
    def needs_migration(self) -> bool:
        return self.root is not None

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_cache")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache_value = None
        self._cache_redone = 0

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, MigrationPlan)
            and (self.prior, self.reader, self.root, self.compatibility.kind)
            == (other.prior, other.reader, other.root, other.compatibility.kind)
        )

    def __hash__(self) -> int:
        return hash((self.compatibility.kind, self.root))

    def lines(self) -> list[str]:
        """The plan without its verdict: what is read, what is written, and the steps."""
        head = []
        if self.compatibility.row_paths:
            head.append(f"row fields that change: {', '.join(self.compatibility.row_paths)}")
        head += [f"from {self.prior!r}", f"to   {self.reader!r}"]
        if self.root is None:
            return [*head, "keep the bytes as they are"]
        return head + self.root.lines()

    def __str__(self) -> str:
        return "\n".join([str(self.compatibility.kind), *("  " + line for line in self.lines())])

    def __repr__(self) -> str:
        return f"<MigrationPlan {self.compatibility.kind}: {self.prior!r} -> {self.reader!r}>"

    # -- the object path (the reference every byte result equals) ----------------------------
    def migrate_object(self, value: Any) -> Any:
        """``value`` (read by ``prior``) as the new serializer's object."""
        if self.root is None:
            return value
        return migrated_element(self.new_snapshot, self.prior, self.reader, value)

    def _object_path(self, source: DataInputView, target: DataOutputView) -> None:
        if isinstance(self.root, MigrateStateStep):
            self.root.run(source, target)
            return
        self.reader.serialize(self.migrate_object(self.prior.deserialize(source)), target)

    # -- the byte path ----------------------------------------------------------------------
    def run(self, source: DataInputView, target: DataOutputView) -> None:
        """Migrate one record from ``source`` (read exactly) to ``target``."""
        if self.root is None:
            self.prior.copy_serialized(source, target)
            return
        if isinstance(self.root, MigrateStateStep) or type(source) is not DataInputView:
            self._object_path(source, target)
            return
        mark, written = source.mark(), len(target)
        try:
            self.root.run(source, target)
        except Exception:  # the object path gives the result or the reference's error
            source.reset(mark)
            target.truncate(written)
            self._cache_redone += 1
            self._object_path(source, target)

    def _value_function(self) -> Callable[[bytes], bytes]:
        fn = self._cache_value
        if fn is not None:
            return fn
        if self.root is None:
            def fn(raw: bytes) -> bytes:
                return raw
        elif isinstance(self.root, MigrateStateStep):
            fn = self._detour
        else:
            part = self.root.part
            detour = self._detour

            def fn(raw: bytes) -> bytes:
                source = DataInputView(raw)
                try:
                    migrated = part(source)
                    if source.available():
                        raise _Detour
                except Exception:  # the object path gives the result or the reference's error
                    self._cache_redone += 1
                    return detour(raw)
                return migrated

        self._cache_value = fn
        return fn

    def migrate_as_objects(self, raw: bytes) -> bytes:
        """One value on the object path only (the heap backend's way: read whole with
        ``prior``, ``migrated_element``, write with ``reader``), never the byte path."""
        if self.root is None:
            return raw
        return self.reader.to_bytes(self.migrate_object(self.prior.from_bytes(raw)))

    def _detour(self, raw: bytes) -> bytes:
        """One value on the object path: read whole, migrate, write."""
        if isinstance(self.root, MigrateStateStep):
            source, target = DataInputView(raw), DataOutputView()
            self.root.run(source, target)
            if source.available():
                raise SerializationError(
                    f"{source.available()} of {len(raw)} bytes left after "
                    f"{type(self.root.snapshot).__name__}.migrate_state migrated one value: it must read "
                    f"exactly one record (with the prior serializer, {self.prior!r}), or the value is corrupt"
                )
            return target.getvalue()
        return self.reader.to_bytes(self.migrate_object(self.prior.from_bytes(raw)))

    def migrate(self, raw: bytes) -> bytes:
        """One value-state value (exactly one record)."""
        return self._value_function()(raw)

    def migrate_map_value(self, raw: bytes | None) -> bytes | None:
        """One map-state value; None (a null map value) stays None."""
        return None if raw is None else self._value_function()(raw)

    def migrate_list(self, raw: bytes) -> bytes:
        """One list-state value in Flink's delimited layout, element by element."""
        if self.root is None:
            return raw
        source = DataInputView(raw)
        target = DataOutputView()
        run = self.run
        for _ in list_element_ends(source, lambda s: run(s, target), lambda: repr(self.prior)):
            if source.available():
                target.write_byte(LIST_DELIMITER)
        return target.getvalue()


def migration_plan(
    old_snapshot: TypeSerializerSnapshot[Any],
    new_serializer: TypeSerializer[Any],
    compatibility: SchemaCompatibility[Any] | None = None,
) -> MigrationPlan:
    """The plan that brings bytes written under ``old_snapshot`` to ``new_serializer``;
    ``StateMigrationError`` when the new serializer is incompatible. ``compatibility`` is the
    verdict when the caller already has it (``resolve_compatibility(new_serializer,
    old_snapshot)``)."""
    new_snapshot = new_serializer.snapshot_configuration()
    if compatibility is None:
        compatibility = resolve_compatibility(new_snapshot, old_snapshot)
    if compatibility.is_incompatible():
        raise StateMigrationError(
            f"the new serializer {new_serializer!r} cannot read state written under "
            f"{type(old_snapshot).__name__}: {compatibility.reason}"
        )
    prior = old_snapshot.restore_serializer()
    if not compatibility.is_compatible_after_migration():
        reader = (compatibility.get_reconfigured_serializer()
                  if compatibility.is_compatible_with_reconfigured_serializer() else new_serializer)
        return MigrationPlan(compatibility, prior, reader, new_snapshot, None)
    root = _structural(new_snapshot, old_snapshot, prior, new_serializer)
    if root is None:
        if _overrides_migrate_state(new_snapshot):
            root = MigrateStateStep(new_snapshot, prior, new_serializer)
        else:
            root = ObjectStep(new_snapshot, prior, new_serializer)
    return MigrationPlan(compatibility, prior, new_serializer, new_snapshot, root)

