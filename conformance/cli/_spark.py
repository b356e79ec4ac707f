"""``conformance migrate`` and ``conformance verify``: the Spark jobs from the command line
(``migrate`` of a Flink savepoint, told apart by its files, goes to ``_flink``).

Exit status: 0 done and clean, 1 the job found a problem (a state refused as incompatible, a
value that fails to migrate or decode, a mismatch against the expected savepoint), 2 the input
could not be used (no such savepoint or serializers, a snapshot class nobody imported, the
output exists, no Java, bad options). Everything that can be checked without Spark is checked
before Spark starts. A refused migration still writes its ``--json`` report (the refused
states, each with its verdict and message) and tells to pass ``--schema-evolution`` where that
is what is missing. Importing this module does not import pyspark.

``--spark off`` runs either job without Spark, in this process, through the same functions
Spark's executors run: the same report, output savepoint and exit status, without a JVM's
start (tens of seconds) for a savepoint one process handles in a second. The default stays
``local[*]``, the engine's: whether a savepoint is small is the user's call.
"""

from __future__ import annotations

import argparse
from typing import Any

from .._engine.config import BACKENDS
from ._common import (
    OK,
    UNUSABLE,
    VIOLATION,
    UsageError,
    add_import,
    add_json,
    add_old_row_type,
    add_operator_uid,
    evolution_hint,
    failed_status,
    import_modules,
    import_object,
    json_target,
    positive_int,
    savepoint_format,
    write_json,
)

__all__ = ["add_parsers", "load_attribute"]


def add_parsers(sub: Any) -> None:
    migrate = sub.add_parser(
        "migrate",
        help="restore a savepoint with new serializers on Spark, migrate, write a new savepoint",
        description=(
            "Judge every state's new serializer against the savepoint (once, on the driver), "
            "migrate on Spark executors and write a new savepoint atomically. Exit 0 done, 1 a "
            "state was refused or failed to migrate, 2 unusable input."
        ),
    )
    migrate.add_argument("savepoint", help="savepoint to read, a directory or a URI such as s3://bucket/prefix "
                         "(never modified; credentials from the environment); a Flink canonical savepoint "
                         "is migrated in one process to a new Flink savepoint in a local directory")
    migrate.add_argument(
        "--serializers", required=True, metavar="MODULE:ATTR",
        help="a mapping state name -> state descriptor, a list of descriptors, or a zero-argument "
        "function returning either; for a Flink savepoint {operator uid: {state name: descriptor}}",
    )
    migrate.add_argument("--out", default=None, metavar="DIR|URI",
                         help="new savepoint, a directory or a URI (no savepoint may be there; "
                         "required unless --explain)")
    migrate.add_argument("--explain", action="store_true",
                         help="print each state's verdict and migration plan (what is copied as bytes, "
                         "what is re-encoded) and exit without running the job")
    migrate.add_argument("--backend", choices=BACKENDS, default="bytes",
                         help="bytes: migrate_state over serialized values (default); heap: "
                         "deserialize, migrate_element, serialize")
    migrate.add_argument("--parallelism", type=positive_int, default=None, metavar="N",
                         help="target parallelism (rescaling by key groups); default: as written")
    migrate.add_argument("--key-serializer", default=None, metavar="MODULE:ATTR",
                         help="new key serializer (must read the old keys as is)")
    migrate.add_argument("--schema-evolution", action="store_true",
                         help="allow FLIP-527 row evolution (state.schema-evolution.enable)")
    migrate.add_argument("--spark", default=None, metavar="MASTER", help="Spark master URL (default local[*]), or off: run the same job in this "
                         "process without Spark (quicker for small savepoints: no JVM to start)")
    add_old_row_type(migrate)
    add_operator_uid(migrate)
    add_json(migrate, "what was migrated")
    add_import(migrate)
    migrate.set_defaults(func=run_migrate)

    verify = sub.add_parser(
        "verify",
        help="check that every entry of a savepoint decodes (and matches an expected savepoint)",
        description=(
            "Count entries, decode every key, namespace, map key and value with the savepoint's "
            "serializers (nothing left over), check key groups and optionally compare with an "
            "expected savepoint. Exit 0 clean, 1 problems found, 2 unusable input."
        ),
    )
    verify.add_argument("savepoint", help="savepoint to check, a directory or a URI")
    verify.add_argument("--expect", default=None, metavar="SAVEPOINT",
                        help="expected savepoint (e.g. the oracle's or a backend's) to compare with")
    verify.add_argument("--sample", type=int, default=5, metavar="N", help="problems shown per state")
    verify.add_argument("--spark", default=None, metavar="MASTER", help="Spark master URL (default local[*]), or off: run the same job in this "
                         "process without Spark (quicker for small savepoints: no JVM to start)")
    verify.add_argument("--allow-pickle", action="append", default=[], metavar="STATE",
                        help="decode this state although it was written with PickleSerializer (unpickling "
                             "runs code the savepoint chooses: only for savepoints you trust; '*' for all)")
    add_json(verify, "the report")
    add_import(verify)
    verify.set_defaults(func=run_verify)


