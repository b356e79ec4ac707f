"""``conformance certify`` (serializers) and ``conformance certify-table`` (tables): parse the
command line into a ``conformance.RunConfig``, load the subjects, call ``conformance.certify``
and render what it returns.

Both run through the same runner and report: the same seed, profile, ``--check``,
``--expect-failure``, ``--strict``, ``--json`` and exit statuses.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._engine.config import BACKENDS, DEFAULT_BACKENDS, PROFILES, RunConfig, RunConfigError
from ._common import (
    OK,
    VIOLATION,
    UsageError,
    add_import,
    add_json,
    add_seed,
    import_modules,
    import_object,
    json_target,
    positive_int,
    write_json,
)

__all__ = ["add_parsers", "load_target", "load_serializer", "load_table_subject", "BUILTINS_EXAMPLES",
           "backends_option", "profile_option", "run_config"]

#: Examples per check for --builtins unless --examples or --profile says otherwise (their own
#: suites test them in depth; the certification run is the quick, complete sweep).
BUILTINS_EXAMPLES = 50


def load_target(spec: str, values: str | None = None) -> Any:
    """The ``Subject`` named by ``module:attr`` (a Subject, a serializer instance or a zero-argument
    factory; the latter two need ``values``, a ``module:attr`` naming a hypothesis strategy)."""
    from .._engine.subject import Subject, SubjectError

    target = import_object(spec, "TARGET")
    try:
        if isinstance(target, Subject):
            if not target.locator:
                target.locator = spec
            return target
        if values is None:
            raise UsageError(_not_a_subject(spec, target))
        strategy = import_object(values, "--values")
        if callable(strategy) and not hasattr(strategy, "example"):
            strategy = strategy()
        return Subject(target, strategy, locator=spec, name=spec)
    except SubjectError as exc:
        raise UsageError(str(exc)) from None


def _not_a_subject(spec: str, target: Any) -> str:
    """Why ``target`` (given without --values) cannot be certified, and what to do instead."""
    from reference import TypeSerializer

    from .._table import TableSubject

    if isinstance(target, TableSubject):
        return (f"TARGET {spec!r} is a conformance.TableSubject, a table to certify with "
                f"`conformance certify-table {spec}` (certify takes serializers)")
    if isinstance(target, type) and issubclass(target, TypeSerializer):
        return (f"TARGET {spec!r} is the serializer class {target.__name__}, not an instance: pass an "
                f"instance wrapped in a Subject (SUBJECT = Subject({target.__name__}(), values=...)) and "
                "point at it, or give --values module:attribute naming a hypothesis strategy of its "
                "values (the class is then called with no arguments)")
    return (f"TARGET {spec!r} is a {type(target).__name__}, not a conformance.Subject: give "
            "--values module:attribute naming a hypothesis strategy of its values, or point "
            "at a Subject")


def load_serializer(spec: str) -> Any:
    """The serializer named by ``module:attr``: a Subject's, an instance, or what a
    zero-argument factory makes (what a fresh process rebuilds from a subject's locator)."""
    from reference import TypeSerializer

    from .._engine.subject import Subject

    target = import_object(spec, "TARGET")
    if isinstance(target, Subject):
        return target.make_serializer()
    if isinstance(target, TypeSerializer):
        return target
    return target()


def load_table_subject(spec: str) -> Any:
    """The ``TableSubject`` named by ``module:attribute`` (or returned by a zero-argument callable)."""
    from .._table import TableSubject, TableSubjectError

    obj = import_object(spec, "TARGET")
    if not isinstance(obj, TableSubject) and callable(obj):
        try:
            obj = obj()
        except TableSubjectError as exc:
            raise UsageError(f"TARGET {spec!r}: {exc}") from None
        except Exception as exc:
            raise UsageError(f"TARGET {spec!r}: calling it raised {type(exc).__name__}: {exc}") from None
    if not isinstance(obj, TableSubject):
        raise UsageError(
            f"TARGET {spec!r} is a {type(obj).__name__}, not a conformance.TableSubject; wrap the table "
            f"factory: TableSubject(table_factory, keys, values, updates, apply_update)"
        )
    factory = obj.table_factory
    if obj.name == getattr(factory, "__qualname__", type(factory).__name__):
        obj.name = spec  # not named by its author: reports name it as the command line did
    return obj


def backends_option(text: str) -> tuple[str, ...]:
    """argparse type of ``--backend`` (and the plugin's ``--conformance-backend``): the names
    ``RunConfig`` accepts."""
    from .._engine.config import backend_names

    try:
        return backend_names(text)
    except RunConfigError as exc:
        raise argparse.ArgumentTypeError(f"{text!r}: {exc}") from None


def profile_option(text: str) -> str:
    """argparse type of ``--profile`` (and the plugin's ``--conformance-profile``): the names
    ``RunConfig`` accepts."""
    from .._engine.config import profile_name

    try:
        return profile_name(text)
    except RunConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _expected(items: list[str] | None) -> dict[str, str]:
    found = {}
    for item in items or []:
        check_id, _, reason = item.partition("=")
        found[check_id.strip()] = reason.strip() or "expected failure"
    return found


def _common_run_options(parser: argparse.ArgumentParser, examples_help: str) -> None:
    parser.add_argument("--examples", type=positive_int, metavar="N", help=examples_help)
    add_seed(parser)
    parser.add_argument("--profile", type=profile_option, metavar="|".join(PROFILES),
                        help="hypothesis profile (default: $HYPOTHESIS_PROFILE, else ci under CI, else dev)")
    parser.add_argument("--check", action="append", metavar="ID|FAMILY",
                        help="run only these checks (repeatable); an unknown one is an error")
    parser.add_argument("--expect-failure", action="append", metavar="ID=REASON",
                        help="a check known to fail (reported as xfailed, does not block certification)")
    parser.add_argument("--strict", action="store_true", default=None,
                        help="fail a subject when a family it declares data for was skipped "
                             "(on in the certify profile)")
    parser.add_argument("-x", "--exitfirst", action="store_true",
                        help="stop at the first failed check: report that subject (NOT CERTIFIED) "
                             "and run no further check or subject")
    parser.add_argument("--allow-all-skipped", action="store_true",
                        help="certify a subject none of whose selected checks passed (all skipped); "
                             "by default such a run certifies nothing and exits 1")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="list each skipped check with its reason (default: one line per reason)")
    parser.add_argument("--list-checks", action="store_true", help="list every check (id, family, what it verifies) and exit")
    add_json(parser, "the certificate (results, seed, options, versions)")
    add_import(parser)


