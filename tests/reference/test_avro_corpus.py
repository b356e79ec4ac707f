"""The Avro compatibility corpus: hand-written reader/writer schema pairs with their verdicts.

Each pair in ``tests/data/avro_corpus/*.json`` gives the expected verdict and, when incompatible,
every incompatibility (kind and location); when compatible, a datum and the value Avro's
resolution defines for it. The same pairs cross-check the verdict with Avro Java's rules alone
(``java``, where the project's full-name rule differs) and with the PyPI ``avro`` port of Java's
checker (``avro_port``, where the port deviates from Java), and compare with fastavro's own
resolving read (``fastavro`` notes where it is wrong, and the test insists it still is).
"""

from __future__ import annotations

import io
import json
import struct
import uuid
from datetime import date
from pathlib import Path
from typing import Any

import avro.compatibility
import avro.schema
import fastavro
import pytest

from reference import DataInputView, DataOutputView, resolve_compatibility
from reference.serializers import AvroSerializer
from reference.serializers._avro_compat import KINDS, check_compatibility

CORPUS = Path(__file__).resolve().parent.parent / "data" / "avro_corpus"
VERDICTS = ("compatible_as_is", "compatible_after_migration", "incompatible")


def _load() -> list[tuple[str, dict[str, Any]]]:
    pairs = []
    for path in sorted(CORPUS.glob("*.json")):
        group = json.loads(path.read_text(encoding="utf-8"))
        pairs += [(group["group"], pair) for pair in group["pairs"]]
    return pairs


PAIRS = _load()
COMPATIBLE = [(g, p) for g, p in PAIRS if p["verdict"] != "incompatible"]


