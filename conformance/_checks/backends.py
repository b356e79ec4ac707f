"""backends: full state histories on the heap and bytes backends (memory and RocksDB stores)
for value, list and map state; identical savepoints; incompatible changes refused with nothing
lost; a restore in a fresh Python process; keys; refused updates.

- ``backends.history``: write -> savepoint -> restore -> read -> savepoint on every backend gives
  the values.
- ``backends.identical_savepoints``: the same history gives identical savepoints on the heap and
  bytes backends.
- ``backends.evolution``: restoring with each compatible evolution reads the oracle's values on
  every backend, and the next savepoints agree across backends.
- ``backends.incompatible``: an incompatible evolution is refused with a ``StateMigrationError``
  and the savepoint still restores with the old serializer (nothing lost).
- ``backends.fresh_process``: a savepoint restores and reads back in a fresh Python process (no
  state that only lives in the writing process).
- ``backends.keyed``: as the backends' key serializer, every key finds its state again after a
  restore (also when rebuilt in another order), and an evolution needing migration is refused
  for keys.
- ``backends.state_untouched``: on the bytes state backend, ``update`` with an out-of-domain value
  (as ``roundtrip.domain_refused`` draws them) raises ``reference.SerializationError`` and the
  state still holds its previous value.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from reference import SerializationError, StateError, Verdict
from reference.backends import SCHEMA_EVOLUTION_ENABLED
from reference.savepoint import file_tree
from reference.serializers import LongSerializer

from .._engine.canonical import show, tree_difference
from .._engine.providers import Provider, provider
from .._engine.registry import NotApplicable, Violation, check
from .._fresh.layout import descriptors, expected_state, state_trees
from ._support import expect_equal, held, read_one, write
from .migration import Step, declared_steps
from .roundtrip import out_of_domain_cases

if TYPE_CHECKING:
    from .._engine.runner import CheckContext

HISTORY = ("backends.history",)
EVOLUTION_CONFIG = SCHEMA_EVOLUTION_ENABLED
#: The checks restore only savepoints they wrote themselves, from the subject's own values: a
#: pickled state in them is the subject's, so restoring it may unpickle (an incompatible
#: evolution of a Pickle subject must then be refused as incompatible, not as untrusted).
OWN_SAVEPOINTS = True


def backend_kinds(ctx: Any) -> list[str]:
    kinds = []
    if "heap" in ctx.backends:
        kinds.append("heap")
    if "bytes" in ctx.backends:
        kinds += ["bytes/memory", "bytes/rocksdb"]
    return kinds


def _fresh_dir(ctx: Any, what: str) -> str:
    return os.path.join(ctx.work_dir, f"{what}-{uuid.uuid4().hex[:10]}")


def new_backend(ctx: Any, kind: str) -> Any:
    from reference.backends import BytesStateBackend, HeapStateBackend

    if kind == "heap":
        return HeapStateBackend(LongSerializer(), config=EVOLUTION_CONFIG)
    store = kind.split("/", 1)[1]
    return BytesStateBackend(LongSerializer(), store=store, config=EVOLUTION_CONFIG)


def restore_backend(ctx: Any, kind: str, savepoint: str) -> Any:
    from reference.backends import BytesStateBackend, HeapStateBackend

    if kind == "heap":
        return HeapStateBackend.restore(savepoint, key_serializer=LongSerializer(), config=EVOLUTION_CONFIG,
                                        allow_pickle=OWN_SAVEPOINTS)
    store = kind.split("/", 1)[1]
    return BytesStateBackend.restore(savepoint, key_serializer=LongSerializer(), config=EVOLUTION_CONFIG,
                                     allow_pickle=OWN_SAVEPOINTS, store=store)


def write_history(backend: Any, serializer: Any, values: list[Any]) -> None:
    value_d, list_d, map_d = descriptors(serializer)
    vs, ls, ms = backend.get_value_state(value_d), backend.get_list_state(list_d), backend.get_map_state(map_d)
    for key, (v, elements, entries) in expected_state(values).items():
        backend.set_current_key(key)
        vs.update(serializer.copy(v))
        ls.add(serializer.copy(elements[0]))
        ls.add_all([serializer.copy(e) for e in elements[1:]])
        ms.put_all({k: serializer.copy(e) for k, e in entries.items()})


def read_and_compare(backend: Any, serializer: Any, values: list[Any], where: str, migrate: Any = None) -> None:
    fix = (lambda v: v) if migrate is None else migrate
    value_d, list_d, map_d = descriptors(serializer)
    vs, ls, ms = backend.get_value_state(value_d), backend.get_list_state(list_d), backend.get_map_state(map_d)
    for key, (v, elements, entries) in expected_state(values).items():
        backend.set_current_key(key)
        expect_equal(vs.value(), fix(v), f"{where}: value state of key {key}")
        expect_equal(ls.get(), [fix(e) for e in elements], f"{where}: list state of key {key}")
        expect_equal(dict(ms.items()), {k: fix(e) for k, e in entries.items()}, f"{where}: map state of key {key}")


def savepoint_content(path: str) -> tuple[Any, dict[str, list[tuple[Any, ...]]]]:
    from reference.savepoint import read_savepoint_metadata, read_state_rows

    metadata = read_savepoint_metadata(path)
    rows = {state.name: sorted(read_state_rows(path, state)) for state in metadata.states}
    return metadata, rows


def differences(a: str, b: str) -> str | None:
    meta_a, rows_a = savepoint_content(a)
    meta_b, rows_b = savepoint_content(b)
    for state in sorted(set(rows_a) | set(rows_b)):
        ra, rb = rows_a.get(state, []), rows_b.get(state, [])
        if ra != rb:
            for x, y in zip(ra, rb, strict=False):
                if x != y:
                    return f"state {state!r}: row {x!r} vs {y!r}"
            return f"state {state!r}: {len(ra)} rows vs {len(rb)}"
    if meta_a != meta_b:
        return "the savepoint metadata (serializer snapshots) differ"
    return None


def stored_values(ctx: Any) -> Any:
    """Histories: a few non-null values (nulls mean 'cleared' in value and list state)."""
    return st.lists(ctx.subject.values.filter(lambda v: v is not None), min_size=1, max_size=6)


def _budget(ctx: Any) -> int:
    return max(3, ctx.examples // 12)


def _close(backend: Any) -> None:
    try:
        backend.close()
    except Exception:
        pass


def history(ctx: Any, values: list[Any], kind: str) -> str:
    """Write, savepoint, restore, read, savepoint again; returns the second savepoint."""
    backend = new_backend(ctx, kind)
    try:
        write_history(backend, ctx.serializer(), values)
        read_and_compare(backend, ctx.serializer(), values, f"{kind} before any savepoint")
        first = backend.savepoint(_fresh_dir(ctx, "savepoint"))
    finally:
        _close(backend)
    restored = restore_backend(ctx, kind, first)
    try:
        read_and_compare(restored, ctx.serializer(), values, f"{kind} after restoring a savepoint")
        second = restored.savepoint(_fresh_dir(ctx, "savepoint"))
    finally:
        _close(restored)
    diff = differences(first, second)
    if diff:
        raise Violation(f"{kind}: the savepoint written after a restore differs from the one restored ({diff}), should be identical")
    return first


def _draw_bulk_values(ctx: Any) -> list[Any]:
    drawn: list[list[Any]] = []
    ctx.for_all(stored_values(ctx), drawn.append, max_examples=max(5, ctx.examples // 4))
    values = [v for batch in drawn for v in batch][:50]
    if not values:
        raise NotApplicable("the values strategy gave no non-null value")
    return values


def _stop(started: tuple[Any, dict[str, Any]]) -> None:
    proc, _spec = started
    proc.kill()
    proc.communicate()


#: Many values drawn once per subject: the passing path runs one big history per backend
#: (backends are costly to open); only a failure falls back to small shrinking histories.
BULK_VALUES: Provider[list[Any]] = provider("bulk_values", _draw_bulk_values)
#: Backend kind -> the savepoint backends.history wrote for the bulk values.
SAVEPOINTS: Provider[dict[str, str]] = provider("savepoints")
#: The fresh-process restore started by backends.history, collected by backends.fresh_process.
#: (a ``subprocess.Popen`` or the ``Restore`` of a zygote's child (``conformance._fresh.process``),
#: the spec it restores).
FRESH_PROCESS: Provider[tuple[Any, dict[str, Any]]] = provider("fresh_process", close=_stop)


def bulk_values(ctx: Any) -> list[Any]:
    return ctx.get(BULK_VALUES)


def bulk_then_shrink(ctx: Any, body: Any) -> Any:
    """``body(bulk values)``; on a Violation, search small histories with hypothesis so the
    report shows a shrunk one (the bulk failure stands if none fails)."""
    try:
        return body(bulk_values(ctx))
    except Violation as bulk_failure:
        ctx.for_all(stored_values(ctx), body, max_examples=_budget(ctx))
        if bulk_failure.example is None:
            bulk_failure.example = show(bulk_values(ctx))
        raise bulk_failure from None


@check(id="backends.history", family="backends", requires=("roundtrip.bit_exact", "snapshot.restore"))
def full_history(ctx: CheckContext) -> None:
    """write -> savepoint -> restore -> read -> savepoint on every backend gives the values."""
    kinds = backend_kinds(ctx)
    if not kinds:
        raise NotApplicable("no backend selected (--backend heap,bytes)")

    bulk = bulk_values(ctx)

    def body(values: list[Any]) -> dict[str, str]:
        points = {}
        for kind in kinds:
            points[kind] = history(ctx, values, kind)
            if values is bulk and not ctx.has(FRESH_PROCESS):
                # The fresh-process restore runs while the other backends and checks do;
                # backends.fresh_process collects it.
                _start_fresh_process(ctx, points[kind])
        return points

    ctx.put(SAVEPOINTS, bulk_then_shrink(ctx, body))


def savepoints(ctx: Any) -> dict[str, str]:
    if not ctx.has(SAVEPOINTS):
        ctx.result("backends.history")
    if not ctx.has(SAVEPOINTS):
        raise NotApplicable("backends.history did not pass")
    return ctx.get(SAVEPOINTS)


@check(id="backends.identical_savepoints", family="backends", requires=HISTORY)
def identical(ctx: CheckContext) -> None:
    """The same history gives identical savepoints on the heap and bytes backends."""
    kinds = backend_kinds(ctx)
    if len(kinds) < 2:
        raise NotApplicable("needs both the heap and the bytes backend")

    def compare(points: dict[str, str]) -> None:
        base = kinds[0]
        for kind in kinds[1:]:
            diff = differences(points[base], points[kind])
            if diff:
                raise Violation(f"{base} and {kind} wrote different savepoints for the same history ({diff}), should be identical")

    try:
        compare(savepoints(ctx))
    except Violation:
        bulk_then_shrink(ctx, lambda values: compare({kind: history(ctx, values, kind) for kind in kinds}))
        raise


def restore_with(ctx: Any, step: Step, kinds: list[str], values: list[Any], points: dict[str, str]) -> None:
    with step.active():
        _restore_with(ctx, step, kinds, values, points)


def _restore_with(ctx: Any, step: Step, kinds: list[str], values: list[Any], points: dict[str, str]) -> None:
    after = {}
    for kind in kinds:
        restored = None
        try:
            restored = restore_backend(ctx, kind, points[kind])
            read_and_compare(restored, step.new, values, f"{kind} restored with {step.label}", step.expected)
            after[kind] = restored.savepoint(_fresh_dir(ctx, "savepoint"))
        except StateError as exc:
            raise Violation(f"{kind}: restoring with {step.label} should succeed, but raised {type(exc).__name__}: {exc}") from None
        finally:
            if restored is not None:
                _close(restored)
    for kind in kinds[1:]:
        diff = differences(after[kinds[0]], after[kind])
        if not diff:
            continue
        if step.expect == Verdict.COMPATIBLE_AFTER_MIGRATION or savepoint_content(after[kinds[0]])[0] != savepoint_content(after[kind])[0]:
            raise Violation(f"after {step.label}, {kinds[0]} and {kind} wrote different savepoints ({diff}), should be identical")
        _each_restores(ctx, step, kinds, values, after)


def _each_restores(ctx: Any, step: Step, kinds: list[str], values: list[Any], after: dict[str, str]) -> None:
    """Without a migration the backends may keep different bytes, both right: the bytes backend
    keeps the stored bytes (read by the new or reconfigured serializer) where the heap backend
    writes every value again with it (a compatible serializer need not write the old bytes,
    e.g. a pojo serializer that learned a subclass tags it anew). Then each savepoint must
    restore, on every backend, to the oracle's values."""
    for written in kinds:
        for kind in kinds:
            restored = None
            where = f"{kind} restoring {written}'s savepoint written after {step.label}"
            try:
                restored = restore_backend(ctx, kind, after[written])
                read_and_compare(restored, step.new, values, where, step.expected)
            except StateError as exc:
                raise Violation(f"{where} should succeed, but raised {type(exc).__name__}: {exc}") from None
            finally:
                if restored is not None:
                    _close(restored)


