"""Savepoints as Spark datasets: read a state's rows as a DataFrame, write DataFrames back in
the savepoint layout of ``reference.backends`` (docs/savepoint-format.md).

Reading is Spark's Parquet reader over the state's data files. Writing partitions the rows by
key group for a target parallelism: output subtask ``i`` owns Flink's key-group range for
``i`` and writes exactly one file ``part-0000i.parquet``, rows sorted as the backends sort them,
with the backends' Parquet settings. So a savepoint written here restores on either backend, and
at parallelism 1 the data file is byte-identical to the one a backend writes for the same rows.

Executors write the part files themselves (each to a hidden name, renamed when complete, so a
retried task replaces its own file); the whole savepoint is committed by
``reference.backends.atomic_directory``: the output appears complete, or not at all. Executors
must see the driver's file system (local mode, or a shared mount on a cluster).
"""

from __future__ import annotations

import io
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from reference.backends import (
    SavepointMetadata,
    StateMetadata,
    atomic_directory,
    data_file_name,
    read_savepoint_metadata,
    savepoint_arrow_schema,
    state_data_dir,
    state_data_files,
    write_savepoint_metadata,
)

__all__ = [
    "SAVEPOINT_SPARK_SCHEMA",
    "spark_schema",
    "key_group_range",
    "subtask_for_key_group",
    "read_state_dataframe",
    "StateOutput",
    "write_states",
    "write_savepoint",
    "state_parallelism",
]

#: Rows per Parquet row group; the backends' writer uses the same (byte-identical files).
ROW_GROUP_SIZE = 64 * 1024
SAVEPOINT_SPARK_SCHEMA = (
    "key_group int not null, key binary not null, namespace binary not null, "
    "user_key binary, value binary"
)
_PACKED_SCHEMA = "subtask int, payload binary"
_SORT_KEYS = [(name, "ascending") for name in ("key_group", "key", "namespace", "user_key")]


def spark_schema() -> Any:
    """The savepoint columns as a Spark ``StructType``."""
    from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType

    return StructType(
        [
            StructField("key_group", IntegerType(), False),
            StructField("key", BinaryType(), False),
            StructField("namespace", BinaryType(), False),
            StructField("user_key", BinaryType(), True),
            StructField("value", BinaryType(), True),
        ]
    )


# -- key groups -------------------------------------------------------------------------------
def key_group_range(max_parallelism: int, parallelism: int, subtask: int) -> range:
    """The key groups owned by ``subtask`` of ``parallelism`` (Flink's
    ``KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex``)."""
    _check_parallelism(max_parallelism, parallelism)
    if not 0 <= subtask < parallelism:
        raise ValueError(f"subtask {subtask} outside [0, {parallelism})")
    start = (subtask * max_parallelism + parallelism - 1) // parallelism
    end = ((subtask + 1) * max_parallelism - 1) // parallelism
    return range(start, end + 1)


def subtask_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    """The subtask that owns ``key_group`` (Flink's ``computeOperatorIndexForKeyGroup``)."""
    return key_group * parallelism // max_parallelism


def _check_parallelism(max_parallelism: int, parallelism: int) -> None:
    if not 1 <= parallelism <= max_parallelism:
        from reference.backends import SavepointFormatError

        raise SavepointFormatError(
            f"parallelism {parallelism} is not in [1, max_parallelism={max_parallelism}]; a "
            "savepoint can be restored at most at its max parallelism (its number of key groups)"
        )


def state_parallelism(savepoint: str | os.PathLike[str], state: StateMetadata) -> int:
    """The parallelism a state was written at: its number of part files (at least 1)."""
    return max(1, len(state_data_files(savepoint, state)))


# -- reading ------------------------------------------------------------------------------------
def read_state_dataframe(spark: Any, savepoint: str | os.PathLike[str], state: StateMetadata | str) -> Any:
    """The rows of one state as a DataFrame with the savepoint columns."""
    if isinstance(state, str):
        state = read_savepoint_metadata(savepoint).state(state)
    files = state_data_files(savepoint, state)
    if not files:
        return spark.createDataFrame([], spark_schema())
    return spark.read.schema(spark_schema()).parquet(*[_uri(f) for f in files])


def _uri(path: str) -> str:
    return "file://" + os.path.abspath(path)


# -- writing ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class StateOutput:
    """One state to write: its metadata (snapshots; ``data`` and ``rows`` are filled in) and
    its rows as a DataFrame with the savepoint columns, or a source DataFrame plus
    ``transform`` (a picklable function of a pyarrow RecordBatch with the savepoint columns to
    one with the same columns) applied on the executors before partitioning."""

    metadata: StateMetadata
    frame: Any
    transform: Callable[[Any], Any] | None = None