def load_attribute(spec: str, what: str) -> Any:
    """``module:attr`` -> the attribute (a zero-argument function is called)."""
    from reference import TypeSerializer
    from reference.backends import StateDescriptor

    value = import_object(spec, what)
    if callable(value) and not isinstance(value, (type, StateDescriptor, TypeSerializer)):
        value = value()
    return value


def _readable(savepoint: str, what: str) -> None:
    """The savepoint's metadata and every snapshot in it read (before Spark starts): a
    snapshot class that no imported module defines is named, with the fix."""
    from reference import StateError, UnknownSnapshotClassError, snapshot_from_bytes
    from reference.savepoint import read_savepoint_metadata, shown

    try:
        metadata = read_savepoint_metadata(savepoint)
        for state in metadata.states:
            for data in (state.value_serializer_snapshot, state.namespace_serializer_snapshot,
                         state.user_key_serializer_snapshot):
                if data:
                    snapshot_from_bytes(data)
    except UnknownSnapshotClassError as exc:
        raise UsageError(f"{what} {shown(savepoint)}: {exc}; give --import MODULE for the module that defines it") from None
    except StateError as exc:
        raise UsageError(f"{what} {shown(savepoint)}: {exc}") from None
    except OSError as exc:
        raise UsageError(f"{what} {shown(savepoint)}: {exc.strerror or exc}") from None


def run_migrate(args: argparse.Namespace) -> int:
    import sys

    from reference import StateError, StateMigrationError

    json_target(args.json)
    import_modules(args.imports)
    serializers = load_attribute(args.serializers, "--serializers")
    if savepoint_format(args.savepoint) == "flink":
        from ._flink import run_flink_migrate

        return run_flink_migrate(args, serializers)
    if args.old_row_type:
        raise UsageError("--old-row-type applies to Flink savepoints only; this project's savepoints keep their "
                         "rows' field names")
    if args.operator_uid:
        raise UsageError("--operator-uid applies to Flink savepoints only; this project's savepoints hold the "
                         "state of one operator")
    key_serializer = load_attribute(args.key_serializer, "--key-serializer") if args.key_serializer else None
    _readable(args.savepoint, "SAVEPOINT")
    from reference.backends import SCHEMA_EVOLUTION_ENABLED

    from ..spark import migrate_savepoint

    config = SCHEMA_EVOLUTION_ENABLED if args.schema_evolution else None
    if args.explain:
        return _explain(args, serializers, key_serializer, config)
    if args.out is None:
        raise UsageError("conformance migrate needs --out DIR (or --explain to only show the plan)")
    try:
        report = migrate_savepoint(
            args.savepoint, serializers, args.out, mode=args.backend, parallelism=args.parallelism,
            key_serializer=key_serializer, config=config, master=args.spark,
        )
    except StateMigrationError as exc:
        message, refused = _refusal(args, serializers, config, exc)
        print(f"conformance migrate: {message}", file=sys.stderr)
        write_json({"source": args.savepoint, "out": args.out, "mode": args.backend, "refused": refused,
                    "message": message}, args.json)
        return VIOLATION
    except (StateError, OSError) as exc:
        print(f"conformance migrate: {exc}", file=sys.stderr)
        return failed_status(exc) if isinstance(exc, StateError) else UNUSABLE
    print(report.format(), file=sys.stderr if args.json == "-" else sys.stdout)
    write_json({"source": report.source, "out": report.out, "mode": report.mode, "rows": report.rows,
                "states": [{"name": s.name, "kind": s.kind, "verdict": str(s.verdict), "action": s.action,
                            "rows": s.rows, "parallelism": s.parallelism, "shuffled": s.shuffled}
                           for s in report.states]}, args.json)
    return OK