@check(id="backends.evolution", family="backends", requires=HISTORY + ("migration.verdict",))
def evolution(ctx: CheckContext) -> None:
    """Restoring with each compatible evolution reads the oracle's values on every backend, and
    the next savepoints agree across backends."""
    steps = [s for s in declared_steps(ctx) if s.expect != Verdict.INCOMPATIBLE]
    if not steps:
        raise NotApplicable("no compatible evolutions declared")
    kinds = backend_kinds(ctx)
    points = savepoints(ctx)
    for step in steps:
        try:
            restore_with(ctx, step, kinds, bulk_values(ctx), points)
        except Violation:
            def small(values: list[Any], step: Step = step) -> None:
                restore_with(ctx, step, kinds, values, {kind: history(ctx, values, kind) for kind in kinds})

            ctx.for_all(stored_values(ctx), small, max_examples=_budget(ctx))
            raise


@check(id="backends.incompatible", family="backends", requires=HISTORY + ("migration.verdict",))
def incompatible(ctx: CheckContext) -> None:
    """An incompatible evolution is refused with a StateMigrationError and the savepoint still
    restores with the old serializer (nothing lost).

    One restore per backend meets every incompatible serializer in turn (the refusal comes
    when the state is asked for with it), then the original serializer, which must read every
    value: a refusal that left the state registered, half migrated or dropped shows there. The
    savepoint's files are compared byte for byte after each refusal, so a fresh restore would
    read what the first one read."""
    from reference import StateMigrationError

    steps = [s for s in declared_steps(ctx) if s.expect == Verdict.INCOMPATIBLE]
    if not steps:
        raise NotApplicable("no incompatible evolution declared")
    kinds = backend_kinds(ctx)
    values = bulk_values(ctx)
    points = savepoints(ctx)
    for kind in kinds:
        first = points[kind]
        before = file_tree(first)
        restored = restore_backend(ctx, kind, first)
        try:
            for step in steps:
                try:
                    with step.active():
                        read_and_compare(restored, step.new, values, kind)
                except StateMigrationError:
                    pass
                else:
                    raise Violation(f"{kind}: restoring with {step.label} succeeded, should raise StateMigrationError",
                                    example=step.label)
                if file_tree(first) != before:
                    raise Violation(f"{kind}: the refused restore with {step.label} changed the savepoint files, "
                                    "should leave them untouched")
            read_and_compare(restored, ctx.serializer(), values,
                             f"{kind} reading with the original serializer after the refusals")
        finally:
            _close(restored)


