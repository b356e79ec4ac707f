"""``export_savepoint_spark``: keyed state as typed Parquet datasets, written by Spark executors.

The same export as ``reference.savepoint.export_savepoint`` (the plan, the columns, the Arrow
types and the rows are that module's: ``plan_export`` and ``write_units``), with its work units
(a Flink savepoint: runs of consecutive key groups; this project's: Parquet row groups) run as
one ``task_job``: each executor opens the savepoint itself, reads its units and writes one part
file per unit (``part-NNNNN.parquet``, the unit's number, so that the parts read in name order
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

from reference.savepoint import ExportReport, atomic_directory, commit_export, plan_export, write_units

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
    tasks = [(i, j) for i, chosen in enumerate(states) for j in range(len(chosen.units))]
    rows = [0] * len(states)
    with atomic_directory(out) as temp:
        for i, chosen in enumerate(states):
            os.makedirs(os.path.join(temp, chosen.path))
            if not chosen.units:  # an empty dataset still has its (empty) part
                rows[i] += write_units(source, chosen, [], os.path.join(temp, chosen.path, "part-00000.parquet"), flink)
        if tasks:
            if spark is None:
                from .session import get_session

                spark = get_session(master)
            forward_store_environment(spark)

            def run(task_ids: Iterable[int]) -> Iterator[tuple[int, int]]:
                for task in task_ids:
                    i, j = tasks[task]
                    chosen = states[i]
                    file = os.path.join(temp, chosen.path, f"part-{j:05d}.parquet")
                    yield i, write_units(source, chosen, [chosen.units[j]], file, flink)

            for i, n in run_job(f"exporting {source}", lambda: task_job(spark, len(tasks), run).collect()):
                rows[i] += n
        datasets = [{"path": chosen.path, "operator": chosen.operator, "state": chosen.name, "kind": chosen.kind,
                     "rows": rows[i]} for i, chosen in enumerate(states)]
        report = ExportReport(source, os.fspath(out), kind, datasets)
        commit_export(temp, report)
    return report
