"""Correct table implementations are certified; the CLI reports and exits as documented."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from functools import partial

import pytest
from hypothesis import strategies as st

from conformance import TableSubject, certify_table
from conformance._table import TableSubjectError
from conformance.cli import main
from reference.backends import BytesStateBackend, HeapStateBackend, MapStateDescriptor
from reference.serializers import IntSerializer, LongSerializer, StringSerializer
from reference.table import (
    CachingTable,
    CompleteBatching,
    DelegatingTable,
    LocalTable,
    MapStateTable,
    RemoteTable,
    RetryPolicy,
    TableWriteFunction,
    TokenBucketRateLimiter,
)


def certify_table_main(argv):
    return main(["certify-table", *argv])


KEYS = st.integers(0, 3)
VALUES = st.integers(-5, 5)
UPDATES = st.integers(-3, 3)


def add(value: int, update: int) -> int:
    return value + update


def remote(**kwargs):
    return lambda read, write: RemoteTable(read, write, **kwargs)


def _subject(factory, **kwargs) -> TableSubject:
    return TableSubject(factory, KEYS, VALUES, UPDATES, add, **kwargs)


def map_state_table(backend_class):
    """A fresh table over a backend's map state (its own store: certified on results only)."""

    def factory():
        backend = backend_class(StringSerializer())
        backend.set_current_key("job-1")
        state = backend.get_map_state(MapStateDescriptor("table", IntSerializer(), LongSerializer()))
        return MapStateTable(state, merge=add)

    return factory


class SingleRecordWriter(TableWriteFunction):
    """A user's write function over a client, written from the docs: only the single-record
    methods (the bulk ones are the defaults: one call per entry, in list order)."""

    def __init__(self, client):
        self.client = client

    async def put_async(self, key, value):
        await asyncio.sleep(0)
        await self.client.put_async(key, value)

    async def delete_async(self, key):
        await self.client.delete_async(key)

    async def update_async(self, key, update):
        await asyncio.sleep(0)
        await self.client.update_async(key, update)


class CreditsPerEntry(DelegatingTable):
    """A user's rate-limiting decorator done right: the bulk methods take credits per entry too."""

    def __init__(self, table, limiter):
        super().__init__(table)
        self.limiter = limiter

    async def _put(self, key, value):
        await self.limiter.acquire(1)
        await self.table.put_async(key, value)

    async def _put_all(self, entries):
        await self.limiter.acquire(len(entries))
        await self.table.put_all_async(entries)

    async def _delete(self, key):
        await self.limiter.acquire(1)
        await self.table.delete_async(key)

    async def _delete_all(self, keys):
        await self.limiter.acquire(len(keys))
        await self.table.delete_all_async(keys)

    async def _update(self, key, update):
        await self.limiter.acquire(1)
        await self.table.update_async(key, update)

    async def _update_all(self, entries):
        await self.limiter.acquire(len(entries))
        await self.table.update_all_async(entries)


WITH_LIMITER = ("read_function", "write_function", "write_rate_limiter")

#: correct tables, each must be certified (the reference's, and tables built as docs/tables.md says)
CORRECT = {
    "local_with_merge": _subject(lambda: LocalTable(merge=add)),
    "map_state_heap_with_merge": _subject(map_state_table(HeapStateBackend)),
    "map_state_bytes_with_merge": _subject(map_state_table(BytesStateBackend)),
    "remote": _subject(remote()),
    "remote_batched": _subject(remote(batching=CompleteBatching(3, 0.0))),
    "remote_batched_retried_rate_limited": _subject(
        remote(batching=CompleteBatching(4, 0.0), write_retry_policy=RetryPolicy(3),
               write_rate_limiter=TokenBucketRateLimiter(1e9)),
        write_retries=3,
    ),
    "caching_without_updates": _subject(lambda r, w: CachingTable(RemoteTable(r, w))),
    "remote_concurrent_keys_apart": _subject(remote(write_retry_policy=RetryPolicy(2)), keeps_order=False,
                                             write_retries=2),
    "local_own_store": _subject(lambda: LocalTable()),
    "local_merge_partial_declared": _subject(partial(LocalTable, merge=add), factory_args=()),
    "own_write_function": _subject(remote(), write_function=SingleRecordWriter),
    "own_write_function_retried": _subject(remote(write_retry_policy=RetryPolicy(2)), write_retries=2,
                                           write_function=SingleRecordWriter),
    "own_write_function_batched_retried": _subject(
        remote(batching=CompleteBatching(3, 0.0), write_retry_policy=RetryPolicy(2)), write_retries=2,
        write_function=SingleRecordWriter),
    "own_write_function_wrapped_in_the_factory": _subject(lambda r, w: RemoteTable(r, SingleRecordWriter(w))),
    "rate_limited_by_the_harness": _subject(
        lambda r, w, limiter: RemoteTable(r, w, batching=CompleteBatching(4, 0.0), write_retry_policy=RetryPolicy(3),
                                          write_rate_limiter=limiter),
        factory_args=WITH_LIMITER, write_retries=3),
    "rate_limited_by_own_decorator": _subject(
        lambda r, w, limiter: CreditsPerEntry(RemoteTable(r, w, batching=CompleteBatching(3, 0.0)), limiter),
        factory_args=WITH_LIMITER),
    "rate_limited_by_credit_function": _subject(
        lambda r, w, limiter: RemoteTable(r, w, write_rate_limiter=limiter, credit_function=lambda k, v: 2),
        factory_args=WITH_LIMITER, credit_function=lambda k, v: 2),
}

