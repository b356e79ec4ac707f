"""Savepoints as Spark datasets: read a state's rows as a DataFrame, write DataFrames back in
the savepoint layout of ``reference.backends`` (docs/savepoint-format.md).

Reading is Spark's Parquet reader over the state's data files. Writing partitions the rows by
key group for a target parallelism: output subtask ``i`` owns Flink's key-group range for
``i`` and writes exactly one file ``part-0000i.parquet``, rows sorted as the backends sort them,
with the backends' Parquet settings. So a savepoint written here restores on either backend, and
at parallelism 1 the data file is byte-identical to the one a backend writes for the same rows.

Savepoints are local paths or URIs (``s3://``, ``gs://``, ``hdfs://``: anything
``reference.savepoint.locate`` accepts). Executors open the files themselves: on a local path
through Spark's Parquet reader and plain files (local mode, or a shared mount on a cluster); at
a URI through the pyarrow file system of the URI, inside ``mapInArrow``, with the credentials of
their own environment (no Hadoop connector). Work that opens its own files (verification, the
file-to-file migration) runs as a task job (``task_job``): the executors read their Parquet
row groups through pyarrow, whatever the storage, and no row passes through the JVM. Executors write the part files themselves (locally
each to a hidden name, renamed when complete; in an object store under the attempt's name, the
object appearing complete when closed; either way a retried task replaces its own file), and the
whole savepoint is committed by ``reference.savepoint.savepoint_output``: the manifest
(``_metadata.json``, listing every file) is written last, so the output is complete or no
savepoint at all.

Without Spark (``StateOutput`` with neither a DataFrame nor a session, what the jobs do for
``master="off"``) the same executor functions run in this process, task after task: the
file-to-file migration (``_migrate_files``), and the routing (``_route``), a sort equal to
Spark's and the part writer (``_write_part``) otherwise; they write the same files.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from reference.savepoint import (
    Location,
    SavepointMetadata,
    SavepointOutput,
    StateMetadata,
    check_parallelism,
    data_file_name,
    key_group_range,
    locate,
    read_savepoint_metadata,
    savepoint_arrow_schema,
    savepoint_output,
    state_data_dir,
    state_data_files,
    state_row_groups,
    write_state_rows,
)

__all__ = [
    "SAVEPOINT_SPARK_SCHEMA",
    "spark_schema",
    "read_state_dataframe",
    "StateOutput",
    "write_states",
    "write_savepoint",
    "state_parallelism",
    "aligned_files",
    "part_number",
    "row_group_tasks",
    "read_row_group",
    "task_job",
    "read_parquet",
    "forward_store_environment",
    "wait_for_tasks",
    "ROW_GROUP_SIZE",
]

#: Rows per Parquet row group; the backends' writer uses the same (byte-identical files).
ROW_GROUP_SIZE = 64 * 1024
SAVEPOINT_SPARK_SCHEMA = (
    "key_group int not null, key binary not null, namespace binary not null, "
    "user_key binary, value binary"
)


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


def state_parallelism(savepoint: str | os.PathLike[str], state: StateMetadata) -> int:
    """The parallelism a state was written at: its number of part files (at least 1)."""
    return max(1, len(state_data_files(savepoint, state)))


# -- reading ------------------------------------------------------------------------------------
def read_state_dataframe(spark: Any, savepoint: str | os.PathLike[str], state: StateMetadata | str) -> Any:
    """The rows of one state as a DataFrame with the savepoint columns."""
    if isinstance(state, str):
        state = read_savepoint_metadata(savepoint).state(state)
    # Footers and columns are checked here, where a damaged file can still be named with its
    # state (Spark's reader would fail later, inside a job, with a Java exception).
    files = state_row_groups(savepoint, state)
    if not files:
        return spark.createDataFrame([], spark_schema())
    if locate(savepoint).remote:
        forward_store_environment(spark)
        return _read_remote(spark, row_group_tasks(files))
    return spark.read.schema(spark_schema()).parquet(*[_uri(f) for f, _ in files])


def _uri(path: str) -> str:
    return "file://" + os.path.abspath(path)


def forward_store_environment(spark: Any) -> None:
    """Give the executors' Python workers the driver's store variables
    (``reference.savepoint.store_environment``: endpoint, region, credentials), so that they
    reach the store the driver reaches; a variable the driver does not set keeps the
    executor's own value. Values travel with the tasks, never in logs or messages."""
    from reference.savepoint import store_environment

    spark.sparkContext.environment.update(store_environment())


