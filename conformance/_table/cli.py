"""``conformance certify-table TARGET``: certify a table implementation.

TARGET is ``module:attribute`` naming a ``conformance.TableSubject`` (or a zero-argument
callable returning one). Exit status: 0 certified, 1 a check failed, 2 unusable input.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from ..cli import positive_int as _positive

__all__ = ["add_parser", "main", "load_table_subject", "TableTargetError"]

CERTIFIED, VIOLATION, UNUSABLE = 0, 1, 2


class TableTargetError(Exception):
    """TARGET does not name a usable TableSubject (the message says how to fix it)."""


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``certify-table`` subcommand to the harness's argparse subparsers."""
    parser = subparsers.add_parser(
        "certify-table",
        help="certify a table implementation (SEP-30 partial updates) against the reference model",
        description="Drive random sequences of put/get/delete/update/update_all (with and without "
                    "defaults, both contracts, concurrent batches, injected failures) against the "
                    "table and the model built from its apply_update; exit 0 certified, 1 violation, "
                    "2 unusable input.",
    )
    parser.add_argument("target", metavar="TARGET", help="module:attribute naming a conformance.TableSubject")
    parser.add_argument("--examples", type=_positive, default=30, metavar="N",
                        help="state machine runs per check (default 30)")
    parser.add_argument("--steps", type=_positive, default=20, metavar="N",
                        help="operations per run (default 20)")
    parser.add_argument("--check", action="append", metavar="ID", help="run only these table.* checks (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(func=run)
    return parser


def load_table_subject(spec: str) -> Any:
    """The ``TableSubject`` named by ``module:attribute`` (or returned by a zero-argument callable)."""
    from ._subject import TableSubject, TableSubjectError

    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise TableTargetError(f"TARGET {spec!r}: give module:attribute, e.g. mypackage.tables:SUBJECT")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the current directory is importable
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise TableTargetError(f"TARGET {spec!r}: cannot import {module_name!r} ({exc})") from None
    except Exception as exc:  # e.g. a TableSubject built wrongly at module level
        raise TableTargetError(
            f"TARGET {spec!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise TableTargetError(f"TARGET {spec!r}: {module_name} has no attribute {attr!r}") from None
    if not isinstance(obj, TableSubject) and callable(obj):
        try:
            obj = obj()
        except TableSubjectError as exc:
            raise TableTargetError(f"TARGET {spec!r}: {exc}") from None
        except Exception as exc:
            raise TableTargetError(f"TARGET {spec!r}: calling it raised {type(exc).__name__}: {exc}") from None
    if not isinstance(obj, TableSubject):
        raise TableTargetError(
            f"TARGET {spec!r} is a {type(obj).__name__}, not a conformance.TableSubject; wrap the table "
            f"factory: TableSubject(table_factory, keys, values, updates, apply_update)"
        )
    return obj


def run(args: argparse.Namespace) -> int:
    from ._certify import certify_table

    try:
        subject = load_table_subject(args.target)
    except TableTargetError as exc:
        print(f"conformance certify-table: error: {exc}", file=sys.stderr)
        return UNUSABLE
    checks = tuple(args.check) if args.check else None
    results = certify_table(subject, max_examples=args.examples, steps=args.steps, checks=checks)
    if checks and not results:
        print(f"conformance certify-table: error: no table check among {list(checks)}", file=sys.stderr)
        return UNUSABLE
    certified = not any(r.failed for r in results)
    if args.json:
        print(json.dumps({"subject": args.target, "certified": certified,
                          "checks": [r.to_json() for r in results]}, indent=2))
    else:
        for result in results:
            print(result)
        print(f"{args.target}: {'CERTIFIED' if certified else 'NOT CERTIFIED'}")
    return CERTIFIED if certified else VIOLATION


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry (``python -m conformance._table.cli TARGET``)."""
    parser = argparse.ArgumentParser(prog="conformance")
    add_parser(parser.add_subparsers(dest="command"))
    try:
        args = parser.parse_args(["certify-table", *(sys.argv[1:] if argv is None else argv)])
    except SystemExit as exc:
        return int(exc.code or 0)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
