"""A zoo of broken table implementations: the certification must catch each one, with the
check that owns the broken behaviour, and a message saying what went wrong.

Each entry is a realistic bug (most of them are hazards Samza's own code has or had).
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from hypothesis import strategies as st
from test_table_certify import CreditsPerEntry

from conformance import TableSubject, certify_table
from reference.table import (
    BatchingTable,
    BatchWriteError,
    CachingTable,
    CompleteBatching,
    DelegatingTable,
    LocalTable,
    ReadWriteTable,
    RecordNotFoundError,
    RemoteTable,
    RetriableTable,
    RetryPolicy,
    SendToTableWithUpdate,
    TableError,
    TableWriteFunction,
    TransientTableError,
    UpdateContract,
    find_cause,
)
from reference.table._batching import _ORDER

KEYS = st.integers(0, 3)
VALUES = st.integers(-5, 5)
UPDATES = st.integers(-3, 3)


def add(value: int, update: int) -> int:
    return value + update


def subject(factory, **kwargs) -> TableSubject:
    return TableSubject(factory, KEYS, VALUES, UPDATES, add, **kwargs)


# ---- the zoo ----------------------------------------------------------------------------
class StaleReadModifyWrite(ReadWriteTable):
    """Implements update as read-modify-write over a read cache that writes do not invalidate:
    the update is applied to a stale record."""

    def __init__(self, inner: ReadWriteTable) -> None:
        super().__init__("stale")
        self.inner = inner
        self.seen: dict = {}

    async def _get(self, key):
        value = await self.inner.get_async(key)
        self.seen[key] = value
        return value

    async def _put(self, key, value):
        await self.inner.put_async(key, value)

    async def _delete(self, key):
        await self.inner.delete_async(key)

    async def _update(self, key, update):
        base = self.seen[key] if key in self.seen else await self.inner.get_async(key)
        if base is None:
            raise RecordNotFoundError(f"no record for {key!r}")
        await self.inner.put_async(key, add(base, update))


class DefaultPutTwice(SendToTableWithUpdate):
    """Puts the default twice on a first-time update ("make sure it is there")."""

    async def _send(self, key, message):
        try:
            await self.table.update_async(key, message.update)
            return
        except Exception as exc:
            if find_cause(exc, RecordNotFoundError) is None or not message.has_default \
                    or self.contract is UpdateContract.UPDATE_ONLY:
                return await super()._send(key, message)
        await self.table.put_async(key, message.default)
        await self.table.put_async(key, message.default)
        await self.table.update_async(key, message.update)


class UpdateAllAsDict(RemoteTable):
    """``update_all`` builds a dict of its entries: two updates of one key collapse into one."""

    async def _update_all(self, entries):
        await self.table.update_all_async(list(dict(entries).items()))


class SilentMissing(RemoteTable):
    """Swallows ``RecordNotFoundError``: an update of a missing record silently does nothing."""

    async def _update(self, key, update):
        try:
            await self.table.update_async(key, update)
        except RecordNotFoundError:
            pass


class TypeGroupedBatching(BatchingTable):
    """Samza's complete batch: all puts, then all updates, then all deletes of a batch, which
    reorders operations on the same key."""

    async def _run_batch(self, batch, previous, done):
        # group by type only, ignoring per-key order
        import asyncio

        try:
            if previous is not None:
                await asyncio.shield(previous)
            for kind in _ORDER:
                ops = [op for op in batch if op.kind == kind]
                if ops:
                    await self._send(kind, ops)
        finally:
            if not done.done():
                done.set_result(None)
            if self._tail is done:
                self._tail = None


class FailWholeBatch(BatchingTable):
    """When one entry of a bulk call fails, fails every operation of the call with that error."""

    async def _send(self, kind, ops):
        from reference.table import BatchWriteError

        try:
            if kind == "put":
                await self.table.put_all_async([(op.key, op.value) for op in ops])
            elif kind == "update":
                await self.table.update_all_async([(op.key, op.value) for op in ops])
            else:
                await self.table.delete_all_async([op.key for op in ops])
        except BatchWriteError as exc:
            first = next(iter(exc.failures.values()))
            for op in ops:
                op.settle(first)
        except Exception as exc:
            for op in ops:
                op.settle(exc)
        else:
            for op in ops:
                op.settle(None)


class SuccessAfterRetriesCounted(RetriableTable):
    """Counts an operation that succeeded after retries as a success too."""

    def _end(self, metrics, retries, started, failed):
        super()._end(metrics, retries, started, failed)
        if retries and not failed:
            metrics.success_count += 1


class WrapsErrors(RemoteTable):
    """A correct table that raises its own error for every store error (the store's error stays
    reachable as ``__context__``)."""

    async def _update(self, key, update):
        try:
            await self.table.update_async(key, update)
        except Exception:
            raise TableError(f"my-store: update of {key!r} failed")  # noqa: B904


class OneLevelCause(SendToTableWithUpdate):
    """Samza's check: looks for ``RecordNotFoundError`` only as the error's direct cause."""

    async def _send(self, key, message):
        try:
            await self.table.update_async(key, message.update)
            return
        except Exception as exc:
            if not isinstance(exc.__cause__, RecordNotFoundError):
                from reference.table import UpdateFailedError

                raise UpdateFailedError(f"update of {key!r} failed") from exc
            if not message.has_default or self.contract is UpdateContract.UPDATE_ONLY:
                return await super()._send(key, message)
        await self.table.put_async(key, message.default)
        await self.table.update_async(key, message.update)


class NoNullCheck(RemoteTable):
    """Skips the argument checks: a None key goes all the way to the store."""

    def put_async(self, key, value):
        return self._put(key, value)


class RefusesLate(LocalTable):
    """Refuses updates only when the coroutine runs, not when the method is called."""

    supports_updates = True

    def __init__(self):
        super().__init__()
        self.supports_updates = True

    async def _update(self, key, update):
        from reference.table import UnsupportedTableOperationError

        raise UnsupportedTableOperationError("local tables take no updates")

    async def _update_all(self, entries):
        await self._update(None, None)


class NeverFlushed(BatchingTable):
    """Forgets to arm the batch timer: a lone write waits forever for its batch."""

    def _submit(self, kind, key, value):
        future = super()._submit(kind, key, value)
        self._cancel_timer()
        return future


class AnyFailureIsMissing(SendToTableWithUpdate):
    """Treats every failed update as a missing record: a store error on the first update puts
    the default over the existing record (visits 5 become 1)."""

    async def _send(self, key, message):
        try:
            await self.table.update_async(key, message.update)
            return
        except Exception:
            if not message.has_default or self.contract is UpdateContract.UPDATE_ONLY:
                return await super()._send(key, message)
        await self.table.put_async(key, message.default)
        await self.table.update_async(key, message.update)


class CreditsOnSingleCallsOnly(CreditsPerEntry):
    """A rate-limiting decorator written for the single operations only: DelegatingTable hands
    bulk calls to the inner table as they are, so ``put_all``/``delete_all``/``update_all`` take
    no credits."""

    _put_all = DelegatingTable._put_all
    _delete_all = DelegatingTable._delete_all
    _update_all = DelegatingTable._update_all


class LateWriteCaches(CachingTable):
    """A caching table that caches every write's value when the write completes: a write that
    completes late (a bulk put batched with a later put of its key) caches its out-of-date
    value (the reference caching table did this before versioning its writes too)."""

    def _invalidate(self, key):
        self.cache.pop(key, None)
        self._versions[key] = self._versions.get(key, 0) + 1

    async def _put(self, key, value):
        self._invalidate(key)
        await self.table.put_async(key, value)
        self._invalidate(key)
        self.cache[key] = value

    async def _put_all(self, entries):
        for key, _ in entries:
            self._invalidate(key)
        await self.table.put_all_async(entries)
        for key, value in entries:
            self._invalidate(key)
            self.cache[key] = value

    async def _delete(self, key):
        self._invalidate(key)
        await self.table.delete_async(key)
        self._invalidate(key)

    async def _delete_all(self, keys):
        for key in keys:
            self._invalidate(key)
        await self.table.delete_all_async(keys)
        for key in keys:
            self._invalidate(key)


class OwnStoreReadModifyWrite(ReadWriteTable):
    """A table over its own key-value client, which has no update primitive: update reads the
    record, applies the update and writes it back, without a lock, so a write landing between
    its read and its write is overwritten (correct one operation at a time)."""

    def __init__(self):
        super().__init__("read-modify-write")
        self.data = {}

    async def _roundtrip(self):
        await asyncio.sleep(0)

    async def _get(self, key):
        await self._roundtrip()
        return self.data.get(key)

    async def _put(self, key, value):
        await self._roundtrip()
        self.data[key] = value

    async def _delete(self, key):
        await self._roundtrip()
        self.data.pop(key, None)

    async def _update(self, key, update):
        record = await self._get(key)
        if record is None:
            raise RecordNotFoundError(f"no record for {key!r}")
        await self._put(key, add(record, update))


class UpdatingCache(CachingTable):
    """A cache subclass that takes updates (an update uncaches its key) and caches what a read
    fetched without checking that no write of the key was issued meanwhile: a read that
    started before a concurrent update completed re-caches the old record, served from then on."""

    def __init__(self, table):
        super().__init__(table)
        self.supports_updates = True

    async def _get(self, key):
        if key in self.cache:
            return self.cache[key]
        value = await self.table.get_async(key)
        if value is not None:
            self.cache[key] = value
        return value

    async def _update(self, key, update):
        self._issue(key)
        await self.table.update_async(key, update)

    async def _update_all(self, entries):
        for key, _ in entries:
            self._issue(key)
        await self.table.update_all_async(entries)


class ReadThroughDecorator(DelegatingTable):
    """A read cache written as a decorator (``keeps_order`` left False, as a decorator has it):
    a write uncaches its key when issued and again when it completes, and a read caches what
    the store answered. A store reads when the request arrives and its answer travels back:
    when a write lands and completes meanwhile, the read caches the record as it was before
    the write, and serves it from then on."""

    def __init__(self, table):
        super().__init__(table, name="read-through")
        self.records = {}

    async def _get(self, key):
        if key in self.records:
            return self.records[key]
        value = await self.table.get_async(key)
        if value is not None:
            self.records[key] = value
        return value

    async def _get_all(self, keys):
        found = {key: self.records[key] for key in keys if key in self.records}
        fetched = await self.table.get_all_async([key for key in keys if key not in found])
        self.records.update(fetched)
        return {**found, **fetched}

    async def _written(self, keys, call):
        for key in keys:
            self.records.pop(key, None)
        try:
            await call
        finally:
            for key in keys:
                self.records.pop(key, None)

    async def _put(self, key, value):
        await self._written([key], self.table.put_async(key, value))

    async def _put_all(self, entries):
        await self._written([key for key, _ in entries], self.table.put_all_async(entries))

    async def _delete(self, key):
        await self._written([key], self.table.delete_async(key))

    async def _delete_all(self, keys):
        await self._written(keys, self.table.delete_all_async(keys))

    async def _update(self, key, update):
        await self._written([key], self.table.update_async(key, update))

    async def _update_all(self, entries):
        await self._written([key for key, _ in entries], self.table.update_all_async(entries))


class RowByRowWriter(TableWriteFunction):
    """A user's write function over a client with single-record calls only."""

    def __init__(self, client):
        self.client = client

    async def put_async(self, key, value):
        await self.client.put_async(key, value)

    async def delete_async(self, key):
        await self.client.delete_async(key)

    async def update_async(self, key, update):
        await self.client.update_async(key, update)


