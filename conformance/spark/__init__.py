"""The Spark engine: savepoints as datasets, and restore-migrate-verify as Spark jobs (Flink's
State Processor API, offline, at any scale). Importing this package does not import pyspark;
a session starts on the first job that needs one.

Jobs (each takes ``spark=`` a session, else starts or reuses this process's session for
``master=``, default ``local[*]``; ``master="off"`` runs the job without Spark, its executor
side called in this process, with the same result: for savepoints one process handles, where
starting Spark costs more than the job):

``migrate_savepoint(savepoint, serializers, out, *, mode, parallelism, key_serializer, config)``
    Restore ``savepoint`` with new serializers (state name -> descriptor, or a list of
    descriptors), migrate what needs it and write a new savepoint at ``out``, committed
    atomically. Every state is judged first, with the backends' own rules: a refusal raises
    ``StateMigrationError`` before anything is written; a serializer that cannot be pickled
    raises ``SerializerShippingError``. Returns a ``MigrationReport`` (a
    ``StateMigrationSummary`` per state). ``mode`` is one of ``MODES``;
    ``normalize_descriptors`` gives the state name -> descriptor mapping any accepted form of
    ``serializers`` stands for (or raises saying what is wrong). Module ``migrate``.
``plan_migration(savepoint, serializers, *, config, key_serializer)``
    The same judgement without Spark: per state a ``StateMigrationPlan`` (verdict and the
    bytes-mode migration plan in words). Module ``migrate``.
``verify_savepoint(savepoint, *, expect, sample, allow_pickle, judges)``
    Decode every entry with the savepoint's own serializers (nothing left over, every key in
    its key group), optionally judge each decoded entry, and with ``expect`` compare with
    another savepoint. Returns a ``VerificationReport`` (a ``StateVerification`` per state);
    never raises for what it finds. ``batch_verifier`` is its executor side, on Arrow batches
    (``BatchSummary`` per batch, ``EntryJudge`` the judge's type). Module ``verify``.
``compare_savepoints(savepoint, expect, *, sample, allow_pickle)``
    Same states, snapshots and byte-identical entries, whatever the files: a
    ``ComparisonReport`` (a ``StateComparison`` per state in both). ``identical_savepoints``
    says whether two savepoints are byte for byte the same, on the driver, without Spark.
    Module ``compare``.
``export_savepoint_spark(savepoint, out, *, uid, state)``
    Every keyed state of a Flink savepoint (or this project's) as a Parquet dataset typed from
    its serializer snapshots, executors exporting key-group ranges in parallel: the export of
    ``reference.savepoint.export_savepoint``, committed the same way. Module ``export``.
``migrate_flink_savepoint_spark(savepoint, out, descriptors, *, schema_evolution)``
    A Flink canonical savepoint migrated to a new job's serializers (``{operator uid: {state
    name: StateDescriptor}}``), executors rewriting and copying its state files in parallel:
    ``reference.backends.migrate_flink_savepoint``'s tasks run on Spark, the same output byte
    for byte, committed the same way (a local directory or a URI). Module ``flink_migrate``.
``refuse_unpickling(savepoint, allow_pickle)``
    Raise ``PickleNotAllowedError`` for a state only PickleSerializer reads, unless allowed:
    what verification and comparison do first, available to callers that check early.

Datasets (module ``datasets``): ``read_state_dataframe`` (a state's rows as a DataFrame with
the savepoint columns), ``write_savepoint`` (``StateOutput`` per state: DataFrames written in
the savepoint layout of ``reference.backends``, partitioned by key group, committed last).

Sessions (module ``session``): ``get_session``, ``stop_session``, ``start_in_background``
(start the JVM while other work runs), ``warm_workers`` (start a session's Python workers with
their imports before the first job), ``running``, ``java_version``, ``scratch_directory`` and
``SCRATCH_PARENT`` (where a session's temporary files go), ``HARNESS_CONFIG`` (the
harness's short-lived-JVM options).

Errors are ``reference.StateError``: ``SparkJobError`` (a job failed in Spark or an executor;
the message is the executor's), ``SerializerShippingError``, ``SparkSessionError`` and its
kinds ``SparkUnavailableError``, ``JavaNotFoundError``, ``JavaVersionError``; and the reference's
own (``StateMigrationError``, ``SavepointFormatError``, ``PickleNotAllowedError``).

Savepoints are local paths or URIs (``s3://``, ``gs://``, ``hdfs://``: anything
``reference.savepoint.locate`` accepts); executors open the files themselves. The modules'
docstrings say how each job runs. The names above (``__all__``) are the engine's API; the
modules' other names, and the private module ``_common`` the jobs share, are not.
"""

from ._common import MODES, SparkJobError, normalize_descriptors, refuse_unpickling
from .compare import ComparisonReport, StateComparison, compare_savepoints, identical_savepoints
from .datasets import StateOutput, read_state_dataframe, write_savepoint
from .export import export_savepoint_spark
from .flink_migrate import migrate_flink_savepoint_spark
from .migrate import (
    MigrationReport,
    SerializerShippingError,
    StateMigrationPlan,
    StateMigrationSummary,
    migrate_savepoint,
    plan_migration,
)
from .session import (
    HARNESS_CONFIG,
    SCRATCH_PARENT,
    JavaNotFoundError,
    JavaVersionError,
    SparkSessionError,
    SparkUnavailableError,
    get_session,
    java_version,
    require_pyspark,
    running,
    scratch_directory,
    start_in_background,
    stop_session,
    warm_workers,
)
from .verify import (
    BatchSummary,
    EntryJudge,
    StateVerification,
    VerificationReport,
    batch_verifier,
    verify_savepoint,
)

__all__ = [
    "MODES",
    "export_savepoint_spark",
    "BatchSummary",
    "ComparisonReport",
    "EntryJudge",
    "HARNESS_CONFIG",
    "JavaNotFoundError",
    "JavaVersionError",
    "MigrationReport",
    "SCRATCH_PARENT",
    "SerializerShippingError",
    "SparkJobError",
    "SparkSessionError",
    "SparkUnavailableError",
    "require_pyspark",
    "StateComparison",
    "StateMigrationPlan",
    "StateMigrationSummary",
    "StateOutput",
    "StateVerification",
    "VerificationReport",
    "batch_verifier",
    "compare_savepoints",
    "get_session",
    "warm_workers",
    "identical_savepoints",
    "java_version",
    "migrate_savepoint",
    "migrate_flink_savepoint_spark",
    "normalize_descriptors",
    "plan_migration",
    "read_state_dataframe",
    "refuse_unpickling",
    "running",
    "scratch_directory",
    "start_in_background",
    "stop_session",
    "verify_savepoint",
    "write_savepoint",
]
