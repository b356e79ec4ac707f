"""Correct table implementations are certified; the CLI reports and exits as documented."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import strategies as st

from conformance import TableSubject, certify_table
from conformance.cli import main
from reference.backends import BytesStateBackend, HeapStateBackend, MapStateDescriptor
from reference.serializers import IntSerializer, LongSerializer, StringSerializer
from reference.table import (
    CachingTable,
    CompleteBatching,
    LocalTable,
    MapStateTable,
    RemoteTable,
    RetryPolicy,
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


#: correct tables of the reference, each must be certified
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
}

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