class RetriesTheWholeBatch(RowByRowWriter):
    """Sends a bulk update row by row and turns one row's timeout into a retriable error for the
    whole batch: the table's retry re-applies the rows that had landed (an update applied twice)."""

    async def update_all_async(self, entries):
        failures = {}
        for i, (key, update) in enumerate(entries):
            try:
                await self.client.update_async(key, update)
            except TransientTableError as exc:
                raise TransientTableError(f"update_all: the row of key {key!r} timed out; retry the batch") from exc
            except Exception as exc:
                failures[i] = exc
        if failures:
            raise BatchWriteError.of("update_all", failures, len(entries))


class SkipsTimedOutRows(RowByRowWriter):
    """Sends a bulk update row by row and, when a row times out, logs it and goes on ("the next
    batch carries it", which never happens): the update is acknowledged and lost."""

    async def update_all_async(self, entries):
        failures = {}
        for i, (key, update) in enumerate(entries):
            try:
                await self.client.update_async(key, update)
            except TransientTableError:
                logging.getLogger(__name__).warning("update of %r timed out; left for the next batch", key)
            except Exception as exc:
                failures[i] = exc
        if failures:
            raise BatchWriteError.of("update_all", failures, len(entries))


class AcksBeforeTheAnswers(RowByRowWriter):
    """Sends the rows of a bulk put all at once and acknowledges the batch once they are sent,
    without reading the store's answers: a row the store refused permanently is reported written."""

    async def put_all_async(self, entries):
        await asyncio.gather(*(self.client.put_async(k, v) for k, v in entries), return_exceptions=True)


