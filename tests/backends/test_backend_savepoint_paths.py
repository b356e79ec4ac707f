"""Paths read from a savepoint's listing are untrusted: a data directory or data file name that
is not one of the shapes the format writes (``state-NNNN``, ``part-NNNNN[.<attempt>].parquet``)
is a ``SavepointFormatError`` naming the state and the name, raised before any file system call;
no ``OSError`` (a path under a file, a name too long, a NUL) ever leaves a reader."""

from __future__ import annotations

import json
import os

import pytest
from backend_support import restore_backend

from reference import StateError
from reference.backends import HeapStateBackend, ValueStateDescriptor
from reference.savepoint import (
    METADATA_FILE,
    SavepointFormatError,
    check_state_files,
    read_savepoint_content,
    read_savepoint_metadata,
)
from reference.serializers import LongSerializer, StringSerializer

#: (field, value) pairs a hostile listing may hold, for the first state.
HOSTILE = [
    ("data", "_metadata.json"),             # a path under a file: NotADirectoryError before
    ("data", "x" * 300),                    # a name too long: OSError before
    ("data", "state-0000\x00"),             # a NUL: ValueError before
    ("data", ".."),
    ("data", "/tmp"),
    ("data", "state-0000/.."),
    ("data", "state-0000\\x"),
    ("data", ""),
    ("data", "state-0"),
    ("data", "state-" + "0" * 300),
    ("file", "../state-0000/part-00000.parquet"),
    ("file", "/etc/part-00000.parquet"),
    ("file", "x" * 300 + ".parquet"),
    ("file", "part-00000.parquet\x00"),
    ("file", "part-00000..parquet"),
    ("file", "part-00000.a\\b.parquet"),
    ("file", "part-00000." + "a" * 300 + ".parquet"),
    ("file", "_metadata.json"),
    ("file", "other.parquet"),
    ("file", "part-1.parquet"),
]


def _savepoint(directory) -> str:
    backend = HeapStateBackend(StringSerializer())
    state = backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
    for i, key in enumerate(("a", "b")):
        backend.set_current_key(key)
        state.update(i)
    path = backend.savepoint(os.path.join(directory, "sp"))
    backend.close()
    return path


def _set(path: str, field: str, value: str) -> None:
    file = os.path.join(path, METADATA_FILE)
    with open(file, encoding="utf-8") as handle:
        doc = json.load(handle)
    if field == "data":
        doc["states"][0]["data"] = value
    else:
        doc["states"][0]["files"][0]["name"] = value
    with open(file, "w", encoding="utf-8") as handle:
        json.dump(doc, handle)


@pytest.mark.parametrize("field, value", HOSTILE, ids=[f"{f}-{v[:24]!r}" for f, v in HOSTILE])
def test_a_hostile_path_in_the_listing_is_a_savepoint_error(tmp_path, field, value):
    path = _savepoint(tmp_path)
    _set(path, field, value)
    with pytest.raises(SavepointFormatError) as info:
        read_savepoint_metadata(path)
    message = str(info.value)
    assert "state 'v'" in message and repr(value)[:40] in message, (
        f"got {message!r}, should name the state and the invalid name"
    )


@pytest.mark.parametrize("field, value", [("data", "_metadata.json"), ("data", "x" * 300)], ids=["under-a-file", "too-long"])
def test_every_reader_refuses_a_hostile_path_with_a_state_error(tmp_path, backend_kind, field, value):
    path = _savepoint(tmp_path)
    _set(path, field, value)
    readers = {
        "content": lambda: read_savepoint_content(path),
        "restore": lambda: restore_backend(backend_kind, path, StringSerializer()).close(),
    }
    for _name, read in readers.items():
        with pytest.raises(SavepointFormatError, match="state 'v'"):
            read()


def test_a_file_system_failure_reading_a_data_file_is_a_state_error_naming_file_and_state(tmp_path):
    """What validation cannot see (here: the data directory replaced by a file, so the listed
    file is a path under a file) is still a StateError naming the file and the state."""
    import shutil

    path = _savepoint(tmp_path)
    metadata = read_savepoint_metadata(path)
    directory = os.path.join(path, metadata.states[0].data)
    shutil.rmtree(directory)
    with open(directory, "wb") as handle:
        handle.write(b"not a directory")
    with pytest.raises(StateError) as info:
        check_state_files(path, metadata.states[0])
    message = str(info.value)
    assert "state 'v'" in message and "part-00000.parquet" in message, (
        f"got {type(info.value).__name__}: {message!r}, should name the file and the state"
    )
