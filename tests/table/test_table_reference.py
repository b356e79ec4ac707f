"""The reference semantics of SEP-30 tables, with Samza's own test cases turned into properties.

Tables run over the harness's instrumented store (a real dict-backed read/write function pair
that counts what reaches it and fails calls on request).
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance._table._store import HarnessStore
from reference import StateError
from reference.table import (
    BatchWriteError,
    CachingTable,
    CompactBatching,
    CompleteBatching,
    InvalidTableArgumentError,
    LocalTable,
    MapStateTable,
    RateLimitedTable,
    RecordNotFoundError,
    RemoteTable,
    RetriableTable,
    RetriesExhaustedError,
    RetryPolicy,
    SendToTableWithUpdate,
    TableError,
    TableWriteFunction,
    TokenBucketRateLimiter,
    UnsupportedTableOperationError,
    UpdateContract,
    UpdateFailedError,
    UpdateMessage,
    UpdateOptions,
    find_cause,
    send_to_table_with_update,
)

KEYS = st.integers(0, 5)
VALUES = st.integers(-100, 100)
UPDATES = st.integers(-10, 10)
WITH_DEFAULTS = UpdateContract.UPDATE_WITH_DEFAULTS
UPDATE_ONLY = UpdateContract.UPDATE_ONLY

#: remote table configurations every property runs against
CONFIGS = {
    "plain": {},
    "batched": {"batching": CompleteBatching(4, 0.0)},
    "retried": {"write_retry_policy": RetryPolicy(2)},
    "rate_limited": {"write_rate_limiter": TokenBucketRateLimiter(1e9)},
    "everything": {"batching": CompleteBatching(3, 0.0), "write_retry_policy": RetryPolicy(2),
                   "write_rate_limiter": TokenBucketRateLimiter(1e9)},
}
config_names = st.sampled_from(sorted(CONFIGS))


def add(value: int, update: int) -> int:
    return value + update


def remote(store: HarnessStore, config: str = "plain", **extra) -> RemoteTable:
    return RemoteTable(store, store, **{**CONFIGS[config], **extra})


def run(coro):
    return asyncio.run(coro)


# ---- UpdateMessage / contracts --------------------------------------------------------
@given(update=UPDATES, default=st.one_of(st.none(), VALUES))
def test_table_update_message_has_default_exactly_when_default_is_not_none(update, default):
    message = UpdateMessage.of(update, default)
    assert message.update == update and message.default == default, (
        f"got {message}, should carry update {update} and default {default}"
    )
    assert message.has_default is (default is not None), (
        f"got has_default {message.has_default}, should be {default is not None} [default {default!r}]"
    )


def test_table_update_message_refuses_a_none_update():
    with pytest.raises(InvalidTableArgumentError, match="update is None"):
        UpdateMessage.of(None, 1)


def test_table_update_options_is_the_samza_name_of_update_contract():
    assert UpdateOptions is UpdateContract, "got a different UpdateOptions, should alias UpdateContract"
    assert [c.name for c in UpdateContract] == ["UPDATE_ONLY", "UPDATE_WITH_DEFAULTS"], (
        f"got {[c.name for c in UpdateContract]}, should be UPDATE_ONLY, UPDATE_WITH_DEFAULTS"
    )


# ---- Samza: first-time updates with defaults --------------------------------------------
@settings(max_examples=40)
@given(existing=st.dictionaries(KEYS, VALUES), messages=st.lists(st.tuples(KEYS, UPDATES, VALUES), max_size=12),
       config=config_names)
def test_table_first_time_updates_put_one_default_per_absent_key_and_apply_every_update(
        existing, messages, config):
    store = HarnessStore(add)
    store.data = dict(existing)
    table = remote(store, config)
    send_to_table_with_update(table, [(k, UpdateMessage.of(u, d)) for k, u, d in messages], WITH_DEFAULTS)
    absent = {k for k, _, _ in messages} - set(existing)
    assert store.counts.puts == len(absent), (
        f"got {store.counts.puts} PUTs, should be {len(absent)} (one per key absent at its first "
        f"update: {sorted(absent)}) [{config}]"
    )
    assert store.counts.updates == len(messages), (
        f"got {store.counts.updates} updates, should be {len(messages)} (one per message) [{config}]"
    )
    expected = dict(existing)
    for key, update, default in messages:
        expected[key] = expected.get(key, default) + update
    assert store.data == expected, f"got records {store.data}, should be {expected} [{config}]"


@given(key=KEYS, update=UPDATES, default=VALUES, config=config_names)
def test_table_update_only_with_a_default_fails_without_writing(key, update, default, config):
    store = HarnessStore(add)
    operator = SendToTableWithUpdate(remote(store, config), UPDATE_ONLY)
    with pytest.raises(UpdateFailedError) as info:
        operator.send(key, UpdateMessage.of(update, default))
    message = str(info.value)
    assert "UPDATE_WITH_DEFAULTS" in message and repr(key) in message, (
        f"got message {message!r}, should name key {key!r} and UPDATE_WITH_DEFAULTS"
    )
    assert find_cause(info.value, RecordNotFoundError) is not None, "got no RecordNotFoundError cause, should keep it"
    assert store.counts.puts == 0 and store.data == {}, (
        f"got {store.counts.puts} PUTs and records {store.data}, should write nothing [{config}]"
    )


@given(key=KEYS, update=UPDATES, config=config_names, contract=st.sampled_from(list(UpdateContract)))
def test_table_missing_record_without_default_fails_naming_the_key(key, update, config, contract):
    store = HarnessStore(add)
    operator = SendToTableWithUpdate(remote(store, config), contract)
    with pytest.raises(UpdateFailedError) as info:
        operator.send(key, UpdateMessage.of(update))
    assert info.value.key == key and repr(key) in str(info.value), (
        f"got {info.value!r}, should name key {key!r}"
    )
    assert store.counts.write_calls >= 1 and store.counts.puts == 0, (
        f"got {store.counts.puts} PUTs, should put nothing without a default [{config}]"
    )


class AlwaysMissing(HarnessStore):
    """Every update fails with RecordNotFoundError, even right after a put."""

    async def update_async(self, key, update):
        await self._enter("update_async", "update", [(key, update)])
        raise RecordNotFoundError(f"test store: no record for {key!r}")

    async def update_all_async(self, entries):
        await self._enter("update_all_async", "update", entries)
        raise BatchWriteError.of("test store", {i: RecordNotFoundError(f"no {k!r}") for i, (k, _) in
                                                enumerate(entries)}, len(entries))


@given(key=KEYS, update=UPDATES, default=VALUES, config=config_names)
def test_table_failure_after_the_default_put_fails(key, update, default, config):
    store = AlwaysMissing(add)
    operator = SendToTableWithUpdate(remote(store, config), WITH_DEFAULTS)
    with pytest.raises(UpdateFailedError, match="after putting its default"):
        operator.send(key, UpdateMessage.of(update, default))
    assert store.counts.puts == 1, f"got {store.counts.puts} PUTs, should put the default once [{config}]"
    updates = sum(1 for method, _, _ in store.counts.calls if method.startswith("update"))
    assert updates == 2, f"got {updates} update calls, should be 2 (before and after the default) [{config}]"


def test_table_failed_default_put_is_logged_and_the_update_still_tried(caplog):
    store = HarnessStore(add)
    store.fail_next("put")
    operator = SendToTableWithUpdate(remote(store), WITH_DEFAULTS)
    with caplog.at_level(logging.WARNING, logger="reference.table"):
        with pytest.raises(UpdateFailedError, match="after putting its default"):
            operator.send(7, UpdateMessage.of(1, 10))
    assert any("default for key 7" in r.getMessage() for r in caplog.records), (
        f"got log {[r.getMessage() for r in caplog.records]}, should warn about key 7's default"
    )
    methods = [m for m, _, _ in store.counts.calls]
    assert methods == ["update_async", "put_async", "update_async"], (
        f"got calls {methods}, should be update, put (failed), update"
    )


class PutAppliedButFailed(HarnessStore):
    """A put that times out after the store applied it (the record exists after all)."""

    async def put_async(self, key, value):
        self._put(key, value)
        raise TableError("test store: put timed out")


def test_table_update_after_a_failed_default_put_finds_the_record_written_anyway(caplog):
    store = PutAppliedButFailed(add)
    with caplog.at_level(logging.WARNING, logger="reference.table"):
        SendToTableWithUpdate(remote(store), WITH_DEFAULTS).send(3, UpdateMessage.of(2, 40))
    assert store.data == {3: 42}, f"got {store.data}, should be {{3: 42}} (default 40 + update 2)"
    assert caplog.records, "got no warning, should log the failed default put"


class WrappingStore(HarnessStore):
    """Reports a missing record wrapped in other errors, ``links`` deep (cause or context)."""

    links: list[str] = []

    async def update_async(self, key, update):
        error = None
        try:
            await super().update_async(key, update)
        except RecordNotFoundError as exc:
            error = exc
        if error is None:
            return
        for i, link in enumerate(self.links):
            wrapper = RuntimeError(f"adapter layer {i}")
            setattr(wrapper, "__cause__" if link == "cause" else "__context__", error)
            error = wrapper
        raise error


@given(links=st.lists(st.sampled_from(["cause", "context"]), max_size=6), key=KEYS, update=UPDATES,
       default=VALUES)
def test_table_record_not_found_is_detected_at_any_depth(links, key, update, default):
    store = WrappingStore(add)
    store.links = links
    SendToTableWithUpdate(remote(store), WITH_DEFAULTS).send(key, UpdateMessage.of(update, default))
    assert store.data == {key: default + update}, (
        f"got {store.data}, should be {{{key}: {default + update}}} [RecordNotFoundError {len(links)} "
        f"links deep: {links}]"
    )


def test_table_other_update_failures_are_not_taken_for_a_missing_record():
    store = HarnessStore(add)
    store.fail_next("update")
    with pytest.raises(UpdateFailedError, match="update of key 1 failed") as info:
        SendToTableWithUpdate(remote(store), WITH_DEFAULTS).send(1, UpdateMessage.of(1, 5))
    assert store.counts.puts == 0, f"got {store.counts.puts} PUTs, should put no default on a store failure"
    assert info.value.__cause__ is not None, "got no cause, should chain the store's error"


def test_table_find_cause_survives_cycles():
    a, b = RuntimeError("a"), RuntimeError("b")
    a.__context__, b.__context__ = b, a
    assert find_cause(a, RecordNotFoundError) is None, "got a match in a cycle without one, should be None"


# ---- batching ----------------------------------------------------------------------------
def _prefilled(n: int) -> HarnessStore:
    store = HarnessStore(add)
    store.data = {k: 0 for k in range(n)}
    return store


def test_table_complete_batch_of_16_updates_at_size_4_is_4_bulk_calls():
    store = _prefilled(16)
    table = remote(store, batching=CompleteBatching(4, 60.0))  # only size triggers a batch
    SendToTableWithUpdate(table, UPDATE_ONLY).process([(k, UpdateMessage.of(1)) for k in range(16)])
    bulk = [(m, n) for m, n, _ in store.counts.calls]
    assert bulk == [("update_all_async", 4)] * 4, f"got calls {bulk}, should be 4 update_all calls of 4"
    assert store.data == {k: 1 for k in range(16)}, f"got {store.data}, should be every record at 1"


OPS = st.one_of(
    st.tuples(st.just("put"), KEYS, VALUES),
    st.tuples(st.just("delete"), KEYS),
    st.tuples(st.just("update"), KEYS, UPDATES),
)


def _apply_sequentially(ops):
    data, outcomes = {}, []
    for op in ops:
        if op[0] == "put":
            data[op[1]] = op[2]
        elif op[0] == "delete":
            data.pop(op[1], None)
        elif op[1] in data:
            data[op[1]] += op[2]
        else:
            outcomes.append((len(outcomes) + 0, "missing"))
            continue
        outcomes.append((len(outcomes), "ok"))
    return data, [o for _, o in outcomes]


@settings(max_examples=60)
@given(ops=st.lists(OPS, max_size=20), size=st.integers(1, 6))
def test_table_batching_keeps_each_keys_order_across_types_and_fails_only_failed_ops(ops, size):
    store = HarnessStore(add)
    table = remote(store, batching=CompleteBatching(size, 0.0))

    async def issue():
        calls = [getattr(table, op[0] + "_async")(*op[1:]) for op in ops]
        return await asyncio.gather(*calls, return_exceptions=True)

    outcomes = run(issue())
    expected_data, expected = _apply_sequentially(ops)
    got = ["ok" if o is None else "missing" if isinstance(o, RecordNotFoundError) else repr(o)
           for o in outcomes]
    assert got == expected, f"got outcomes {got}, should be {expected} [batch size {size}, ops {ops}]"
    assert store.data == expected_data, f"got {store.data}, should be {expected_data} [batch size {size}]"


def test_table_compact_batching_refuses_updates_when_called():
    store = HarnessStore(add)
    table = remote(store, batching=CompactBatching(4, 0.0))
    with pytest.raises(UnsupportedTableOperationError, match="CompleteBatching"):
        table.update_async(1, 1)
    with pytest.raises(UnsupportedTableOperationError):
        table.update_all_async([(1, 1)])
    with pytest.raises(UnsupportedTableOperationError):
        SendToTableWithUpdate(table, WITH_DEFAULTS)
    assert store.counts.write_calls == 0, f"got {store.counts.write_calls} write calls, should be 0"


def test_table_compact_batching_sends_the_last_write_per_key():
    store = HarnessStore(add)
    table = remote(store, batching=CompactBatching(10, 0.0))

    async def issue():
        await asyncio.gather(table.put_async("a", 1), table.put_async("a", 2), table.delete_async("b"),
                             table.put_async("b", 3))

    run(issue())
    calls = [(m, n) for m, n, _ in store.counts.calls]
    assert calls == [("put_all_async", 2)], f"got calls {calls}, should be one put_all of 2 entries"
    assert store.data == {"a": 2, "b": 3}, f"got {store.data}, should be {{'a': 2, 'b': 3}}"


def test_table_batched_reads_see_earlier_writes():
    store = HarnessStore(add)
    table = remote(store, batching=CompleteBatching(100, 60.0))

    async def issue():
        return await asyncio.gather(table.put_async(1, 5), table.get_async(1))

    assert run(issue()) == [None, 5], "got a read that missed the earlier put, should see 5"


# ---- retries and their metrics -----------------------------------------------------------
def _retriable(store, policy, **kw):
    return RemoteTable(store, store, write_retry_policy=policy, **kw)


def test_table_update_with_one_retry():
    store = _prefilled(1)
    table = _retriable(store, RetryPolicy(max_retries=3))
    store.fail_next_writes(1)
    table.update(0, 5)
    m = table.write_metrics
    assert (m.retry_count, m.success_count, m.perm_failure_count, m.retry_timer.count) == (1, 0, 0, 1), (
        f"got {m}, should be retry 1, success 0, perm failures 0, one timer sample"
    )
    assert store.data == {0: 5} and store.counts.updates == 1, f"got {store.data}, should be {{0: 5}} applied once"


def test_table_update_with_retries_disabled():
    store = _prefilled(1)
    table = _retriable(store, RetryPolicy(max_retries=0))
    store.fail_next_writes(1)
    with pytest.raises(RetriesExhaustedError, match="1 attempt"):
        table.update(0, 5)
    m = table.write_metrics
    assert (m.retry_count, m.success_count, m.perm_failure_count, m.retry_timer.count) == (0, 0, 1, 0), (
        f"got {m}, should be retry 0, success 0, perm failures 1, no timer sample"
    )
    assert store.data == {0: 0}, f"got {store.data}, should be unchanged"


def test_table_update_with_permanent_failure():
    store = _prefilled(1)
    table = _retriable(store, RetryPolicy(max_retries=2))
    store.fail_next_writes(100)
    with pytest.raises(RetriesExhaustedError, match="3 attempt"):
        table.update(0, 5)
    m = table.write_metrics
    assert (m.retry_count, m.success_count, m.perm_failure_count, m.retry_timer.count) == (2, 0, 1, 1), (
        f"got {m}, should be retry 2, success 0, perm failures 1, one timer sample"
    )
    assert store.counts.transient_failed == 3, f"got {store.counts.transient_failed} attempts, should be 3"


def test_table_updates_count_in_the_writer_metrics_not_the_reader_metrics():
    store = _prefilled(1)
    table = _retriable(store, RetryPolicy(2), read_retry_policy=RetryPolicy(2))
    table.update(0, 1)
    table.update_all([(0, 1), (0, 1)])
    assert table.write_metrics.success_count == 2, f"got {table.write_metrics}, should count 2 write operations"
    assert table.read_metrics.success_count == 0, f"got {table.read_metrics}, should count no reads"


def test_table_missing_record_is_never_retried():
    store = HarnessStore(add)
    table = _retriable(store, RetryPolicy(max_retries=5, retry_on=lambda e: True))
    with pytest.raises(RecordNotFoundError):
        table.update(9, 1)
    m = table.write_metrics
    assert store.counts.write_calls == 1 and m.retry_count == 0, (
        f"got {store.counts.write_calls} calls and {m}, should try once: a missing record is an answer"
    )
    assert m.success_count == 1 and m.perm_failure_count == 0, f"got {m}, should count the answer as a success"


def test_table_retry_backoff_grows_by_the_factor():
    store = _prefilled(1)
    waits: list[float] = []

    async def sleep(seconds):
        waits.append(seconds)

    table = RetriableTable(RemoteTable(store, store), None,
                           RetryPolicy(max_retries=3, backoff=0.1, backoff_factor=2.0, max_backoff=0.3),
                           write_function=store, sleep=sleep)
    store.fail_next_writes(3)
    table.put(0, 1)
    assert waits == [0.1, 0.2, 0.3], f"got waits {waits}, should be [0.1, 0.2, 0.3]"


def test_table_partial_bulk_failure_retries_only_the_failed_entries():
    class FlakyEntry(HarnessStore):
        flaky = True

        async def update_all_async(self, entries):
            await self._enter("update_all_async", "update", entries)
            failures = {}
            for i, (key, update) in enumerate(entries):
                if key == 1 and self.flaky:
                    self.flaky = False
                    from reference.table import TransientTableError

                    failures[i] = TransientTableError("entry 1 timed out")
                    continue
                self._update(key, update)
            if failures:
                raise BatchWriteError.of("flaky", failures, len(entries))

    store = FlakyEntry(add)
    store.data = {0: 0, 1: 0, 2: 0}
    table = _retriable(store, RetryPolicy(2))
    table.update_all([(0, 1), (1, 1), (2, 1)])
    assert store.data == {0: 1, 1: 1, 2: 1}, f"got {store.data}, should apply every update exactly once"
    sizes = [n for _, n, _ in store.counts.calls]
    assert sizes == [3, 1], f"got bulk sizes {sizes}, should retry only the failed entry"


# ---- rate limiting ------------------------------------------------------------------------
class RecordingLimiter:
    def __init__(self):
        self.taken: list[int] = []

    async def acquire(self, credits):
        self.taken.append(credits)


def test_table_updates_take_credits_from_the_write_limiter():
    store = _prefilled(3)
    reads, writes = RecordingLimiter(), RecordingLimiter()
    table = RemoteTable(store, store, read_rate_limiter=reads, write_rate_limiter=writes,
                        credit_function=lambda key, value: 2)
    table.put(0, 1)
    table.update(0, 1)
    table.update_all([(0, 1), (1, 1), (2, 1)])
    table.delete(2)
    table.get(0)
    assert writes.taken == [2, 2, 6, 2], f"got write credits {writes.taken}, should be [2, 2, 6, 2]"
    assert reads.taken == [2], f"got read credits {reads.taken}, should be [2]"


def test_table_token_bucket_waits_for_missing_credits():
    now = [0.0]
    waits: list[float] = []

    async def sleep(seconds):
        waits.append(seconds)

    limiter = TokenBucketRateLimiter(10, 10, clock=lambda: now[0], sleep=sleep)
    table = RateLimitedTable(RemoteTable(_prefilled(1), _prefilled(1)), write_limiter=limiter)
    for _ in range(10):
        table.put(0, 1)
    assert waits == [], f"got waits {waits}, should spend the saved 10 credits without waiting"
    table.update(0, 1)
    assert waits == [pytest.approx(0.1)], f"got waits {waits}, should wait 0.1 s for one credit at 10/s"
    now[0] += 10.0
    table.update(0, 1)
    assert len(waits) == 1, f"got waits {waits}, should not wait after the bucket refilled"


# ---- tables that refuse updates ------------------------------------------------------------
def _map_state(backend_class=None):
    from reference.backends import HeapStateBackend, MapStateDescriptor
    from reference.serializers import IntSerializer, LongSerializer, StringSerializer

    backend = (backend_class or HeapStateBackend)(StringSerializer())
    backend.set_current_key("job-1")
    return backend, backend.get_map_state(MapStateDescriptor("t", IntSerializer(), LongSerializer()))


def _refusing_tables(store):
    return {
        "local": LocalTable(),
        "map_state": MapStateTable(_map_state()[1]),
        "caching": CachingTable(RemoteTable(store, store)),
        "read-only remote": RemoteTable(store),
    }


@pytest.mark.parametrize("kind", ["local", "map_state", "caching", "read-only remote"])
def test_table_unsupported_tables_refuse_updates_when_called(kind):
    store = HarnessStore(add)
    table = _refusing_tables(store)[kind]
    for call in (lambda: table.update_async(1, 1), lambda: table.update_all_async([(1, 1)]),
                 lambda: table.update(1, 1), lambda: table.update_all([(1, 1)]),
                 lambda: SendToTableWithUpdate(table, WITH_DEFAULTS)):
        with pytest.raises(UnsupportedTableOperationError, match="does not support partial updates|read-only"):
            call()
    assert store.counts.write_calls == 0, f"got {store.counts.write_calls} write calls, should be 0 [{kind}]"


def test_table_caching_table_does_not_cache_a_read_overtaken_by_a_write():
    store = HarnessStore(add)
    table = CachingTable(RemoteTable(store, store))
    table.put(1, 10)
    table.cache.clear()  # the next read goes to the store

    async def race():
        return await asyncio.gather(table.get_async(1), table.delete_async(1))

    assert run(race())[0] == 10, "got a read that did not see the record, should be 10 (issued first)"
    assert table.get(1) is None, "got the deleted record from the cache, should be None"


def test_table_caching_table_does_not_cache_a_read_while_an_earlier_write_is_in_flight():
    """Two puts in flight, a read answered by the store before they land: once the first put
    has completed, no read may return the record it overwrote (found by table.linearizable)."""

    class SlowWrites(HarnessStore):
        latencies = [3, 12]  # yields before the first and the second write lands

        async def _enter(self, method, kind, entries):
            for _ in range(self.latencies.pop(0)):
                await asyncio.sleep(0)
            await super()._enter(method, kind, entries)

    store = SlowWrites(add)
    store.data = {0: 1}
    table = CachingTable(RemoteTable(store, store))
    seen = []

    async def race():
        first = asyncio.ensure_future(table.put_async(0, 0))
        second = asyncio.ensure_future(table.put_async(0, 0))
        await asyncio.sleep(0)
        seen.append(await table.get_async(0))  # the store still holds 1: both puts in flight
        await first
        assert not second.done(), "got the second put completed, should still be in flight (the test's premise)"
        seen.append(await table.get_async(0))  # the first put completed: the record is 0
        await second

    run(race())
    assert seen == [1, 0], f"got reads {seen}, should be [1, 0] (the read before the puts landed must not be cached)"


# ---- arguments ----------------------------------------------------------------------------
NULL_CALLS = {
    "get": lambda t: t.get_async(None),
    "get_all": lambda t: t.get_all_async([1, None]),
    "put": lambda t: t.put_async(None, 1),
    "put_all": lambda t: t.put_all_async([(1, 1), (None, 1)]),
    "delete": lambda t: t.delete_async(None),
    "delete_all": lambda t: t.delete_all_async([None]),
    "update key": lambda t: t.update_async(None, 1),
    "update value": lambda t: t.update_async(1, None),
    "update_all key": lambda t: t.update_all_async([(None, 1)]),
    "update_all value": lambda t: t.update_all_async([(1, 1), (2, None)]),
}


@given(call=st.sampled_from(sorted(NULL_CALLS)), config=config_names)
def test_table_null_keys_and_updates_are_rejected_when_called(call, config):
    store = HarnessStore(add)
    table = remote(store, config)
    with pytest.raises(InvalidTableArgumentError) as info:
        NULL_CALLS[call](table)
    assert isinstance(info.value, StateError) and "None" in str(info.value), (
        f"got {info.value!r}, should be a StateError naming the None [{call}]"
    )
    assert store.counts.write_calls == 0, f"got {store.counts.write_calls} write calls, should be 0 [{call}]"


@given(key=KEYS, value=VALUES, config=config_names)
def test_table_put_none_deletes(key, value, config):
    store = HarnessStore(add)
    table = remote(store, config)
    table.put(key, value)
    table.put(key, None)
    assert store.data == {} and table.get(key) is None, f"got {store.data}, should be empty [{config}]"


def test_table_sync_method_inside_a_running_loop_says_to_await():
    table = LocalTable()

    async def inside():
        table.put(1, 1)

    with pytest.raises(TableError, match="await the \\*_async method"):
        run(inside())


def test_table_write_function_update_all_defaults_to_one_call_per_entry_in_order():
    class Recorder(TableWriteFunction):
        def __init__(self):
            self.seen = []

        async def update_async(self, key, update):
            self.seen.append((key, update))
            if key == "missing":
                raise RecordNotFoundError("missing")

    recorder = Recorder()
    with pytest.raises(BatchWriteError) as info:
        run(recorder.update_all_async([("a", 1), ("missing", 2), ("a", 3)]))
    assert recorder.seen == [("a", 1), ("missing", 2), ("a", 3)], f"got {recorder.seen}, should keep list order"
    assert list(info.value.failures) == [1], f"got failures {info.value.failures}, should be entry 1 only"
    assert isinstance(info.value.failures[1], RecordNotFoundError), "got another error, should be RecordNotFoundError"


def test_table_write_function_without_update_refuses_it():
    class PutsOnly(TableWriteFunction):
        async def put_async(self, key, value):
            pass

    with pytest.raises(UnsupportedTableOperationError, match="update_async"):
        run(PutsOnly().update_async(1, 1))


@pytest.mark.parametrize("backend", ["heap", "bytes"])
def test_table_map_state_table_writes_the_keyed_map_state(backend):
    from reference.backends import BytesStateBackend, HeapStateBackend

    backend_, state = _map_state({"heap": HeapStateBackend, "bytes": BytesStateBackend}[backend])
    table = MapStateTable(state, merge=add)
    table.put(1, 40)
    SendToTableWithUpdate(table, WITH_DEFAULTS).process([(1, UpdateMessage.of(2)), (2, UpdateMessage.of(3, 10))])
    assert (state.get(1), state.get(2)) == (42, 13), (
        f"got map state {state.get(1)}, {state.get(2)}, should be 42, 13 [{backend}]"
    )
    backend_.set_current_key("job-2")
    assert table.get(1) is None, f"got {table.get(1)} under another key, should be None [{backend}]"
    with pytest.raises(RecordNotFoundError, match="key 1"):
        table.update(1, 1)


def test_table_retries_stop_once_max_duration_has_passed():
    store = _prefilled(1)
    now = [0.0]

    async def sleep(seconds):
        now[0] += seconds

    table = RetriableTable(RemoteTable(store, store), None,
                           RetryPolicy(max_retries=10, backoff=0.4, max_duration=1.0),
                           write_function=store, clock=lambda: now[0], sleep=sleep)
    store.fail_next_writes(100)
    with pytest.raises(RetriesExhaustedError, match="4 attempt"):
        table.put(0, 1)
    m = table.write_metrics
    assert (m.retry_count, m.perm_failure_count) == (3, 1), (
        f"got {m}, should retry at 0.4, 0.8 and 1.2 s only (failures seen before 1.0 s are retried)"
    )
    assert m.retry_timer.max_seconds == pytest.approx(1.2), f"got {m.retry_timer}, should time 1.2 s"


def test_table_reads_retry_with_the_read_policy_and_metrics():
    class FlakyReads(HarnessStore):
        failures = 1

        async def get_async(self, key):
            if self.failures:
                self.failures -= 1
                from reference.table import TransientTableError

                raise TransientTableError("read timed out")
            return await super().get_async(key)

    store = FlakyReads(add)
    store.data = {1: 5}
    table = RemoteTable(store, store, read_retry_policy=RetryPolicy(2), write_retry_policy=RetryPolicy(2))
    assert table.get(1) == 5, "got a failed read, should retry it"
    assert (table.read_metrics.retry_count, table.write_metrics.retry_count) == (1, 0), (
        f"got reader {table.read_metrics} / writer {table.write_metrics}, should count the retry as a read"
    )


def test_table_caching_get_all_answers_from_the_cache_as_it_was_when_called():
    store = HarnessStore(add)
    table = CachingTable(RemoteTable(store, store))
    table.put(0, 7)  # cached

    async def race():
        return await asyncio.gather(table.get_all_async([0, 1]), table.put_async(0, 8))

    assert run(race())[0] == {0: 7}, "got a read missing the cached record, should be {0: 7} (issued first)"
    assert table.get(0) == 8, f"got {table.get(0)}, should be 8 after the put"
