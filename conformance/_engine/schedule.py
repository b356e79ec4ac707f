"""Scheduling a certification of several subjects: ``certify(subjects, config)``.

Subjects run one after another, in parallel processes (the config's ``jobs``, forked), or, when a family of
the Spark lane is selected (one that declares ``lane="spark"``, ``registry.declare_family``:
the spark family), in two lanes: ``jobs`` processes forked before the JVM starts run every
other family and do what the Spark lane's families prepare ahead (``prepare_ahead``: the spark
family writes each subject's large history), while this process starts Spark and runs the
Spark lane's checks of each subject whose first lane is done (``take_ahead`` first). The
result is one ``Report`` per subject, in subject order, whatever the schedule. Nothing here
prints: ``on_report`` is called with each report as it completes (the CLI renders it).

``exitfirst`` stops the run at the first failed check: that subject's report holds the checks
run until then (it is NOT CERTIFIED), subjects not started are not run, and subjects running
in parallel stop before their next check and are not reported (a report cut short by another
subject's failure would read as certified). Reports then come in the order they complete,
and the result holds only the subjects reported, in subject order.
"""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from reference import Verdict

from .config import RunConfig, from_keywords
from .report import Report
from .runner import Runner
from .subject import SubjectError

__all__ = ["certify", "Plan"]


@dataclass
class Plan:
    """Everything a certification run is asked to do: the subjects and one ``RunConfig`` (its
    seed fixed), which each subject's runner gets."""

    subjects: list[Any]
    config: RunConfig
    peers: list[tuple[str, Any]] = field(default_factory=list)
    #: Set when a subject failed under ``exitfirst`` (an Event shared with forked workers).
    stop: Any = None

    @property
    def checks(self) -> tuple[str, ...] | None:
        return self.config.checks

    @property
    def spark(self) -> str:
        return self.config.spark

    @property
    def exitfirst(self) -> bool:
        return self.config.exitfirst

    def runner(self, index: int) -> Runner:
        subject = self.subjects[index]
        options = dict(self.config.options)
        options["peers"] = [p for p in self.peers if p[1] is not subject]
        return Runner(subject, self.config.replace(options=options),
                      should_stop=self.stop.is_set if self.stop is not None else None)


#: The plan of the run in progress, inherited by forked workers.
_PLAN: list[Plan] = []
#: The directory in which the forked workers of a run with the spark family write the large
#: histories ahead of Spark: this prefix and its owner (``owned_temp_name``).
AHEAD_PREFIX = "conformance-spark-"


def certify(subjects: Sequence[Any], config: RunConfig | None = None, *,
            on_report: Callable[[Report], None] | None = None, **deprecated: Any) -> list[Report]:
    """Certify every subject (``Subject`` or ``TableSubject``) as ``config`` (a
    ``conformance.RunConfig``; default ``RunConfig()``) asks, with one seed; return their
    reports in subject order, calling ``on_report`` with each as it completes. Raises
    ``UnknownCheckError`` before running anything when the config's ``checks`` or
    ``expected_failures`` name no check. ``jobs`` subjects run in parallel (default: 2 when
    there are several; with the spark family, ``jobs`` processes run the other families while
    this one runs Spark's). Several serializer subjects see each other's serializers
    (``snapshot.not_shared``). ``exitfirst`` stops at the first failed check (see the module's
    docstring). The keywords taken before ``RunConfig`` still work for one release, with a
    ``DeprecationWarning``."""
    config = from_keywords(config, deprecated, "certify")
    subjects = list(subjects)
    if not subjects:
        raise SubjectError("certify: no subject given; pass a list of conformance.Subject or TableSubject")
    if config.seed is None:
        config = config.replace(seed=random.SystemRandom().randrange(2**32))
    plan = Plan(subjects, config)
    exitfirst, jobs = config.exitfirst, config.jobs
    several = len(subjects) > 1
    if several:
        plan.peers = [(s.display_name, s.make_serializer()) for s in subjects if hasattr(s, "make_serializer")]
    selections = []
    for i in range(len(subjects)):  # validates the selection and expected failures up front
        runner = plan.runner(i)
        try:
            selections.append(runner.checks(plan.checks))
        finally:
            runner.close()
    if jobs is None:
        jobs = min(2, os.cpu_count() or 1) if several else 1
    forking = "fork" in multiprocessing.get_all_start_methods()
    if exitfirst:
        plan.stop = multiprocessing.get_context("fork" if forking else None).Event()
    spark_selected = any(_in_spark_lane(c) for selection in selections for c in selection)
    done: dict[int, Report] = {}
    schedule: Iterator[tuple[int, Report | None]] = iter(())
    _PLAN[:] = [plan]
    try:
        if spark_selected and forking and not _spark_started():
            schedule = _two_lanes(plan, jobs)
        elif jobs > 1 and several and forking and not spark_selected:
            schedule = _in_processes(plan, jobs)
        else:
            schedule = ((i, _run_one(i)) for i in range(len(subjects)))
        for index, report in schedule:
            if report is None:
                continue  # cut short by another subject's failure (exitfirst): not a verdict
            done[index] = report
            if on_report is not None:
                on_report(report)
            if exitfirst and not report.certified:
                plan.stop.set()
                break
    finally:
        if hasattr(schedule, "close"):
            schedule.close()  # stops what still runs (exitfirst) and waits for it
        _PLAN.clear()
    return [done[i] for i in range(len(subjects)) if i in done]


