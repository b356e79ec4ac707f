"""A savepoint is untrusted input: restoring it runs no code from it (no unpickling without the
caller's opt-in), a damaged one is a ``SavepointFormatError`` naming file and state, and the
temporary siblings of abandoned writes are removed by the next write to the same target."""

from __future__ import annotations

import base64
import json
import os
import pickle
import socket
import subprocess
import sys
import time

import pytest
from backend_support import restore_backend

from reference import PickleNotAllowedError, snapshot_to_bytes
from reference.backends import HeapStateBackend, ValueStateDescriptor
from reference.savepoint import (
    METADATA_FILE,
    SavepointFormatError,
    read_savepoint_content,
    read_savepoint_metadata,
    remove_abandoned_attempts,
    state_data_files,
)
from reference.serializers import BytesSerializer, ListSerializer, PickleSerializer, StringSerializer

#: What the crafted pickles below did when they were unpickled.
RAN: list[str] = []


def _ran(what: str) -> str:
    RAN.append(what)
    return what


class Payload:
    """Unpickles into a call of ``_ran``: stands for ``os.system`` in a crafted savepoint."""

    def __reduce__(self):
        return (_ran, ("code from the savepoint",))


def _crafted_savepoint(directory, snapshot_serializer=None) -> str:
    """A savepoint whose value state 'v' holds pickles written as plain bytes (int length +
    payload, PickleSerializer's layout), and whose snapshot is then swapped for Pickle's."""
    snapshot_serializer = snapshot_serializer or PickleSerializer()
    backend = HeapStateBackend(StringSerializer())
    state = backend.get_value_state(ValueStateDescriptor("v", BytesSerializer()))
    for key in ("a", "b"):
        backend.set_current_key(key)
        state.update(pickle.dumps(Payload(), protocol=5))
    path = backend.savepoint(os.path.join(directory, "crafted"))
    backend.close()
    file = os.path.join(path, METADATA_FILE)
    with open(file, encoding="utf-8") as handle:
        doc = json.load(handle)
    doc["states"][0]["value_serializer_snapshot"] = base64.b64encode(
        snapshot_to_bytes(snapshot_serializer.snapshot_configuration())
    ).decode("ascii")
    with open(file, "w", encoding="utf-8") as handle:
        json.dump(doc, handle)
    return path


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()
    yield
    RAN.clear()


def test_restoring_a_savepoint_naming_pickle_unpickles_nothing(backend_kind, tmp_path):
    path = _crafted_savepoint(tmp_path)
    before = read_savepoint_content(path)
    backend = restore_backend(backend_kind, path, StringSerializer())
    try:
        assert RAN == [], f"got {RAN} at restore, should run nothing from the savepoint"
        assert sorted(backend.keys("v")) == ["a", "b"], (
            f"got keys {backend.keys('v')}, should list the keys without reading values"
        )
        with pytest.raises(PickleNotAllowedError, match=r"state 'v'.*allow_pickle=\{'v'\}"):
            backend.get_value_state(ValueStateDescriptor("v", BytesSerializer()))
        assert RAN == [], f"got {RAN} after a refused access, should run nothing"
        written = backend.savepoint(tmp_path / "again")
    finally:
        backend.close()
    assert read_savepoint_content(written) == before, "got other content, should write the unread state back verbatim"
    assert RAN == [], f"got {RAN}, should run nothing from the savepoint"


@pytest.mark.parametrize("swapped", [ListSerializer(PickleSerializer())], ids=["nested"])
def test_a_nested_pickle_snapshot_is_refused_as_well(swapped, tmp_path):
    path = _crafted_savepoint(tmp_path, swapped)
    backend = HeapStateBackend.restore(path, key_serializer=StringSerializer())
    try:
        with pytest.raises(PickleNotAllowedError):
            backend.get_value_state(ValueStateDescriptor("v", BytesSerializer()))
    finally:
        backend.close()
    assert RAN == [], f"got {RAN}, should run nothing from the savepoint"


def test_allow_pickle_opts_in_for_the_named_state_only(tmp_path):
    path = _crafted_savepoint(tmp_path)
    other = HeapStateBackend.restore(path, key_serializer=StringSerializer(), allow_pickle={"w"})
    other.close()
    assert RAN == [], f"got {RAN} with another state allowed, should run nothing"
    backend = HeapStateBackend.restore(path, key_serializer=StringSerializer(), allow_pickle={"v"})
    backend.close()
    assert RAN == ["code from the savepoint"] * 2, f"got {RAN}, should unpickle both values of the allowed state"
    with pytest.raises(TypeError, match="allow_pickle"):
        HeapStateBackend.restore(path, key_serializer=StringSerializer(), allow_pickle="v")


