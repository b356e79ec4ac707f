"""Errors of the table API, all inside the project's one hierarchy (``reference.StateError``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._errors import RecordNotFoundError, StateError

__all__ = [
    "TableError",
    "RecordNotFoundError",
    "InvalidTableArgumentError",
    "UnsupportedTableOperationError",
    "UpdateFailedError",
    "BatchWriteError",
    "TransientTableError",
    "RetriesExhaustedError",
    "find_cause",
]


class TableError(StateError):
    """A table operation failed; the message names the table, the key and what to do."""


class InvalidTableArgumentError(TableError, ValueError):
    """A null key, null update or malformed entry was given; raised when the method is called,
    before anything reaches the store."""


class UnsupportedTableOperationError(TableError, NotImplementedError):
    """The table cannot do this operation at all (e.g. updates on a local or caching table,
    updates through compact batching, writes to a read-only table); raised when the method is
    called."""


class UpdateFailedError(TableError):
    """The send-to-table-with-update operator could not apply a message; ``key`` is the record's
    key and ``__cause__`` is the table's error."""

    def __init__(self, message: str, key: Any = None) -> None:
        super().__init__(message)
        self.key = key


class BatchWriteError(TableError):
    """Some entries of a bulk write failed; the others were applied.

    ``failures`` maps the position of each failed entry in the bulk call's list to its error.
    """

    def __init__(self, message: str, failures: Mapping[int, BaseException]) -> None:
        super().__init__(message)
        self.failures: dict[int, BaseException] = dict(sorted(failures.items()))

    @classmethod
    def of(cls, what: str, failures: Mapping[int, BaseException], total: int) -> BatchWriteError:
        """A ``BatchWriteError`` whose message lists the failed positions and their errors."""
        shown = "; ".join(f"entry {i}: {type(e).__name__}: {e}" for i, e in sorted(failures.items())[:5])
        more = "" if len(failures) <= 5 else f"; and {len(failures) - 5} more"
        return cls(
            f"{what}: {len(failures)} of {total} entries failed ({shown}{more}); the other entries "
            f"were applied, retry only the failed ones",
            failures,
        )


class TransientTableError(TableError):
    """Raise this (or a subclass) from a read/write function for a failure worth retrying:
    the default retry policy retries exactly these."""


class RetriesExhaustedError(TableError):
    """A retriable failure kept happening until the retry policy gave up; ``__cause__`` is the
    last failure."""


def find_cause(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    """The first exception of type ``kind`` in ``exc``'s ``__cause__``/``__context__`` chain
    (``exc`` itself included), at any depth; ``None`` if there is none.

    Both links are followed (explicit ``raise ... from`` and implicit chaining) and cycles are
    cut, so a wrapped ``RecordNotFoundError`` is found however deep the wrappers go.
    """
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop(0)
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kind):
            return current
        pending.append(current.__cause__)
        pending.append(current.__context__)
    return None