def _modules_for(serializer: Any) -> list[str]:
    """The modules a fresh process imports before restoring: those of the serializers and
    snapshots in the subject's serializer tree and of the classes they hold (a pojo's dataclass
    and subclasses, an enum), taken from the writing process's objects, never from the
    savepoint."""
    from reference import TypeSerializer, TypeSerializerSnapshot

    roots = (serializer, serializer.snapshot_configuration())
    found = [o for root in roots for o in (root, *(o for _, o in held(root, (TypeSerializer, TypeSerializerSnapshot))))]
    mods = {o.__module__ if isinstance(o, type) else type(o).__module__ for o in found}
    return sorted(m for m in mods if m not in ("__main__", "builtins"))


def _start_fresh_process(ctx: Any, savepoint: str) -> None:
    serializer = ctx.serializer()
    if type(serializer).__module__ == "__main__" and not ctx.subject.locator:
        return
    values = bulk_values(ctx)
    spec = {"savepoint": savepoint, "keys": len(values), "modules": _modules_for(serializer),
            "locator": ctx.subject.locator}
    from .._fresh.process import start_restore

    ctx.put(FRESH_PROCESS, (start_restore(spec, ctx.work_dir), spec))


@check(id="backends.fresh_process", family="backends", requires=HISTORY)
def fresh_process(ctx: CheckContext) -> None:
    """A savepoint restores and reads back in a fresh Python process (no state that only lives in
    the writing process)."""
    if "heap" not in ctx.backends and "bytes" not in ctx.backends:
        raise NotApplicable("no backend selected")
    serializer = ctx.serializer()
    if type(serializer).__module__ == "__main__" and not ctx.subject.locator:
        raise NotApplicable("the serializer is defined in __main__; give Subject(locator='module:attr') to restore it elsewhere")
    if not ctx.has(FRESH_PROCESS):
        points = savepoints(ctx)
        _start_fresh_process(ctx, points.get("bytes/memory") or points["heap"])
    started = ctx.take(FRESH_PROCESS)
    if started is None:
        raise NotApplicable("the serializer cannot be rebuilt in another process (defined in __main__)")
    proc, spec = started
    try:
        stdout, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Violation("restoring the savepoint in a fresh Python process did not finish in 120 s, should") from None
    values = bulk_values(ctx)
    if proc.returncode != 0:
        tail = (stderr.strip().splitlines() or ["(no output)"])[-1]
        raise Violation(f"restoring the savepoint in a fresh Python process failed: {tail}; it should restore "
                        "there too (is some state kept only in the writing process?)")
    differs = _fresh_difference(serializer, values, stdout)
    if differs is None:
        return
    key, what, example = differs
    foreign = json.loads(stdout)["foreign"]
    mattered = _which_difference(serializer, values, spec)
    setting = (f"another {mattered} ({foreign[mattered]})" if mattered
               else "another time zone ({time zone}), locale ({locale}) and hash seed ({hash seed})".format(**foreign))
    raise Violation(
        f"in a fresh Python process with {setting} key {key} {what}; a restore on another machine "
        "must read the same values (is some state kept only in the writing process, or does the "
        "format depend on the process's time zone, locale or hash seed?)", example=show(example))