def test_table_caching_over_a_batched_remote_table_is_certified():
    """At the default budget: a write that completes late (a bulk put batched with a later put
    of its key) must not cache its out-of-date value."""
    subject = _subject(lambda r, w: CachingTable(RemoteTable(r, w, batching=CompleteBatching(3, 0.0))))
    results = {r.id: r for r in certify_table(subject)}
    failed = [str(r) for r in results.values() if r.failed]
    assert not failed, f"got failures {failed}, should certify a caching table over a batched remote table"
    assert results["table.concurrent"].status == "passed", (
        f"got table.concurrent {results['table.concurrent'].status}, should run and pass"
    )


#: a record type with a structured partial update: dict record, (field, delta) update
RECORDS = st.fixed_dictionaries({"count": st.integers(0, 3), "name": st.sampled_from(["a", "b"])})
FIELD_UPDATES = st.tuples(st.sampled_from(["count"]), st.integers(-2, 2))


def apply_field(record: dict, update: tuple) -> dict:
    field, delta = update
    return {**record, field: record[field] + delta}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_table_reference_tables_are_certified(name):
    results = certify_table(CORRECT[name], max_examples=15, steps=15)
    failed = [str(r) for r in results if r.failed]
    assert not failed, f"got failures {failed}, should certify the reference table {name!r}"
    statuses = {r.id: r.status for r in results}
    assert statuses["table.sequential"] == "passed", f"got {statuses}, should run the state machine [{name}]"
    expected_faults = "skipped" if name.startswith(("local", "map_state")) else "passed"
    assert statuses["table.faults"] == expected_faults, (
        f"got table.faults {statuses['table.faults']}, should be {expected_faults} [{name}]"
    )
    assert statuses["table.linearizable"] == "passed", (
        f"got table.linearizable {statuses['table.linearizable']}, should run and pass [{name}]"
    )
    assert statuses["table.exactly_once"] == expected_faults, (
        f"got table.exactly_once {statuses['table.exactly_once']}, should be {expected_faults} [{name}]"
    )
    expected_credits = "passed" if name.startswith("rate_limited_by") else "skipped"
    assert statuses["table.credits"] == expected_credits, (
        f"got table.credits {statuses['table.credits']}, should be {expected_credits} [{name}]"
    )


@pytest.mark.parametrize("factory", [partial(LocalTable, merge=add), LocalTable, lambda read, write=None: None,
                                     lambda *functions: None])
def test_table_subject_asks_to_declare_an_ambiguous_factory(factory):
    with pytest.raises(TableSubjectError, match=r"factory_args=\('read_function', 'write_function'\)") as info:
        _subject(factory)
    assert "factory_args=()" in str(info.value), f"got {info.value}, should offer the own-store declaration too"


def test_table_subject_a_write_function_built_in_the_factory_is_refused_with_the_fix_when_retried():
    subject = _subject(lambda r, w: RemoteTable(r, SingleRecordWriter(w), write_retry_policy=RetryPolicy(2)),
                       write_retries=2)
    result = certify_table(subject, checks=("table.subject",))[0]
    assert result.failed and "write_function=lambda store: SingleRecordWriter(store)" in result.message, (
        f"got {result}, should say to give the write function to TableSubject"
    )


def test_table_structured_records_and_updates_are_certified():
    subject = TableSubject(remote(batching=CompleteBatching(2, 0.0)), st.sampled_from(["x", "y"]), RECORDS,
                           FIELD_UPDATES, apply_field)
    failed = [str(r) for r in certify_table(subject, max_examples=10, steps=15) if r.failed]
    assert not failed, f"got failures {failed}, should certify dict records with field updates"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_table_reference_tables_are_certified_at_length(name):
    results = certify_table(CORRECT[name], max_examples=200, steps=40)
    failed = [str(r) for r in results if r.failed]
    assert not failed, f"got failures {failed}, should certify the reference table {name!r} at length"


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_table_histories_and_row_faults_raise_no_false_alarm_across_seeds(seed):
    """A false alarm is as bad as a miss: the concurrency and row-fault checks, run from other
    seeds (other histories, other interleavings), pass on every correct table."""
    checks = ("table.linearizable", "table.exactly_once")
    failed = [(name, str(r)) for name, subject in CORRECT.items()
              for r in certify_table(subject, checks=checks, derandomize=False, seed=seed) if r.failed]
    assert not failed, f"got false alarms {failed} from seed {seed}, should certify every correct table"


