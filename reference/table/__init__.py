"""Tables with partial updates (Samza SEP-30): the reference semantics.

A ``ReadWriteTable`` stores records V by key K and accepts partial updates U (a type distinct
from V). Remote tables do their I/O through a ``TableReadFunction`` / ``TableWriteFunction``
pair and may be rate-limited, retried and batched; the send-to-table-with-update operator
applies ``UpdateMessage``s with an optional default record under an ``UpdateContract``. Local
and caching tables refuse updates. See docs/tables.md.
"""

from .._errors import RecordNotFoundError
from ._api import DelegatingTable, ReadWriteTable, UpdateContract, UpdateMessage, UpdateOptions
from ._batching import BatchingTable, CompactBatching, CompleteBatching
from ._errors import (
    BatchWriteError,
    InvalidTableArgumentError,
    RetriesExhaustedError,
    TableError,
    TransientTableError,
    UnsupportedTableOperationError,
    UpdateFailedError,
    find_cause,
)
from ._functions import TableReadFunction, TableWriteFunction
from ._local import CachingTable, LocalTable, MapStateTable
from ._operator import SendToTableWithUpdate, send_to_table_with_update
from ._rate import RateLimitedTable, RateLimiter, TokenBucketRateLimiter
from ._remote import FunctionTable, RemoteTable
from ._retry import RetriableTable, RetryMetrics, RetryPolicy, TimerMetric

__all__ = [
    "BatchWriteError",
    "BatchingTable",
    "CachingTable",
    "CompactBatching",
    "CompleteBatching",
    "DelegatingTable",
    "FunctionTable",
    "InvalidTableArgumentError",
    "LocalTable",
    "MapStateTable",
    "RateLimitedTable",
    "RateLimiter",
    "ReadWriteTable",
    "RecordNotFoundError",
    "RemoteTable",
    "RetriableTable",
    "RetriesExhaustedError",
    "RetryMetrics",
    "RetryPolicy",
    "SendToTableWithUpdate",
    "TableError",
    "TableReadFunction",
    "TableWriteFunction",
    "TimerMetric",
    "TokenBucketRateLimiter",
    "TransientTableError",
    "UnsupportedTableOperationError",
    "UpdateContract",
    "UpdateFailedError",
    "UpdateMessage",
    "UpdateOptions",
    "find_cause",
    "send_to_table_with_update",
]