def _refusal(args: argparse.Namespace, serializers: Any, config: Any,
             exc: Exception) -> tuple[str, list[dict[str, Any]]]:
    """The message of a refused migration (naming ``--schema-evolution`` where the refusal is
    that row schema evolution is not enabled) and, per refused state, its name, kind, verdict
    (``incompatible``, or ``needs --schema-evolution``) and the reason, each state judged on
    its own."""
    from reference import StateError
    from reference.backends import SCHEMA_EVOLUTION_ENABLED, SCHEMA_EVOLUTION_OPTION
    from reference.savepoint import read_savepoint_metadata

    from ..spark import normalize_descriptors, plan_migration

    refused: list[dict[str, Any]] = []
    try:
        metadata = read_savepoint_metadata(args.savepoint)
        descriptors = normalize_descriptors(serializers)
    except StateError:
        return str(exc), refused
    for state in metadata.states:
        if state.name not in descriptors:
            continue
        only = {state.name: descriptors[state.name]}
        try:
            plan_migration(args.savepoint, only, config=config)
            continue
        except StateError as refusal:
            reason = str(refusal)
        verdict = "incompatible"
        if config is None:
            try:
                plan_migration(args.savepoint, only, config=SCHEMA_EVOLUTION_ENABLED)
                verdict = "needs --schema-evolution"
            except StateError:
                pass
        if verdict != "incompatible":
            reason = evolution_hint(reason, SCHEMA_EVOLUTION_OPTION)
        refused.append({"name": state.name, "kind": state.kind, "verdict": verdict, "message": reason})
    message = str(exc)
    if any(r["verdict"] != "incompatible" for r in refused):
        message = evolution_hint(message, SCHEMA_EVOLUTION_OPTION)
    return message, refused


def explain_migration(savepoint: str, serializers: Any, config: Any = None,
                      key_serializer: Any = None) -> list[dict[str, Any]]:
    """Per state of ``savepoint``: its name, kind, verdict and migration plan (lines), judged
    exactly as ``migrate_savepoint`` judges it (``plan_migration``; refusals raise the same
    errors); no Spark."""
    from ..spark import plan_migration

    return [{"name": state.name, "kind": state.kind, "verdict": state.verdict, "plan": list(state.lines)}
            for state in plan_migration(savepoint, serializers, config=config, key_serializer=key_serializer)]


def _explain(args: argparse.Namespace, serializers: Any, key_serializer: Any, config: Any) -> int:
    import sys

    from reference import StateError, StateMigrationError

    try:
        states = explain_migration(args.savepoint, serializers, config, key_serializer)
    except StateMigrationError as exc:  # said as the migration itself says it
        message, refused = _refusal(args, serializers, config, exc)
        print(f"conformance migrate --explain: {message}", file=sys.stderr)
        write_json({"source": args.savepoint, "explain": True, "refused": refused, "message": message}, args.json)
        return VIOLATION
    except (StateError, OSError) as exc:
        print(f"conformance migrate --explain: {exc}", file=sys.stderr)
        return failed_status(exc) if isinstance(exc, StateError) else UNUSABLE
    out = sys.stderr if args.json == "-" else sys.stdout
    print(f"migration plan for {args.savepoint} (not run):", file=out)
    for state in states:
        print(f"state {state['name']!r} ({state['kind']}): {state['verdict']}", file=out)
        for line in state["plan"]:
            print(f"  {line}", file=out)
    write_json({"source": args.savepoint, "explain": True, "states": states}, args.json)
    return OK


def run_verify(args: argparse.Namespace) -> int:
    import sys

    from reference import StateError

    if args.sample < 0:
        raise UsageError(f"--sample must not be negative, got {args.sample}")
    json_target(args.json)
    import_modules(args.imports)
    _readable(args.savepoint, "SAVEPOINT")
    if args.expect is not None:
        _readable(args.expect, "--expect")
    from reference import PickleNotAllowedError

    from ..spark import refuse_unpickling, verify_savepoint

    allow_pickle = True if "*" in args.allow_pickle else args.allow_pickle
    try:
        for path in (args.savepoint, args.expect):
            if path is not None:
                refuse_unpickling(path, allow_pickle)
    except PickleNotAllowedError as exc:
        raise UsageError(str(exc)) from None
    try:
        report = verify_savepoint(args.savepoint, expect=args.expect, sample=args.sample, master=args.spark,
                                  allow_pickle=allow_pickle)
    except (StateError, OSError) as exc:
        print(f"conformance verify: {exc}", file=sys.stderr)
        return failed_status(exc) if isinstance(exc, StateError) else UNUSABLE
    print(report.format(), file=sys.stderr if args.json == "-" else sys.stdout)
    write_json({
        "savepoint": report.savepoint, "expect": report.expect, "ok": report.ok,
        "entries": report.entries, "problems": report.problems,
        "states": [
            {"name": s.name, "kind": s.kind, "entries": s.entries, "bad_entries": s.bad_entries,
             "mismatches": s.mismatches, "samples": s.samples}
            for s in report.states
        ],
    }, args.json)
    return OK if report.ok else VIOLATION
