"""``conformance savepoint ...``: the subcommand group for savepoints as they are (Flink's own
canonical savepoints and this project's, told apart by their files).

``inspect`` (what a savepoint holds, no user code needed) and ``export`` (keyed state as typed
Parquet datasets, in this process or on Spark) are defined here; the library functions they call
are ``reference.savepoint.inspect_savepoint`` / ``export_savepoint`` and
``conformance.spark.export_savepoint_spark``.

Adding a subcommand: write a module ``conformance/cli/_savepoint_<name>.py`` with
``add_parser(group)`` (``group`` is the argparse sub-parsers object of ``conformance
savepoint``; the parser it adds sets ``func``), and name that module in ``SUBCOMMANDS`` below
(one line). Exit statuses are every subcommand's (``_common``): 0 done, 1 a violation, 2 the
savepoint, an option or the command line cannot be used (said in one sentence: what was wrong and
what to do). Importing this module imports neither pyarrow nor pyspark.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any

from ._common import OK, UNUSABLE, UsageError, add_import, add_json, import_modules, json_target, write_json

__all__ = ["SUBCOMMANDS", "add_parsers", "register"]

#: Modules (beside this one) adding a subcommand of their own to ``conformance savepoint``.
SUBCOMMANDS: tuple[str, ...] = ("_savepoint_check",)


def register(group: Any) -> None:
    """Add the subcommands of the modules named in ``SUBCOMMANDS`` to ``group``."""
    for name in SUBCOMMANDS:
        importlib.import_module(f"{__package__}.{name}").add_parser(group)


def add_parsers(sub: Any) -> None:
    savepoint = sub.add_parser(
        "savepoint", help="inspect, export or check a savepoint (Flink's own or this project's)",
        description="Work with a savepoint as it is: Flink's canonical savepoints (a directory with "
                    "_metadata) and this project's (_metadata.json), told apart by their files.",
    )
    group = savepoint.add_subparsers(dest="savepoint_command", metavar="SUBCOMMAND")
    savepoint.set_defaults(func=lambda args: _no_subcommand(savepoint))

    inspect = group.add_parser(
        "inspect", help="what a savepoint holds: operators, states, serializers, entry counts",
        description="Show every operator of the savepoint with its keyed states (kind, serializer "
                    "snapshot classes, TTL, entries) and operator states; no user code needed. "
                    "Exit 0 read, 2 not a readable savepoint.",
    )
    inspect.add_argument("savepoint", help="the savepoint's directory (or a URI such as s3://bucket/prefix)")
    add_json(inspect, "what the savepoint holds")
    add_import(inspect)
    inspect.set_defaults(func=run_inspect)

    export = group.add_parser(
        "export", help="every keyed state as a Parquet dataset, typed from the serializer snapshots",
        description="Write each keyed state to DIR/<uid>/<state>/ as Parquet (columns key_group, key, "
                    "namespace, user_key, value, ttl_last_access as the state has them), typed from "
                    "the savepoint's serializer snapshots with no user class. DIR appears only once "
                    "complete. Exit 0 done, 2 unusable input.",
    )
    export.add_argument("savepoint", help="the savepoint's directory (or a URI)")
    export.add_argument("--out", required=True, metavar="DIR", help="a local directory that does not exist yet")
    export.add_argument("--spark", default=None, metavar="MASTER",
                        help="run on Spark (e.g. local[2] or spark://host:7077): executors read key-group "
                             "ranges in parallel (default: this process)")
    export.add_argument("--uid", default=None, metavar="UID",
                        help="only this operator (its uid, or its 32-hex-digit operator id)")
    export.add_argument("--state", default=None, metavar="NAME", help="only this keyed state")
    export.set_defaults(func=run_export)
    register(group)


def _no_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return UNUSABLE


def _unusable(command: str, path: str, exc: BaseException) -> UsageError:
    from reference.savepoint import shown

    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else (getattr(exc, "strerror", None) or str(exc))
    return UsageError(f"savepoint {command} {shown(path)}: {text}")


def run_inspect(args: argparse.Namespace) -> int:
    from reference import StateError
    from reference.savepoint import format_inspection, inspect_savepoint

    json_target(args.json)
    import_modules(args.imports)
    try:
        doc = inspect_savepoint(args.savepoint)
    except (StateError, OSError) as exc:
        raise _unusable("inspect", args.savepoint, exc) from None
    print(format_inspection(doc), file=sys.stderr if args.json == "-" else sys.stdout)
    write_json(doc, args.json)
    return OK


def run_export(args: argparse.Namespace) -> int:
    from reference import StateError
    from reference.savepoint import export_savepoint, is_uri, plan_export

    if is_uri(args.out):
        raise UsageError(f"savepoint export --out {args.out}: give a local directory (the export is "
                         "renamed into place when complete); copy it to the store afterwards")
    if os.path.lexists(args.out):
        raise UsageError(f"savepoint export --out {args.out}: it exists already; give a new directory "
                         "or remove it")
    try:
        plan_export(args.savepoint, args.uid, args.state)
    except KeyError as exc:
        text = str(exc.args[0] if exc.args else exc)
        option = "--uid" if text.startswith("no operator") else "--state"
        hint = f"; give {option} one of those" if "(" in text else ""
        raise UsageError(f"savepoint export {args.savepoint}: {text}{hint}") from None
    except (StateError, OSError) as exc:
        raise _unusable("export", args.savepoint, exc) from None
    try:
        if args.spark is not None:
            from ..spark import export_savepoint_spark

            report = export_savepoint_spark(args.savepoint, args.out, uid=args.uid, state=args.state,
                                            master=args.spark)
        else:
            report = export_savepoint(args.savepoint, args.out, uid=args.uid, state=args.state)
    except (StateError, OSError) as exc:
        print(f"conformance savepoint export: {exc}", file=sys.stderr)
        return UNUSABLE
    print(report.format_text())
    return OK