# ---- CLI ----------------------------------------------------------------------------------
def test_table_cli_certifies_a_correct_table(capsys):
    status = certify_table_main(["test_table_certify:CLI_GOOD", "--examples", "5", "--steps", "8"])
    out = capsys.readouterr().out
    assert status == 0, f"got exit status {status}, should be 0 for a correct table; output:\n{out}"
    assert "CERTIFIED" in out, f"got output {out!r}, should say CERTIFIED"


def test_table_cli_reports_a_violation_with_status_1(capsys):
    status = certify_table_main(["test_table_zoo:MISSING_NOT_SIGNALLED", "--examples", "10", "--seed", "1",
                                 "--json", "-"])
    report = json.loads(capsys.readouterr().out)
    assert status == 1, f"got exit status {status}, should be 1 for a broken table"
    failed = [c for c in report["checks"] if c["status"] == "failed"]
    assert report["certified"] is False and failed and failed[0]["id"] == "table.sequential", (
        f"got {report}, should report table.sequential failed"
    )
    assert "should be" in failed[0]["message"] and failed[0]["example"], (
        f"got {failed[0]!r}, should say what was due and show the shrunk steps"
    )


@pytest.mark.parametrize("target", ["no_such_module_xyz:X", "test_table_certify:NOPE", "test_table_certify:add",
                                    "missing-colon"])
def test_table_cli_unusable_target_exits_2(target, capsys):
    status = certify_table_main([target])
    err = capsys.readouterr().err
    assert status == 2, f"got exit status {status}, should be 2 for unusable TARGET {target!r}"
    assert "TARGET" in err, f"got {err!r}, should explain what is wrong with TARGET"


def test_table_cli_is_wired_into_the_conformance_command():
    env = {**os.environ, "PYTHONPATH": os.path.dirname(__file__) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "conformance", "certify-table", "test_table_certify:CLI_GOOD",
         "--examples", "3", "--steps", "5"],
        capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, f"got exit {proc.returncode}, should be 0; stderr:\n{proc.stderr}\n{proc.stdout}"
    assert "CLI_GOOD" in proc.stdout and "CERTIFIED" in proc.stdout, f"got {proc.stdout!r}, should give the verdict"


CLI_GOOD = _subject(remote(batching=CompleteBatching(2, 0.0)))


def test_table_an_empty_bulk_call_through_a_write_function_with_default_bulk_methods_is_one_call():
    """delete_all([]) through a write function whose delete_all_async is the default makes no
    store call, yet it is one call into the write function: one success in the writer metrics."""
    from conformance._table._machine import build_machine

    subject = _subject(remote(write_retry_policy=RetryPolicy(2)), write_retries=2, write_function=SingleRecordWriter)
    machine = build_machine(subject, concurrent=False, faults=False)()
    try:
        machine.delete_all(keys_=[], sync=False)
        machine.metrics_match_io()
        machine.store_matches_model()
        assert machine.store.counts.write_calls == 0, (
            f"got {machine.store.counts.write_calls} store calls, should be 0 (the default calls per entry)"
        )
        assert machine.table.write_metrics.success_count == 1, (
            f"got {machine.table.write_metrics}, should count delete_all([]) as one clean operation"
        )
    finally:
        machine.teardown()


@pytest.mark.parametrize(("profile", "examples"), [("dev", 30), ("ci", 30), ("certify", 150)])
def test_table_budget_follows_the_profile_unless_examples_are_given(profile, examples):
    """``--profile certify`` runs 150 state machines per table check; dev and ci 30; an explicit
    ``--examples`` wins over any profile."""
    from conformance._engine.config import RunConfig
    from conformance._engine.runner import Runner

    for config, expected in ((RunConfig(profile=profile), examples), (RunConfig(profile=profile, examples=7), 7)):
        runner = Runner(CLI_GOOD, config)
        try:
            assert runner.examples == expected and runner.settings.max_examples == expected, (
                f"got {runner.examples} examples ({runner.settings.max_examples} in the settings) for {config}, "
                f"should be {expected}"
            )
        finally:
            runner.close()


@pytest.mark.parametrize("values", [st.none() | st.integers(), [None, 1, 2]], ids=["strategy", "examples"])
def test_table_none_values_are_left_out_as_no_record(values):
    """``put(key, None)`` deletes: a values strategy that also draws None must not make the
    reference's own RemoteTable fail (the model took None for a record held)."""
    subject = TableSubject(lambda read, write: RemoteTable(read, write, batching=CompleteBatching(4, 0.001),
                                                           write_retry_policy=RetryPolicy(3)),
                           keys=st.integers(0, 2), values=values, updates=st.integers(-5, 5),
                           apply_update=lambda value, update: value + update, write_retries=3)
    failed = [f"{r.id}: {r.message[:300]}" for r in certify_table(subject, max_examples=15, steps=15) if r.failed]
    assert not failed, f"got failures {failed}, should certify (None is no record's value)"


def test_table_values_of_only_none_are_refused_saying_why():
    with pytest.raises(TableSubjectError, match=r"put\(key, None\) deletes"):
        TableSubject(lambda read, write: RemoteTable(read, write), keys=[1], values=[None], updates=[1],
                     apply_update=lambda value, update: value + update)
