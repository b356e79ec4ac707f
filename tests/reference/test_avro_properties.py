"""Property tests: random Avro schemas and values round-trip; generated evolutions get the
verdict their change defines and migrate to the value Avro's resolution defines (built by hand
per change, and compared with fastavro's resolution of the same bytes)."""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import avro.compatibility
import avro.schema
import fastavro
from hypothesis import given, note
from hypothesis import strategies as st

import strategies.avro as _avro
from reference import (
    DataInputView,
    DataOutputView,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.serializers import AvroSerializer
from reference.serializers._avro_compat import check_compatibility

SCHEMAS = _avro.raw_avro_schemas(depth=2)


def exact(value: Any) -> Any:
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, dict):
        return ("dict", tuple((k, exact(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(exact(v) for v in value))
    return (type(value).__name__, value)


@st.composite
def evolutions(draw: Any, compatible: bool) -> tuple[Any, Any, str, Any, str | None]:
    schema = draw(SCHEMAS, label="old schema")
    avro_type = _avro.avro_type_of(schema)
    wanted = _avro.COMPATIBLE_CHANGES if compatible else tuple(_avro.INCOMPATIBLE_CHANGES)
    labels = [label for label in _avro.change_labels(avro_type) if label in wanted]
    if not labels:  # every schema can be widened into a union, so compatible labels exist
        schema = {"type": "record", "name": "gen.Fallback", "fields": [{"name": "a", "type": schema}]}
        avro_type = _avro.avro_type_of(schema)
        labels = [label for label in _avro.change_labels(avro_type) if label in wanted]
    label = draw(st.sampled_from(labels), label="change")
    new_type, migration, reason = _avro.apply_change(draw, avro_type, label)
    return avro_type.schema, new_type.schema, label, migration, reason


@given(st.data())
def test_random_schemas_and_values_round_trip(data: st.DataObject) -> None:
    schema = data.draw(SCHEMAS, label="schema")
    serializer = AvroSerializer(schema)
    value = data.draw(_avro.schema_values(serializer.schema), label="value")
    back = serializer.from_bytes(serializer.to_bytes(value))
    assert exact(back) == exact(value), f"got {back!r}, should be {value!r} [{serializer.schema_json}]"
    assert exact(serializer.copy(value)) == exact(value), "a copy should equal the value"
    restored = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration())).restore_serializer()
    assert restored == serializer, f"got {restored.schema_json}, should be {serializer.schema_json}"


@given(evolutions(compatible=True), st.data())
def test_compatible_evolutions_migrate_as_avro_resolves(evolution: Any, data: st.DataObject) -> None:
    old_schema, new_schema, label, migration, _ = evolution
    old, new = AvroSerializer(old_schema), AvroSerializer(new_schema)
    note(f"{label}: {old.schema_json} -> {new.schema_json}")
    result = resolve_compatibility(new.snapshot_configuration(), old.snapshot_configuration())
    assert result.is_compatible_after_migration(), f"got {result!r}, should be after migration [{label}]"
    value = data.draw(_avro.schema_values(old.schema), label="old value")
    expected = new.from_bytes(new.to_bytes(migration(value)))  # the oracle, as the new schema holds it
    old_bytes = old.to_bytes(value)
    binary_old_bytes = AvroSerializer(old_schema, encoding="binary").to_bytes(value)
    target = DataOutputView()
    new.snapshot_configuration().migrate_state(old, new, DataInputView(old_bytes), target)
    migrated = new.from_bytes(target.getvalue())
    assert exact(migrated) == exact(expected), f"got {migrated!r}, should be {expected!r} [{label}]"
    element = new.snapshot_configuration().migrate_element(old, new, old.from_bytes(old_bytes))
    assert exact(element) == exact(expected), f"got {element!r} from migrate_element, should be {expected!r} [{label}]"
    # fastavro's resolving read of the same bytes, as the new serializer holds it
    try:
        resolved = fastavro.schemaless_reader(
            io.BytesIO(binary_old_bytes), fastavro.parse_schema(old.schema), fastavro.parse_schema(new.schema)
        )
    except UnicodeDecodeError:
        assert label == "avro.promote", f"fastavro failed on UTF-8 for {label}, should only for bytes->string"
        return
    held = new.from_bytes(new.to_bytes(resolved))
    assert exact(held) == exact(expected), f"got fastavro's {held!r}, should be {expected!r} [{label}]"


@given(evolutions(compatible=False))
def test_incompatible_evolutions_name_the_rule(evolution: Any) -> None:
    old_schema, new_schema, label, _, reason = evolution
    old, new = AvroSerializer(old_schema), AvroSerializer(new_schema)
    result = resolve_compatibility(new.snapshot_configuration(), old.snapshot_configuration())
    assert result.is_incompatible(), f"got {result!r}, should be incompatible [{label}: {new.schema_json}]"
    assert reason and reason in (result.reason or ""), f"got reason {result.reason!r}, should name {reason!r} [{label}]"
    kinds = {i.kind for i in check_compatibility(new.schema, old.schema)}
    assert reason in kinds, f"got kinds {kinds}, should include {reason} [{label}]"


def _port(reader: Any, writer: Any) -> bool:
    checker = avro.compatibility.ReaderWriterCompatibilityChecker()
    result = checker.get_compatibility(avro.schema.parse(json.dumps(reader)), avro.schema.parse(json.dumps(writer)))
    return result.compatibility is avro.compatibility.SchemaCompatibilityType.compatible


@given(st.booleans().flatmap(evolutions))
def test_java_rules_agree_with_the_avro_port_both_ways(evolution: Any) -> None:
    old_schema, new_schema, label, _, _ = evolution
    for reader, writer in ((new_schema, old_schema), (old_schema, new_schema)):
        ours = not check_compatibility(reader, writer, full_names=False)
        theirs = _port(reader, writer)
        assert ours == theirs, f"got {ours}, should match the avro port's {theirs} [{label}: reader {reader}, writer {writer}]"


@given(st.data())
def test_every_truncation_of_a_record_is_a_state_error(data: st.DataObject) -> None:
    # Avro binary is self-delimiting for a given schema, so no strict prefix decodes exactly.
    from reference import StateError

    serializer = AvroSerializer(data.draw(SCHEMAS, label="schema"))
    encoded = serializer.to_bytes(data.draw(_avro.schema_values(serializer.schema), label="value"))
    cut = data.draw(st.integers(0, max(len(encoded) - 1, 0)), label="cut")
    if not encoded:
        return  # an empty encoding (e.g. null) has no strict prefix
    try:
        value = serializer.from_bytes(encoded[:cut])
    except StateError:
        return
    raise AssertionError(f"got {value!r} from {cut} of {len(encoded)} bytes, should be a StateError")


@given(st.data())
def test_random_bytes_never_leak_foreign_errors(data: st.DataObject) -> None:
    from reference import StateError

    serializer = AvroSerializer(data.draw(SCHEMAS, label="schema"))
    garbage = data.draw(st.binary(max_size=32), label="bytes")
    try:
        serializer.from_bytes(garbage)
    except StateError:
        pass