def _fresh_difference(serializer: Any, values: list[Any], stdout: str) -> tuple[int, str, Any] | None:
    """(key, what differs, the value) where a fresh process read something other than what this
    process reads from the same bytes, or wrote other bytes for it; None where nothing differs."""
    got = json.loads(stdout)["keys"]
    for key, (v, elements, entries) in expected_state(values).items():
        # what this process reads back from the same bytes (roundtrip.* judge that against v)
        def back(value: Any) -> Any:
            return read_one(serializer, write(serializer, value))

        expected_values = state_trees(back(v), [back(e) for e in elements], {k: back(e) for k, e in entries.items()})
        for state, recorded, read in zip(("value state", "list state", "map state"), expected_values,
                                         got[key]["values"], strict=True):
            if read != recorded:
                where = tree_difference(recorded, read, f"its {state}") or f"its {state}"
                return key, f"reads back other values ({where})", v
        expected = [write(serializer, v).hex(), [write(serializer, e).hex() for e in elements],
                    {k: write(serializer, e).hex() for k, e in entries.items()}]
        if got[key]["bytes"] != expected:
            return key, f"writes other bytes for what it read ({str(got[key]['bytes'])[:80]}, should be {str(expected)[:80]})", v
    return None


def _which_difference(serializer: Any, values: list[Any], spec: dict[str, Any]) -> str | None:
    """The first process difference that alone (with a new interpreter's hash seed) changes
    what a fresh process reads: ``conformance._fresh.foreign.DIAGNOSES`` in order."""
    from .._fresh.foreign import DIAGNOSES
    from .._fresh.process import restore_with

    for differences in DIAGNOSES:
        code, out, _err = restore_with(spec, differences, timeout=120)
        if code == 0 and _fresh_difference(serializer, values, out) is not None:
            return differences[-1]
    return None


