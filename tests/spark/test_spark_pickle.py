"""The Spark jobs read a state written with PickleSerializer exactly when the caller opted in,
by the rule the backends follow: ``verify_savepoint(..., allow_pickle=...)`` names the state,
``migrate_savepoint`` is given a descriptor that uses PickleSerializer. Then every entry
decodes (the serializers restored from the savepoint's snapshot bytes may unpickle)."""

from __future__ import annotations

import pytest

from conformance.spark import migrate_savepoint, verify_savepoint
from reference.backends import HeapStateBackend, ValueStateDescriptor
from reference.serializers import ListSerializer, LongSerializer, PickleSerializer

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

KEYS = 40


def _descriptor() -> ValueStateDescriptor:
    return ValueStateDescriptor("blobs", ListSerializer(PickleSerializer()))


def test_verify_and_migrate_decode_a_pickled_state_the_caller_opted_in_for(spark, tmp_path):
    backend = HeapStateBackend(LongSerializer())
    state = backend.get_value_state(_descriptor())
    for key in range(KEYS):
        backend.set_current_key(key)
        state.update([{"key": key}, (key, None, b"\x00" * key)])
    path = backend.savepoint(str(tmp_path / "sp"))
    backend.close()

    report = verify_savepoint(path, spark=spark, allow_pickle={"blobs"})
    assert report.ok and report.entries == KEYS, f"got {report.format()}, should decode all {KEYS} entries"

    out = str(tmp_path / "out")
    migrate_savepoint(path, [_descriptor()], out, mode="heap", spark=spark)
    again = verify_savepoint(out, expect=path, spark=spark, allow_pickle=True)
    assert again.ok and again.entries == KEYS, (
        f"got {again.format()}, should decode all {KEYS} migrated entries, equal to the input's"
    )