def _batched(batching_cls):
    def factory(read, write):
        return batching_cls(RemoteTable(read, write), CompleteBatching(4, 0.0))
    return factory


def _retried(read, write):
    inner = RemoteTable(read, write)
    return SuccessAfterRetriesCounted(inner, None, RetryPolicy(max_retries=3), write_function=write)


ZOO = {
    "stale_update": (subject(lambda r, w: StaleReadModifyWrite(RemoteTable(r, w))), "table.sequential"),
    "stale_update_own_store": (subject(lambda: StaleReadModifyWrite(LocalTable())), "table.sequential"),
    "default_put_twice": (subject(lambda r, w: RemoteTable(r, w), operator_factory=DefaultPutTwice),
                          "table.sequential"),
    "update_all_drops_entries": (subject(lambda r, w: UpdateAllAsDict(r, w)), "table.sequential"),
    "missing_record_not_signalled": (subject(lambda r, w: SilentMissing(r, w)), "table.sequential"),
    "batch_reorders_same_key": (subject(_batched(TypeGroupedBatching)), "table.concurrent"),
    "batch_fails_every_operation": (subject(_batched(FailWholeBatch)), "table.sequential"),
    "metrics_miscounted": (subject(_retried, write_retries=3,
                                   write_metrics=lambda t: t.write_metrics), "table.faults"),
    "null_key_reaches_the_store": (subject(lambda r, w: NoNullCheck(r, w)), "table.nulls"),
    "refuses_updates_only_when_awaited": (subject(lambda: RefusesLate()), "table.sequential"),
    "batch_never_flushed": (subject(_batched(NeverFlushed), operation_timeout=0.2), "table.sequential"),
    "cause_checked_one_level_deep": (subject(lambda r, w: WrapsErrors(r, w), operator_factory=OneLevelCause),
                                     "table.sequential"),
    "failed_update_puts_the_default": (subject(lambda r, w: RemoteTable(r, w), operator_factory=AnyFailureIsMissing),
                                       "table.faults"),
    "bulk_writes_take_no_credits": (
        subject(lambda r, w, limiter: CreditsOnSingleCallsOnly(RemoteTable(r, w), limiter),
                factory_args=("read_function", "write_function", "write_rate_limiter")),
        "table.credits"),
    "late_write_caches_an_old_value": (
        subject(lambda r, w: LateWriteCaches(RemoteTable(r, w, batching=CompleteBatching(3, 0.0)))),
        "table.concurrent"),
    "read_modify_write_without_a_lock": (subject(lambda: OwnStoreReadModifyWrite()), "table.linearizable"),
    "cache_recaches_a_read_older_than_an_update": (
        subject(lambda r, w: UpdatingCache(RemoteTable(r, w))), "table.linearizable"),
    "decorator_cache_keeps_a_read_answered_after_an_update": (
        subject(lambda r, w: ReadThroughDecorator(RemoteTable(r, w))), "table.linearizable"),
    "retry_re_applies_the_rows_that_landed": (
        subject(lambda r, w: RemoteTable(r, w, write_retry_policy=RetryPolicy(3)), write_retries=3,
                write_function=RetriesTheWholeBatch), "table.exactly_once"),
    "timed_out_row_of_a_bulk_update_lost": (
        subject(lambda r, w: RemoteTable(r, w, write_retry_policy=RetryPolicy(3)), write_retries=3,
                write_function=SkipsTimedOutRows), "table.exactly_once"),
    "bulk_put_acknowledged_before_the_store_answers": (
        subject(lambda r, w: RemoteTable(r, w), write_function=AcksBeforeTheAnswers), "table.exactly_once"),
}

