"""``conformance`` command line: ``certify`` (and ``certify-table``, ``migrate``, ``verify`` when
their modules are installed).

Exit status: 0 certified, 1 a check failed, 2 the target or the command line could not be used.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["main", "load_target", "build_parser", "UsageError"]

OK, VIOLATION, UNUSABLE = 0, 1, 2
#: Examples per check for --builtins unless --examples or --profile says otherwise (their own
#: suites test them in depth; the certification run is the quick, complete sweep).
BUILTINS_EXAMPLES = 50


class UsageError(Exception):
    """The target or an option cannot be used (exit status 2)."""


def _import_attr(spec: str, what: str) -> Any:
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"{what} {spec!r} must be 'module:attribute' (e.g. mypkg.serializers:SUBJECT)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: the current directory is importable
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"{what} {spec!r}: cannot import {module_name!r} ({exc}); run from the "
                         "directory that contains it or install it") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"{what} {spec!r}: {module_name} has no attribute {attr!r}") from None
    return obj


def load_target(spec: str, values: str | None = None) -> Any:
    """The ``Subject`` named by ``module:attr`` (a Subject, a serializer instance or a zero-argument
    factory; the latter two need ``values``, a ``module:attr`` naming a hypothesis strategy)."""
    from ._subject import Subject, SubjectError

    target = _import_attr(spec, "TARGET")
    try:
        if isinstance(target, Subject):
            if not target.locator:
                target.locator = spec
            return target
        if values is None:
            raise UsageError(
                f"TARGET {spec!r} is a {type(target).__name__}, not a conformance.Subject: give "
                "--values module:attribute naming a hypothesis strategy of its values, or point "
                "at a Subject"
            )
        strategy = _import_attr(values, "--values")
        if callable(strategy) and not hasattr(strategy, "example"):
            strategy = strategy()
        return Subject(target, strategy, locator=spec, name=spec)
    except SubjectError as exc:
        raise UsageError(str(exc)) from None


def positive_int(text: str) -> int:
    """argparse type of a whole number >= 1 (shared by every subcommand)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} must be at least 1")
    return n


def _backends(text: str) -> tuple[str, ...]:
    parts = tuple(p.strip() for p in text.split(",") if p.strip())
    bad = [p for p in parts if p not in ("heap", "bytes")]
    if bad or not parts:
        raise argparse.ArgumentTypeError(f"{text!r}: use heap, bytes or heap,bytes")
    return parts


def _expected(items: list[str] | None) -> dict[str, str]:
    found = {}
    for item in items or []:
        check_id, _, reason = item.partition("=")
        found[check_id.strip()] = reason.strip() or "expected failure"
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conformance",
        description="Certify state serializers against Flink's serializer, snapshot and migration semantics.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    certify = sub.add_parser("certify", help="run every check against a serializer (or every built-in one)",
                             description="Exit status: 0 certified, 1 a check failed, 2 unusable target or options.")
    certify.add_argument("target", nargs="?", metavar="TARGET",
                         help="module:attribute naming a conformance.Subject, a serializer or a zero-argument factory")
    certify.add_argument("--builtins", action="store_true", help="certify every built-in serializer")
    certify.add_argument("--values", metavar="MODULE:ATTR", help="hypothesis strategy of values (when TARGET is a serializer)")
    certify.add_argument("--examples", type=positive_int, metavar="N", help="examples per check (default: the profile's)")
    certify.add_argument("--backend", type=_backends, default=("heap", "bytes"), metavar="heap,bytes",
                         help="backends to run histories on (default heap,bytes)")
    certify.add_argument("--spark", default="off", metavar="MASTER|off",
                         help="run the spark family on this master (local[*], spark://host:port); default off")
    certify.add_argument("--spark-entries", type=positive_int, metavar="N",
                         help="entries in the spark family's history (default 100000, or $CONFORMANCE_SPARK_ENTRIES)")
    certify.add_argument("--json", metavar="FILE", help="write the results as JSON")
    certify.add_argument("--certificate", metavar="FILE", help="write the results plus seed, profile and versions")
    certify.add_argument("--seed", type=int, metavar="N", help="hypothesis seed (default: random, printed)")
    certify.add_argument("--profile", choices=("dev", "ci", "certify"), help="hypothesis profile")
    certify.add_argument("--update-golden", action="store_true", help="record the current release into the golden directory")
    certify.add_argument("--check", action="append", metavar="ID|FAMILY", help="run only these checks (repeatable)")
    certify.add_argument("--expect-failure", action="append", metavar="ID=REASON",
                         help="a check known to fail (reported, does not block certification)")
    certify.add_argument("--jobs", type=positive_int, metavar="N", help="subjects certified in parallel (--builtins; default 2)")
    certify.add_argument("--list-checks", action="store_true", help="list every check (id, family, what it verifies) and exit")
    certify.set_defaults(func=_certify)
    try:
        from ._table import cli as table_cli  # type: ignore[attr-defined]

        table_cli.add_parser(sub)
    except (ImportError, AttributeError):
        pass
    try:
        from ._spark import cli as spark_cli  # type: ignore[attr-defined]

        spark_cli.add_parsers(sub)
    except (ImportError, AttributeError):
        pass
    return parser


def _certify(args: argparse.Namespace) -> int:
    from ._output import certify_subjects

    if args.list_checks:
        from ._registry import all_checks, load_families

        load_families(spark=args.spark != "off")
        for c in all_checks():  # as a run selects them: spark only with --spark
            if c.family != "table" and (c.family != "spark" or args.spark != "off"):
                print(f"{c.id:<32} {c.family:<10} {c.doc}")
        return OK
    if args.builtins and args.target:
        raise UsageError("give either TARGET or --builtins, not both")
    if not args.builtins and not args.target:
        raise UsageError("give a TARGET (module:attribute) or --builtins")
    if args.spark != "off":
        try:
            importlib.import_module("conformance._spark.checks")
        except ImportError as exc:
            raise UsageError(f"--spark {args.spark}: the spark family is not available ({exc}); "
                             "install the extra: pip install -e '.[spark]'") from None
    if args.builtins:
        from ._builtins import builtin_subjects

        subjects = builtin_subjects()
        if args.examples is None and args.profile is None:
            args.examples = BUILTINS_EXAMPLES  # the main job stays quick under any CI profile
    else:
        subjects = [load_target(args.target, args.values)]
    return certify_subjects(subjects, args, several=args.builtins)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: 2 for bad usage, 0 for --help
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return UNUSABLE
    try:
        return int(args.func(args))
    except UsageError as exc:
        print(f"conformance: error: {exc}", file=sys.stderr)
        return UNUSABLE


if __name__ == "__main__":
    sys.exit(main())
