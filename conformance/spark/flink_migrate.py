"""``migrate_flink_savepoint_spark``: a Flink canonical savepoint migrated to a new job's
serializers, its state files written by Spark executors.

The same migration as ``reference.backends.migrate_flink_savepoint`` (the judgement, the tasks,
every byte written are that function's and ``reference.savepoint.write_flink_savepoint``'s):
only where its tasks run differs. The driver reads the savepoint's ``_metadata`` and headers,
judges every named state (a refusal is a ``StateMigrationError`` before Spark runs anything),
checks that what goes to the executors pickles (``SerializerShippingError`` otherwise) and runs
the tasks as one ``task_job``, dealt round-robin over the cores (the writer numbers them from
the largest to the smallest): each executor opens the savepoint itself and writes its files (a
keyed-state stream rewritten, one per key-group range of a large stream, or a stream copied).
The driver then joins the pieces of split streams and writes ``_metadata``, last, through the
writer's commit protocol (a local directory renamed into place; in an object store, attempt
files and ``_metadata`` last; after a failed job, once Spark's other tasks of it stopped, the
attempt's files are removed), so a failed or killed job leaves no savepoint. The output equals
the one-process migration's byte for byte.

``out`` is a local directory the executors can write (any ``local[...]`` master; a shared file
system for a cluster) or a URI the executors reach with the driver's store environment
(``forward_store_environment``).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from reference.backends import StateDescriptor
from reference.savepoint import PIECE_BYTES, shown

from ._common import run_job
from .datasets import forward_store_environment, task_job, wait_for_tasks
from .migrate import SerializerShippingError

__all__ = ["migrate_flink_savepoint_spark"]


def _check_shippable(work: Any) -> None:
    """Pickle what goes to the executors now (the replacements' migration plans with their
    serializers), to fail with a clear message instead of a Spark stack trace."""
    from .session import require_pyspark

    require_pyspark()
    from pyspark import cloudpickle

    try:
        pickle.loads(cloudpickle.dumps(work))
    except Exception as exc:
        raise SerializerShippingError(
            f"the migration of the new serializers cannot be pickled to ship it to Spark executors "
            f"({type(exc).__name__}: {exc}); serializers must be picklable (no open files, locks, "
            "sockets or lambdas bound to one process), and their classes importable by module name"
        ) from None


def migrate_flink_savepoint_spark(savepoint: Any, out: str | os.PathLike[str],
                                  descriptors: Mapping[str, Mapping[str, StateDescriptor]], *,
                                  schema_evolution: bool = False, allow_external_files: bool = False,
                                  old_row_types: Mapping[str, Mapping[str, Any]] | None = None,
                                  operator_uids: Mapping[str, str] | None = None,
                                  master: str | None = None, spark: Any = None,
                                  piece_bytes: int = PIECE_BYTES,
                                  _fault: Callable[[int], None] | None = None) -> str:
    """Migrate the Flink savepoint ``savepoint`` to ``descriptors`` (``{operator uid or id:
    {state name: StateDescriptor}}``) on Spark, writing a new Flink savepoint at ``out`` (see
    the module docstring); returns its path. ``piece_bytes``: the input size from which a
    stream is split into tasks (``reference.savepoint.PIECE_BYTES``); ``old_row_types`` and
    ``operator_uids`` as for ``reference.backends.migrate_flink_savepoint``."""
    from reference.backends import migrate_flink_savepoint

    source = shown(os.fspath(savepoint))

    def run_tasks(tasks: int, work: Callable[[Iterable[int]], Iterator[tuple[int, Any]]]) -> list[tuple[int, Any]]:
        if not tasks:
            return []
        _check_shippable(work)
        nonlocal spark
        if spark is None:
            from .session import get_session

            spark = get_session(master)
        forward_store_environment(spark)
        # The writer numbers its tasks from the largest to the smallest: dealt round-robin.
        try:
            return run_job(f"migrating {source}", lambda: task_job(spark, tasks, work, interleaved=True).collect())
        except BaseException:
            wait_for_tasks(spark)  # the attempt's files are removed after the last one was written
            raise

    return migrate_flink_savepoint(savepoint, out, descriptors, schema_evolution=schema_evolution,
                                   allow_external_files=allow_external_files, old_row_types=old_row_types,
                                   operator_uids=operator_uids, run_tasks=run_tasks,
                                   piece_bytes=piece_bytes, _fault=_fault)