#: the entries whose check runs late in the family: every check before it must pass (the
#: entry is caught first by the check meant for it)
CAUGHT_FIRST = ("read_modify_write_without_a_lock", "cache_recaches_a_read_older_than_an_update",
                "decorator_cache_keeps_a_read_answered_after_an_update",
                "retry_re_applies_the_rows_that_landed", "timed_out_row_of_a_bulk_update_lost",
                "bulk_put_acknowledged_before_the_store_answers")


def _verdict(name: str, result) -> None:
    assert "got " in result.message and "should" in result.message, (
        f"got message {result.message!r}, should say what happened and what was expected [zoo {name}]"
    )
    assert result.example, f"got no example, should show what the table was doing [zoo {name}]"
    if result.id not in ("table.nulls", "table.linearizable", "table.exactly_once"):
        assert "state = TableMachine()" in result.example, (
            f"got example {result.example!r}, should show hypothesis' shrunk steps [zoo {name}]"
        )


@pytest.mark.parametrize("name", sorted(ZOO))
def test_table_zoo_is_caught(name: str) -> None:
    """The owning check fails (run after the checks every table must pass first)."""
    zoo_subject, check_id = ZOO[name]
    checks = tuple(dict.fromkeys(("table.subject", "table.nulls", check_id)))
    results = {r.id: r for r in certify_table(zoo_subject, checks=checks)}
    failed = [r.id for r in results.values() if r.status == "failed"]
    assert failed == [check_id], (
        f"got failures {[(i, results[i].message) for i in failed]}, should be only {check_id} [zoo {name}]"
    )
    _verdict(name, results[check_id])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ZOO))
