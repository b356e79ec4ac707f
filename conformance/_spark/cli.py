"""``conformance migrate`` and ``conformance verify``: the Spark jobs from the command line.

Exit status: 0 done and clean, 1 the job found a problem (a state refused as incompatible, a
value that fails to migrate or decode, a mismatch against the expected savepoint), 2 the input
could not be used (no such savepoint or serializers, the output exists, no Java, bad options).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

from reference import SnapshotFormatError, StateError, StateMigrationError

__all__ = ["add_parsers", "run_migrate", "run_verify", "load_attribute"]

OK, FOUND, UNUSABLE = 0, 1, 2


class UsageError(StateError):
    """The command line names something that cannot be used."""


def add_parsers(subparsers: Any) -> None:
    """Add the ``migrate`` and ``verify`` subcommands to an argparse subparsers object; each
    sets ``func`` (``args -> exit status``)."""
    migrate = subparsers.add_parser(
        "migrate",
        help="restore a savepoint with new serializers on Spark, migrate, write a new savepoint",
        description=(
            "Judge every state's new serializer against the savepoint (once, on the driver), "
            "migrate on Spark executors and write a new savepoint atomically. Exit 0 done, 1 a "
            "state was refused or failed to migrate, 2 unusable input."
        ),
    )
    migrate.add_argument("savepoint", help="savepoint directory to read (never modified)")
    migrate.add_argument(
        "--serializers", required=True, metavar="MODULE:ATTR",
        help="a mapping state name -> state descriptor, a list of descriptors, or a zero-argument "
        "function returning either",
    )
    migrate.add_argument("--out", required=True, metavar="DIR", help="new savepoint directory (must not exist)")
    migrate.add_argument("--backend", choices=("bytes", "heap"), default="bytes",
                         help="bytes: migrate_state over serialized values (default); heap: "
                         "deserialize, migrate_element, serialize")
    migrate.add_argument("--parallelism", type=int, default=None, metavar="N",
                         help="target parallelism (rescaling by key groups); default: as written")
    migrate.add_argument("--key-serializer", default=None, metavar="MODULE:ATTR",
                         help="new key serializer (must read the old keys as is)")
    migrate.add_argument("--schema-evolution", action="store_true",
                         help="allow FLIP-527 row evolution (state.schema-evolution.enable)")
    migrate.add_argument("--spark", default=None, metavar="MASTER", help="Spark master URL (default local[*])")
    migrate.set_defaults(func=run_migrate)

    verify = subparsers.add_parser(
        "verify",
        help="check that every entry of a savepoint decodes (and matches an expected savepoint)",
        description=(
            "Count entries, decode every key, namespace, map key and value with the savepoint's "
            "serializers (nothing left over), check key groups and optionally compare with an "
            "expected savepoint. Exit 0 clean, 1 problems found, 2 unusable input."
        ),
    )
    verify.add_argument("savepoint", help="savepoint directory to check")
    verify.add_argument("--expect", default=None, metavar="SAVEPOINT",
                        help="expected savepoint (e.g. the oracle's or a backend's) to compare with")
    verify.add_argument("--sample", type=int, default=5, metavar="N", help="problems shown per state")
    verify.add_argument("--json", default=None, metavar="FILE", help="also write the report as JSON")
    verify.add_argument("--spark", default=None, metavar="MASTER", help="Spark master URL (default local[*])")
    verify.set_defaults(func=run_verify)


def load_attribute(spec: str, what: str) -> Any:
    """``module:attr`` -> the attribute (a zero-argument function is called)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{what} {spec!r} is not MODULE:ATTR (e.g. myjob.state:SERIALIZERS)")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise UsageError(f"{what}: cannot import module {module_name!r}: {type(exc).__name__}: {exc}") from None
    value: Any = module
    for part in attr.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            raise UsageError(f"{what}: module {module_name!r} has no attribute {attr!r}") from None
    from reference import TypeSerializer
    from reference.backends import StateDescriptor

    if callable(value) and not isinstance(value, (type, StateDescriptor, TypeSerializer)):
        value = value()
    return value


def _fail(message: str, status: int) -> int:
    print(f"conformance: {message}", file=sys.stderr)
    return status


def _classify(exc: StateError) -> int:
    from reference.backends import SavepointFormatError

    from .jobs import SerializerShippingError, SparkJobError
    from .session import SparkSessionError

    if isinstance(exc, (UsageError, SavepointFormatError, SnapshotFormatError, SparkSessionError)):
        return UNUSABLE
    if isinstance(exc, (StateMigrationError, SparkJobError, SerializerShippingError)):
        return FOUND
    return UNUSABLE


def run_migrate(args: argparse.Namespace) -> int:
    from .jobs import migrate_savepoint

    try:
        serializers = load_attribute(args.serializers, "--serializers")
        key_serializer = load_attribute(args.key_serializer, "--key-serializer") if args.key_serializer else None
        if args.parallelism is not None and args.parallelism < 1:
            raise UsageError(f"--parallelism must be at least 1, got {args.parallelism}")
        report = migrate_savepoint(
            args.savepoint, serializers, args.out, mode=args.backend, parallelism=args.parallelism,
            key_serializer=key_serializer,
            config={"state.schema-evolution.enable": True} if args.schema_evolution else None,
            master=args.spark,
        )
    except StateError as exc:
        return _fail(f"migrate: {exc}", _classify(exc))
    except OSError as exc:
        return _fail(f"migrate: {exc}", UNUSABLE)
    print(report.format())
    return OK


def run_verify(args: argparse.Namespace) -> int:
    from .jobs import verify_savepoint

    try:
        if args.sample < 0:
            raise UsageError(f"--sample must not be negative, got {args.sample}")
        report = verify_savepoint(args.savepoint, expect=args.expect, sample=args.sample, master=args.spark)
    except StateError as exc:
        return _fail(f"verify: {exc}", _classify(exc))
    except OSError as exc:
        return _fail(f"verify: {exc}", UNUSABLE)
    print(report.format())
    if args.json:
        doc = {
            "savepoint": report.savepoint, "expect": report.expect, "ok": report.ok,
            "entries": report.entries, "problems": report.problems,
            "states": [
                {"name": s.name, "kind": s.kind, "entries": s.entries, "bad_entries": s.bad_entries,
                 "mismatches": s.mismatches, "samples": s.samples}
                for s in report.states
            ],
        }
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(doc, handle, indent=1)
    return OK if report.ok else FOUND
