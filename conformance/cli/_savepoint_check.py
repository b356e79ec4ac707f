"""``conformance savepoint check``: would the new job's serializers restore this savepoint, and
can ``conformance migrate`` migrate what would be refused (docs/flink-savepoints.md, "Will my
next release restore it?").

``--serializers MODULE:ATTR`` names, for a Flink savepoint, a dict ``{operator uid (or its 32
hex digit operator id): {state name: StateDescriptor}}``; for this project's own savepoints a
mapping ``{state name: StateDescriptor}`` (or a list of descriptors), as ``conformance
migrate`` takes it. States and operators not named are not judged (they restore unchanged).

Each named state gets the verdict its restorer gives at restore, from the savepoint's serializer
snapshots and the descriptor's serializers, with the reference's rules (``reference.backends``
``plan_access``, the one policy of what a restore accepts; ``resolve_compatibility`` for each
serializer):

- a Flink savepoint is judged as Flink 2.3 judges it (its snapshots are read in Flink's form,
  so a flink-core ``Row`` matches fields by position): the new key serializer (``--key-serializer``,
  else the key is not judged) and namespace serializer must read the old ones as is (or
  reconfigured); a state's kind may not change; the value (a list state's element, a map
  state's value) may need migration (Flink migrates it on restore); a map state's user key may
  not need migration (RocksDB's rule, the stricter backend). A state with a time-to-live is
  judged on the value inside the TTL wrapper (Flink 2.x restores a TTL state with TTL on or
  off). ``flink_verdict`` is that verdict, and so is ``verdict``.
- where Flink refuses a row state's value, the check also judges it with the FLIP-527 rules
  ``conformance migrate --schema-evolution`` applies: the old row's top-level fields are named
  by ``--old-row-type`` (``UID/STATE=NAME[:TYPE],...`` or ``MODULE:ATTR`` naming ``{operator:
  {state: RowSerializer, reference.types.RowType or field names}}``: the old job's row type,
  which must read the savepoint's row as is; ``_common.load_old_row_types``), else ``f0..fN``
  (Flink's ``Types.ROW`` names). A Table runtime row (``RowDataSerializer``, SQL jobs' state) is
  judged alike (``--old-row-type`` then takes a ``RowDataSerializer``, a ``reference.sqltypes``
  row type or field names); its nested rows keep the names Flink's snapshot holds.
  ``migratable_by_conformance`` says whether that migration is possible
  (null for a state Flink restores).
- ``--operator-uid OLD=NEW`` (repeatable, as for ``conformance migrate``): the new job calls the
  savepoint's operator OLD ``NEW`` (the SQL planner may number its uids anew); ``--serializers``
  and ``--key-serializer`` then name it NEW (naming it OLD is an error that says so), while
  ``--old-row-type`` describes the old job and keeps OLD. Without it, a new job whose uids
  changed names operators the savepoint does not have, which is said with the ones it has.
- this project's own savepoints (``reference.savepoint``'s format) are judged exactly as
  ``conformance migrate`` judges them (``conformance.spark.plan_migration``); a row evolution
  that needs ``--schema-evolution`` is refused (as the backends refuse it without
  ``state.schema-evolution.enable``) and reported migratable. ``flink_verdict`` is null.

Exit status: 0 every named state restores, 1 some state would be refused, 2 the input cannot be
used (no such savepoint, operator or state, which is named in one sentence with what exists; an
unknown snapshot class; serializers that are not descriptors).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ._common import (
    OK,
    VIOLATION,
    UsageError,
    add_import,
    add_json,
    add_old_row_type,
    add_operator_uid,
    evolution_hint,
    import_modules,
    import_object,
    json_target,
    load_old_row_types,
    load_operator_uids,
    savepoint_format,
    write_json,
)

__all__ = ["StateCheck", "add_parser", "run_check", "check_savepoint"]

#: Flink's precedence of verdicts when several serializers of one state are judged.
_PRECEDENCE = ("compatible_as_is", "compatible_with_reconfigured_serializer", "compatible_after_migration",
               "incompatible")


@dataclass(frozen=True)
class StateCheck:
    """The verdict on one named state. ``location`` is the serializer that decided a refusal
    (``key``, ``namespace``, ``value``, ``user key``) or ``kind``; ``migrate`` the command that
    migrates a refused state when ``migratable_by_conformance``."""

    operator: str | None
    state: str
    kind: str
    verdict: str
    flink_verdict: str | None
    reason: str
    location: str | None
    migratable_by_conformance: bool | None
    migrate: str | None = None

    @property
    def restores(self) -> bool:
        return self.verdict != "incompatible"


def add_parser(savepoint_subparsers: Any) -> argparse.ArgumentParser:
    """``check`` under the ``savepoint`` subcommand group."""
    check = savepoint_subparsers.add_parser(
        "check",
        help="would the new job's serializers restore this savepoint (Flink's or this project's)?",
        description=(
            "Judge each named state of a savepoint against the new job's state descriptors as its "
            "restorer would (Flink 2.3 for a Flink savepoint, the reference's rules for this "
            "project's own), and say whether `conformance migrate --schema-evolution` can migrate "
            "a refused row state. Exit 0 everything restores, 1 some state would be refused, "
            "2 unusable input."
        ),
    )
    check.add_argument("savepoint", help="savepoint directory (or its _metadata), a local path or a URI")
    check.add_argument(
        "--serializers", required=True, metavar="MODULE:ATTR",
        help="the new job's descriptors: for a Flink savepoint {operator uid or id: {state name: "
             "StateDescriptor}}, for this project's savepoints {state name: StateDescriptor}; a "
             "zero-argument function returning it also works")
    check.add_argument(
        "--key-serializer", default=None, metavar="MODULE:ATTR",
        help="the new key serializer (one for every operator named, or {operator: serializer}); "
             "without it keys are not judged")
    add_old_row_type(check)
    add_operator_uid(check)
    add_json(check, "the verdicts")
    add_import(check)
    check.set_defaults(func=run_check)
    return check


# -- loading --------------------------------------------------------------------------------
def _load(spec: str, what: str) -> Any:
    from reference import TypeSerializer
    from reference.backends import StateDescriptor

    value = import_object(spec, what)
    if callable(value) and not isinstance(value, (type, StateDescriptor, TypeSerializer)):
        value = value()
    return value


def _operator_mapping(value: Any, what: str, spec: str) -> dict[str, dict[str, Any]]:
    if not isinstance(value, Mapping) or not all(isinstance(v, Mapping) for v in value.values()):
        raise UsageError(f"{what} {spec}: a Flink savepoint needs {{operator uid: {{state name: ...}}}}, got a "
                         f"{type(value).__name__} that is not a mapping of mappings")
    return {str(k): dict(v) for k, v in value.items()}


def _find_operator(savepoint: Any, name: str, what: str) -> Any:
    for op in savepoint.operators:
        if op.uid == name or op.operator_id == name.lower():
            return op
    known = ", ".join(repr(op.uid or op.operator_id) for op in savepoint.operators)
    raise UsageError(f"{what}: the savepoint has no operator {name!r}; its operators are {known}")


def _find_state(op: Any, name: str, what: str) -> Any:
    for state in op.keyed_states:
        if state.name == name:
            return state
    label = op.uid or op.operator_id
    if any(s.name == name for s in op.operator_states):
        raise UsageError(f"{what}: {name!r} of operator {label!r} is an operator (non-keyed) state; "
                         "check judges keyed states only, leave it out")
    keyed = ", ".join(repr(s.name) for s in op.keyed_states) or "none"
    raise UsageError(f"{what}: operator {label!r} has no keyed state {name!r}; its keyed states are {keyed}")


# -- Flink savepoints -----------------------------------------------------------------------
def _unwrap(state: Any) -> tuple[Any, Any]:
    """(value snapshot, user key snapshot) as a descriptor declares them: a list state's
    element, a map state's value and user key, inside a TTL wrapper."""
    from reference.serializers import ListSerializerSnapshot, MapSerializerSnapshot, TtlSerializerSnapshot

    value, user_key = state.value_serializer, None
    if state.kind == "list" and isinstance(value, ListSerializerSnapshot):
        value = value.nested_snapshots[0]
    elif state.kind == "map" and isinstance(value, MapSerializerSnapshot):
        user_key, value = value.nested_snapshots
    if isinstance(value, TtlSerializerSnapshot):
        value = value.nested_snapshots[1]
    return value, user_key


