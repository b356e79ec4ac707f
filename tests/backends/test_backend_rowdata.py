"""FLIP-527 over RowData (``RowDataSerializer``, Flink's Table runtime rows) through the
backends: opt-in, migrated by field name on every backend by the migration plan, refused for
incompatible changes."""

from decimal import Decimal

import pytest
from backend_support import BACKENDS, make_backend, restore_backend

from reference import StateMigrationError
from reference import sqltypes as sql
from reference.backends import ListStateDescriptor, ValueStateDescriptor
from reference.serializers import Row, RowDataSerializer, RowKind, StringSerializer, TimestampData

KEY = StringSerializer()
# FLIP-527's motivating example: an Events row whose nested row gains nullable fields
DEVICE_V1 = sql.RowType([("userId", sql.IntType()), ("timestamp", sql.BigIntType()), ("deviceType", sql.VarCharType())])
DEVICE_V2 = sql.RowType([("userId", sql.IntType()), ("timestamp", sql.BigIntType()), ("deviceType", sql.VarCharType()),
                         ("osVersion", sql.VarCharType()), ("appVersion", sql.VarCharType())])
EVENT_V1 = sql.RowType([("id", sql.BigIntType(False)), ("device", DEVICE_V1), ("amount", sql.DecimalType(20, 2)),
                        ("at", sql.TimestampType(6))])
# the nested row evolved, the top-level fields reordered, a nullable field added
EVENT_V2 = sql.RowType([("at", sql.TimestampType(6)), ("id", sql.BigIntType(False)), ("device", DEVICE_V2),
                        ("note", sql.VarCharType()), ("amount", sql.DecimalType(20, 2))])
EVENTS = {
    "a": (1, (7, 1_700_000_000_000, "phone with a long name"), Decimal("12.34"), TimestampData(5, 6)),
    "b": (2, None, None, None),
    "c": Row((3, (None, -1, "tv"), Decimal("-0.01"), TimestampData(-5)), RowKind.UPDATE_AFTER),
}


def event_v2(old):
    """The oracle, written from FLIP-527's rule (fields matched by name, added ones null)."""
    pid, device, amount, at = old
    new_device = None if device is None else (*device, None, None)
    values = (at, pid, new_device, None, amount)
    return Row(values, old.kind) if isinstance(old, Row) else values


def _savepoint(tmp_path, backend_kind):
    backend = make_backend(backend_kind, KEY)
    try:
        value = backend.get_value_state(ValueStateDescriptor("event", RowDataSerializer(EVENT_V1)))
        history = backend.get_list_state(ListStateDescriptor("history", RowDataSerializer(EVENT_V1)))
        for key, event in EVENTS.items():
            backend.set_current_key(key)
            value.update(event)
            history.add_all([event, event])
        return backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()


def test_rowdata_evolution_is_refused_without_the_option(tmp_path, backend_kind):
    restored = restore_backend(backend_kind, _savepoint(tmp_path, backend_kind), KEY)
    try:
        with pytest.raises(StateMigrationError) as info:
            restored.get_value_state(ValueStateDescriptor("event", RowDataSerializer(EVENT_V2)))
        message = str(info.value)
        assert "state.schema-evolution.enable" in message and "device.osVersion" in message, (
            f"got {message!r}, should name the option and the evolved fields")
    finally:
        restored.close()


@pytest.mark.parametrize("second", BACKENDS)
def test_rowdata_evolution_migrates_by_name_on_every_backend(tmp_path, backend_kind, second):
    sp1 = _savepoint(tmp_path, backend_kind)
    restored = restore_backend(second, sp1, KEY, config={"state.schema-evolution.enable": True})
    try:
        value = restored.get_value_state(ValueStateDescriptor("event", RowDataSerializer(EVENT_V2)))
        history = restored.get_list_state(ListStateDescriptor("history", RowDataSerializer(EVENT_V2)))
        for key, event in EVENTS.items():
            restored.set_current_key(key)
            want = event_v2(event)
            assert value.value() == want, f"got {value.value()!r}, should be {want!r} (key {key})"
            assert getattr(value.value(), "kind", RowKind.INSERT) is getattr(want, "kind", RowKind.INSERT)
            assert history.get() == [want, want], f"got {history.get()!r}, should be [{want!r}] * 2 (key {key})"
    finally:
        restored.close()


def test_incompatible_rowdata_change_is_refused_with_the_option(tmp_path, backend_kind):
    renamed = sql.RowType([("id", sql.BigIntType(False)), ("dev", DEVICE_V1), ("amount", sql.DecimalType(20, 2)),
                           ("at", sql.TimestampType(6))])
    restored = restore_backend(backend_kind, _savepoint(tmp_path, backend_kind), KEY,
                               config={"state.schema-evolution.enable": True})
    try:
        with pytest.raises(StateMigrationError, match="'device' was removed or renamed"):
            restored.get_value_state(ValueStateDescriptor("event", RowDataSerializer(renamed)))
    finally:
        restored.close()
