"""What ``conformance certify`` shows and writes: progress (rich, on a terminal only), one
verdict per failing check with its shrunk example, a summary table, JSON and certificate files."""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import sys
import tempfile
import warnings
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from ._report import Report, dump, reports_to_json
from ._runner import Runner

__all__ = ["certify_subjects", "render_report"]

_JOB: dict[str, Any] = {}


def _runner_for(subject: Any, args: argparse.Namespace, seed: int, peers: list[tuple[str, Any]]) -> Runner:
    return Runner(
        subject, examples=args.examples, backends=args.backend, spark=args.spark, seed=seed,
        profile=args.profile, update_golden=args.update_golden,
        expected_failures=_expected(args), options=_options(args, [p for p in peers if p[1] is not subject]),
    )


def _options(args: argparse.Namespace, peers: list[tuple[str, Any]]) -> dict[str, Any]:
    options: dict[str, Any] = {"peers": peers}
    if getattr(args, "spark_entries", None):
        options["spark_entries"] = args.spark_entries
    return options


def _expected(args: argparse.Namespace) -> dict[str, str]:
    from .cli import _expected as parse

    return parse(getattr(args, "expect_failure", None))


def _run_one(index: int) -> Report:
    subject = _JOB["subjects"][index]
    runner = _runner_for(subject, _JOB["args"], _JOB["seed"], _JOB["peers"])
    try:
        return runner.run(_JOB["args"].check)
    finally:
        runner.close()


def _run_before_spark(index: int) -> tuple[Report, dict[str, Any] | None]:
    """Lane one of a Spark run (a forked process): every selected check but the spark family,
    then the spark family's large history, written ahead into the run's shared directory."""
    from ._runner import CheckContext, UnknownCheckWarning

    with warnings.catch_warnings():  # lane two makes the same runner and warns once, not twice
        warnings.simplefilter("ignore", UnknownCheckWarning)
        runner = _runner_for(_JOB["subjects"][index], _JOB["args"], _JOB["seed"], _JOB["peers"])
    try:
        selected = runner.checks(_JOB["args"].check)
        report = runner.run([c.id for c in selected if c.family != "spark"])
        ahead = None
        if any(c.id == "spark.history" for c in selected):
            from ._spark.checks import write_history_ahead

            ahead = write_history_ahead(CheckContext(runner), os.path.join(_JOB["ahead"], str(index)))
        return report, ahead
    finally:
        runner.close()


def _run_spark_after(index: int, before: Report, ahead: dict[str, Any] | None) -> Report:
    """Lane two (this process, which owns the Spark session): the spark family, given the
    other checks' results from lane one (its prerequisites among them)."""
    runner = _runner_for(_JOB["subjects"][index], _JOB["args"], _JOB["seed"], _JOB["peers"])
    try:
        runner.preload(before.results)
        if ahead is not None:
            from ._spark.checks import take_history_ahead

            take_history_ahead(runner.cache, ahead)
        part = runner.run([c.id for c in runner.checks(_JOB["args"].check) if c.family == "spark"])
    finally:
        runner.close()
        shutil.rmtree(os.path.join(_JOB["ahead"], str(index)), ignore_errors=True)
    return Report(part.subject, before.results + part.results, part.seed, part.profile, part.examples,
                  part.versions)


def _spark_cost(subject: Any) -> int:
    """How much Spark work a subject brings beyond its history: each compatible evolution is
    migrated twice (bytes and heap mode) and read back."""
    return sum(evolution.expect != "incompatible" for evolution in subject.evolutions)


def _two_lanes(count: int, args: argparse.Namespace) -> Any:
    """(index, report) per subject: a forked process runs every family but spark and writes
    the large histories, subject after subject, while this process starts Spark and runs the
    spark family of each subject whose lane-one work is done. The fork happens before the
    JVM starts (forking a process that runs a JVM is unsafe); the two lanes overlap, so
    Spark's start-up, the other families and the histories cost little wall time. Subjects
    with the most Spark work go first, so the short ones fill the end (longest first)."""
    from ._spark.session import HARNESS_CONFIG, start_in_background

    order = sorted(range(count), key=lambda i: -_spark_cost(_JOB["subjects"][i]))
    _JOB["ahead"] = tempfile.mkdtemp(prefix="conformance-spark-")
    try:
        with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
            befores = [(i, pool.submit(_run_before_spark, i)) for i in order]  # forks now
            start_in_background(args.spark, config=HARNESS_CONFIG)
            for i, before in befores:
                yield i, _run_spark_after(i, *before.result())
    finally:
        shutil.rmtree(_JOB["ahead"], ignore_errors=True)


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), transient=True)