def _known(snapshot: Any, where: str) -> None:
    from reference import TypeSerializerSnapshot

    if snapshot is not None and not isinstance(snapshot, TypeSerializerSnapshot):
        raise UsageError(
            f"{where}: its serializer snapshot is of class {getattr(snapshot, 'java_class', type(snapshot).__name__)}, "
            "which the reference does not know, so no verdict can be given; leave the state out")


def _restored(snapshot: Any) -> str:
    """The serializer a snapshot restores, for messages (a user class not known here: its
    snapshot's class)."""
    try:
        return repr(snapshot.restore_serializer())
    except Exception:  # the message must not fail on the savepoint's own classes
        return f"the serializer of {type(snapshot).__name__}"


def _strongest(kinds: list[str]) -> str:
    return max(kinds, key=_PRECEDENCE.index)


def _refusal_location(state: Any, descriptor: Any, value: Any, user_key: Any, namespace: Any) -> str:
    """Which serializer a refusal of ``plan_access`` is about, in the order it judges them."""
    from reference import resolve_compatibility

    new_ns = descriptor.namespace_serializer
    if (new_ns is None) != (namespace is None):
        return "namespace"
    if new_ns is not None:
        ns = resolve_compatibility(new_ns, namespace)
        if not (ns.is_compatible_as_is() or ns.is_compatible_with_reconfigured_serializer()):
            return "namespace"
    result = resolve_compatibility(descriptor.value_serializer, value)
    if result.is_incompatible():
        return "value"
    if state.kind == "map":
        uk = resolve_compatibility(descriptor.user_key_serializer, user_key)
        migrates = result.is_compatible_after_migration() or uk.is_compatible_after_migration()
        if uk.is_incompatible() or (migrates and not uk.is_compatible_as_is()):
            return "user key"
    return "value"