def add_parsers(sub: Any) -> None:
    certify = sub.add_parser(
        "certify", help="run every check against a serializer (or every built-in one)",
        description="Exit status: 0 certified, 1 a check failed (or none passed), 2 unusable target or options.")
    certify.add_argument("target", nargs="?", metavar="TARGET",
                         help="module:attribute naming a conformance.Subject, a serializer or a zero-argument factory")
    certify.add_argument("--builtins", action="store_true", help="certify every built-in serializer")
    certify.add_argument("--values", metavar="MODULE:ATTR", help="hypothesis strategy of values (when TARGET is a serializer)")
    _common_run_options(certify, "examples per check (default: the profile's)")
    certify.add_argument("--backend", type=backends_option, default=DEFAULT_BACKENDS, metavar=",".join(BACKENDS),
                         help=f"backends to run histories on (default {','.join(DEFAULT_BACKENDS)})")
    certify.add_argument("--spark", default="off", metavar="MASTER|off",
                         help="run the spark family on this master (local[*], spark://host:port); default off")
    certify.add_argument("--spark-entries", type=positive_int, metavar="N",
                         help="entries in the spark family's history, rounded to whole keys (default 100000, or "
                              "$CONFORMANCE_SPARK_ENTRIES)")
    certify.add_argument("--update-golden", action="store_true",
                         help="record the current release into the golden directory (a release already "
                              "recorded with other bytes is refused: exit 2)")
    certify.add_argument("--force", action="store_true",
                         help="with --update-golden: re-record a release already recorded, replacing its files")
    certify.add_argument("--jobs", type=positive_int, metavar="N", help="subjects certified in parallel (--builtins; default 2); with --spark, the "
                         "processes that run the other families while Spark runs")
    certify.set_defaults(func=run_certify)

    table = sub.add_parser(
        "certify-table",
        help="certify a table implementation (SEP-30 partial updates) against the reference model",
        description="Drive random sequences of put/get/delete/update/update_all (with and without "
                    "defaults, both contracts, concurrent batches, injected failures) against the "
                    "table and the model built from its apply_update. Exit status: 0 certified, 1 a "
                    "check failed (or none passed), 2 unusable target or options.")
    table.add_argument("target", nargs="?", metavar="TARGET", help="module:attribute naming a conformance.TableSubject")
    _common_run_options(table, "state machine runs per check (default 30; 150 with --profile certify)")
    table.add_argument("--steps", type=positive_int, metavar="N", help="operations per run (default 20)")
    table.set_defaults(func=run_certify_table)


