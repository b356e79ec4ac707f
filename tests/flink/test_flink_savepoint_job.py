"""The real Flink savepoints of savepoints.py: SavepointJob wrote one per case with the
configuration asked for, expected.json describes every state, and Flink restores a savepoint
(unchanged, into the other backend, with TTL switched off, with a POJO that gained a field) with
every value of expected.json in place and refuses a Row whose arity changed."""

from __future__ import annotations

import json
import struct

import pytest
import savepoints
from flink_spark_support import POJO_WITH_A_NOTE  # the evolved SavepointPojo's Java source

# One xdist worker runs the Java side once (the suite runs with --dist loadgroup).
pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

SNAPPY_FRAMED_STREAM = b"\xff\x06\x00\x00sNaPpY"  # the stream identifier chunk of every framed stream
OPERATORS = {"source", "opstate", "keyed-states", "window"}
KEYED_STATES = {"count", "pojo", "tuple", "row", "color", "opaque", "names", "amounts", "fresh", "sum", "avg",
                "_timer_state/event_user-timers", "_timer_state/processing_user-timers"}
WINDOW_STATES = {"window-contents", "_timer_state/event_window-timers", "_timer_state/processing_window-timers"}
KEY_TYPES = {"string": "string", "long": "long", "tuple": "tuple2<string,long>"}


def test_every_case_has_a_savepoint_and_expected_values(flink_savepoints):
    assert set(flink_savepoints) == set(savepoints.CASES), (
        f"SavepointJob wrote cases {sorted(flink_savepoints)}, should be {sorted(savepoints.CASES)}")
    for name, (directory, expected) in flink_savepoints.items():
        config = savepoints.CASES[name]
        assert expected["case"] == name, f"{directory}: expected.json names case {expected['case']}, should be {name}"
        assert expected["flink_version"].startswith("2.3"), f"{name}: written by Flink {expected['flink_version']}, should be 2.3"
        got = expected["config"]
        want = {"backend": config["backend"], "storage": config["storage"], "compression": config["compression"],
                "max_parallelism": config["maxp"], "parallelism": config["p"], "key_type": KEY_TYPES[config["key"]]}
        assert got == want, f"{name}: expected.json config {got}, should be {want}"
        assert directory.is_dir() and directory.name.startswith("savepoint-"), f"{name}: no savepoint directory at {directory}"
        assert "avro" in expected["skipped"], f"{name}: expected.json should say why no Avro state was written"


@pytest.mark.parametrize("name", sorted(savepoints.CASES))
def test_metadata_header_and_layout(flink_savepoints, name):
    directory, expected = flink_savepoints[name]
    metadata = (directory / "_metadata").read_bytes()
    magic, version = struct.unpack(">ii", metadata[:8])
    assert magic == savepoints.METADATA_MAGIC, f"{name}: _metadata magic {magic:#x}, should be 0x4960672d"
    assert version == 6, f"{name}: _metadata version {version}, should be 6 (Flink 2.3's MetadataV6Serializer)"
    for uid, operator in expected["operators"].items():
        # _metadata V5+ writes each operator's name, then its uid, with writeUTF (u16 length + bytes).
        utf = b"".join(struct.pack(">H", len(t.encode())) + t.encode() for t in (operator["name"], uid))
        assert utf in metadata, f"{name}: operator {operator['name']!r} with uid {uid!r} not written in _metadata"
    others = sorted(p.name for p in directory.iterdir() if p.name != "_metadata")
    if expected["config"]["storage"] == "files":
        assert others, f"{name}: filesystem storage with inline threshold 0 wrote no state files beside _metadata"
    else:
        assert not others, f"{name}: jobmanager storage should keep every state inside _metadata, found {others}"
    contents = b"".join(p.read_bytes() for p in directory.iterdir())
    compressed = SNAPPY_FRAMED_STREAM in contents
    assert compressed == expected["config"]["compression"], (
        f"{name}: Snappy framed key groups present: {compressed}, should be {expected['config']['compression']} "
        "(execution.checkpointing.snapshot-compression)")