def _named_row(value: Any, old_row: Any) -> tuple[Any, list[str]] | None:
    """The savepoint's positional row snapshot (a flink-core Row or a Table runtime row) with
    field names (``old_row``, the old job's named row snapshot, else ``f0..fN``:
    ``reference.backends.flink_row_as_named``) so that the FLIP-527 rules apply; None when the
    value is no Flink-form row."""
    from reference.backends import flink_row_as_named
    from reference.serializers import RowDataSerializerSnapshot, RowSerializerSnapshot

    if not isinstance(value, (RowSerializerSnapshot, RowDataSerializerSnapshot)) or not value.positional:
        return None
    snapshot = old_row if old_row is not None else flink_row_as_named(value)
    if isinstance(snapshot, RowDataSerializerSnapshot):
        return (snapshot, list(snapshot.row_type.field_names)) if snapshot.row_type is not None else None
    return snapshot, list(snapshot.field_names)


def _judge_flink(operator: str, state: Any, descriptor: Any, key_serializer: Any, old_row: Any,
                 command: str) -> StateCheck:
    from reference import StateError, resolve_compatibility
    from reference.backends import SCHEMA_EVOLUTION_ENABLED, normalize_config, plan_access
    from reference.serializers import VoidNamespaceSerializerSnapshot

    def refused(location: str, reason: str, migratable: bool | None = False, migrate: str | None = None) -> StateCheck:
        return StateCheck(operator, state.name, state.kind, "incompatible", "incompatible", reason, location,
                          migratable, migrate)

    where = f"operator {operator!r}, state {state.name!r}"
    if state.kind == "timers":
        return refused("kind", f"{where} is a timer queue of the operator's timer service, not a state a "
                               "descriptor declares; leave it out (timers restore with the operator)")
    if descriptor.kind != state.kind:
        hint = (f"; the reference has no {state.kind.capitalize()}StateDescriptor: leave the state out "
                "(it restores unchanged)") if state.kind in ("reducing", "aggregating") else (
                f"; use a {state.kind.capitalize()}StateDescriptor, or another state name")
        return refused("kind", f"{where} holds {state.kind} state, the new job declares {descriptor.kind} state "
                               f"({descriptor!r}); Flink refuses a state whose kind changed{hint}")
    value, user_key = _unwrap(state)
    for snapshot in (state.key_serializer, value, user_key, state.namespace_serializer):
        _known(snapshot, where)
    kinds = []
    if key_serializer is not None:
        key = resolve_compatibility(key_serializer, state.key_serializer)
        if not (key.is_compatible_as_is() or key.is_compatible_with_reconfigured_serializer()):
            why = key.reason or "it would need migration, and keys never migrate"
            return refused("key", f"{where}: the new key serializer ({key_serializer!r}) must read the old keys "
                                  f"as is ({_restored(state.key_serializer)}): {why}; Flink refuses a "
                                  "changed key serializer (StateMigrationException)")
        kinds.append(key.kind.value)
    namespace = None if isinstance(state.namespace_serializer, VoidNamespaceSerializerSnapshot) else state.namespace_serializer
    try:
        plan = plan_access(state.name, state.kind, value, namespace, user_key, descriptor, normalize_config(None))
    except StateError as exc:
        location = _refusal_location(state, descriptor, value, user_key, namespace)
        reason = f"operator {operator!r}: {exc}"
        named = _named_row(value, old_row) if location == "value" else None
        if named is None:
            return refused(location, reason)
        snapshot, names = named
        try:
            plan_access(state.name, state.kind, snapshot, namespace, user_key, descriptor,
                        normalize_config(SCHEMA_EVOLUTION_ENABLED))
        except StateError as evolution:
            source = "--old-row-type" if old_row is not None else "f0..fN; give --old-row-type for the old job's names"
            return refused(location, f"{reason}. Nor can `conformance migrate --schema-evolution` migrate it "
                                     f"(old row fields {names}, named by {source}): {evolution}")
        source = "from --old-row-type" if old_row is not None else "Flink's f0..fN (give --old-row-type for the old job's names)"
        return refused(location, f"{reason}. `conformance migrate --schema-evolution` can migrate it (FLIP-527 "
                                 f"rules by field name, old fields {names} {source}): {command}", True, command)
    kinds.append(plan.value_result.kind.value)
    if descriptor.namespace_serializer is not None and namespace is not None:
        kinds.append(resolve_compatibility(descriptor.namespace_serializer, namespace).kind.value)
    if user_key is not None:
        kinds.append(resolve_compatibility(descriptor.user_key_serializer, user_key).kind.value)
    verdict = _strongest(kinds)
    reasons = {
        "compatible_as_is": "Flink restores it as it is",
        "compatible_with_reconfigured_serializer": "Flink restores it with a reconfigured serializer",
        "compatible_after_migration": "Flink migrates it on restore (every value read with the old serializer "
                                      "and written with the new one)",
    }
    return StateCheck(operator, state.name, state.kind, verdict, verdict, f"{where}: {reasons[verdict]}", None, None)