def _keyed_backend(ctx: Any, kind: str, key_serializer: Any, savepoint: str | None = None) -> Any:
    from reference.backends import BytesStateBackend, HeapStateBackend

    if kind == "heap":
        if savepoint is None:
            return HeapStateBackend(key_serializer, config=EVOLUTION_CONFIG)
        return HeapStateBackend.restore(savepoint, key_serializer=key_serializer, config=EVOLUTION_CONFIG,
                                        allow_pickle=OWN_SAVEPOINTS)
    store = kind.split("/", 1)[1]
    if savepoint is None:
        return BytesStateBackend(key_serializer, store=store, config=EVOLUTION_CONFIG)
    return BytesStateBackend.restore(savepoint, key_serializer=key_serializer, config=EVOLUTION_CONFIG,
                                     allow_pickle=OWN_SAVEPOINTS, store=store)


@check(id="backends.keyed", family="backends", requires=HISTORY + ("roundtrip.key_determinism",))
def keyed(ctx: CheckContext) -> None:
    """As the backends' key serializer: every key finds its state again after a restore (also
    when rebuilt in another order), and an evolution needing migration is refused for keys."""
    from reference import StateMigrationError
    from reference.backends import ValueStateDescriptor

    if not ctx.subject.key:
        raise NotApplicable("not a key serializer (Subject(key=True) enables this check)")
    from .roundtrip import rebuilt

    kinds = backend_kinds(ctx)
    values = bulk_values(ctx)
    serializer = ctx.serializer()
    distinct: dict[bytes, Any] = {}
    for v in values:
        distinct.setdefault(write(serializer, v), v)
    keys = list(distinct.values())
    descriptor = ValueStateDescriptor("by_key", LongSerializer())
    for kind in kinds:
        backend = _keyed_backend(ctx, kind, ctx.serializer())
        try:
            state = backend.get_value_state(descriptor)
            for i, key in enumerate(keys):
                backend.set_current_key(key)
                state.update(i)
            savepoint = backend.savepoint(_fresh_dir(ctx, "savepoint"))
        finally:
            _close(backend)
        restored = _keyed_backend(ctx, kind, ctx.serializer(), savepoint)
        try:
            state = restored.get_value_state(descriptor)
            for i, key in enumerate(keys):
                restored.set_current_key(rebuilt(key))
                got = state.value()
                if got != i:
                    raise Violation(f"{kind}: after a restore the key {show(key)} finds {got!r}, should find {i}",
                                    example=show(key))
        finally:
            _close(restored)
        for step in [s for s in declared_steps(ctx) if s.expect == Verdict.COMPATIBLE_AFTER_MIGRATION]:
            with step.active():
                try:
                    again = _keyed_backend(ctx, kind, step.new, savepoint)
                    try:
                        again.get_value_state(descriptor)
                    finally:
                        _close(again)
                except StateMigrationError:
                    continue
            raise Violation(f"{kind}: restoring with {step.label} as the key serializer succeeded, should "
                            "raise StateMigrationError (keys never migrate)", example=step.label)