def _run_one(index: int) -> Report | None:
    """The subject's report; None when another subject's failure stopped it (exitfirst)."""
    plan = _PLAN[0]
    if plan.stop is not None and plan.stop.is_set():
        return None
    runner = plan.runner(index)
    try:
        report = runner.run(plan.checks)
        return None if runner.interrupted else report
    finally:
        runner.close()


def _in_processes(plan: Plan, jobs: int) -> Iterator[tuple[int, Report | None]]:
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        if not plan.exitfirst:
            yield from enumerate(pool.map(_run_one, range(len(plan.subjects))))
            return
        futures = {pool.submit(_run_one, i): i for i in range(len(plan.subjects))}
        for future in as_completed(futures):
            yield futures[future], future.result()
    finally:
        if plan.stop is not None:
            plan.stop.set()  # a no-op unless the consumer stopped early: workers stop at their next check
        pool.shutdown(wait=True, cancel_futures=True)


def _in_spark_lane(check: Any) -> bool:
    """Whether ``check`` runs in the Spark lane (its family declares ``lane="spark"``)."""
    from .registry import family_declaration

    return family_declaration(check.family).lane == "spark"


def _run_before_spark(index: int, ahead_dir: str) -> tuple[Report, dict[str, Any] | None]:
    """Lane one of a Spark run (a forked process): every selected check but the Spark lane's,
    then what each selected Spark-lane family prepares ahead (its ``prepare_ahead``: the spark
    family's large history), written into the run's shared directory. Returns the report and
    what was prepared, by family (None when nothing)."""
    from .registry import family_declaration
    from .runner import CheckContext

    plan = _PLAN[0]
    runner = plan.runner(index)
    try:
        selected = runner.checks(plan.checks)
        report = runner.run_checks([c for c in selected if not _in_spark_lane(c)])
        ahead = {}
        for family in dict.fromkeys(c.family for c in selected if _in_spark_lane(c)):
            prepare = family_declaration(family).prepare_ahead
            if prepare is None or runner.interrupted:
                continue
            data = prepare(CheckContext(runner), os.path.join(ahead_dir, str(index), family))
            if data is not None:
                ahead[family] = data
        return report, ahead or None
    finally:
        runner.close()


def _run_spark_after(index: int, before: Report, ahead: dict[str, Any] | None, ahead_dir: str) -> Report:
    """Lane two (this process, which owns the Spark session): the Spark lane's checks, given
    the other checks' results from lane one (its prerequisites among them) and, per family,
    what lane one prepared ahead (its ``take_ahead``)."""
    from .registry import family_declaration

    plan = _PLAN[0]
    runner = plan.runner(index)
    try:
        runner.preload(before.results)
        for family, data in (ahead or {}).items():
            take = family_declaration(family).take_ahead
            if take is not None:
                take(runner, data)
        part = runner.run_checks([c for c in runner.checks(plan.checks) if _in_spark_lane(c)])
    finally:
        runner.close()
        shutil.rmtree(os.path.join(ahead_dir, str(index)), ignore_errors=True)
    part.results = before.results + part.results
    return part


def _spark_cost(subject: Any) -> int:
    """How much Spark work a subject brings beyond its history: each compatible evolution is
    migrated twice (bytes and heap mode) and read back."""
    return sum(evolution.expect != Verdict.INCOMPATIBLE for evolution in getattr(subject, "evolutions", ()))


def _two_lanes(plan: Plan, jobs: int) -> Iterator[tuple[int, Report]]:
    """(index, report) per subject: ``jobs`` forked processes run every family but spark and
    write the large histories, subject after subject, while this process starts Spark and
    runs the spark family of each subject whose lane-one work is done, in the order they get
    done. The forks happen before the JVM starts (forking a process that runs a JVM is
    unsafe); the two lanes overlap, so Spark's start-up, the other families and the
    histories cost little wall time. Subjects with the most Spark work start first, so the
    short ones fill the end (longest first)."""
    from ..spark.session import HARNESS_CONFIG, start_in_background

    order = sorted(range(len(plan.subjects)), key=lambda i: -_spark_cost(plan.subjects[i]))
    from reference.savepoint import new_owned_directory

    # Named by its owner (a killed run's histories are removed by the next such run on the host).
    ahead_dir = new_owned_directory(AHEAD_PREFIX)
    try:
        with ProcessPoolExecutor(max(1, jobs), mp_context=multiprocessing.get_context("fork")) as pool:
            befores = {pool.submit(_run_before_spark, i, ahead_dir): i for i in order}  # forks now
            start_in_background(plan.spark, config=HARNESS_CONFIG)
            for before in as_completed(befores):
                i = befores[before]
                yield i, _run_spark_after(i, *before.result(), ahead_dir)
    finally:
        shutil.rmtree(ahead_dir, ignore_errors=True)


def _spark_started() -> bool:
    """Whether this process already runs a JVM (then it must not fork)."""
    session = sys.modules.get("conformance.spark.session")
    return session is not None and bool(session.running())