def _new_operators(savepoint: Any, operator_uids: Mapping[str, str]) -> Callable[[str, str], Any]:
    """A lookup of the savepoint's operators by the new job's names: an operator renamed by
    ``operator_uids`` (``--operator-uid OLD=NEW``) by its new uid or id only, any other by its
    own."""
    from reference import StateError
    from reference.savepoint import renamed_operators

    try:
        renamed = renamed_operators(savepoint, operator_uids)
    except StateError as exc:
        raise UsageError(f"--operator-uid: {exc}".replace("operator_uids", "--operator-uid")) from None
    by_new: dict[str, Any] = {}
    for op in savepoint.operators:
        if op.operator_id in renamed:
            new_id, new_uid = renamed[op.operator_id]
            by_new[new_id] = op
            if new_uid is not None:
                by_new[new_uid] = op

    def find(name: str, what: str) -> Any:
        found = by_new.get(name) or by_new.get(name.lower())
        if found is not None:
            return found
        op = _find_operator(savepoint, name, what)
        if op.operator_id in renamed:
            new_id, new_uid = renamed[op.operator_id]
            raise UsageError(f"{what}: operator {name!r} is the new job's {new_uid or new_id!r} (--operator-uid); "
                             "name it so")
        return op

    return find


def check_flink_savepoint(path: str, serializers: Any, *, key_serializer: Any = None, old_row_types: Any = None,
                          operator_uids: Mapping[str, str] | None = None, spec: str = "MODULE:ATTR",
                          old_row_spec: str = "MODULE:ATTR", options: str = "") -> list[StateCheck]:
    """Every named state of the Flink savepoint at ``path`` judged as Flink 2.3 restores it
    (this module's docstring); raises ``UsageError`` for what names nothing in the savepoint.
    ``operator_uids`` (``{old uid or id: new uid or id}``): the new job's names of renamed
    operators, which ``serializers`` and ``key_serializer`` then use (``old_row_types``
    describe the old job: its names)."""
    from reference import StateError, TypeSerializer
    from reference.backends import StateDescriptor, flink_row_as_named
    from reference.savepoint import read_flink_savepoint

    named = _operator_mapping(serializers, "--serializers", spec)
    try:
        savepoint = read_flink_savepoint(path)
    except (StateError, OSError) as exc:
        raise UsageError(f"SAVEPOINT {path}: {exc}") from None
    find_new = _new_operators(savepoint, operator_uids or {})
    keys: dict[str, Any] = {}
    if isinstance(key_serializer, Mapping):
        for uid, serializer in key_serializer.items():
            find_new(str(uid), "--key-serializer")
            keys[str(uid)] = serializer
    elif key_serializer is not None:
        keys = {uid: key_serializer for uid in named}
    for uid, serializer in keys.items():
        if not isinstance(serializer, TypeSerializer):
            raise UsageError(f"--key-serializer: the key serializer of operator {uid!r} is a "
                             f"{type(serializer).__name__}, not a reference TypeSerializer")
    old_rows: dict[tuple[str, str], Any] = {}
    if old_row_types is not None:
        for uid, states in _operator_mapping(old_row_types, "--old-row-type", old_row_spec).items():
            op = _find_operator(savepoint, uid, "--old-row-type")
            for name, row in states.items():
                state = _find_state(op, name, "--old-row-type")
                value, _ = _unwrap(state)
                try:
                    old_rows[(op.operator_id, name)] = flink_row_as_named(value, row, f"operator {uid!r}, state {name!r}")
                except StateError as exc:
                    raise UsageError(f"--old-row-type {old_row_spec}: {exc}") from None
    command = migrate_command(path, spec, options)
    checks = []
    for uid, states in named.items():
        op = find_new(uid, "--serializers")
        found = [(_find_state(op, name, "--serializers"), descriptor) for name, descriptor in states.items()]
        for state, descriptor in found:
            if not isinstance(descriptor, StateDescriptor):
                raise UsageError(f"--serializers {spec}: operator {uid!r}, state {state.name!r} maps to a "
                                 f"{type(descriptor).__name__}, not a ValueStateDescriptor, ListStateDescriptor "
                                 "or MapStateDescriptor")
            if descriptor.name != state.name:
                raise UsageError(f"--serializers {spec}: operator {uid!r}: the key {state.name!r} holds a descriptor "
                                 f"named {descriptor.name!r}; use the state's name for both")
            checks.append(_judge_flink(uid, state, descriptor, keys.get(uid),
                                       old_rows.get((op.operator_id, state.name)), command))
    return checks


