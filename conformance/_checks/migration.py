"""migration: each declared (or generated) evolution gets its verdict and its migrated values,
and compatibility results behave as values.

- ``migration.verdict``: each declared evolution gets exactly the expected compatibility verdict,
  and the old snapshot judging the new serializer in the deprecated pre-1.19 direction
  (``resolve_schema_compatibility_with_serializer``) comes to the same one.
- ``migration.migrate_state``: old records, one or a stream of several, migrate to exactly the
  oracle's new values, through the backends' migration plan and through the new snapshot's own
  ``migrate_state`` as Flink's runtime calls it (each call consuming exactly one record).
- ``migration.new_release``: each compatible evolution's serializer, as a job started fresh on
  the new release runs it, writes the oracle's values and reads them back exactly.
- ``migration.migrate_element``: ``migrate_element`` brings an object read by the old serializer
  to the oracle's new value, which the new serializer writes and reads back as that value (the
  heap backend keeps the migrated object and writes it at the next savepoint). For a serializer built only of the reference's classes, also an
  object the old release's own serializer read, of the old release's classes (for an evolution
  with ``classes=`` or ``schemas=``, which registers new versions under the same names), with the old
  release's serializer as the prior and with the restored one: the reference migrates such
  objects too.
- ``migration.shipped``: a migration as Spark's executors run it (``conformance migrate
  --spark``): the plan made where the savepoint is judged (the prior serializer restored from
  the old snapshot, the new one, their migration) is pickled, and the unpickled copy migrates
  each old record, by bytes and by objects, to the oracle's new value.
- ``migration.byte_path``: a migration plan made only of byte steps (copies, and the built-in
  composites' rebuilding: no snapshot's own ``migrate_element`` or ``migrate_state``) migrates
  each old record on its byte path, one by one and as a stream; a record it redoes on the object
  path gets the right value but costs a decode and an encode, so a byte step that fails on
  valid records is a migration of a large savepoint many times slower than it should be. For a
  serializer built only of the reference's classes, a plan whose object steps are the
  reference's own (a list or a map of POJOs) takes on its byte path every old record that holds
  no null (an object step sends a null to the object path by design), and a damaged old record
  (a byte corrupted as ``roundtrip.corrupted`` corrupts it: each of its first ``HEADER_BYTES``,
  and others up to ``DAMAGED_FORMS``, of one record of each draw) migrates
  on the plan as on the object path alone: both refuse it with a ``StateError``, or the new
  serializer reads the same value from both (a byte path may keep a non-canonical encoding the
  object path rewrites, never take a record the object path refuses).
- ``migration.chain``: chains of evolutions (v1 -> v2 -> v3) migrate step by step to the
  composed oracle.
- ``migration.generated``: evolutions generated from the subject's schema get the oracle's
  verdict and values.
- ``migration.verdict_values``: compatibility results (``reference.SchemaCompatibility``) compare
  and hash as values: resolving the same pair of snapshots twice gives equal results with equal
  hashes (usable as dict keys), equal to a fresh result of the same kind, and unequal to results
  of every other kind. The pairs are the serializer's own snapshot against itself and each
  declared evolution.
"""

from __future__ import annotations

import contextlib
import io
import pickle
import types
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    StateError,
    Verdict,
    migrate_element_form,
    migrated_element,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.backends import migration_plan

from .._engine.canonical import show
from .._engine.property import guarded
from .._engine.registry import NotApplicable, Violation, check
from ._support import (
    bytes_example,
    corrupted_bytes,
    expect_equal,
    fixed_draw,
    read_one,
    reference_built,
    spread_positions,
    stopped_at,
    write,
)

if TYPE_CHECKING:
    from .._engine.runner import CheckContext

VERDICT = ("migration.verdict",)