def _ids(pairs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [f"{group}/{pair['id']}" for group, pair in pairs]


def decode(value: Any) -> Any:
    """Corpus JSON to Python values: {"$bytes": hex}, {"$date": iso}, {"$uuid": text}."""
    if isinstance(value, dict):
        if set(value) == {"$bytes"}:
            return bytes.fromhex(value["$bytes"])
        if set(value) == {"$date"}:
            return date.fromisoformat(value["$date"])
        if set(value) == {"$uuid"}:
            return uuid.UUID(value["$uuid"])
        return {k: decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def exact(value: Any) -> Any:
    """A form that compares type-exactly, floats by bits, dicts in order."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    if isinstance(value, dict):
        return ("dict", tuple((k, exact(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(exact(v) for v in value))
    return (type(value).__name__, value)


def _java_verdict(pair: dict[str, Any]) -> str:
    """Avro Java's verdict: ``java`` when given, else the same as the project's."""
    if "java" in pair:
        return pair["java"]
    return "incompatible" if pair["verdict"] == "incompatible" else "compatible"


def test_corpus_covers_every_rule() -> None:
    ids = _ids(PAIRS)
    assert len(PAIRS) >= 100, f"got {len(PAIRS)} corpus pairs, should be at least 100"
    assert len(set(ids)) == len(ids), f"got duplicate ids {sorted(i for i in ids if ids.count(i) > 1)}, should be unique"
    verdicts = {p["verdict"] for _, p in PAIRS}
    assert verdicts == set(VERDICTS), f"got verdicts {verdicts}, should be {set(VERDICTS)}"
    kinds = {kind for _, p in PAIRS for kind, _ in p.get("incompatibilities", [])}
    assert kinds == set(KINDS), f"got kinds {sorted(kinds)}, should cover all of {sorted(KINDS)}"
    for group, pair in PAIRS:
        has_data = "datum" in pair and "expected" in pair
        assert has_data == (pair["verdict"] != "incompatible"), (
            f"got datum/expected present={has_data}, should be present exactly when compatible [{group}/{pair['id']}]"
        )


@pytest.mark.parametrize(("group", "pair"), PAIRS, ids=_ids(PAIRS))
def test_verdict(group: str, pair: dict[str, Any]) -> None:
    writer, reader = AvroSerializer(pair["writer"]), AvroSerializer(pair["reader"])
    result = resolve_compatibility(reader.snapshot_configuration(), writer.snapshot_configuration())
    assert result.kind == pair["verdict"], f"got {result!r}, should be {pair['verdict']} [{group}/{pair['id']}]"
    found = [(i.kind, i.location) for i in check_compatibility(pair["reader"], pair["writer"])]
    expected = [tuple(i) for i in pair.get("incompatibilities", [])]
    assert sorted(found) == sorted(expected), f"got {found}, should be {expected} [{group}/{pair['id']}]"
    for kind, location in expected:
        assert f"{kind} at {location}" in (result.reason or ""), (
            f"got reason {result.reason!r}, should name '{kind} at {location}' [{group}/{pair['id']}]"
        )


@pytest.mark.parametrize(("group", "pair"), PAIRS, ids=_ids(PAIRS))
def test_java_rules_alone(group: str, pair: dict[str, Any]) -> None:
    found = check_compatibility(pair["reader"], pair["writer"], full_names=False)
    java = _java_verdict(pair)
    if java == "error":  # Java throws; we report the pair as incompatible with ambiguous_field
        assert [i.kind for i in found] == ["ambiguous_field"], f"got {found}, should be one ambiguous_field [{group}/{pair['id']}]"
        return
    got = "incompatible" if found else "compatible"
    assert got == java, f"got {got} ({found}), should be Java's {java} [{group}/{pair['id']}]"


def _avro_port_verdict(pair: dict[str, Any]) -> str:
    reader = avro.schema.parse(json.dumps(pair["reader"]))
    writer = avro.schema.parse(json.dumps(pair["writer"]))
    result = avro.compatibility.ReaderWriterCompatibilityChecker().get_compatibility(reader, writer)
    return result.compatibility.value


@pytest.mark.parametrize(("group", "pair"), PAIRS, ids=_ids(PAIRS))
def test_cross_check_with_avro_port(group: str, pair: dict[str, Any]) -> None:
    expected = pair.get("avro_port", _java_verdict(pair))
    got = _avro_port_verdict(pair)
    assert got == expected, f"got avro's verdict {got}, should be {expected} [{group}/{pair['id']}]"


@pytest.mark.parametrize(("group", "pair"), COMPATIBLE, ids=_ids(COMPATIBLE))
def test_migrated_value(group: str, pair: dict[str, Any]) -> None:
    writer, reader = AvroSerializer(pair["writer"]), AvroSerializer(pair["reader"])
    datum, expected = decode(pair["datum"]), decode(pair["expected"])
    old_bytes = writer.to_bytes(datum)
    snapshot = reader.snapshot_configuration()
    # over bytes, as the bytes backend does (two records back to back: exactly one is consumed)
    source, target = DataInputView(old_bytes + old_bytes), DataOutputView()
    snapshot.migrate_state(writer, reader, source, target)
    assert source.available() == len(old_bytes), (
        f"got {len(old_bytes) * 2 - source.available()} bytes consumed, should be {len(old_bytes)} [{group}/{pair['id']}]"
    )
    migrated = reader.from_bytes(target.getvalue())
    assert exact(migrated) == exact(expected), f"got {migrated!r}, should be {expected!r} [{group}/{pair['id']}]"
    # over objects, as the heap backend does
    element = snapshot.migrate_element(writer, reader, writer.from_bytes(old_bytes))
    assert exact(element) == exact(expected), f"got {element!r} from migrate_element, should be {expected!r} [{group}/{pair['id']}]"
    if pair["verdict"] == "compatible_as_is":
        same = reader.from_bytes(old_bytes)
        assert exact(same) == exact(expected), f"got {same!r} reading as is, should be {expected!r} [{group}/{pair['id']}]"


@pytest.mark.parametrize(("group", "pair"), COMPATIBLE, ids=_ids(COMPATIBLE))
def test_fastavro_resolution_agrees_unless_noted(group: str, pair: dict[str, Any]) -> None:
    writer = fastavro.parse_schema(pair["writer"])
    reader = fastavro.parse_schema(pair["reader"])
    data = io.BytesIO()
    fastavro.schemaless_writer(data, writer, decode(pair["datum"]))
    expected = decode(pair["expected"])
    try:
        resolved = fastavro.schemaless_reader(io.BytesIO(data.getvalue()), writer, reader)
    except UnicodeDecodeError:
        assert "fastavro" in pair, f"fastavro failed to decode UTF-8, which the pair does not note [{group}/{pair['id']}]"
        return
    if "fastavro" in pair:
        assert exact(resolved) != exact(expected), (
            f"got fastavro's {resolved!r} equal to {expected!r}, should differ as noted "
            f"({pair['fastavro']}); drop the note [{group}/{pair['id']}]"
        )
    else:
        assert exact(resolved) == exact(expected), f"got fastavro's {resolved!r}, should be {expected!r} [{group}/{pair['id']}]"