# -- this project's savepoints --------------------------------------------------------------
def check_own_savepoint(path: str, serializers: Any, *, key_serializer: Any = None,
                        spec: str = "MODULE:ATTR", options: str = "") -> list[StateCheck]:
    """Every named state of this project's savepoint at ``path`` judged as ``conformance
    migrate`` judges it (``plan_migration``), with and without row schema evolution."""
    from reference import StateError
    from reference.backends import SCHEMA_EVOLUTION_ENABLED, SCHEMA_EVOLUTION_OPTION
    from reference.savepoint import read_savepoint_metadata

    from ..spark import normalize_descriptors, plan_migration

    try:
        descriptors = normalize_descriptors(serializers)
        metadata = read_savepoint_metadata(path)
    except (StateError, OSError) as exc:
        raise UsageError(f"conformance savepoint check {path} --serializers {spec}: {exc}") from None
    kinds = {state.name: state.kind for state in metadata.states}
    for name in descriptors:
        if name not in kinds:
            raise UsageError(f"--serializers {spec}: the savepoint has no state {name!r}; its states are "
                             f"{', '.join(map(repr, kinds)) or 'none'}")
    command = migrate_command(path, spec, options)
    key_refusal = None
    if key_serializer is not None:
        try:
            plan_migration(path, {}, key_serializer=key_serializer)
        except StateError as exc:
            key_refusal = str(exc)
    checks = []
    for name, descriptor in descriptors.items():
        where = f"state {name!r}"

        def refused(location: str, reason: str, migratable: bool, migrate: str | None = None,
                    name: str = name) -> StateCheck:
            return StateCheck(None, name, kinds[name], "incompatible", None, reason, location, migratable, migrate)

        if key_refusal is not None:
            checks.append(refused("key", f"{where}: {key_refusal}", False))
            continue
        try:
            (plan,) = [p for p in plan_migration(path, {name: descriptor}) if p.name == name]
        except StateError as exc:
            location = "kind" if descriptor.kind != kinds[name] else "value"
            said = str(exc) if str(exc).startswith(where) else f"{where}: {exc}"
            try:
                plan_migration(path, {name: descriptor}, config=SCHEMA_EVOLUTION_ENABLED)
            except StateError:
                checks.append(refused(location, said, False))
                continue
            said = evolution_hint(said, SCHEMA_EVOLUTION_OPTION)
            checks.append(refused(location, f"{said}. `conformance migrate --schema-evolution` migrates it: "
                                            f"{command}", True, command))
            continue
        checks.append(StateCheck(None, name, kinds[name], plan.verdict, None,
                                 f"{where}: the reference restores it ({plan.verdict})", None, None))
    return checks