def test_a_pickle_descriptor_is_the_callers_opt_in(backend_kind, tmp_path):
    path = _crafted_savepoint(tmp_path)
    backend = restore_backend(backend_kind, path, StringSerializer())
    try:
        state = backend.get_value_state(ValueStateDescriptor("v", PickleSerializer()))
        backend.set_current_key("a")
        assert state.value() == "code from the savepoint", f"got {state.value()!r}, should read the pickle"
    finally:
        backend.close()
    assert "code from the savepoint" in RAN, f"got {RAN}, should unpickle once the descriptor asks for it"


def test_a_nullable_key_column_holding_a_null_is_a_savepoint_error(backend_kind, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    backend = HeapStateBackend(StringSerializer())
    state = backend.get_value_state(ValueStateDescriptor("v", StringSerializer()))
    for key in ("a", "b"):
        backend.set_current_key(key)
        state.update(key)
    path = backend.savepoint(tmp_path / "sp")
    backend.close()
    file = state_data_files(path, read_savepoint_metadata(path).state("v"))[0]
    table = pq.read_table(file)
    rows = table.to_pylist()
    rows[0]["key"] = None
    schema = table.schema.set(1, pa.field("key", pa.binary(), nullable=True))
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), file)
    with pytest.raises(SavepointFormatError, match=rf"{file}.*state 'v'.*nullable"):
        read_savepoint_content(path)
    with pytest.raises(SavepointFormatError, match="state 'v'"):
        restore_backend(backend_kind, path, StringSerializer())


def test_a_corrupt_parquet_footer_is_a_savepoint_error_naming_file_and_state(tmp_path):
    backend = HeapStateBackend(StringSerializer())
    state = backend.get_value_state(ValueStateDescriptor("v", StringSerializer()))
    backend.set_current_key("a")
    state.update("x")
    path = backend.savepoint(tmp_path / "sp")
    backend.close()
    file = state_data_files(path, read_savepoint_metadata(path).state("v"))[0]
    with open(file, "rb") as handle:
        raw = bytearray(handle.read())
    raw[-40:-8] = b"\xff" * 32  # the footer's end, before its length and the magic
    with open(file, "wb") as handle:
        handle.write(bytes(raw))
    with pytest.raises(SavepointFormatError, match=rf"{file}.*state 'v'"):
        read_savepoint_content(path)


@pytest.mark.parametrize("text", ["[" * 100000, "{" * 100000, '{"a":' * 5000 + "1" + "}" * 5000])
def test_deeply_nested_metadata_is_a_savepoint_error(tmp_path, text):
    path = tmp_path / "sp"
    path.mkdir()
    (path / METADATA_FILE).write_text(text)
    with pytest.raises(SavepointFormatError, match="deeper than"):
        read_savepoint_metadata(path)


# -- litter -----------------------------------------------------------------------------------
def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _host() -> str:
    import re

    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())[:64] or "host"


def test_the_next_write_removes_only_provably_abandoned_attempts(tmp_path):
    dead, alive = _dead_pid(), os.getpid()
    names = {
        "dead": f".sp.tmp-{_host()}-{dead}-aaaa",
        "alive": f".sp.tmp-{_host()}-{alive}-bbbb",
        "other-host-fresh": ".sp.tmp-elsewhere-1-cccc",
        "other-host-old": ".sp.tmp-elsewhere-2-dddd",
        "unknown-old": ".sp.tmp-0123456789abcdef",
        "other-target": f".spx.tmp-{_host()}-{dead}-eeee",
    }
    for name in names.values():
        (tmp_path / name).mkdir()
        (tmp_path / name / "part").write_bytes(b"x")
    two_days_ago = time.time() - 2 * 86400
    for key in ("other-host-old", "unknown-old"):
        for item in (tmp_path / names[key] / "part", tmp_path / names[key]):
            os.utime(item, (two_days_ago, two_days_ago))
    backend = HeapStateBackend(StringSerializer())
    backend.savepoint(tmp_path / "sp")
    backend.close()
    left = sorted(n for n in os.listdir(tmp_path) if n.startswith("."))
    should = sorted(names[k] for k in ("alive", "other-host-fresh", "other-target"))
    assert left == should, f"got {left} left, should keep only live, recent or other targets' attempts"
    assert remove_abandoned_attempts(tmp_path / "sp") == [], "got removals, should have nothing left to remove"
