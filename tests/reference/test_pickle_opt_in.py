"""Snapshots read from bytes are untrusted: a ``PickleSerializer`` restored from one (at any
depth of nesting) refuses to unpickle until the caller opts in with ``allow_pickle=True`` on
the snapshot reader; a ``PickleSerializer`` the caller constructs unpickles as always."""

from __future__ import annotations

import pickle

import pytest

from reference import (
    DataInputView,
    PickleNotAllowedError,
    StateError,
    read_serializer_snapshot,
    read_versioned_snapshot,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference._io import DataOutputView
from reference._snapshot import write_versioned_snapshot
from reference.serializers import (
    ListSerializer,
    MapSerializer,
    PickleSerializer,
    RowSerializer,
    StringSerializer,
)

#: What the crafted pickles below did when they were unpickled.
RAN: list[str] = []


def _ran(what: str) -> str:
    RAN.append(what)
    return what


class Payload:
    """Unpickles into a call of ``_ran``: stands for ``os.system`` in crafted record bytes."""

    def __reduce__(self):
        return (_ran, ("code from the record",))


@pytest.fixture(autouse=True)
def _clear_ran():
    RAN.clear()
    yield
    RAN.clear()


SHAPES = {
    "pickle": (PickleSerializer(), Payload()),
    "list": (ListSerializer(PickleSerializer()), [Payload()]),
    "map": (MapSerializer(StringSerializer(), PickleSerializer()), {"k": Payload()}),
    "row": (RowSerializer([("p", PickleSerializer(), True)]), (Payload(),)),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_serializer_restored_from_snapshot_bytes_refuses_to_unpickle(shape):
    serializer, value = SHAPES[shape]
    record = serializer.to_bytes(value)
    restored = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration())).restore_serializer()
    with pytest.raises(PickleNotAllowedError, match=r"allow_pickle=True") as info:
        restored.from_bytes(record)
    assert isinstance(info.value, StateError), "got an error outside the hierarchy"
    assert RAN == [], f"got {RAN}, should unpickle nothing without the caller's opt-in"


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_allow_pickle_on_the_snapshot_reader_is_the_opt_in(shape):
    serializer, value = SHAPES[shape]
    record = serializer.to_bytes(value)
    data = snapshot_to_bytes(serializer.snapshot_configuration())
    readers = {
        "snapshot_from_bytes": lambda: snapshot_from_bytes(data, allow_pickle=True),
        "read_serializer_snapshot": lambda: read_serializer_snapshot(DataInputView(data), allow_pickle=True),
        "read_versioned_snapshot": lambda: read_versioned_snapshot(DataInputView(data[4:]), allow_pickle=True),
    }
    for reader, read in readers.items():
        RAN.clear()
        read().restore_serializer().from_bytes(record)
        assert RAN == ["code from the record"], f"got {RAN} through {reader}, should unpickle once opted in"


def test_read_versioned_snapshot_refuses_by_default_and_nested_reads_inherit_the_opt_in():
    serializer = ListSerializer(PickleSerializer())
    record = serializer.to_bytes([Payload()])
    out = DataOutputView()
    write_versioned_snapshot(out, serializer.snapshot_configuration())
    with pytest.raises(PickleNotAllowedError):
        read_versioned_snapshot(DataInputView(out.getvalue())).restore_serializer().from_bytes(record)
    assert RAN == [], f"got {RAN}, should unpickle nothing by default"


def test_a_constructed_pickle_serializer_unpickles_as_before():
    serializer = PickleSerializer()
    record = serializer.to_bytes(Payload())
    assert serializer.from_bytes(record) == "code from the record", "a user's own PickleSerializer should read"
    again = serializer.snapshot_configuration().restore_serializer()
    assert again.from_bytes(record) == "code from the record", "its own snapshot should restore one that reads"
    assert RAN == ["code from the record"] * 2, f"got {RAN}, should unpickle both reads"


def test_the_refusal_survives_pickling_the_serializer_and_copy_serialized_still_works():
    restored = snapshot_from_bytes(snapshot_to_bytes(PickleSerializer().snapshot_configuration())).restore_serializer()
    assert restored == PickleSerializer(), "a refusing serializer should still equal PickleSerializer()"
    shipped = pickle.loads(pickle.dumps(restored))
    record = PickleSerializer().to_bytes(Payload())
    with pytest.raises(PickleNotAllowedError):
        shipped.from_bytes(record)
    out = DataOutputView()
    shipped.copy_serialized(DataInputView(record), out)
    assert out.getvalue() == record, "copying a record's bytes unpickles nothing and should still work"
    assert RAN == [], f"got {RAN}, should unpickle nothing"