@check(id="backends.state_untouched", family="backends", requires=("roundtrip.domain_refused",) + HISTORY)
def state_untouched(ctx: CheckContext) -> None:
    """A refused update leaves the bytes backend's state as it was."""
    cases = out_of_domain_cases(ctx)
    from reference.backends import ValueStateDescriptor

    kind = "bytes/memory"
    if kind not in backend_kinds(ctx):
        raise NotApplicable("the bytes backend is not selected (--backend)")
    s = ctx.serializer()
    drawn: list[Any] = []
    ctx.for_all(ctx.subject.values, drawn.append, max_examples=5)
    good = next((v for v in drawn if v is not None), None)
    if good is None:
        raise NotApplicable("the subject's values drew only None")

    descriptor = ValueStateDescriptor("domain", s)
    backend = new_backend(ctx, kind)
    try:
        state = backend.get_value_state(descriptor)
        backend.set_current_key(1)
        state.update(s.copy(good))

        def body(case: Any) -> None:
            if case.value is None:
                return  # update(None) clears a value state: None is in the state's domain
            try:
                state.update(case.value)
            except SerializationError:
                pass
            except Exception as exc:
                raise Violation(f"update raised {type(exc).__name__}: {exc} for {case.what}, should raise "
                                "reference.SerializationError", example=repr(case)) from None
            else:
                raise Violation(f"update accepted {case.what}, should refuse it", example=repr(case))
            expect_equal(state.value(), good, f"after a refused update of {case.what}, the state")

        ctx.for_all(cases, body, max_examples=max(5, ctx.examples // 5))
    finally:
        backend.close()
