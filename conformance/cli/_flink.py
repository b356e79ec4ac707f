"""``conformance migrate`` with a Flink canonical savepoint in: a Flink savepoint out, in one
process (``reference.backends.migrate_flink_savepoint``) or, with ``--spark MASTER``, its state
files written by Spark executors (``conformance.spark.migrate_flink_savepoint_spark``: the same
tasks, the same output byte for byte; ``--spark off`` is one process). Input and ``--out`` are local paths or URIs
(``s3://...``); the output is committed with ``_metadata`` last, so a failure leaves no
savepoint, and the input is only read.

``run_migrate`` in ``_spark`` tells the formats apart by their files (``savepoint_format``: a
``_metadata`` with Flink's magic number) and hands a Flink savepoint here. ``--serializers``
names ``{operator uid (or 32-hex-digit operator id): {state name: StateDescriptor}}``;
``--old-row-type`` (``_common.load_old_row_types``) gives the old job's field names of a
flink-core Row state (else ``f0..fN``), for FLIP-527's rules by name; ``--operator-uid OLD=NEW``
(repeatable) moves an operator's state to the new job's uid (``operator_uids`` of
``migrate_flink_savepoint``), ``--serializers`` then naming it by the new uid. The options of the Spark
pipeline that mean nothing here (``--parallelism``, ``--key-serializer``, ``--backend heap``,
``--explain``) are refused as usage errors (exit 2) before anything is read. Exit 0 written, 1
a state refused (its operator, name and why) or a Spark job failed, 2 unusable input (or Spark
cannot start).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from ._common import (
    OK,
    UNUSABLE,
    VIOLATION,
    UsageError,
    failed_status,
    load_old_row_types,
    load_operator_uids,
    write_json,
)

__all__ = ["run_flink_migrate"]


def _descriptors(serializers: Any) -> dict[str, dict[str, Any]]:
    from reference.backends import StateDescriptor

    shape = ("for a Flink savepoint, --serializers names a dict {operator uid: {state name: "
             "StateDescriptor}} (an operator without a uid named by its 32-hex-digit operator id)")
    if not isinstance(serializers, Mapping):
        raise UsageError(f"{shape}; got {type(serializers).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for operator, states in serializers.items():
        if not isinstance(operator, str) or not isinstance(states, Mapping):
            raise UsageError(f"{shape}; got {operator!r}: {type(states).__name__}")
        for name, descriptor in states.items():
            if not isinstance(descriptor, StateDescriptor):
                raise UsageError(f"{shape}; operator {operator!r}, state {name!r} is a {type(descriptor).__name__}")
        out[operator] = dict(states)
    return out


def run_flink_migrate(args: argparse.Namespace, serializers: Any) -> int:
    """``conformance migrate`` of the Flink savepoint ``args.savepoint`` (see the module docstring)."""
    from reference import StateError, StateMigrationError
    from reference.backends import migrate_flink_savepoint

    spark_only = [flag for flag, used in (
        ("--parallelism", args.parallelism is not None),
        ("--key-serializer", args.key_serializer is not None), ("--backend heap", args.backend == "heap"),
        ("--explain", args.explain)) if used]
    if spark_only:
        raise UsageError(f"{', '.join(spark_only)}: not available for a Flink savepoint, which is migrated "
                         "with the key serializer and parallelism it was written with; leave them out")
    if args.out is None:
        raise UsageError("conformance migrate needs --out DIR")
    descriptors = _descriptors(serializers)
    old_row_types = load_old_row_types(args.old_row_type)
    operator_uids = load_operator_uids(args.operator_uid)
    on_spark = args.spark not in (None, "off")
    states = [{"operator": op, "state": name} for op, named in descriptors.items() for name in named]
    try:
        if on_spark:
            from ..spark import migrate_flink_savepoint_spark

            out = migrate_flink_savepoint_spark(args.savepoint, args.out, descriptors,
                                                schema_evolution=args.schema_evolution, master=args.spark,
                                                old_row_types=old_row_types, operator_uids=operator_uids)
        else:
            out = migrate_flink_savepoint(args.savepoint, args.out, descriptors, schema_evolution=args.schema_evolution,
                                          old_row_types=old_row_types, operator_uids=operator_uids)
    except StateMigrationError as exc:
        message = str(exc).replace("migrate_flink_savepoint(..., schema_evolution=True)", "--schema-evolution")
        print(f"conformance migrate: {message}", file=sys.stderr)
        write_json({"format": "flink", "source": args.savepoint, "out": args.out, "refused": True,
                    "message": message}, args.json)
        return VIOLATION
    except (StateError, OSError) as exc:
        message = str(exc).replace("old_row_types", "--old-row-type").replace("operator_uids", "--operator-uid")
        print(f"conformance migrate: {message}", file=sys.stderr)
        return failed_status(exc) if isinstance(exc, StateError) else UNUSABLE
    report = sys.stderr if args.json == "-" else sys.stdout
    where = f"on Spark {args.spark}" if on_spark else "in one process"
    print(f"migrated Flink savepoint {args.savepoint} -> {out} ({len(states)} states named, {where})", file=report)
    write_json({"format": "flink", "source": args.savepoint, "out": out, "states": states,
                "spark": args.spark if on_spark else None}, args.json)
    return OK
