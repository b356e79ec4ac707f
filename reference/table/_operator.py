"""The send-to-table-with-update operator: applies a stream of ``(key, UpdateMessage)`` to a
table.

For each message: update the record. If that fails with ``RecordNotFoundError`` (found at any
depth of the ``__cause__``/``__context__`` chain, however the table wrapped it):

- the message has a default and the contract is ``UPDATE_WITH_DEFAULTS``: put the default (if
  that put fails, the failure is logged and the update is still tried: another writer may have
  created the record meanwhile), then update once more; if that fails too → ``UpdateFailedError``;
- the message has a default but the contract is ``UPDATE_ONLY`` → ``UpdateFailedError`` saying
  to use ``UPDATE_WITH_DEFAULTS``;
- the message has no default → ``UpdateFailedError`` naming the key.

Any other failure of the update → ``UpdateFailedError`` naming the key, with the table's error as
``__cause__``. Messages for the same key are applied one after another in stream order;
messages for different keys may be in flight together.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from ._api import ReadWriteTable, UpdateContract, UpdateMessage
from ._errors import (
    InvalidTableArgumentError,
    RecordNotFoundError,
    UnsupportedTableOperationError,
    UpdateFailedError,
    find_cause,
)

__all__ = ["SendToTableWithUpdate", "send_to_table_with_update"]

log = logging.getLogger("reference.table")
log.addHandler(logging.NullHandler())  # a library logs; the application decides where it goes


class SendToTableWithUpdate:
    """Applies update messages to ``table`` under ``contract`` (see module doc).

    Refuses, when built, a table that does not support updates (local, caching, compact
    batching).
    """

    def __init__(self, table: ReadWriteTable[Any, Any, Any],
                 contract: UpdateContract = UpdateContract.UPDATE_ONLY) -> None:
        if not isinstance(contract, UpdateContract):
            raise InvalidTableArgumentError(
                f"send-to-table-with-update: contract is {contract!r}; give "
                f"UpdateContract.UPDATE_ONLY or UpdateContract.UPDATE_WITH_DEFAULTS"
            )
        if not getattr(table, "supports_updates", True):
            raise UnsupportedTableOperationError(
                f"send-to-table-with-update: table {getattr(table, 'name', table)!r} "
                f"({type(table).__name__}) does not support partial updates; send the stream to "
                f"a remote table with an update-capable write function and complete (not compact) "
                f"batching"
            )
        self.table = table
        self.contract = contract

    def _check(self, key: Any, message: Any) -> None:
        if key is None:
            raise InvalidTableArgumentError(
                "send-to-table-with-update: a message has a None key; tables do not store null "
                "keys, give every message a key"
            )
        if not isinstance(message, UpdateMessage):
            raise InvalidTableArgumentError(
                f"send-to-table-with-update: the message for key {key!r} is "
                f"{type(message).__name__}, not an UpdateMessage; wrap it with UpdateMessage.of(update, default)"
            )

    def send_async(self, key: Any, message: UpdateMessage[Any, Any]) -> Any:
        """Apply one message (arguments are checked now); returns a coroutine."""
        self._check(key, message)
        return self._send(key, message)

    def send(self, key: Any, message: UpdateMessage[Any, Any]) -> None:
        """Apply one message, blocking (uses the table's private loop)."""
        self._blocking(self.send_async(key, message))

    def process_async(self, messages: Iterable[tuple[Any, UpdateMessage[Any, Any]]], *,
                      return_exceptions: bool = False) -> Any:
        """Apply a stream: per key in order, keys concurrently. Returns a coroutine giving a list
        aligned with ``messages`` (``None`` or the message's error when ``return_exceptions``);
        otherwise the first failed message's error (in stream order) is raised once every
        message has been tried."""
        stream = list(messages)
        for key, message in stream:
            self._check(key, message)
        return self._process(stream, return_exceptions)

    def process(self, messages: Iterable[tuple[Any, UpdateMessage[Any, Any]]], *,
                return_exceptions: bool = False) -> list[BaseException | None]:
        return self._blocking(self.process_async(messages, return_exceptions=return_exceptions))

    def _blocking(self, coroutine: Any) -> Any:
        run = getattr(self.table, "_run", None)  # a ReadWriteTable's own loop keeps batches bound to it
        return run(coroutine) if run is not None else asyncio.run(coroutine)

    async def _process(self, stream: list[tuple[Any, UpdateMessage[Any, Any]]],
                       return_exceptions: bool) -> list[BaseException | None]:
        outcomes: list[BaseException | None] = [None] * len(stream)
        by_key: dict[Any, list[int]] = {}
        for i, (key, _) in enumerate(stream):
            by_key.setdefault(key, []).append(i)

        async def one_key(positions: list[int]) -> None:
            for i in positions:
                try:
                    await self._send(*stream[i])
                except Exception as exc:
                    outcomes[i] = exc

        await asyncio.gather(*(one_key(p) for p in by_key.values()))
        if not return_exceptions:
            for outcome in outcomes:
                if outcome is not None:
                    raise outcome
        return outcomes

    async def _send(self, key: Any, message: UpdateMessage[Any, Any]) -> None:
        name = getattr(self.table, "name", type(self.table).__name__)
        try:
            await self.table.update_async(key, message.update)
            return
        except UnsupportedTableOperationError:
            raise
        except Exception as exc:
            if find_cause(exc, RecordNotFoundError) is None:
                raise UpdateFailedError(
                    f"table {name!r}: update of key {key!r} failed ({type(exc).__name__}: {exc}); "
                    f"the record is unchanged unless the store says otherwise, see the cause",
                    key,
                ) from exc
            if not message.has_default:
                raise UpdateFailedError(
                    f"table {name!r}: update of key {key!r} found no record and the message has no "
                    f"default; send UpdateMessage.of(update, default) with "
                    f"UpdateContract.UPDATE_WITH_DEFAULTS to create missing records",
                    key,
                ) from exc
            if self.contract is UpdateContract.UPDATE_ONLY:
                raise UpdateFailedError(
                    f"table {name!r}: update of key {key!r} found no record; the message has a "
                    f"default but the contract is UPDATE_ONLY, which never writes defaults; use "
                    f"UpdateContract.UPDATE_WITH_DEFAULTS",
                    key,
                ) from exc
        try:
            await self.table.put_async(key, message.default)
        except Exception as put_error:
            # Samza's behaviour, kept: the update is still tried, it may find a record written
            # by someone else meanwhile; if not, its own error is what the caller sees.
            log.warning("table %r: put of the default for key %r failed (%s: %s); trying the "
                        "update anyway", name, key, type(put_error).__name__, put_error)
        try:
            await self.table.update_async(key, message.update)
        except Exception as exc:
            raise UpdateFailedError(
                f"table {name!r}: update of key {key!r} failed after putting its default "
                f"({type(exc).__name__}: {exc}); check the table's write function",
                key,
            ) from exc


def send_to_table_with_update(table: ReadWriteTable[Any, Any, Any],
                              messages: Iterable[tuple[Any, UpdateMessage[Any, Any]]],
                              contract: UpdateContract = UpdateContract.UPDATE_ONLY) -> None:
    """Apply a stream of ``(key, UpdateMessage)`` to ``table`` (blocking); raises the first
    failed message's error after every message was tried."""
    SendToTableWithUpdate(table, contract).process(messages)