def task_job(spark: Any, tasks: int, run: Callable[[Iterable[int]], Iterator[Any]], *,
             interleaved: bool = False) -> Any:
    """A Spark job running ``run`` over the task numbers ``0 .. tasks - 1`` in executors (what
    it yields is collected): for work whose inputs the executors open themselves. A plain RDD,
    no query planning or code generation, which a job of a few tasks would pay for. The task
    numbers are dealt out in as many Spark tasks as there are cores (consecutive numbers
    together), so that a Spark task's fixed cost is paid per core, not per file or row group;
    ``interleaved``: dealt round-robin instead (Spark task ``c`` of ``n`` runs ``c, c + n, c +
    2n, ...``), which spreads the work evenly when the numbers go from the largest task to the
    smallest."""
    cores = min(tasks, max(1, spark.sparkContext.defaultParallelism))
    if not interleaved:
        return spark.sparkContext.parallelize(range(tasks), cores).mapPartitions(run)
    dealt = [list(range(c, tasks, cores)) for c in range(cores)]

    def run_dealt(chunks: Iterable[list[int]]) -> Iterator[Any]:
        return run(number for chunk in chunks for number in chunk)

    return spark.sparkContext.parallelize(dealt, cores).mapPartitions(run_dealt)


def row_group_tasks(files: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """(file, row group) of every Parquet row group of ``files`` ((file, row groups) each, as
    ``reference.savepoint.state_row_groups`` gives them), in order: the tasks of a job whose
    executors read the files themselves, one row group each, so that a state spreads over the
    cores as Spark's reader spreads it."""
    return [(file, group) for file, groups in files for group in range(groups)]


def read_row_group(file: str, group: int) -> Iterator[Any]:
    """Executor side: the record batches of row group ``group`` of data file ``file``."""
    import pyarrow.parquet as pq

    with locate(file).guard("reading"):
        parquet = pq.ParquetFile(locate(file).open_input())
        yield from parquet.iter_batches(batch_size=ROW_GROUP_SIZE, row_groups=[group])


def _read_remote(spark: Any, tasks: list[tuple[str, int]]) -> Any:
    """The rows of data files at URIs, read by the executors through pyarrow (one task per
    Parquet row group: ``row_group_tasks``)."""
    if not tasks:
        return spark.createDataFrame([], spark_schema())
    ids = spark.range(0, len(tasks), numPartitions=len(tasks)).selectExpr("cast(id as int) as task")
    return ids.mapInArrow(_read_row_groups(tasks), SAVEPOINT_SPARK_SCHEMA)


def _read_row_groups(tasks: list[tuple[str, int]]) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """Executor side of ``_read_remote``: task ``t`` reads row group ``tasks[t][1]`` of file
    ``tasks[t][0]`` in batches."""

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        for batch in batches:
            for task in batch.column(0).to_pylist():
                yield from read_row_group(*tasks[task])

    return run


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
    #: Set when the input's part files already are the target subtasks' (file ``i`` holds only
    #: key groups of subtask ``i``, sorted): each file is then migrated by one task, file to
    #: file, with no shuffle (see ``aligned_files``); ``frame`` may then be None, with ``spark``
    #: the session to run on.
    source_files: list[str] | None = None
    spark: Any = None
    #: Without Spark (``frame`` and ``spark`` None): the input state's data files, which this
    #: process migrates file to file (``source_files`` set) or reads, transforms, routes and
    #: writes itself, through the executors' own functions, to the same files.
    input_files: list[str] | None = None

    @property
    def session(self) -> Any:
        """The Spark session the output is written with."""
        return self.spark if self.frame is None else self.frame.sparkSession


def _spark_hash_partition(value: int, partitions: int) -> int:
    """The partition Spark's hash partitioning gives an int column value: Murmur3 (x86, 32
    bit, seed 42) of the 4 little-endian bytes, as a signed int, non-negative modulo."""
    from reference.savepoint import murmur3_32

    hashed = murmur3_32((value & 0xFFFFFFFF).to_bytes(4, "little"), 42)
    signed = hashed - (1 << 32) if hashed >= 1 << 31 else hashed
    return signed % partitions


def _routing_keys(parallelism: int) -> list[int]:
    """For each subtask ``s``, an int that Spark's ``repartition(parallelism, col)`` sends to
    partition ``s``: routing rows by it makes partition index = subtask (checked on write)."""
    keys: dict[int, int] = {}
    candidate = 0
    while len(keys) < parallelism:
        keys.setdefault(_spark_hash_partition(candidate, parallelism), candidate)
        candidate += 1
    return [keys[s] for s in range(parallelism)]


def _route(
    max_parallelism: int, parallelism: int, transform: Callable[[Any], Any] | None
) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """Executor side: per input batch, (transform and) add the target subtask of each row's
    key group (Flink's assignment) and the routing key that sends it to that partition."""
    routing = _routing_keys(parallelism)

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        import pyarrow as pa
        import pyarrow.compute as pc

        schema = savepoint_arrow_schema()
        table_of_routes = pa.array(routing, pa.int32())
        for batch in batches:
            if transform is not None:
                batch = transform(batch)
            if batch.num_rows == 0:
                continue
            columns = [batch.column(i).cast(f.type) for i, f in enumerate(schema)]
            subtasks = pc.divide(pc.multiply(columns[0].cast(pa.int64()), parallelism), max_parallelism)
            subtasks = subtasks.cast(pa.int32())
            yield pa.RecordBatch.from_arrays(
                [*columns, subtasks, pc.take(table_of_routes, subtasks)],
                names=[*schema.names, "_subtask", "_route"],
            )

    return run


@contextlib.contextmanager
def _part_file(
    directory: Location, attempt: str | None, index: int, schema: Any, fault: Callable[[int], None] | None
) -> Iterator[tuple[Any, Callable[[int], None]]]:
    """The protocol of one subtask's data file: given an empty table when no row came
    (``counted(0)``), then the fault hook (tests). Locally written under a hidden name and
    renamed into place; in an object store written at its final name (the attempt's), the
    object appearing, complete, when the stream closes. Either way a retried task replaces its
    own file and a failed one leaves no part that a manifest lists."""
    import pyarrow.parquet as pq

    final = directory.child(data_file_name(index, attempt))
    partial = final if final.remote else directory.child(f".{data_file_name(index)}.{uuid.uuid4().hex}")
    sink = partial.open_output()
    try:
        with pq.ParquetWriter(sink, schema, compression="zstd", write_statistics=True) as writer:
            total = [0]

            def counted(rows: int) -> None:
                total[0] = rows

            yield writer, counted
            if total[0] == 0:
                writer.write_table(schema.empty_table())
        if fault is not None:
            fault(index)
    finally:
        if partial.remote:
            sink.close()
    if not final.remote:
        os.replace(partial.path, final.path)


def _part_report(index: int, rows: int) -> Any:
    import pyarrow as pa

    return pa.RecordBatch.from_arrays(
        [pa.array([index], pa.int32()), pa.array([rows], pa.int64())], names=["subtask", "rows"]
    )


_ROUTED_SCHEMA = SAVEPOINT_SPARK_SCHEMA + ", _subtask int, _route int"


def _write_parts(
    directory: Location, attempt: str | None, parallelism: int, fault: Callable[[int], None] | None
) -> Callable[[Iterable[Any]], Iterator[Any]]:
    """Executor side: the partition of one subtask arrives sorted by Spark; stream it into
    ``part-<subtask>.parquet`` in row groups of ROW_GROUP_SIZE rows (hidden name first,
    renamed when complete, so a retried task replaces its own file)."""

    def run(batches: Iterable[Any]) -> Iterator[Any]:
        from pyspark import TaskContext

        context = TaskContext.get()
        assert context is not None, "runs in a Spark task"
        yield _part_report(context.partitionId(), _write_part(directory, attempt, context.partitionId(), batches, fault))

    return run


def _write_part(
    directory: Location, attempt: str | None, index: int, batches: Iterable[Any], fault: Callable[[int], None] | None
) -> int:
    """Stream the sorted, routed rows of subtask ``index`` into its part file (``_write_parts``'
    body, also run without Spark); returns the rows written."""
    import pyarrow as pa

    schema = savepoint_arrow_schema()
    rows = 0
    pending: list[Any] = []
    pending_rows = 0
    with _part_file(directory, attempt, index, schema, fault) as (writer, counted):

        def flush(limit: int) -> None:
            nonlocal pending, pending_rows
            table = pa.Table.from_batches(pending, schema=schema).combine_chunks()
            while table.num_rows >= limit and table.num_rows:
                writer.write_table(table.slice(0, ROW_GROUP_SIZE), row_group_size=ROW_GROUP_SIZE)
                table = table.slice(ROW_GROUP_SIZE)
            pending = table.to_batches() if table.num_rows else []
            pending_rows = table.num_rows

        for batch in batches:
            if batch.num_rows == 0:
                continue
            subtasks = set(batch.column(5).unique().to_pylist())
            if subtasks != {index}:
                raise RuntimeError(
                    f"rows of subtasks {sorted(subtasks)} reached partition {index}: Spark's hash "
                    "partitioning differs from what this writer expects; nothing was committed"
                )
            pending.append(pa.RecordBatch.from_arrays(batch.columns[:5], schema=schema))
            pending_rows += batch.num_rows
            rows += batch.num_rows
            if pending_rows >= ROW_GROUP_SIZE:
                flush(ROW_GROUP_SIZE)
        if pending_rows:
            flush(1)
        counted(rows)
    return rows


def aligned_files(
    savepoint: str | os.PathLike[str], state: StateMetadata, max_parallelism: int, parallelism: int
) -> list[str] | None:
    """The state's part files if they already are the subtasks' of ``parallelism``: files of
    parts ``0`` .. in order, file ``i`` holding only key groups of subtask ``i`` (by the
    files' Parquet statistics). None otherwise (or when a statistic is missing)."""
    files = state_data_files(savepoint, state)
    if [part_number(f) for f in files] != list(range(parallelism)):
        return None
    for subtask, file in enumerate(files):
        owned = key_group_range(max_parallelism, parallelism, subtask)
        meta = _parquet(file).metadata
        for group in range(meta.num_row_groups):
            stats = meta.row_group(group).column(0).statistics
            if stats is None or not stats.has_min_max:
                return None
            if stats.min < owned.start or stats.max >= owned.stop:
                return None
    return files


_PART = re.compile(r"^part-(\d{5})(\..+)?\.parquet$")


def part_number(file: str) -> int | None:
    """The part number in a data file's name (``part-00003.parquet``, or with an attempt's name
    before the suffix), None for another name."""
    match = _PART.match(file.replace("\\", "/").rsplit("/", 1)[-1])
    return None if match is None else int(match[1])


def read_parquet(file: str) -> Any:
    """A data file's rows as a pyarrow Table with the savepoint columns, read in this process
    (for the jobs that run without Spark)."""
    return _parquet(file).read()


def _parquet(file: str) -> Any:
    """The ``pyarrow.parquet.ParquetFile`` of a data file (a local path or a URI)."""
    import pyarrow.parquet as pq

    where = locate(file)
    with where.guard("reading"):
        return pq.ParquetFile(where.open_input())


def _migrate_files(
    tasks: list[tuple[Location, str | None, str, Callable[[Any], Any] | None, int]],
    fault: Callable[[int], None] | None,
) -> Callable[[Iterable[int]], Iterator[tuple[int, int]]]:
    """Executor side of the aligned path: task ``t`` of ``tasks`` = (output directory, the
    attempt's name, input file, transform, subtask) reads its input file batch by batch,
    transforms it and streams it into the subtask's output file (rows stay sorted: keys never
    change)."""

    def run(task_ids: Iterable[int]) -> Iterator[tuple[int, int]]:
        import pyarrow as pa

        schema = savepoint_arrow_schema()
        for task in task_ids:
            directory, attempt, file, transform, index = tasks[task]
            rows = 0
            with _part_file(directory, attempt, index, schema, fault) as (writer, counted):
                for chunk in _parquet(file).iter_batches(batch_size=ROW_GROUP_SIZE):
                    if transform is not None:
                        chunk = transform(chunk)
                    table = pa.Table.from_batches([chunk]).cast(schema)
                    writer.write_table(table, row_group_size=ROW_GROUP_SIZE)
                    rows += chunk.num_rows
                counted(rows)
            yield task, rows

    return run


def _write_aligned(
    spark: Any, outputs: list[tuple[Location, StateOutput]], attempt: str | None, fault: Callable[[int], None] | None
) -> dict[Location, int]:
    """Write the states of the aligned path, (directory, output) each, in one Spark job with
    one task per part file, so that small states share the cores; returns rows per directory."""
    tasks = [(directory, attempt, file, output.transform, index)
             for directory, output in outputs for index, file in enumerate(output.source_files or ())]
    for directory, _ in outputs:
        if not directory.remote:
            os.makedirs(directory.path, exist_ok=True)
    migrate = _migrate_files(tasks, fault)
    if spark is None:  # without Spark: the executors' function, task after task, here
        counts = dict(migrate(range(len(tasks))))
    else:
        counts = dict(task_job(spark, len(tasks), migrate).collect())
    if sorted(counts) != list(range(len(tasks))):
        missing = sorted(set(range(len(tasks))) - set(counts))
        raise RuntimeError(f"the part files of tasks {missing} were not written; nothing was committed")
    rows = {directory: 0 for directory, _ in outputs}
    for task, (directory, _, _, _, _) in enumerate(tasks):
        rows[directory] += counts[task]
    return rows


def _write_state(
    directory: Location,
    attempt: str | None,
    output: StateOutput,
    max_parallelism: int,
    parallelism: int,
    fault: Callable[[int], None] | None = None,
) -> int:
    """Write one state's part files into ``directory``; returns the number of rows.

    One job: transform and route (mapInArrow), Spark's shuffle into one partition per target
    subtask and its sort by (key_group, key, namespace, user_key), then the writers
    (mapInArrow). Only one (subtask, rows) pair per subtask comes back to the driver."""
    if not directory.remote:
        os.makedirs(directory.path, exist_ok=True)
    if output.frame is None:
        return _write_state_here(directory, attempt, output, max_parallelism, parallelism, fault)
    routed = output.frame.mapInArrow(_route(max_parallelism, parallelism, output.transform), _ROUTED_SCHEMA)
    ordered = routed.repartition(parallelism, "_route").sortWithinPartitions(
        "key_group", "key", "namespace", "user_key"
    )
    counts = ordered.mapInArrow(_write_parts(directory, attempt, parallelism, fault), "subtask int, rows long").collect()
    written = {int(r[0]): int(r[1]) for r in counts}
    for subtask in range(parallelism):
        if subtask not in written:
            # Spark may skip the writer of a partition that received no rows: that subtask's
            # key groups are empty, and its file has zero rows.
            write_state_rows(directory, [], file=directory.child(data_file_name(subtask, attempt)))
    return sum(written.values())


def _write_state_here(
    directory: Location,
    attempt: str | None,
    output: StateOutput,
    max_parallelism: int,
    parallelism: int,
    fault: Callable[[int], None] | None = None,
) -> int:
    """``_write_state`` without Spark, for a state one process holds: the input files read
    batch by batch, transformed and routed by the executors' ``_route``, each subtask's rows
    sorted as Spark's ``sortWithinPartitions`` sorts them (binary columns byte by byte, a null
    map key first) and written by ``_write_part``: the same part files."""
    import pyarrow as pa
    import pyarrow.compute as pc

    batches = (batch for file in output.input_files or () for batch in
               _parquet(file).iter_batches(batch_size=ROW_GROUP_SIZE))
    routed = list(_route(max_parallelism, parallelism, output.transform)(batches))
    rows = 0
    if routed:
        table = pa.Table.from_batches(routed)
        columns = [table.column(c).to_pylist() for c in ("key_group", "key", "namespace", "user_key")]
        order = sorted(range(table.num_rows), key=lambda row: (
            columns[0][row], columns[1][row], columns[2][row], columns[3][row] is not None, columns[3][row] or b""))
        table = table.take(pa.array(order, pa.int64()))
        subtasks = table.column("_subtask")
    for subtask in range(parallelism):
        mine = table.filter(pc.equal(subtasks, subtask)).combine_chunks().to_batches() if routed else []
        rows += _write_part(directory, attempt, subtask, mine, fault)
    return rows


def write_states(
    directory: str | SavepointOutput,
    outputs: Iterable[StateOutput],
    max_parallelism: int,
    parallelism: int | Mapping[str, int],
    fault: Callable[[int], None] | None = None,
) -> list[StateMetadata]:
    """Write each state's data directory under ``directory`` (a local directory, or an open
    ``savepoint_output``; not committed: the caller owns the commit and the metadata); returns
    the states' metadata with ``data``, ``rows`` and ``files`` filled in, in order."""
    if not isinstance(directory, SavepointOutput):
        directory = SavepointOutput(locate(directory), locate(directory), None)
    target = directory
    outputs = list(outputs)
    planned = []
    for index, output in enumerate(outputs):
        p = parallelism if isinstance(parallelism, int) else parallelism[output.metadata.name]
        check_parallelism(max_parallelism, p)
        data = state_data_dir(index)
        planned.append((output, data, target.directory.child(data), p))
    aligned = [(path, output) for output, _, path, _ in planned if output.source_files is not None]
    aligned_rows = (_write_aligned(aligned[0][1].session, aligned, target.attempt, fault)
                    if aligned else {})
    written = []
    for output, data, path, p in planned:
        if output.source_files is not None:
            rows = aligned_rows[path]
        else:
            rows = _write_state(path, target.attempt, output, max_parallelism, p, fault)
        written.append(replace(output.metadata, data=data, rows=rows, files=target.listing(data, p)))
    return written


def wait_for_tasks(spark: Any, limit: float = 120.0) -> None:
    """After a failed job, wait (up to ``limit`` seconds) until Spark's other tasks of it have
    stopped, so that the attempt's files are removed after the last one was written.

    A job's stages leave Spark's active stages as soon as the job is aborted, while its other
    tasks still run (a Python worker is killed only seconds later, and may finish a write
    first); the executors' running tasks are what tells that they have stopped."""
    import time

    tracker = spark.sparkContext.statusTracker()
    try:
        executors = spark.sparkContext._jsc.sc().statusTracker()
    except AttributeError:  # no JVM at hand (a remote session): the stages are all there is
        executors = None

    def running() -> bool:
        if tracker.getActiveStageIds():
            return True
        return executors is not None and any(e.numRunningTasks() for e in executors.getExecutorInfos())

    deadline = time.monotonic() + limit
    while running() and time.monotonic() < deadline:
        time.sleep(0.1)


def write_savepoint(
    out: str | os.PathLike[str],
    outputs: Iterable[StateOutput],
    *,
    max_parallelism: int,
    key_serializer_snapshot: bytes,
    parallelism: int | Mapping[str, int] = 1,
    fault: Callable[[int], None] | None = None,
) -> SavepointMetadata:
    """Write a complete savepoint at ``out`` (a local path or a URI) with the commit protocol
    of ``reference.savepoint.savepoint_output``: data of every state, then the metadata (the
    manifest) last. No savepoint may be at ``out``. Returns the metadata written."""
    outputs = list(outputs)
    session = outputs[0].session if outputs else None  # None: written without Spark
    with savepoint_output(out) as target:
        if target.directory.remote and session is not None:
            forward_store_environment(session)
        try:
            states = write_states(target, outputs, max_parallelism, parallelism, fault)
        except BaseException:
            if session is not None:
                wait_for_tasks(session)
            raise
        metadata = SavepointMetadata(
            max_parallelism=max_parallelism,
            key_serializer_snapshot=key_serializer_snapshot,
            states=tuple(states),
        )
        if not target.directory.remote:
            with open(os.path.join(target.directory.path, "_SUCCESS"), "wb"):
                pass
        target.commit(metadata)
    return metadata