@pytest.mark.parametrize("name", sorted(savepoints.CASES))
def test_expected_lists_every_state_non_empty(flink_savepoints, name):
    _, expected = flink_savepoints[name]
    operators = expected["operators"]
    assert set(operators) == OPERATORS, f"{name}: operators {sorted(operators)}, should be {sorted(OPERATORS)}"
    assert set(operators["keyed-states"]["states"]) == KEYED_STATES, (
        f"{name}: keyed-states has {sorted(operators['keyed-states']['states'])}, should be {sorted(KEYED_STATES)}")
    assert set(operators["window"]["states"]) == WINDOW_STATES, (
        f"{name}: window has {sorted(operators['window']['states'])}, should be {sorted(WINDOW_STATES)}")
    maxp = expected["config"]["max_parallelism"]
    for uid, operator in operators.items():
        for state, spec in operator["states"].items():
            if state == "_timer_state/processing_window-timers":
                assert spec["entries"] == [], f"{name}: {uid}/{state} should be empty (no processing-time window)"
                continue
            assert spec["entries"], f"{name}: {uid}/{state} has no entries"
            for entry in spec["entries"]:
                if operator["keyed"]:
                    assert 0 <= entry["key_group"] < maxp, f"{name}: {uid}/{state} key group {entry['key_group']} outside [0, {maxp})"
                    assert ("timestamp" in entry) == (spec["kind"] == "timer"), f"{name}: {uid}/{state} entry {entry}"
                else:
                    assert 0 <= entry["subtask"] < operator["parallelism"], f"{name}: {uid}/{state} entry {entry}"
    ttl = operators["keyed-states"]["states"]["fresh"]
    assert ttl["ttl_ms"] == 86_400_000, f"{name}: fresh should have a one-day TTL, has {ttl['ttl_ms']}"
    for entry in ttl["entries"]:
        low, high = entry["ttl_last_access"]
        assert 0 < low <= high, f"{name}: TTL access bounds {low}..{high}"
    window = operators["window"]["states"]["window-contents"]
    for entry in window["entries"]:
        ns = entry["namespace"]
        assert ns["end"] - ns["start"] == 3_600_000 and ns["start"] % 3_600_000 == 0, f"{name}: window {ns}"
    nulls = [e for e in operators["keyed-states"]["states"]["amounts"]["entries"] if e["value"] is None]
    if expected["config"]["backend"] == "rocksdb":
        assert nulls, f"{name}: the RocksDB cases should hold null map values"
    else:
        assert not nulls, f"{name}: a heap savepoint with a null map value fails in Flink 2.3, found {nulls}"
    opaque = operators["keyed-states"]["states"]["opaque"]["entries"]
    assert all(e["value"]["opaque"] and e["value"]["bytes"] for e in opaque), f"{name}: Kryo values {opaque}"


def test_flink_restores_its_savepoints_and_refuses_a_row_of_another_arity(flink_savepoints, flink_restore):
    heap_dir, heap = flink_savepoints["hashmap_files_long"]
    rocks_dir, rocks = flink_savepoints["rocksdb_inline_string"]
    results = flink_restore([
        savepoints.RestoreRequest.of("heap", heap_dir, heap),
        savepoints.RestoreRequest.of("rocks", rocks_dir, rocks),
        # A canonical savepoint does not depend on the backend that wrote it.
        savepoints.RestoreRequest.of("heap-into-rocksdb", heap_dir, heap, backend="rocksdb"),
        # Flink 2.x restores a state whose TTL was switched off (or on) with its values.
        savepoints.RestoreRequest.of("ttl-off", rocks_dir, rocks, ttl={"fresh": False}),
        savepoints.RestoreRequest.of("row-arity", heap_dir, heap, state_types={"row": "row<string,long>"}),
    ])
    for request, expected in (("heap", heap), ("rocks", rocks), ("heap-into-rocksdb", heap), ("ttl-off", rocks)):
        result = results[request]
        assert result.verdict == "restored", f"Flink failed to restore ({request}): {result.error}"
        want = savepoints.restorable(expected)
        got = savepoints.read_back(result)
        missing = sorted(set(want) - set(got))
        extra = sorted(set(got) - set(want))
        assert got == want, (
            f"{request}: restored state differs from expected.json; missing {missing[:5]}, unexpected {extra[:5]}")
    refused = results["row-arity"]
    assert refused.verdict == "failed", f"Flink restored a Row state whose arity changed: {refused.reads[:3]}"
    assert refused.error["state_migration_exception"], (
        f"Flink refused the Row of another arity without a StateMigrationException: {refused.error['chain']}")


def test_flink_migrates_a_pojo_with_an_added_field(flink_savepoints, flink_job, flink_restore, tmp_path):
    directory, expected = flink_savepoints["rocksdb_files_tuple"]
    classes = savepoints.compile_user_classes(flink_job, {"SavepointPojo.java": POJO_WITH_A_NOTE}, tmp_path / "pojo2")
    result = flink_restore([savepoints.RestoreRequest.of("pojo-note", directory, expected)], classpath_first=[classes])
    restored = result["pojo-note"]
    assert restored.verdict == "restored", f"Flink refused a POJO with an added field: {restored.error}"
    want = []
    for line in savepoints.restorable(expected):
        entry = json.loads(line)
        if entry["state"] == "pojo":
            entry["value"]["note"] = None  # the added field, absent from the savepoint
        want.append(savepoints.canonical(entry))
    got = savepoints.read_back(restored)
    assert got == sorted(want), (
        f"migrated restore differs: missing {sorted(set(want) - set(got))[:3]}, unexpected {sorted(set(got) - set(want))[:3]}")
