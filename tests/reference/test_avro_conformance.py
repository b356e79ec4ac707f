"""The harness certifies AvroSerializer as a key and value serializer with a declared
evolution (add a field with a default, promote int to long, widen a union) on both backends,
and rejects a declared incompatible one with nothing lost."""

from __future__ import annotations

from typing import Any

import strategies.avro as _avro
from conformance import Evolution, RunConfig, Subject, check_serializer
from reference.serializers import AvroSerializer

V1 = {"type": "record", "name": "a.P", "fields": [
    {"name": "x", "type": "int"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "u", "type": ["null", "double"]},
    {"name": "k", "type": {"type": "enum", "name": "K", "symbols": ["A", "B"]}},
]}
V2 = {"type": "record", "name": "a.P", "fields": [
    {"name": "x", "type": "long"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "u", "type": ["null", "double", "string"]},
    {"name": "k", "type": {"type": "enum", "name": "K", "symbols": ["A", "B", "C"]}},
    {"name": "n", "type": "string", "default": "?"},
]}
V3 = {"type": "record", "name": "a.P", "fields": [{"name": "x", "type": "string"}]}


def _to_v2(value: dict[str, Any]) -> dict[str, Any]:
    return {"x": value["x"], "tags": list(value["tags"]), "u": value["u"], "k": value["k"], "n": "?"}


def test_the_harness_certifies_avro_serializer() -> None:
    serializer = AvroSerializer(V1)
    subject = Subject(
        serializer=serializer,
        values=_avro.schema_values(serializer.schema),
        key=True,
        evolutions=[
            Evolution(to=AvroSerializer(V2), expect="compatible_after_migration", migrate=_to_v2),
            Evolution(to=AvroSerializer(V3), expect="incompatible"),
        ],
    )
    report = check_serializer(subject, RunConfig(examples=20, spark="off"))
    failed = [f"{r.id}: {r.message}" for r in report.results if r.status == "failed"]
    assert report.certified and not failed, f"got failures {failed}, should be certified"
    passed = {r.id for r in report.results if r.status == "passed"}
    wanted = {
        "roundtrip.bit_exact", "roundtrip.key_determinism", "roundtrip.concurrent", "roundtrip.pickle",
        "snapshot.no_pickle", "snapshot.restore", "snapshot.corrupt_bytes", "migration.verdict",
        "migration.migrate_state", "migration.migrate_element", "backends.evolution",
        "backends.identical_savepoints", "backends.incompatible", "backends.fresh_process",
    }
    assert wanted <= passed, f"got passed checks {sorted(passed)}, should include {sorted(wanted - passed)}"


def test_growing_a_record_s_keys_is_no_false_alarm() -> None:
    """Avro records are dicts: growing one of their keys renames a field, which the serializer
    leaves out and reads back as its default. size_boundaries skips such a value (the writer's
    fixed point) on every seed instead of reporting the renamed field as lost."""
    serializer = AvroSerializer(V1)
    subject = Subject(serializer=serializer, values=_avro.schema_values(serializer.schema))
    failed = []
    for seed in range(1, 16):
        report = check_serializer(subject, RunConfig(examples=20, seed=seed, spark="off",
                                                     checks=["roundtrip.size_boundaries"]))
        failed += [f"seed {seed}: {r.message}" for r in report.results if r.status == "failed"]
    assert not failed, f"got failures {failed[:3]}, should certify on every seed"