class Step:
    """One evolution as the checks see it: old serializer -> new serializer, with the oracle."""

    def __init__(self, label: str, old: Any, new: Any, expect: str, migrate: Callable[[Any], Any] | None,
                 reason_contains: str | None = None, schemas: tuple[Any, Any] | None = None,
                 classes: tuple[Any, Any] | None = None, reason_where: tuple[str, ...] = ()) -> None:
        self.label, self.old, self.new, self.expect = label, old, new, expect
        self.migrate, self.reason_contains, self.reason_where = migrate, reason_contains, tuple(reason_where)
        self.schemas = schemas
        self.classes = classes

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Generated classes (``schemas``) and a user's versioned classes (``classes``) keep
        their qualified names across versions: make the new ones current while the new
        serializer works, the old ones again afterwards."""
        if self.schemas is None and self.classes is None:
            yield
            return
        import strategies
        from reference import register_type

        if self.schemas is not None:
            strategies.activate(self.schemas[1])
        for cls in self.classes[1] if self.classes is not None else ():
            register_type(cls)
        try:
            yield
        finally:
            if self.schemas is not None:
                strategies.activate(self.schemas[0])
            for cls in self.classes[0] if self.classes is not None else ():
                register_type(cls)

    def expected(self, value: Any) -> Any:
        return value if self.migrate is None else self.migrate(value)


def declared_steps(ctx: Any) -> list[Step]:
    base = ctx.serializer()
    return [Step(evo.label(i), base, evo.serializer(), evo.expect, evo.migrate, evo.reason_contains,
                 evo.schemas, evo.classes, evo.reason_where)
            for i, evo in enumerate(ctx.subject.evolutions)]


def resolve(step: Step) -> tuple[Any, Any]:
    """(result, old snapshot read from bytes), resolved the way a restore does it."""
    old_snapshot = guarded(f"{step.label}: reading the old snapshot", lambda: snapshot_from_bytes(
        snapshot_to_bytes(step.old.snapshot_configuration()), allow_pickle=True))
    new_snapshot = step.new.snapshot_configuration()
    result = guarded(f"{step.label}: resolve_schema_compatibility", resolve_compatibility,
                     new_snapshot, old_snapshot)
    return result, old_snapshot


def plan_for(step: Step) -> tuple[Any, Any]:
    """(result, the backends' migration plan) of a step needing migration, made as a restore
    makes it (``resolve``, then ``migration_plan``); call it with the step active."""
    result, old_snapshot = resolve(step)
    plan = guarded("the migration plan (restore_serializer of the old snapshot, the new snapshot)",
                   migration_plan, old_snapshot, step.new, result)
    return result, plan


def expect_verdict(step: Step, result: Any, judged: str) -> None:
    """``result`` (``judged`` says of what) has the verdict ``step`` declares."""
    if result.kind != step.expect:
        why = f" ({result.reason})" if result.reason else ""
        raise Violation(f"{step.label}: the new snapshot judged {judged} {result.kind}{why}, should be {step.expect}",
                        example=step.label)


def judge(step: Step) -> None:
    with step.active():
        result, old_snapshot = resolve(step)
        # The deprecated pre-1.19 direction, which older callers still use: the old snapshot
        # judging the new serializer must come to the same verdict.
        legacy = guarded(f"{step.label}: the old snapshot's resolve_schema_compatibility_with_serializer",
                         old_snapshot.resolve_schema_compatibility_with_serializer, step.new)
    expect_verdict(step, result, "the old one")
    if legacy.kind != result.kind:
        raise Violation(
            f"{step.label}: the old snapshot's resolve_schema_compatibility_with_serializer(new serializer) "
            f"(the pre-1.19 direction) judged it {legacy.kind}, should be {result.kind} as the new snapshot "
            "judges the old one: callers of either direction must get one verdict", example=step.label)
    if step.reason_contains and step.reason_contains.lower() not in (result.reason or "").lower():
        raise Violation(
            f"{step.label}: the incompatibility reason {result.reason!r} does not mention "
            f"{step.reason_contains!r}, should name what changed", example=step.label)
    missing = _unsaid_where(result.reason or "", step.reason_where)
    if missing is not None:
        before = step.reason_where[:step.reason_where.index(missing)]
        after = f" after {before[-1]!r}" if before else ""
        raise Violation(
            f"{step.label}: the incompatibility reason {result.reason!r} does not say where: got no "
            f"{missing!r}{after}, should name each place on the way to the change in order "
            f"({', '.join(map(repr, step.reason_where))}; as text, case aside)", example=step.label)


def _unsaid_where(reason: str, words: tuple[str, ...]) -> str | None:
    """The first of ``words`` that ``reason`` does not mention after the ones before it (case
    aside), or None when it names them all in order."""
    text, at = reason.lower(), 0
    for word in words:
        found = text.find(word.lower(), at)
        if found < 0:
            return word
        at = found + len(word)
    return None


@check(id="migration.verdict", family="migration", requires=("snapshot.exact_read",))
def verdict(ctx: CheckContext) -> None:
    """Each declared evolution gets exactly the expected compatibility verdict."""
    steps = declared_steps(ctx) + [s for chain in chain_steps(ctx) for s in chain]
    if not steps:
        raise NotApplicable("no evolutions declared (Subject(evolutions=[Evolution(...)]))")
    for step in steps:
        judge(step)


def migrated_bytes(step: Step, old_bytes_list: list[bytes]) -> tuple[list[Any], Any]:
    """Run the step's migration over a stream of old records; (values read by new, reader)."""
    with step.active():
        return _migrated_bytes(step, old_bytes_list)


def _migrated_bytes(step: Step, old_bytes_list: list[bytes]) -> tuple[list[Any], Any]:
    """The bytes migration is the backends' (``migration_plan``: the subject's migrate_state,
    or its migrate_element between the old and the new encoding); the values it gives are
    compared with the oracle's by the callers."""
    result, _ = resolve(step)
    if result.is_compatible_after_migration():
        _, plan = plan_for(step)
        source = DataInputView(b"".join(old_bytes_list))
        target = DataOutputView()
        for i in range(len(old_bytes_list)):
            guarded(f"migrating record {i} of {len(old_bytes_list)} (migrate_state / migrate_element)",
                    plan.run, source, target)
        count = f"{len(old_bytes_list)} record{'s' if len(old_bytes_list) != 1 else ''}"
        if source.available():
            raise Violation(f"migrating {count} (migrate_state / migrate_element) left {source.available()} "
                            "bytes of them unread, should consume each record exactly")
        reader, wrote = step.new, "the migration (migrate_state / migrate_element)"
        data = target.getvalue()
    else:
        reader = result.get_reconfigured_serializer() if result.is_compatible_with_reconfigured_serializer() else step.new
        data, wrote = b"".join(old_bytes_list), "the old serializer"
    source = DataInputView(data)
    values = []
    for i in range(len(old_bytes_list)):
        try:
            values.append(reader.deserialize(source))
        except Violation:
            raise
        except Exception as exc:
            raise Violation(
                f"the new serializer's deserialize of record {i} of {len(old_bytes_list)} raised "
                f"{type(exc).__name__}: {exc}; {stopped_at(data, source.position, wrote=wrote)}: the bytes "
                f"{wrote} wrote are not records the new serializer reads") from exc
    if source.available():
        raise Violation(f"after migration {source.available()} bytes were left after {len(values)} records, should be none")
    return values, reader


def compatible_steps(ctx: Any) -> list[Step]:
    return [s for s in declared_steps(ctx) if s.expect != Verdict.INCOMPATIBLE]


@check(id="migration.migrate_state", family="migration", requires=VERDICT + ("roundtrip.bit_exact",))
def migrate_state(ctx: CheckContext) -> None:
    """Old records, one or a stream of several, migrate to exactly the oracle's new values."""
    steps = compatible_steps(ctx)
    if not steps:
        raise NotApplicable("no compatible evolutions declared")
    for step in steps:
        judged: list[tuple[Any, Any]] = []  # (prior, new snapshot), made once per step

        def body(values: list[Any], step: Step = step, judged: list[tuple[Any, Any]] = judged) -> None:
            records = [write(step.old, v) for v in values]
            got, _ = migrated_bytes(step, records)
            for i, (g, v) in enumerate(zip(got, values, strict=False)):
                expect_equal(g, step.expected(v), f"{step.label}: record {i} of {len(values)} after migration")
            if step.expect == Verdict.COMPATIBLE_AFTER_MIGRATION:
                with step.active():
                    if not judged:
                        _, old_snapshot = resolve(step)
                        judged.append((old_snapshot.restore_serializer(), step.new.snapshot_configuration()))
                    _snapshot_migrate_state(step, *judged[0], records, values)
        ctx.for_all(st.lists(ctx.subject.values, min_size=1, max_size=4), body,
                    max_examples=max(10, ctx.examples // 2))


def _snapshot_migrate_state(step: Step, prior: Any, snapshot: Any, records: list[bytes], values: list[Any]) -> None:
    """The new snapshot's own ``migrate_state``, called as Flink's runtime calls it (the plan
    may take another way to the same values): one call per record of a stream, each consuming
    exactly its record and writing the oracle's value."""
    source = DataInputView(b"".join(records))
    for i, (record, value) in enumerate(zip(records, values, strict=True)):
        start, target = source.position, DataOutputView()
        guarded(f"{step.label}: the new snapshot's migrate_state of record {i}", snapshot.migrate_state,
                prior, step.new, source, target)
        if source.position - start != len(record):
            raise Violation(f"{step.label}: the new snapshot's migrate_state consumed {source.position - start} bytes "
                            f"of record {i} of {len(records)}, should consume exactly its {len(record)}",
                            example=bytes_example(record))
        expect_equal(read_one(step.new, target.getvalue(), "what migrate_state wrote"), step.expected(value),
                     f"{step.label}: record {i} of {len(records)} after the new snapshot's own migrate_state")


@check(id="migration.byte_path", family="migration", requires=("migration.migrate_state",))
def byte_path(ctx: CheckContext) -> None:
    """A plan of byte steps only migrates every old record on its byte path; a plan whose
    object steps are the reference's own every old record holding no null. Of the reference's
    serializers, damaged old records migrate on the plan as on the object path alone."""
    plans = []
    for step in compatible_steps(ctx):
        if step.expect != Verdict.COMPATIBLE_AFTER_MIGRATION:
            continue
        with step.active():
            _, plan = plan_for(step)
        if plan.bytes_only:
            plans.append((step, plan, False))
        elif plan.redoes_only_nulls and reference_built(step.old) and reference_built(step.new):
            plans.append((step, plan, True))
    if not plans:
        raise NotApplicable("no evolution whose migration plan is made of byte steps and the reference's own "
                            "object steps only (a snapshot's own migrate_element or migrate_state decides the "
                            "others)")
    for step, plan, nulls_redone in plans:
        def body(values: list[Any], step: Step = step, plan: Any = plan, nulls_redone: bool = nulls_redone) -> None:
            if nulls_redone:
                values = [v for v in values if not _holds_null(v)]  # a null goes to the object path by design
            records = [write(step.old, v) for v in values]
            why = ("a byte step that fails" if not nulls_redone else
                   "a byte step that fails, or an object step that gives up on a value that is not null,")
            with step.active():
                for i, record in enumerate(records):
                    before = plan.redone
                    plan.migrate(record)
                    if plan.redone != before:
                        raise Violation(
                            f"{step.label}: the migration plan's byte path gave up on record {i} of {len(records)} "
                            f"({show(values[i])}) and redid it on the object path; it should migrate every "
                            f"record its old serializer writes{' without a null' if nulls_redone else ''} on the "
                            f"byte path (the value is right, but {why} decodes and encodes each record again)",
                            example=bytes_example(record))
                before = plan.redone
                source, target = DataInputView(b"".join(records)), DataOutputView()
                for _ in records:
                    plan.run(source, target)
                if plan.redone != before:
                    raise Violation(
                        f"{step.label}: the migration plan's byte path gave up on {plan.redone - before} of "
                        f"{len(records)} records read as a stream and redid them on the object path; it should "
                        f"migrate every record its old serializer writes{' without a null' if nulls_redone else ''} "
                        "on the byte path", example=bytes_example(b"".join(records)))
                if records and reference_built(step.old) and reference_built(step.new):
                    # The first record past a bare header (an empty list or map has nothing to damage).
                    i = next((i for i, r in enumerate(records) if len(r) > HEADER_BYTES), 0)
                    _damaged_records_agree(step, plan, values[i], records[i])
        ctx.for_all(st.lists(ctx.subject.values, min_size=1, max_size=4), body,
                    max_examples=max(5, ctx.examples // 10))


#: How many damaged forms of an old record ``migration.byte_path`` migrates on the plan and on
#: the object path, for a plan of the reference's serializers (a fixed draw, spread over the record).
DAMAGED_FORMS = 48
#: The first bytes of a record, each damaged in every way: a size, a flag, the first key or field.
HEADER_BYTES = 8


def _damaged_records_agree(step: Step, plan: Any, value: Any, record: bytes) -> None:
    """Damaged forms of ``record`` (the old record of ``value``) migrate on ``plan`` as on the
    object path alone (``plan.migrate_as_objects``): both refuse with a StateError, or the new
    serializer reads the same value from what each wrote. The plan's result is by definition
    the object path's; its byte path may keep bytes the object path would rewrite (a
    non-canonical encoding), never take a record the object path refuses."""
    forms = [(at, new, how) for at in spread_positions(len(record), 64, 16, 8, 8)
             for new, how in corrupted_bytes(record[at])]
    # Every form of the first bytes (sizes, flags, the first key or field), a fixed draw of the rest.
    head = [form for form in forms if form[0] < HEADER_BYTES]
    rest = forms[len(head):]
    forms = head + fixed_draw(rest, max(0, DAMAGED_FORMS - len(head)), len(record))
    for at, new, how in forms:
        broken = record[:at] + bytes([new]) + record[at + 1:]
        where = (f"{step.label}: the old record of {show(value)} with byte {at} of {len(record)} {how} "
                 f"({record[at]:02x} -> {new:02x})")
        by_plan, by_objects = _migrated_or_refused(plan.migrate, broken), _migrated_or_refused(plan.migrate_as_objects, broken)
        for path, got in (("the plan", by_plan), ("the object path", by_objects)):
            if isinstance(got, Exception) and not isinstance(got, StateError):
                raise Violation(f"{where}: {path} raised {type(got).__name__}: {got}, should refuse it with a "
                                "reference.StateError naming the problem", example=bytes_example(broken))
        if isinstance(by_plan, StateError) and isinstance(by_objects, StateError):
            continue
        if isinstance(by_plan, StateError) or isinstance(by_objects, StateError):
            taken, refused = ("the plan", "the object path") if isinstance(by_objects, StateError) else (
                "the object path", "the plan")
            error = by_objects if isinstance(by_objects, StateError) else by_plan
            raise Violation(
                f"{where}: {taken} migrated it, {refused} refused it ({type(error).__name__}: {error}); the plan's "
                "result is by definition the object path's (read with the old serializer, migrated, written with "
                "the new), so a byte step must refuse, or send to the object path, every record the object path "
                "refuses", example=bytes_example(broken))
        if by_plan != by_objects:
            read = [read_one(step.new, out, f"the new serializer's deserialize of what {path} wrote for {where}")
                    for path, out in (("the plan", by_plan), ("the object path", by_objects))]
            expect_equal(read[0], read[1], f"{where}: the value the plan migrated it to, read back,")


def _migrated_or_refused(migrate: Callable[[bytes], bytes], raw: bytes) -> Any:
    """What ``migrate`` made of ``raw``: its bytes, or the exception it raised."""
    try:
        return migrate(raw)
    except Exception as exc:  # noqa: BLE001 - judged by the caller: a StateError refuses, another crashes
        return exc


def _holds_null(value: Any) -> bool:
    """Whether ``value`` is None or holds one in its tuples, lists, sets and dicts (objects are
    not looked into: an object step takes an object whole, nulls in its fields included)."""
    if value is None:
        return True
    if isinstance(value, (tuple, list, set, frozenset)):
        return any(_holds_null(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_null(k) or _holds_null(v) for k, v in value.items())
    return False


class _ByIdentity(pickle.Pickler):
    """Pickles every instance as pickle does, and classes, functions and modules as references
    to themselves: the executors run the same code (the next release's classes, which a check
    keeps side by side with the current ones under one name, included) and cloudpickle ships
    what the standard pickle cannot name."""

    def __init__(self, file: Any, table: list[Any]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.table = table

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType, types.ModuleType)):
            self.table.append(obj)
            return len(self.table) - 1
        return None


class _FromTable(pickle.Unpickler):
    def __init__(self, file: Any, table: list[Any]) -> None:
        super().__init__(file)
        self.table = table

    def persistent_load(self, pid: Any) -> Any:
        return self.table[pid]


def shipped_copy(obj: Any) -> Any:
    """``obj`` pickled and unpickled as a Spark executor receives it (``_ByIdentity``)."""
    table: list[Any] = []
    buffer = io.BytesIO()
    _ByIdentity(buffer, table).dump(obj)
    buffer.seek(0)
    return _FromTable(buffer, table).load()


@check(id="migration.shipped", family="migration", requires=("migration.migrate_state", "roundtrip.pickle"))
def shipped(ctx: CheckContext) -> None:
    """A migration as Spark's executors run it: the plan made where the savepoint is judged is
    pickled, and the unpickled copy migrates each old record, by bytes and by objects, to the
    oracle's new value (a serializer restored from a snapshot, pickled, keeps what it read)."""
    steps = [s for s in compatible_steps(ctx) if s.expect == Verdict.COMPATIBLE_AFTER_MIGRATION]
    if not steps:
        raise NotApplicable("no evolution needing migration declared")
    for step in steps:
        with step.active():
            result, plan = plan_for(step)
            try:
                copy = shipped_copy(plan)
            except Exception as exc:
                raise Violation(
                    f"{step.label}: pickling the migration plan {plan!r} raised {type(exc).__name__}: {exc}; it "
                    "should pickle: Spark ships it (with the serializer restored from the old snapshot, the new "
                    "serializer and its snapshot) to its executors") from None

        def body(value: Any, step: Step = step, copy: Any = copy) -> None:
            old = write(step.old, value)
            with step.active():
                expected = step.expected(value)
                for path, migrate in (("by bytes", copy.migrate), ("by objects", copy.migrate_as_objects)):
                    raw = guarded(f"{step.label}: the unpickled migration plan migrating {path}", migrate, old)
                    got = read_one(step.new, raw, f"{step.label}: the new serializer reading a record the unpickled "
                                                  f"migration plan migrated {path}")
                    expect_equal(got, expected, f"{step.label}: a record migrated {path} by the migration plan after "
                                                "pickling (as Spark's executors run it)")

        ctx.for_all(ctx.subject.values, body, max_examples=max(3, ctx.examples // 20))


@check(id="migration.new_release", family="migration", requires=VERDICT + ("roundtrip.bit_exact",))
def new_release(ctx: CheckContext) -> None:
    """Each compatible evolution's serializer, as a job started fresh on the new release runs
    it, writes the oracle's values and reads them back exactly (an as-is or reconfigured
    release only ever read old bytes in the other checks)."""
    steps = compatible_steps(ctx)
    if not steps:
        raise NotApplicable("no compatible evolutions declared")
    for step in steps:
        def body(value: Any, step: Step = step) -> None:
            with step.active():
                expected = step.expected(value)
                data = write(step.new, expected)
                expect_equal(read_one(step.new, data, f"{step.label}: the new release's deserialize"), expected,
                             f"{step.label}: the new release reading back what it wrote")

        ctx.for_all(ctx.subject.values, body, max_examples=max(10, ctx.examples // 4))


@check(id="migration.migrate_element", family="migration", requires=VERDICT + ("roundtrip.bit_exact",))
def migrate_element(ctx: CheckContext) -> None:
    """migrate_element brings an object read by the old serializer to the oracle's new value."""
    steps = [s for s in compatible_steps(ctx) if s.expect == Verdict.COMPATIBLE_AFTER_MIGRATION]
    if not steps:
        raise NotApplicable("no evolution needing migration declared")
    for step in steps:
        def body(value: Any, step: Step = step) -> None:
            with step.active():
                check_element(step, value)

        ctx.for_all(ctx.subject.values, body, max_examples=max(10, ctx.examples // 2))


def check_element(step: Step, value: Any) -> None:
    """Either FLIP-527 form of ``migrate_element`` (returning, or writing to its target) gives
    the expected value; a method that takes a target writes exactly that value there."""
    _, old_snapshot = resolve(step)
    prior = old_snapshot.restore_serializer()
    new_snapshot = step.new.snapshot_configuration()
    element = read_one(prior, write(step.old, value), "the restored old serializer")
    expected = step.expected(value)
    got = guarded("migrate_element", migrated_element, new_snapshot, prior, step.new, element)
    expect_equal(got, expected, f"{step.label}: migrate_element")
    _written_back(step, got, expected, f"{step.label}: migrate_element")
    if (step.classes is not None or step.schemas is not None) and reference_built(step.old) \
            and reference_built(step.new):
        # The old release's objects, as its own serializer reads them: with that serializer as
        # the prior, and with the restored one (objects read before the new classes came).
        for prior_is, by in ((step.old, "the old release's serializer"), (prior, "the restored old serializer")):
            old_element = read_one(step.old, write(step.old, value), "the old release's serializer")
            got = guarded("migrate_element of an object of the old release's classes", migrated_element,
                          new_snapshot, prior_is, step.new, old_element)
            what = (f"{step.label}: migrate_element of an object the old release's own serializer read (its "
                    f"classes, not the ones now registered under their names), with {by} as the prior")
            expect_equal(got, expected, what)
            _written_back(step, got, expected, what)
    if migrate_element_form(new_snapshot) == "returning":
        return
    element = read_one(prior, write(step.old, value), "the restored old serializer")
    target = DataOutputView()
    guarded("migrate_element with a target", new_snapshot.migrate_element, prior, step.new, element, target)
    expect_equal(read_one(step.new, target.getvalue(), "reading what migrate_element wrote"), expected,
                 f"{step.label}: what migrate_element wrote to its target")


def _written_back(step: Step, got: Any, expected: Any, what: str) -> None:
    """The migrated object, as the heap backend keeps it, is written by the new serializer at
    the next savepoint and reads back as the oracle's value: an object that only compares equal
    (a nested object of an earlier version of its class, say) cannot be written."""
    try:
        data = write(step.new, got)
    except Violation as exc:
        raise Violation(f"{what}: the new serializer cannot write the migrated object {show(got)} ({exc.message}), "
                        "as the heap backend does at the next savepoint; it should be made of the classes the new "
                        "serializer writes") from None
    expect_equal(read_one(step.new, data, "reading the migrated object the new serializer wrote"), expected,
                 f"{what}, written by the new serializer and read back")


def chain_steps(ctx: Any) -> list[list[Step]]:
    chains = []
    for c, chain in enumerate(ctx.subject.chains):
        previous = ctx.serializer()
        steps = []
        for i, evo in enumerate(chain):
            new = evo.serializer()
            steps.append(Step(f"chain {c} step {i}", previous, new, evo.expect, evo.migrate, evo.reason_contains,
                              evo.schemas, evo.classes, evo.reason_where))
            previous = new
        chains.append(steps)
    return chains


@check(id="migration.chain", family="migration", requires=VERDICT + ("roundtrip.bit_exact",))
def chain(ctx: CheckContext) -> None:
    """Chains of evolutions (v1 -> v2 -> v3) migrate step by step to the composed oracle."""
    chains = chain_steps(ctx)
    if not chains:
        raise NotApplicable("no evolution chains declared (Subject(chains=[[v2, v3]]))")
    for steps in chains:
        usable = [s for s in steps if s.expect != Verdict.INCOMPATIBLE]

        def body(values: list[Any], usable: list[Step] = usable) -> None:
            expected = list(values)
            data = [write(usable[0].old, v) for v in values] if usable else []
            for step in usable:
                got, reader = migrated_bytes(step, data)
                expected = [step.expected(v) for v in expected]
                for i, (g, e) in enumerate(zip(got, expected, strict=False)):
                    expect_equal(g, e, f"{step.label}: record {i}")
                data = [write(step.new, g) for g in got]

        ctx.for_all(st.lists(ctx.subject.values, min_size=1, max_size=3), body,
                    max_examples=max(5, ctx.examples // 4))


@check(id="migration.generated", family="migration", requires=("snapshot.exact_read", "roundtrip.bit_exact"))
def generated(ctx: CheckContext) -> None:
    """Evolutions generated from the subject's schema get the oracle's verdict and values."""
    schema = ctx.subject.schema
    if schema is None:
        raise NotApplicable("no schema to generate evolutions from (Subject(schema=...), built-ins)")
    try:
        import strategies
        from reference.types import serializer_for
        evolutions = strategies.evolutions(schema)
    except (ImportError, AttributeError, NotImplementedError) as exc:
        raise NotApplicable(f"the strategies package cannot generate evolutions yet ({exc})") from None

    @st.composite
    def cases(draw: Any) -> tuple[Any, list[Any]]:
        evo = draw(evolutions, label="evolution")
        values = draw(st.lists(strategies.values(evo.old), min_size=1, max_size=3), label="old values")
        return evo, values

    def body(case: tuple[Any, list[Any]]) -> None:
        evo, values = case
        strategies.activate(evo.new)
        try:
            new = serializer_for(evo.new)
        finally:
            strategies.activate(evo.old)
        old = serializer_for(evo.old)
        step = Step(f"generated evolution {evo.change!r}", old, new, evo.expect, evo.migrate,
                    getattr(evo, "reason_contains", None), (evo.old, evo.new),
                    reason_where=getattr(evo, "reason_where", ()))
        judge(step)
        if evo.expect == Verdict.INCOMPATIBLE:
            return
        got, _ = migrated_bytes(step, [write(old, v) for v in values])
        for i, (g, v) in enumerate(zip(got, values, strict=False)):
            expect_equal(g, step.expected(v), f"{step.label}: record {i}")

    def display(case: tuple[Any, list[Any]]) -> str:
        evo, values = case
        return f"{evo.change}: {show(evo.old)} -> {show(evo.new)}, old values {show(values)}"

    ctx.for_all(cases(), body, max_examples=max(10, ctx.examples // 2), display=display)


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
def verdict_values(ctx: CheckContext) -> None:
    """Compatibility results compare and hash as values (by kind and reconfigured serializer)."""
    s = ctx.serializer()
    _judge_values(_resolved(s, s), _resolved(ctx.serializer(), s), "the serializer's own snapshot")
    for step in declared_steps(ctx):
        _judge_values(_resolved(step.new, step.old, step), _resolved(step.new, step.old, step), step.label)
