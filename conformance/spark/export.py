"""``export_savepoint_spark``: keyed state as typed Parquet datasets, written by Spark executors.

The same export as ``reference.savepoint.export_savepoint`` (the plan, the columns, the Arrow
types and the rows are that module's: ``plan_export`` and ``write_units``), with its work units
(a Flink savepoint: runs of consecutive key groups; this project's: Parquet row groups) run as
one ``task_job`` of (group of ``export_groups``, unit) tasks, dealt round-robin over the cores
(the units of the operators with the most units first): each executor opens the savepoint
itself, reads its unit (all the states of an operator in one walk) and writes one part file per
state and unit (``part-NNNNN.parquet``, the unit's number, so that the parts read in name order
hold the rows in the one-process export's order). The driver only plans and commits: the parts
go into a temporary sibling of ``out`` renamed into place once every task is done (with
``_export.json`` written last before it), so a failed job leaves nothing that looks complete.
``out`` is a local directory the executors can write (any ``local[...]`` master; a shared file
system for a cluster).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from reference.savepoint import (
    ExportReport,
    atomic_directory,
    commit_export,
    export_datasets,
    export_groups,
    plan_export,
    write_units,
)

from ._common import run_job
from .datasets import forward_store_environment, task_job

__all__ = ["export_savepoint_spark"]


def export_savepoint_spark(savepoint: str | os.PathLike[str], out: str | os.PathLike[str], *,
                           uid: str | None = None, state: str | None = None, master: str | None = None,
                           spark: Any = None) -> ExportReport:
    """Export every keyed state of ``savepoint`` (only operator ``uid`` / state ``state`` when
    given) to ``out`` on Spark; returns what was written (``ExportReport``)."""
    source = os.fspath(savepoint)
    kind, states = plan_export(source, uid, state)
    flink = kind == "flink"
    groups = export_groups(states)
    # Dealt round-robin over the cores, the units of the operators with the most first (stable:
    # an operator's units in order); an operator of a few key groups, a single small unit, then
    # comes last, evening out the cores' shares instead of adding to one of them.
    tasks = sorted(((g, j) for g, group in enumerate(groups) for j in range(len(states[group[0]].units))),
                   key=lambda task: -len(states[groups[task[0]][0]].units))
    rows = [0] * len(states)
    with atomic_directory(out) as temp:
        for group in groups:
            chosen = [states[i] for i in group]
            for one in chosen:
                os.makedirs(os.path.join(temp, one.path))
            if not chosen[0].units:  # an empty dataset still has its (empty) part
                files = [os.path.join(temp, one.path, "part-00000.parquet") for one in chosen]
                for i, n in zip(group, write_units(source, chosen, [], files, flink), strict=True):
                    rows[i] += n
        if tasks:
            if spark is None:
                from .session import get_session

                spark = get_session(master)
            forward_store_environment(spark)

            def run(task_ids: Iterable[int]) -> Iterator[tuple[int, int]]:
                for task in task_ids:
                    g, j = tasks[task]
                    chosen = [states[i] for i in groups[g]]
                    files = [os.path.join(temp, one.path, f"part-{j:05d}.parquet") for one in chosen]
                    yield from zip(groups[g], write_units(source, chosen, [chosen[0].units[j]], files, flink),
                                   strict=True)

            for i, n in run_job(f"exporting {source}", lambda: task_job(spark, len(tasks), run, interleaved=True).collect()):
                rows[i] += n
        report = ExportReport(source, os.fspath(out), kind, export_datasets(states, rows))
        commit_export(temp, report)
    return report