def _list_checks(kind: str) -> int:
    """Every check of ``kind``'s families, the spark family's included (they run with --spark)."""
    from .._engine.registry import checks_for, family_declaration

    for c in checks_for(kind, spark=kind == "serializer"):
        runs = " (runs with --spark MASTER)" if family_declaration(c.family).lane == "spark" else ""
        was = f" (formerly {', '.join(c.former_ids)}, accepted until the next release)" if c.former_ids else ""
        print(f"{c.id:<32} {c.family:<10} {c.doc}{runs}{was}")
    return OK


def _told(sentence: str) -> None:
    print(sentence, file=sys.stderr)


def _config(args: argparse.Namespace, **extra: Any) -> RunConfig:
    """The ``RunConfig`` a command line asks for (a value out of range is a usage error; an old
    check id is told on standard error, once)."""
    from .._engine.registry import current_ids, current_keys

    checks = None if args.check is None else tuple(current_ids((w.strip() for w in args.check), report=_told))
    try:
        return RunConfig(examples=args.examples, seed=args.seed, profile=args.profile, checks=checks,
                         expected_failures=current_keys(_expected(args.expect_failure), report=_told),
                         strict=args.strict, exitfirst=args.exitfirst,
                         allow_all_skipped=args.allow_all_skipped, **extra)
    except RunConfigError as exc:
        raise UsageError(str(exc)) from None


def _run(subjects: list[Any], args: argparse.Namespace, config: RunConfig) -> int:
    from .._engine.golden import GoldenOverwriteError
    from .._engine.registry import UnknownCheckError
    from .._engine.render import render_report, render_summary
    from .._engine.report import reports_to_json
    from .._engine.schedule import certify

    path = json_target(args.json)
    tty = sys.stdout.isatty() and path != "-"
    out = sys.stderr if path == "-" else sys.stdout  # the JSON owns standard output
    progress = None
    if tty and len(subjects) > 1:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), transient=True)
        progress.add_task("certifying", total=len(subjects))
        progress.start()

    def shown(report: Any) -> None:
        text = render_report(report, verbose=args.verbose)
        if progress is not None:
            progress.advance(progress.task_ids[0])
            progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=out, flush=True)

    try:
        reports = certify(subjects, config, on_report=shown)
    except (UnknownCheckError, GoldenOverwriteError) as exc:
        raise UsageError(str(exc)) from None
    finally:
        if progress is not None:
            progress.stop()
    seed = reports[0].seed
    if len(reports) > 1:
        text = render_summary(reports, tty=tty)
        if text is not None:
            print(text, file=out)
    else:
        print(f"seed {seed} (rerun with --seed {seed})", file=out)
    if len(reports) < len(subjects):
        print(f"stopped at the first failed check (--exitfirst): {len(subjects) - len(reports)} other "
              "subject(s) not run or cut short", file=out)
    write_json(reports_to_json(reports) if len(subjects) > 1 else reports[0].to_json(), path)
    return OK if all(r.certified for r in reports) and len(reports) == len(subjects) else VIOLATION


def run_certify(args: argparse.Namespace) -> int:
    if args.list_checks:
        return _list_checks("serializer")
    if args.builtins and args.target:
        raise UsageError("give either TARGET or --builtins, not both")
    if not args.builtins and not args.target:
        raise UsageError("give a TARGET (module:attribute) or --builtins")
    if args.force and not args.update_golden:
        raise UsageError("--force only re-records golden files: give it with --update-golden")
    json_target(args.json)
    config = run_config(args)
    import_modules(args.imports)
    if config.spark != "off":
        from ..spark import SparkUnavailableError, require_pyspark

        try:
            require_pyspark()
            import conformance._checks.spark  # noqa: F401
        except (ImportError, SparkUnavailableError) as exc:
            raise UsageError(f"--spark {args.spark}: the spark family cannot run ({exc})") from None
    if args.builtins:
        from .._builtins.subjects import builtin_subjects

        subjects = builtin_subjects()
        if config.examples is None and config.profile is None:
            config = config.replace(examples=BUILTINS_EXAMPLES)  # the main job stays quick under any CI profile
    else:
        subjects = [load_target(args.target, args.values)]
    return _run(subjects, args, config)


def run_config(args: argparse.Namespace) -> RunConfig:
    """The ``RunConfig`` a ``certify`` command line asks for."""
    return _config(args, backends=args.backend, spark=args.spark, spark_entries=args.spark_entries,
                   update_golden=args.update_golden, force=args.force, jobs=args.jobs)


def run_certify_table(args: argparse.Namespace) -> int:
    if args.list_checks:
        return _list_checks("table")
    if not args.target:
        raise UsageError("give a TARGET (module:attribute naming a conformance.TableSubject)")
    json_target(args.json)
    config = _config(args, steps=args.steps)
    import_modules(args.imports)
    return _run([load_table_subject(args.target)], args, config)