def _pack(
    max_parallelism: int, parallelism: int, transform: Callable[[Any], Any] | None
) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """Executor side: per input batch, (transform and) split rows by target subtask, each
    piece as one Arrow IPC blob, so the shuffle moves a few blobs instead of many rows."""

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        schema = savepoint_arrow_schema()
        for batch in batches:
            if transform is not None:
                batch = transform(batch)
            if batch.num_rows == 0:
                continue
            batch = pa.RecordBatch.from_arrays(
                [batch.column(i).cast(f.type) for i, f in enumerate(schema)], schema=schema
            )
            subtasks = pc.divide(
                pc.multiply(batch.column(0).cast(pa.int64()), parallelism), max_parallelism
            )
            table = pa.Table.from_batches([batch]).append_column("_subtask", subtasks)
            subtask_ids, payloads = [], []
            for subtask in pc.unique(subtasks).to_pylist():
                piece = table.filter(pc.equal(table.column("_subtask"), subtask)).drop_columns(["_subtask"])
                sink = io.BytesIO()
                with pa.ipc.new_stream(sink, schema) as writer:
                    writer.write_table(piece)
                subtask_ids.append(subtask)
                payloads.append(sink.getvalue())
            yield pa.RecordBatch.from_arrays(
                [pa.array(subtask_ids, pa.int32()), pa.array(payloads, pa.binary())],
                names=["subtask", "payload"],
            )

    return run


def _write_parts(
    directory: str, fault: Callable[[int], None] | None
) -> Callable[[int, Iterable[Any]], Iterator[tuple[int, int]]]:
    """Executor side: subtask ``index`` gathers its blobs, sorts the rows like the backends
    and writes ``part-<index>.parquet`` (hidden name first, renamed when complete)."""

    def run(index: int, items: Iterable[Any]) -> Iterator[tuple[int, int]]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = savepoint_arrow_schema()
        tables = []
        for _subtask, payload in items:
            with pa.ipc.open_stream(pa.py_buffer(bytes(payload))) as reader:
                tables.append(reader.read_all())
        table = pa.concat_tables(tables) if tables else schema.empty_table()
        if table.num_rows:
            table = table.sort_by(_SORT_KEYS)
        table = table.combine_chunks()
        final = os.path.join(directory, data_file_name(index))
        partial = os.path.join(directory, f".{data_file_name(index)}.{uuid.uuid4().hex}")
        pq.write_table(
            table, partial, row_group_size=ROW_GROUP_SIZE, compression="zstd", write_statistics=True
        )
        if fault is not None:
            fault(index)
        os.replace(partial, final)
        yield index, table.num_rows

    return run


def _write_state(
    directory: str,
    output: StateOutput,
    max_parallelism: int,
    parallelism: int,
    fault: Callable[[int], None] | None = None,
) -> int:
    """Write one state's part files into ``directory``; returns the number of rows."""
    os.makedirs(directory, exist_ok=True)
    packed = output.frame.mapInArrow(_pack(max_parallelism, parallelism, output.transform), _PACKED_SCHEMA)
    pairs = packed.rdd.map(lambda row: (row[0], row[1])).partitionBy(parallelism, _identity)
    # One small (subtask, rows) pair per subtask comes back: the rows themselves never do.
    counts = pairs.mapPartitionsWithIndex(_write_parts(directory, fault)).collect()
    written = sorted(index for index, _ in counts)
    if written != list(range(parallelism)):
        from reference.backends import SavepointFormatError

        raise SavepointFormatError(
            f"state {output.metadata.name!r}: subtasks {written} wrote part files, should be "
            f"0..{parallelism - 1}"
        )
    return sum(rows for _, rows in counts)


def _identity(subtask: int) -> int:
    return subtask


def write_states(
    directory: str,
    outputs: Iterable[StateOutput],
    max_parallelism: int,
    parallelism: int | Mapping[str, int],
    fault: Callable[[int], None] | None = None,
) -> list[StateMetadata]:
    """Write each state's data directory under ``directory`` (not committed: the caller owns
    the atomic commit and the metadata); returns the states' metadata with ``data`` and
    ``rows`` filled in, in order."""
    written = []
    for index, output in enumerate(outputs):
        p = parallelism if isinstance(parallelism, int) else parallelism[output.metadata.name]
        _check_parallelism(max_parallelism, p)
        data = state_data_dir(index)
        rows = _write_state(os.path.join(directory, data), output, max_parallelism, p, fault)
        written.append(replace(output.metadata, data=data, rows=rows))
    return written


def write_savepoint(
    out: str | os.PathLike[str],
    outputs: Iterable[StateOutput],
    *,
    max_parallelism: int,
    key_serializer_snapshot: bytes,
    parallelism: int | Mapping[str, int] = 1,
    fault: Callable[[int], None] | None = None,
) -> SavepointMetadata:
    """Write a complete savepoint at ``out`` atomically: data of every state, then the
    metadata, then one rename. ``out`` must not exist. Returns the metadata written."""
    outputs = list(outputs)
    with atomic_directory(out) as temp:
        states = write_states(temp, outputs, max_parallelism, parallelism, fault)
        metadata = SavepointMetadata(
            max_parallelism=max_parallelism,
            key_serializer_snapshot=key_serializer_snapshot,
            states=tuple(states),
        )
        write_savepoint_metadata(temp, metadata)
        with open(os.path.join(temp, "_SUCCESS"), "wb"):
            pass
    return metadata
