"""The backends' Flink format without a JVM: restoring the real Flink 2.3 savepoints kept in
tests/data/flink_savepoints, writing with ``format="flink"`` and reading the result back with
``read_flink_savepoint``, converting this project's savepoints, and the refusals (each says what
to do). Flink itself restores what the backends write in tests/flink/test_flink_backend_savepoints.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reference import SnapshotFormatError, StateError
from reference.backends import (
    BytesStateBackend,
    HeapStateBackend,
    ListStateDescriptor,
    MapStateDescriptor,
    ValueStateDescriptor,
    convert_to_flink_savepoint,
)
from reference.savepoint import is_flink_savepoint, read_flink_savepoint
from reference.serializers import BytesSerializer, LongSerializer, PickleSerializer, RowKind, StringSerializer

DATA = Path(__file__).resolve().parents[1] / "data" / "flink_savepoints"
BACKENDS = [HeapStateBackend, BytesStateBackend]


def _kept(case: str) -> tuple[Path, dict]:
    expected = json.loads((DATA / case / "expected.json").read_text(encoding="utf-8"))
    return DATA / case / expected["savepoint"], expected


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_a_kept_flink_savepoint_restores_with_the_values_the_job_wrote(backend_class):
    path, expected = _kept("rocksdb_inline_string")
    backend = backend_class.restore(str(path), StringSerializer(), operator_uid="keyed-states",
                                    states=["count", "amounts", "names"])
    count = backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    amounts = backend.get_map_state(MapStateDescriptor("amounts", StringSerializer(), LongSerializer()))
    states = expected["operators"]["keyed-states"]["states"]
    for e in states["count"]["entries"]:
        backend.set_current_key(e["key"])
        assert count.value() == e["value"], f"count of {e['key']!r}: got {count.value()}, the job wrote {e['value']}"
    for e in states["amounts"]["entries"]:
        backend.set_current_key(e["key"])
        assert amounts.get(e["user_key"]) == e["value"] and amounts.contains(e["user_key"]), f"amounts {e}"
    assert sorted(backend.state_names()) == ["amounts", "count", "names"], backend.state_names()
    backend.close()


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_flink_format_round_trip_keeps_every_value_and_converts_back(backend_class, tmp_path):
    backend = backend_class(StringSerializer())
    count = backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    names = backend.get_list_state(ListStateDescriptor("names", StringSerializer()))
    amounts = backend.get_map_state(MapStateDescriptor("amounts", StringSerializer(), LongSerializer()))
    keys = [f"key-{i}\u00e9" for i in range(50)]
    for i, key in enumerate(keys):
        backend.set_current_key(key)
        count.update(i)
        names.update([f"n{i}", "x"])
        amounts.put_all({"a": i, "none": None})
    out = backend.savepoint(str(tmp_path / "flink"), format="flink", operator_uid="op", max_parallelism=300)
    backend.close()
    assert is_flink_savepoint(out), f"{out} should be a Flink savepoint"
    read = read_flink_savepoint(out).operator("op")
    assert read.max_parallelism == 300, read.max_parallelism
    assert {s.name: s.kind for s in read.keyed_states} == {"count": "value", "names": "list", "amounts": "map"}
    got = {(e.key, e.value) for e in read.keyed_state("count").entries()}
    assert got == {(k, i) for i, k in enumerate(keys)}, sorted(got)[:3]
    restored = backend_class.restore(out, StringSerializer(), operator_uid="op")
    count = restored.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    amounts = restored.get_map_state(MapStateDescriptor("amounts", StringSerializer(), LongSerializer()))
    for i, key in enumerate(keys):
        restored.set_current_key(key)
        assert count.value() == i and amounts.items() == [("a", i), ("none", None)], f"key {key!r}"
    restored.set_current_key("a new key")
    count.update(-1)
    own = restored.savepoint(str(tmp_path / "own"))  # this project's format: its own key groups again
    restored.close()
    again = backend_class.restore(own, StringSerializer())
    count = again.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    for i, key in enumerate([*keys, "a new key"]):
        again.set_current_key(key)
        assert count.value() == (i if i < len(keys) else -1), f"key {key!r} after converting back"
    again.close()


def test_convert_refuses_a_serializer_without_a_flink_identity(tmp_path):
    backend = HeapStateBackend(StringSerializer())
    state = backend.get_value_state(ValueStateDescriptor("p", PickleSerializer()))
    backend.set_current_key("a")
    state.update({1: 2})
    own = backend.savepoint(str(tmp_path / "own"))
    with pytest.raises(SnapshotFormatError) as raised:
        convert_to_flink_savepoint(own, str(tmp_path / "out"), operator_uid="op")
    message = str(raised.value)
    assert "state 'p'" in message and "no Flink identity" in message and "register_type" in message, message
    assert not (tmp_path / "out").exists(), "nothing may be written"


def test_a_key_type_without_java_hash_code_is_refused_for_flink(tmp_path):
    backend = BytesStateBackend(BytesSerializer())
    state = backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
    backend.set_current_key(b"k")
    state.update(1)
    with pytest.raises(StateError) as raised:
        backend.savepoint(str(tmp_path / "out"), format="flink", operator_uid="op")
    assert "BytesSerializer" in str(raised.value) and "hashCode" in str(raised.value), str(raised.value)
    assert not (tmp_path / "out").exists()
    with pytest.raises(StateError) as raised:
        backend.savepoint(str(tmp_path / "out"), format="flink")
    assert "operator_uid=" in str(raised.value), str(raised.value)
    with pytest.raises(StateError) as raised:
        backend.savepoint(str(tmp_path / "out"), format="parquet")
    assert "'reference'" in str(raised.value) and "'flink'" in str(raised.value), str(raised.value)


def _named_row(*names_and_serializers):
    from reference.serializers import RowSerializer

    return RowSerializer([(name, serializer, True) for name, serializer in names_and_serializers])


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_old_row_types_name_a_flink_row_so_it_evolves_by_name(backend_class):
    from reference import StateMigrationError
    from reference.backends import SCHEMA_EVOLUTION_ENABLED
    from reference.serializers import DoubleSerializer

    path, expected = _kept("rocksdb_inline_string")
    name, total, ratio = ("name", StringSerializer()), ("total", LongSerializer()), ("ratio", DoubleSerializer())
    reordered = _named_row(ratio, name, total, ("note", StringSerializer()))
    plain = backend_class.restore(str(path), StringSerializer(), config=SCHEMA_EVOLUTION_ENABLED,
                                  operator_uid="keyed-states", states=["row"])
    with pytest.raises(StateMigrationError) as raised:  # f0..f2: the reorder reads as fields removed
        plain.get_value_state(ValueStateDescriptor("row", reordered))
    assert "'f0' was removed or renamed" in str(raised.value), str(raised.value)
    plain.close()
    as_is = backend_class.restore(str(path), StringSerializer(), operator_uid="keyed-states", states=["row"],
                                  old_row_types={"row": ["name", "total", "ratio"]})
    as_is.get_value_state(ValueStateDescriptor("row", _named_row(name, total, ratio)))  # the same row: as is
    as_is.close()
    named = backend_class.restore(str(path), StringSerializer(), config=SCHEMA_EVOLUTION_ENABLED,
                                  operator_uid="keyed-states", states=["row"],
                                  old_row_types={"row": ["name", "total", "ratio"]})
    rows = named.get_value_state(ValueStateDescriptor("row", reordered))
    entries = expected["operators"]["keyed-states"]["states"]["row"]["entries"]
    assert entries
    for e in entries:
        named.set_current_key(e["key"])
        got = rows.value()
        old_name, old_total, _ratio = e["value"]["fields"]
        assert (got[1], got[2], got[3]) == (old_name, old_total, None) and isinstance(got[0], float), f"{e}: {got}"
        assert getattr(got, "kind", RowKind.INSERT).name == e["value"]["row_kind"], f"{e}: row kind of {got!r}"
    named.close()
    with pytest.raises(StateError) as raised:
        backend_class.restore(str(path), StringSerializer(), operator_uid="keyed-states", states=["row"],
                              old_row_types={"row": ["name", "total"]})
    assert "3 fields" in str(raised.value), str(raised.value)


def test_a_flink_savepoint_restores_into_the_rocksdb_store(tmp_path):
    path, expected = _kept("hashmap_files_long")
    backend = BytesStateBackend.restore(str(path), LongSerializer(), store="rocksdb", path=str(tmp_path / "db"),
                                        operator_uid="keyed-states", states=["count", "names"])
    count = backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    names = backend.get_list_state(ListStateDescriptor("names", StringSerializer()))
    states = expected["operators"]["keyed-states"]["states"]
    for e in states["count"]["entries"]:
        backend.set_current_key(e["key"])
        assert count.value() == e["value"], e
    for e in states["names"]["entries"]:
        backend.set_current_key(e["key"])
        assert names.get() == e["value"], e
    out = backend.savepoint(str(tmp_path / "again"), format="flink", operator_uid="keyed-states")
    backend.close()
    read = {(x.key, x.key_group, x.value) for x in read_flink_savepoint(out).operator("keyed-states")
            .keyed_state("count").entries()}
    assert read == {(e["key"], e["key_group"], e["value"]) for e in states["count"]["entries"]}, sorted(read)[:3]