def test_table_zoo_is_caught_by_the_whole_family(name: str) -> None:
    zoo_subject, check_id = ZOO[name]
    results = {r.id: r for r in certify_table(zoo_subject)}
    failed = [r.id for r in results.values() if r.status == "failed"]
    assert failed, f"got every check passing for zoo table {name!r}, should fail {check_id}"
    owner = results[check_id]
    assert owner.status == "failed" or (owner.status == "skipped" and "prerequisite" in owner.message), (
        f"got {check_id} {owner.status} ({owner.message}), should fail or be skipped after an earlier "
        f"failure [zoo {name}]"
    )
    for check in failed:
        _verdict(name, results[check])


def test_table_zoo_wrapping_errors_is_fine_with_the_reference_operator() -> None:
    """The table of the last zoo entry is correct: only the one-level cause check was broken."""
    results = certify_table(subject(lambda r, w: WrapsErrors(r, w)), max_examples=15, steps=15)
    failed = [str(r) for r in results if r.status == "failed"]
    assert not failed, f"got failures {failed}, should certify a table that wraps its errors"


def test_table_zoo_read_through_decorator_over_a_batched_table_is_linearizable() -> None:
    """The decorator cache of the zoo over a batching table is correct: the batching table runs
    a read in its turn, so no write lands between the store's value and its answer, and the
    cache is never left with a record older than a completed write (no false alarm)."""
    subject_ = subject(lambda r, w: ReadThroughDecorator(RemoteTable(r, w, batching=CompleteBatching(4, 0.0))))
    results = certify_table(subject_, checks=("table.subject", "table.sequential", "table.linearizable"))
    failed = [str(r) for r in results if r.failed]
    assert not failed and results[-1].status == "passed", (
        f"got {[(r.id, r.status) for r in results]} {failed}, should certify the read cache over a batching table"
    )


#: for the CLI tests
MISSING_NOT_SIGNALLED = ZOO["missing_record_not_signalled"][0]


@pytest.mark.parametrize("name", CAUGHT_FIRST)
def test_table_zoo_is_caught_first_by_the_check_meant_for_it(name: str) -> None:
    """The whole family at the default budget: every check before the owner passes (or does
    not apply), the owner fails, so the entry is caught first by the check meant for it."""
    zoo_subject, check_id = ZOO[name]
    results = certify_table(zoo_subject)
    failed = [r.id for r in results if r.status == "failed"]
    assert failed == [check_id], (
        f"got failures {[(r.id, r.message) for r in results if r.failed]}, should be only {check_id} [zoo {name}]"
    )
    before = [r for r in results[:[r.id for r in results].index(check_id)]]
    assert all(r.status in ("passed", "skipped") for r in before), (
        f"got {[(r.id, r.status) for r in before]} before {check_id}, should have passed or not applied [zoo {name}]"
    )
    _verdict(name, results[[r.id for r in results].index(check_id)])


def test_table_zoo_a_reordering_batch_is_told_to_have_taken_operations_out_of_order() -> None:
    zoo_subject, check_id = ZOO["batch_reorders_same_key"]
    (result,) = [r for r in certify_table(zoo_subject, checks=(check_id,)) if r.id == check_id]
    assert result.failed and "in another order" in result.message and "keeps_order" in result.message, (
        f"got {result.status} ({result.message}), should say the table took operations on one key in another "
        "order than issued, which its keeps_order promises")