def certify_subjects(subjects: list[Any], args: argparse.Namespace, several: bool) -> int:
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    tty = sys.stdout.isatty()
    peers = [(s.display_name, s.make_serializer()) for s in subjects] if several else []
    jobs = args.jobs or (min(2, os.cpu_count() or 1) if several else 1)
    if args.spark != "off":
        jobs = 1  # one Spark session per run, shared by every subject
    reports: list[Report] = []
    progress = _progress(len(subjects), tty)
    if progress is not None:
        progress.start()
        progress.add_task("certifying", total=len(subjects))
    forking = "fork" in multiprocessing.get_all_start_methods()
    try:
        if args.spark != "off" and forking and not _spark_started() and _selects_spark(args.check):
            _JOB.update(subjects=subjects, args=args, seed=seed, peers=peers)
            done = {}
            for index, report in _two_lanes(len(subjects), args):
                done[index] = report
                _after(report, progress, tty)
            reports = [done[i] for i in range(len(subjects))]  # the summary and JSON keep subject order
        elif jobs > 1 and len(subjects) > 1 and forking:
            _JOB.update(subjects=subjects, args=args, seed=seed, peers=peers)
            with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                for report in pool.map(_run_one, range(len(subjects))):
                    reports.append(report)
                    _after(report, progress, tty)
        else:
            _JOB.update(subjects=subjects, args=args, seed=seed, peers=peers)
            for i in range(len(subjects)):
                report = _run_one(i)
                reports.append(report)
                _after(report, progress, tty)
    finally:
        if progress is not None:
            progress.stop()
    render_summary(reports, tty, seed)
    if args.json:
        dump(reports_to_json(reports) if several else reports[0].to_json(), args.json)
    if args.certificate:
        data: dict[str, Any] = ({"certified": all(r.certified for r in reports),
                                 "subjects": [r.certificate() for r in reports]}
                                if several else reports[0].certificate())
        dump(data, args.certificate)
    return 0 if all(r.certified for r in reports) else 1


def _selects_spark(select: Any) -> bool:
    from ._registry import all_checks, load_families, selected

    load_families(spark=True)
    return any(c.family == "spark" for c in selected(all_checks(), select))


def _spark_started() -> bool:
    """Whether this process already runs a JVM (then it must not fork)."""
    session = sys.modules.get("conformance._spark.session")
    return session is not None and session.running()


def _after(report: Report, progress: Any, tty: bool) -> None:
    if progress is not None:
        progress.advance(progress.task_ids[0])
        progress.console.print(render_report(report), markup=False, highlight=False)
    else:
        print(render_report(report), flush=True)


def render_report(report: Report) -> str:
    """The subject's verdict and, for each failure, check id, sentence and shrunk example."""
    counts = {s: sum(r.status == s for r in report.results) for s in ("passed", "failed", "skipped")}
    verdict = "CERTIFIED" if report.certified else "NOT CERTIFIED"
    lines = [f"{report.subject}: {verdict} ({counts['passed']} passed, {counts['failed']} failed, "
             f"{counts['skipped']} skipped)"]
    for r in report.results:
        if r.failed:
            lines.append(f"  FAILED {r.id} [{r.family}]: {r.message}")
            if r.example is not None:
                lines.append(f"    smallest failing example: {r.example}")
    return "\n".join(lines)


def render_summary(reports: list[Report], tty: bool, seed: int) -> None:
    families: list[str] = []
    for report in reports:
        for r in report.results:
            if r.family not in families:
                families.append(r.family)

    def cell(report: Report, family: str) -> str:
        rs = [r for r in report.results if r.family == family]
        if not rs:
            return "-"
        failed = sum(r.failed for r in rs)
        passed = sum(r.passed for r in rs)
        return f"FAIL {failed}" if failed else (f"ok {passed}" if passed else "skipped")

    if tty:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"conformance (seed {seed})")
        table.add_column("subject")
        for family in families:
            table.add_column(family)
        table.add_column("verdict")
        for report in reports:
            table.add_row(report.subject, *[cell(report, f) for f in families],
                          "[green]certified[/]" if report.certified else "[red]NOT certified[/]")
        Console().print(table)
    else:
        width = max([len(r.subject) for r in reports] + [7])
        print(f"\n{'subject'.ljust(width)}  " + "  ".join(f.ljust(9) for f in families) + "  verdict")
        for report in reports:
            print(f"{report.subject.ljust(width)}  " + "  ".join(cell(report, f).ljust(9) for f in families)
                  + ("  certified" if report.certified else "  NOT certified"))
    certified = sum(r.certified for r in reports)
    print(f"{certified} of {len(reports)} subject(s) certified; seed {seed} (rerun with --seed {seed})")
