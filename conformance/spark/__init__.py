"""The Spark pipeline: savepoints as datasets and restore-migrate-verify jobs.

Importing this package does not import pyspark; a session starts on the first job.
"""

from .datasets import read_state_dataframe, write_savepoint
from .jobs import (
    MigrationReport,
    SerializerShippingError,
    SparkJobError,
    VerificationReport,
    migrate_savepoint,
    verify_savepoint,
)
from .session import (
    JavaNotFoundError,
    JavaVersionError,
    SparkSessionError,
    SparkUnavailableError,
    get_session,
    stop_session,
)

__all__ = [
    "JavaNotFoundError",
    "JavaVersionError",
    "MigrationReport",
    "SerializerShippingError",
    "SparkJobError",
    "SparkSessionError",
    "SparkUnavailableError",
    "VerificationReport",
    "get_session",
    "migrate_savepoint",
    "read_state_dataframe",
    "stop_session",
    "verify_savepoint",
    "write_savepoint",
]
