"""Benchmark: eager migration of value-state entries of a nested row on the bytes backend.

The evolution adds a nullable field and reorders fields (FLIP-527). Reported, all in the same
run: entries/s of the bytes backend's migration for store="memory" and store="rocksdb"; the
bare loop of the state's migration plan without a store (``MigrationPlan.migrate``, the floor
under the backend); the bare ``migrate_state`` loop (the snapshot API: a row's default
``migrate_state`` reads, migrates and writes objects);
the naive path (read every value into objects with the old serializer, convert, write with the
new); and fastavro's resolving read + write of the equivalent Avro records, per record
(schemaless_reader/writer) and in bulk (container file reader/writer). Ratios are against the
faster fastavro path, the goal; the last column is against the naive path.

    python bench/bench_backends.py [--entries 1000000] [--stores memory,rocksdb] [--repeat 1]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import tempfile
import time

import fastavro

from reference import snapshot_to_bytes
from reference.backends import SCHEMA_EVOLUTION_ENABLED, BytesStateBackend, ValueStateDescriptor
from reference.savepoint import (
    SavepointMetadata,
    StateMetadata,
    atomic_directory,
    key_group_for,
    state_data_dir,
    write_savepoint_metadata,
    write_state_rows,
)
from reference.serializers import IntSerializer, LongSerializer, RowSerializer, StringSerializer

ADDRESS_V1 = RowSerializer([("street", StringSerializer(), True), ("zip", IntSerializer(), True)])
ADDRESS_V2 = RowSerializer(
    [("zip", IntSerializer(), True), ("street", StringSerializer(), True), ("country", StringSerializer(), True)]
)
PERSON_V1 = RowSerializer(
    [("id", LongSerializer(), False), ("name", StringSerializer(), True), ("score", LongSerializer(), True),
     ("address", ADDRESS_V1, True)]
)
# a nullable field added, fields reordered, the nested row evolved the same way
PERSON_V2 = RowSerializer(
    [("address", ADDRESS_V2, True), ("name", StringSerializer(), True), ("email", StringSerializer(), True),
     ("id", LongSerializer(), False), ("score", LongSerializer(), True)]
)

AVRO_V1 = {
    "type": "record", "name": "Person", "fields": [
        {"name": "id", "type": "long"},
        {"name": "name", "type": ["null", "string"]},
        {"name": "score", "type": ["null", "long"]},
        {"name": "address", "type": ["null", {"type": "record", "name": "Address", "fields": [
            {"name": "street", "type": ["null", "string"]},
            {"name": "zip", "type": ["null", "int"]},
        ]}]},
    ],
}
AVRO_V2 = {
    "type": "record", "name": "Person", "fields": [
        {"name": "address", "type": ["null", {"type": "record", "name": "Address", "fields": [
            {"name": "zip", "type": ["null", "int"]},
            {"name": "street", "type": ["null", "string"]},
            {"name": "country", "type": ["null", "string"], "default": None},
        ]}]},
        {"name": "name", "type": ["null", "string"]},
        {"name": "email", "type": ["null", "string"], "default": None},
        {"name": "id", "type": "long"},
        {"name": "score", "type": ["null", "long"]},
    ],
}


#: Timings use the process's CPU time: on a shared, loaded machine wall-clock time mostly
#: measures the neighbours. (Everything timed is single-threaded Python, plus RocksDB's own
#: background threads, whose CPU time counts too.)
clock = time.process_time


def person(i: int) -> tuple:
    address = None if i % 10 == 0 else (f"{i % 977} Main Street", 10000 + i % 90000)
    return (i, f"user {i}", None if i % 3 == 0 else i * 7, address)


def write_savepoint(path: str, n: int) -> None:
    keys = StringSerializer()
    rows = []
    for i in range(n):
        key = keys.to_bytes(f"key-{i}")
        rows.append((key_group_for(key, 128), key, b"", None, PERSON_V1.to_bytes(person(i))))
    rows.sort()
    with atomic_directory(path) as temp:
        write_state_rows(os.path.join(temp, state_data_dir(0)), rows)
        write_savepoint_metadata(temp, SavepointMetadata(
            max_parallelism=128,
            key_serializer_snapshot=snapshot_to_bytes(keys.snapshot_configuration()),
            states=(StateMetadata("person", "value", snapshot_to_bytes(PERSON_V1.snapshot_configuration()),
                                  data=state_data_dir(0), rows=n),),
        ))


def bench_backend(savepoint: str, store: str, scratch: str) -> float:
    path = os.path.join(scratch, f"rocksdb-{time.time_ns()}") if store == "rocksdb" else None
    backend = BytesStateBackend.restore(
        savepoint, key_serializer=StringSerializer(), store=store, path=path,
        config=SCHEMA_EVOLUTION_ENABLED,
    )
    try:
        start = clock()
        state = backend.get_value_state(ValueStateDescriptor("person", PERSON_V2))  # migrates eagerly
        elapsed = clock() - start
        backend.set_current_key("key-1")
        expected = ((10001, "1 Main Street", None), "user 1", None, 1, 7)
        assert state.value() == expected, f"got {state.value()!r}, should be {expected!r}"
        return elapsed
    finally:
        backend.close()


def bench_naive(values: list[bytes]) -> float:
    snapshot = PERSON_V2.snapshot_configuration()
    start = clock()
    objects = [PERSON_V1.from_bytes(v) for v in values]
    out = [PERSON_V2.to_bytes(snapshot.migrate_element(PERSON_V1, PERSON_V2, o)) for o in objects]
    elapsed = clock() - start
    assert len(out) == len(values)
    return elapsed


def bench_plan_loop(values: list[bytes]) -> float:
    """The floor under the backend: the migration plan over every value, no store."""
    from reference.backends import migration_plan

    migrate = migration_plan(PERSON_V1.snapshot_configuration(), PERSON_V2).migrate
    start = clock()
    out = [migrate(value) for value in values]
    elapsed = clock() - start
    assert len(out) == len(values)
    return elapsed


def bench_migrate_state_loop(values: list[bytes]) -> float:
    """new_snapshot.migrate_state over every value, no store."""
    from reference import DataInputView, DataOutputView

    snapshot = PERSON_V2.snapshot_configuration()
    migrate = snapshot.migrate_state
    start = clock()
    out = []
    for value in values:
        target = DataOutputView()
        migrate(PERSON_V1, PERSON_V2, DataInputView(value), target)
        out.append(target.getvalue())
    elapsed = clock() - start
    assert len(out) == len(values)
    return elapsed


def bench_fastavro(n: int) -> float:
    writer = fastavro.parse_schema(AVRO_V1)
    reader = fastavro.parse_schema(AVRO_V2)
    encoded = []
    for i in range(n):
        pid, name, score, address = person(i)
        record = {"id": pid, "name": name, "score": score,
                  "address": None if address is None else {"street": address[0], "zip": address[1]}}
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, writer, record)
        encoded.append(buffer.getvalue())
    start = clock()
    out = []
    for data in encoded:
        record = fastavro.schemaless_reader(io.BytesIO(data), writer, reader)
        buffer = io.BytesIO()
        fastavro.schemaless_writer(buffer, reader, record)
        out.append(buffer.getvalue())
    elapsed = clock() - start
    assert len(out) == n
    return elapsed


def bench_fastavro_container(n: int) -> float:
    """fastavro's bulk path: an Avro container file read with a reader schema (resolution
    planned once per file) and written to a new container."""
    writer = fastavro.parse_schema(AVRO_V1)
    reader = fastavro.parse_schema(AVRO_V2)
    records = []
    for i in range(n):
        pid, name, score, address = person(i)
        records.append({"id": pid, "name": name, "score": score,
                        "address": None if address is None else {"street": address[0], "zip": address[1]}})
    source = io.BytesIO()
    fastavro.writer(source, writer, records, codec="null")
    del records
    start = clock()
    source.seek(0)
    target = io.BytesIO()
    fastavro.writer(target, reader, fastavro.reader(source, reader_schema=reader), codec="null")
    elapsed = clock() - start
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--stores", default="memory,rocksdb")
    parser.add_argument("--repeat", type=int, default=1, help="best of N timings")
    args = parser.parse_args(argv)
    n = args.entries
    scratch = tempfile.mkdtemp(prefix="bench-backends-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        savepoint = os.path.join(scratch, "sp")
        t0 = time.perf_counter()
        write_savepoint(savepoint, n)
        print(f"prepared a savepoint of {n} entries in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        results: dict[str, float] = {}
        for _ in range(args.repeat):
            for store in args.stores.split(","):
                t = bench_backend(savepoint, store, scratch)
                results[f"bytes/{store}"] = min(t, results.get(f"bytes/{store}", t))
            values = [PERSON_V1.to_bytes(person(i)) for i in range(n)]
            t = bench_plan_loop(values)
            results["migration plan loop"] = min(t, results.get("migration plan loop", t))
            t = bench_migrate_state_loop(values)
            results["migrate_state loop"] = min(t, results.get("migrate_state loop", t))
            t = bench_naive(values)
            results["naive objects"] = min(t, results.get("naive objects", t))
            del values
            t = bench_fastavro(n)
            results["fastavro per record"] = min(t, results.get("fastavro per record", t))
            t = bench_fastavro_container(n)
            results["fastavro container"] = min(t, results.get("fastavro container", t))
        # the goal is the faster of fastavro's two paths
        base = n / min(results["fastavro per record"], results["fastavro container"])
        naive = n / results["naive objects"]
        print(f"{'path':<26}{'entries/s':>12}{'vs fastavro':>13}{'vs naive':>10}   ({n} entries, CPU time, "
              f"best of {args.repeat})")
        for name, seconds in results.items():
            rate = n / seconds
            print(f"{name:<26}{rate:>12,.0f}{rate / base:>12.2f}x{rate / naive:>9.2f}x")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