def check_savepoint(path: str, serializers: Any, *, key_serializer: Any = None, old_row_types: Any = None,
                    operator_uids: Mapping[str, str] | None = None, spec: str = "MODULE:ATTR",
                    old_row_spec: str = "MODULE:ATTR", options: str = "") -> tuple[str, list[StateCheck]]:
    """("flink" or "reference", the checks) for the savepoint at ``path``, told apart by its files."""
    if savepoint_format(path) == "flink":
        return "flink", check_flink_savepoint(path, serializers, key_serializer=key_serializer,
                                              old_row_types=old_row_types, operator_uids=operator_uids, spec=spec,
                                              old_row_spec=old_row_spec, options=options)
    if old_row_types is not None:
        raise UsageError(f"--old-row-type applies to Flink savepoints only; {path} is this project's own "
                         "savepoint, whose rows keep their field names")
    if operator_uids:
        raise UsageError(f"--operator-uid applies to Flink savepoints only; {path} is this project's own "
                         "savepoint, whose states are named without operators")
    return "reference", check_own_savepoint(path, serializers, key_serializer=key_serializer, spec=spec,
                                            options=options)


def migrate_command(path: str, spec: str, options: str = "") -> str:
    """The ``conformance migrate`` command a refusal suggests: the same savepoint, descriptors
    and ``options`` (those of the check that carry over)."""
    return f"conformance migrate {path} --serializers {spec}{options} --out NEW_SAVEPOINT --schema-evolution"


def _repeated_options(args: argparse.Namespace) -> str:
    """The options of this check that the suggested migrate needs as well, shell-quoted."""
    import shlex

    pairs = [("--import", m) for m in args.imports] + [("--old-row-type", v) for v in args.old_row_type] + [
        ("--operator-uid", v) for v in args.operator_uid]
    return "".join(f" {flag} {shlex.quote(value)}" for flag, value in pairs)


def run_check(args: argparse.Namespace) -> int:
    json_target(args.json)
    import_modules(args.imports)
    serializers = _load(args.serializers, "--serializers")
    key_serializer = _load(args.key_serializer, "--key-serializer") if args.key_serializer else None
    old_rows = load_old_row_types(args.old_row_type)
    fmt, checks = check_savepoint(args.savepoint, serializers, key_serializer=key_serializer,
                                  old_row_types=old_rows, operator_uids=load_operator_uids(args.operator_uid),
                                  spec=args.serializers, options=_repeated_options(args),
                                  old_row_spec=" ".join(args.old_row_type) or "MODULE:ATTR")
    out = sys.stderr if args.json == "-" else sys.stdout
    refused = [c for c in checks if not c.restores]
    for c in checks:
        label = f"{c.operator}/{c.state}" if c.operator is not None else c.state
        if c.restores:
            print(f"{label}: {c.verdict}", file=out)
        else:
            print(f"{label}: REFUSED ({c.location}): {c.reason}", file=out)
    print(f"{len(checks) - len(refused)} of {len(checks)} named states restore"
          + (f"; {len(refused)} would be refused" if refused else ""), file=out)
    write_json({"savepoint": args.savepoint, "format": fmt, "restores": not refused,
                "states": [asdict(c) for c in checks]}, args.json)
    return VIOLATION if refused else OK

