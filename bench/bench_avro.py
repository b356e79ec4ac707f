"""Benchmark: AvroSerializer throughput against raw fastavro schemaless calls, in the same run.

Both encodings are measured against the same fastavro baseline: the default (Flink's
AvroSerializer encoding: fastavro's binary form translated along the schema in pure Python) and
``encoding="binary"`` (Avro's standard binary, fastavro's own bytes).

For one typical record schema (10 fields: numbers, strings, an optional field, an array, a map,
an enum), measured per record: serialize into a DataOutputView vs ``schemaless_writer`` into a
BytesIO and ``getvalue()``; deserialize from a DataInputView over many records back to back vs
``schemaless_reader`` over a BytesIO of one record; and, for reference, migration of one record
after adding a field with a default (AvroSerializerSnapshot.migrate_state) vs fastavro's
resolving read + write. Reported as records/s and the ratio raw/serializer (the overhead of the
serializer layer; goal < 1.5x for serialize and deserialize with the binary encoding; the Flink
encoding's translation is reported against the same baseline, without a goal).

    python bench/bench_avro.py [--records 20000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import io
import time
from collections.abc import Callable

import fastavro

from reference import DataInputView, DataOutputView
from reference.serializers import AvroSerializer

SCHEMA = {
    "type": "record", "name": "Event", "namespace": "bench",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "user", "type": "string"},
        {"name": "score", "type": "double"},
        {"name": "count", "type": "int"},
        {"name": "ok", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": "long"}},
        {"name": "kind", "type": {"type": "enum", "name": "Kind", "symbols": ["CLICK", "VIEW", "BUY"]}},
        {"name": "payload", "type": "bytes"},
    ],
}
EVOLVED = dict(SCHEMA, fields=[*SCHEMA["fields"], {"name": "region", "type": "string", "default": "eu"}])


def records(n: int) -> list[dict]:
    return [
        {
            "id": i * 7919, "user": f"user-{i % 1000}", "score": i / 3.0, "count": i % 100,
            "ok": i % 2 == 0, "note": None if i % 3 else "n", "tags": ["a", "b"][: i % 3],
            "attrs": {"k": i} if i % 2 else {}, "kind": ("CLICK", "VIEW", "BUY")[i % 3],
            "payload": b"\x00\x01\x02\x03",
        }
        for i in range(n)
    ]


def best_pair(raw: Callable[[], None], ours: Callable[[], None], repeat: int) -> tuple[float, float]:
    """Best times of both, run alternately so that load on the machine hits both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for run, into in ((raw, times[0]), (ours, times[1])):
            start = time.perf_counter()
            run()
            into.append(time.perf_counter() - start)
    return min(times[0]), min(times[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=20000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    values = records(args.records)
    n = args.records
    print(f"AvroSerializer vs raw fastavro {fastavro.__version__}, {n} records of a 10-field record, best of {args.repeat}")
    verdicts = []
    for encoding in ("flink", "binary"):
        print(f" encoding={encoding!r}")
        verdicts += run(encoding, values, args.repeat)
    print("overhead goal (binary encoding) met" if all(verdicts) else "overhead goal (binary encoding) MISSED")


def run(encoding: str, values: list[dict], repeat: int) -> list[bool]:
    """Time one encoding against fastavro; the verdicts of the rows that have the goal."""
    serializer = AvroSerializer(SCHEMA, encoding=encoding)
    evolved = AvroSerializer(EVOLVED, encoding=encoding)
    parsed = fastavro.parse_schema(SCHEMA)
    parsed_evolved = fastavro.parse_schema(EVOLVED)
    writer, reader = fastavro.schemaless_writer, fastavro.schemaless_reader

    def raw_serialize() -> None:
        for value in values:
            buf = io.BytesIO()
            writer(buf, parsed, value)
            buf.getvalue()

    def ours_serialize() -> None:
        out = DataOutputView()
        for value in values:
            serializer.serialize(value, out)

    raw_blobs = []
    for value in values:
        buf = io.BytesIO()
        writer(buf, parsed, value)
        raw_blobs.append(buf.getvalue())
    blobs = [serializer.to_bytes(value) for value in values]
    joined = b"".join(blobs)

    def raw_deserialize() -> None:
        for blob in raw_blobs:
            reader(io.BytesIO(blob), parsed, None)

    def ours_deserialize() -> None:
        source = DataInputView(joined)
        read = serializer.deserialize
        for _ in range(len(blobs)):
            read(source)

    def ours_from_bytes() -> None:
        for blob in blobs:
            serializer.from_bytes(blob)

    def raw_migrate() -> None:
        for blob in raw_blobs:
            value = reader(io.BytesIO(blob), parsed, parsed_evolved)
            buf = io.BytesIO()
            writer(buf, parsed_evolved, value)

    snapshot = evolved.snapshot_configuration()

    def ours_migrate() -> None:
        source, target = DataInputView(joined), DataOutputView()
        for _ in range(len(blobs)):
            snapshot.migrate_state(serializer, evolved, source, target)

    n = len(values)
    goal = encoding == "binary"
    rows = [
        ("serialize", raw_serialize, ours_serialize, goal),
        ("deserialize (stream)", raw_deserialize, ours_deserialize, goal),
        ("deserialize (from_bytes)", raw_deserialize, ours_from_bytes, goal),
        ("migrate (add field)", raw_migrate, ours_migrate, False),
    ]
    verdicts = []
    for name, raw, ours, has_goal in rows:
        raw_time, our_time = best_pair(raw, ours, repeat)
        ratio = our_time / raw_time
        mark = ("  goal < 1.5x: " + ("met" if ratio < 1.5 else "MISSED")) if has_goal else ""
        print(f"  {name:26s} fastavro {n / raw_time:>10,.0f}/s  AvroSerializer {n / our_time:>10,.0f}/s  ratio {ratio:4.2f}x{mark}")
        if has_goal:
            verdicts.append(ratio < 1.5)
    return verdicts


if __name__ == "__main__":
    main()
