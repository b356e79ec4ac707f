"""The state API's observable contract on every backend: empty reads, clearing, None handling,
namespaces for all kinds, keys(), misuse errors, corrupt savepoints, restore in a fresh process."""

import json
import os
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from backend_support import BACKENDS, make_backend, restore_backend

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "storage"))
from storage_support import relist  # noqa: E402

from reference import SerializationError, StateError, StateMigrationError
from reference.backends import (
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from reference.savepoint import SavepointFormatError, read_savepoint_metadata, state_data_files
from reference.serializers import (
    DoubleSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    NullableSerializer,
    StringSerializer,
    TupleSerializer,
)

KEY = StringSerializer()


@pytest.fixture(params=BACKENDS)
def backend(request):
    b = make_backend(request.param, KEY)
    yield b
    b.close()


def test_empty_reads_and_clearing(backend):
    v = backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
    lst = backend.get_list_state(ListStateDescriptor("l", LongSerializer()))
    m = backend.get_map_state(MapStateDescriptor("m", StringSerializer(), LongSerializer()))
    assert isinstance(v, ValueState) and isinstance(lst, ListState) and isinstance(m, MapState), (
        f"got {type(v).__name__}/{type(lst).__name__}/{type(m).__name__}, should be the public state types"
    )
    backend.set_current_key("k")
    assert v.value() is None, f"got {v.value()!r}, should be None for an empty value state"
    assert lst.get() == [], f"got {lst.get()!r}, should be [] for an empty list state"
    assert m.items() == [] and m.is_empty(), f"got {m.items()!r}, should be empty"
    v.update(5)
    v.update(None)
    assert v.value() is None, f"got {v.value()!r}, should be None after update(None)"
    lst.add_all([1, 2])
    lst.update([])
    assert lst.get() == [], f"got {lst.get()!r}, should be [] after update([])"
    lst.add_all([])
    assert backend.keys("l") == [], f"got {backend.keys('l')}, should be [] (empty add_all stores nothing)"
    m.put("a", None)
    assert m.contains("a") and m.get("a") is None, "got no entry for a null map value, should hold a -> None"
    m.put_all({"b": 2, "c": 3})
    m.remove("b")
    assert m.keys() == ["a", "c"] and m.values() == [None, 3], f"got {m.items()}, should be [(a, None), (c, 3)]"
    m.clear()
    assert m.is_empty() and backend.keys("m") == [], f"got {m.items()}, should be empty after clear()"


def test_misuse_is_a_clear_state_error(backend):
    v = backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
    lst = backend.get_list_state(ListStateDescriptor("l", LongSerializer()))
    m = backend.get_map_state(MapStateDescriptor("m", StringSerializer(), LongSerializer()))
    with pytest.raises(StateError, match="set_current_key"):
        v.value()
    with pytest.raises(StateError, match="None"):
        backend.set_current_key(None)
    backend.set_current_key("k")
    with pytest.raises(StateError, match="None cannot be added"):
        lst.add(None)
    with pytest.raises(StateError, match="None cannot be added"):
        lst.update([1, None])
    assert lst.get() == [], f"got {lst.get()}, should be [] after refused updates"
    with pytest.raises(StateError, match="user keys may not be None"):
        m.put(None, 1)
    with pytest.raises(StateError, match="no namespace serializer"):
        v.set_current_namespace(3)
    with pytest.raises(TypeError):
        backend.get_value_state(ListStateDescriptor("l", LongSerializer()))
    backend.close()
    with pytest.raises(StateError, match="closed"):
        v.value()
    with pytest.raises(StateError, match="closed"):
        backend.set_current_key("k")


@pytest.mark.parametrize("kind", BACKENDS)
def test_namespaces_separate_every_kind(tmp_path, kind):
    backend = make_backend(kind, KEY)
    ns = IntSerializer()
    try:
        v = backend.get_value_state(ValueStateDescriptor("v", LongSerializer(), namespace_serializer=ns))
        lst = backend.get_list_state(ListStateDescriptor("l", LongSerializer(), namespace_serializer=ns))
        m = backend.get_map_state(MapStateDescriptor("m", StringSerializer(), LongSerializer(), namespace_serializer=ns))
        backend.set_current_key("k")
        with pytest.raises(StateError, match="set_current_namespace"):
            v.value()
        for window in (1, 2):
            for state in (v, lst, m):
                state.set_current_namespace(window)
            v.update(window)
            lst.add_all([window, window])
            m.put("x", window)
        path = backend.savepoint(tmp_path / "sp")
    finally:
        backend.close()
    for second in BACKENDS:
        restored = restore_backend(second, path, KEY)
        try:
            v = restored.get_value_state(ValueStateDescriptor("v", LongSerializer(), namespace_serializer=ns))
            lst = restored.get_list_state(ListStateDescriptor("l", LongSerializer(), namespace_serializer=ns))
            m = restored.get_map_state(MapStateDescriptor("m", StringSerializer(), LongSerializer(), namespace_serializer=ns))
            restored.set_current_key("k")
            for window in (1, 2, 3):
                for state in (v, lst, m):
                    state.set_current_namespace(window)
                want = None if window == 3 else window
                got = (v.value(), lst.get(), dict(m.items()))
                should = (want, [] if want is None else [want, want], {} if want is None else {"x": want})
                assert got == should, f"got {got}, should be {should} (window {window}, {kind} -> {second})"
            assert restored.keys("m", namespace=2) == ["k"], f"got {restored.keys('m', namespace=2)}, should be ['k']"
            assert restored.keys("m", namespace=3) == [], f"got {restored.keys('m', namespace=3)}, should be []"
        finally:
            restored.close()


@pytest.mark.parametrize("kind", BACKENDS)
def test_composite_values_round_trip_bit_exact(tmp_path, kind):
    serializer = TupleSerializer(DoubleSerializer(), ListSerializer(NullableSerializer(StringSerializer())))
    weird = (float("-0.0"), ["", None, "ü\x00"])
    backend = make_backend(kind, KEY)
    try:
        v = backend.get_value_state(ValueStateDescriptor("v", serializer))
        backend.set_current_key("k")
        v.update(weird)
        path = backend.savepoint(tmp_path / "sp")
    finally:
        backend.close()
    restored = restore_backend(kind, path, KEY)
    try:
        restored.set_current_key("k")
        got = restored.get_value_state(ValueStateDescriptor("v", serializer)).value()
        assert got == weird and str(got[0]) == "-0.0", f"got {got!r}, should be {weird!r} with -0.0 kept"
    finally:
        restored.close()


def test_savepoint_never_overwrites(tmp_path, backend):
    backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
    backend.savepoint(tmp_path / "sp")
    with pytest.raises(SavepointFormatError, match="already exists"):
        backend.savepoint(tmp_path / "sp")


def _savepoint_with_values(tmp_path):
    backend = make_backend("heap", KEY)
    try:
        v = backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
        for key in ("a", "b"):
            backend.set_current_key(key)
            v.update(len(key))
        return backend.savepoint(tmp_path / "sp")
    finally:
        backend.close()


def _rewrite_value_column(path, value):
    state = read_savepoint_metadata(path).state("v")
    (file,) = state_data_files(path, state)
    table = pq.read_table(file)
    column = pa.array([value] * table.num_rows, type=pa.binary())
    pq.write_table(table.set_column(4, "value", column), file)
    relist(path)


@pytest.mark.parametrize("kind", BACKENDS)
def test_corrupt_value_bytes_are_reported(tmp_path, kind):
    path = _savepoint_with_values(tmp_path)
    _rewrite_value_column(path, b"\x00\x01")  # 2 bytes where a long needs 8
    if kind == "heap":
        with pytest.raises(SavepointFormatError, match="state 'v'"):
            restore_backend(kind, path, KEY)
        return
    restored = restore_backend(kind, path, KEY)  # bytes are loaded, not read
    try:
        state = restored.get_value_state(ValueStateDescriptor("v", LongSerializer()))
        restored.set_current_key("a")
        with pytest.raises(SerializationError):
            state.value()
        with pytest.raises(StateMigrationError, match="state 'v'"):
            restored.get_value_state(ValueStateDescriptor("v", IntSerializer()))  # incompatible anyway
    finally:
        restored.close()


@pytest.mark.parametrize("kind", BACKENDS)
def test_missing_data_and_bad_rows_are_savepoint_errors(tmp_path, kind):
    path = _savepoint_with_values(tmp_path)
    state = read_savepoint_metadata(path).state("v")
    table = pq.read_table(state_data_files(path, state)[0])
    bad = table.set_column(0, table.schema.field(0), pa.array([500] * table.num_rows, type=pa.int32()))
    pq.write_table(bad, state_data_files(path, state)[0])
    relist(path)
    with pytest.raises(SavepointFormatError, match="key group 500"):
        restore_backend(kind, path, KEY)
    for file in state_data_files(path, state):
        os.remove(file)
    os.rmdir(os.path.join(path, state.data))
    with pytest.raises(SavepointFormatError, match="missing"):
        restore_backend(kind, path, KEY)


RESTORE_IN_FRESH_PROCESS = r"""
import json, sys
from reference.backends import {cls}, ValueStateDescriptor, MapStateDescriptor
from reference.serializers import LongSerializer, StringSerializer
b = {cls}.restore(sys.argv[1], key_serializer=StringSerializer())
v = b.get_value_state(ValueStateDescriptor("v", LongSerializer()))
m = b.get_map_state(MapStateDescriptor("m", StringSerializer(), LongSerializer()))
out = {{}}
for key in b.keys("v"):
    b.set_current_key(key)
    out[key] = [v.value(), sorted(m.items())]
b.close()
print(json.dumps(out))
"""


@pytest.mark.parametrize("cls", ["HeapStateBackend", "BytesStateBackend"])
def test_restore_in_a_fresh_process(tmp_path, cls):
    backend = make_backend("bytes-rocksdb", KEY)
    try:
        v = backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
        m = backend.get_map_state(MapStateDescriptor("m", StringSerializer(), LongSerializer()))
        for i, key in enumerate(["x", "y", "z"]):
            backend.set_current_key(key)
            v.update(i)
            m.put("n", None if i == 1 else -i)
        path = backend.savepoint(tmp_path / "sp")
    finally:
        backend.close()
    done = subprocess.run(
        [sys.executable, "-c", RESTORE_IN_FRESH_PROCESS.format(cls=cls), path],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, f"got exit {done.returncode}: {done.stderr[-2000:]}, should restore cleanly"
    got = json.loads(done.stdout)
    want = {"x": [0, [["n", 0]]], "y": [1, [["n", None]]], "z": [2, [["n", -2]]]}
    assert got == want, f"got {got}, should be {want}"


@pytest.mark.parametrize("second", BACKENDS)
def test_untouched_restored_states_are_written_back_unchanged(tmp_path, second):
    from backend_support import EvolvingSerializer, tree_bytes

    backend = make_backend("heap", KEY)
    try:
        v = backend.get_value_state(ValueStateDescriptor("v", EvolvingSerializer(1)))
        m = backend.get_map_state(MapStateDescriptor("m", StringSerializer(), LongSerializer(), namespace_serializer=IntSerializer()))
        for i, key in enumerate(("p", "q")):
            backend.set_current_key(key)
            v.update(i)
            m.set_current_namespace(i)
            m.put("z", None)
        first = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()
    restored = restore_backend(second, first, KEY)
    try:
        again = restored.savepoint(tmp_path / "sp2")
    finally:
        restored.close()
    assert tree_bytes(again) == tree_bytes(first), (
        f"got a different savepoint after restoring on {second} and touching nothing, should be byte-identical"
    )
