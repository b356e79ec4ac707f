"""FLIP-527 row evolution through the backends: opt-in, migrated by field name on every
backend, refused for incompatible changes and for evolving map user keys."""


import pytest
from backend_support import BACKENDS, make_backend, restore_backend, savepoint_content

from reference import StateMigrationError
from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from reference.serializers import IntSerializer, LongSerializer, Row, RowKind, RowSerializer, StringSerializer

KEY = StringSerializer()
ADDRESS_V1 = RowSerializer([("street", StringSerializer(), True), ("zip", IntSerializer(), True)])
# nested row: a nullable field added in front
ADDRESS_V2 = RowSerializer([("country", StringSerializer(), True), ("street", StringSerializer(), True), ("zip", IntSerializer(), True)])
PERSON_V1 = RowSerializer([("id", LongSerializer(), False), ("name", StringSerializer(), True), ("address", ADDRESS_V1, True)])
# reordered, nested row evolved, a nullable field added
PERSON_V2 = RowSerializer(
    [("address", ADDRESS_V2, True), ("nickname", StringSerializer(), True), ("name", StringSerializer(), True), ("id", LongSerializer(), False)]
)
PERSON_RENAMED = RowSerializer([("id", LongSerializer(), False), ("full_name", StringSerializer(), True), ("address", ADDRESS_V1, True)])

PEOPLE = {
    "a": (1, "Ann", ("Main St", 12345)),
    "b": (2, None, None),
    "c": Row.of(3, "Cé", (None, -1), kind=RowKind.UPDATE_AFTER),
}


def person_v2(old):
    """The oracle, written from FLIP-527's rule (fields matched by name, added ones null)."""
    pid, name, address = old
    new_address = None if address is None else (None, address[0], address[1])
    values = (new_address, None, name, pid)
    return Row(values, kind=old.kind) if isinstance(old, Row) else values


def _people_savepoint(tmp_path, backend_kind):
    backend = make_backend(backend_kind, KEY)
    try:
        value = backend.get_value_state(ValueStateDescriptor("person", PERSON_V1))
        history = backend.get_list_state(ListStateDescriptor("history", PERSON_V1))
        by_tag = backend.get_map_state(MapStateDescriptor("by_tag", StringSerializer(), PERSON_V1))
        for key, person in PEOPLE.items():
            backend.set_current_key(key)
            value.update(person)
            history.add_all([person, person])
            by_tag.put("x", person)
            by_tag.put("null", None)
        return backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()


def _check(backend, convert):
    value = backend.get_value_state(ValueStateDescriptor("person", PERSON_V2))
    history = backend.get_list_state(ListStateDescriptor("history", PERSON_V2))
    by_tag = backend.get_map_state(MapStateDescriptor("by_tag", StringSerializer(), PERSON_V2))
    for key, person in PEOPLE.items():
        backend.set_current_key(key)
        want = convert(person)
        got = value.value()
        assert got == want and type(got) is type(want), f"got {got!r}, should be {want!r} (value, key {key})"
        if isinstance(want, Row):
            assert got.kind is want.kind, f"got kind {got.kind}, should be {want.kind} (key {key})"
        assert history.get() == [want, want], f"got {history.get()!r}, should be [{want!r}] * 2 (list, key {key})"
        got_map = dict(by_tag.items())
        assert got_map == {"x": want, "null": None}, f"got {got_map!r}, should map x to {want!r} and keep null"


def test_row_evolution_is_refused_without_the_option(tmp_path, backend_kind):
    sp1 = _people_savepoint(tmp_path, backend_kind)
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        with pytest.raises(StateMigrationError) as info:
            restored.get_value_state(ValueStateDescriptor("person", PERSON_V2))
        message = str(info.value)
        assert "state.schema-evolution.enable" in message and "'person'" in message, (
            f"got {message!r}, should name the option and the state"
        )
    finally:
        restored.close()


@pytest.mark.parametrize("second", BACKENDS)
def test_row_evolution_migrates_by_name_on_every_backend(tmp_path, backend_kind, second):
    sp1 = _people_savepoint(tmp_path, backend_kind)
    restored = restore_backend(second, sp1, KEY, config={"state.schema-evolution.enable": True})
    try:
        _check(restored, person_v2)
        sp2 = restored.savepoint(tmp_path / "sp2")
    finally:
        restored.close()
    again = restore_backend(backend_kind, sp2, KEY)  # the new format restores as is, flag off
    try:
        _check(again, person_v2)
    finally:
        again.close()


def test_row_migration_gives_identical_savepoints_on_heap_and_bytes(tmp_path):
    contents = []
    for kind in BACKENDS:
        sp1 = _people_savepoint(tmp_path / kind, kind)
        restored = restore_backend(kind, sp1, KEY, config={"state.schema-evolution.enable": True})
        try:
            _check(restored, person_v2)
            contents.append(savepoint_content(restored.savepoint(tmp_path / kind / "sp2")))
        finally:
            restored.close()
    assert contents[0] == contents[1] == contents[2], "got different migrated savepoints, should be identical on all backends"


def test_renamed_row_field_is_incompatible_and_names_the_field(tmp_path, backend_kind):
    sp1 = _people_savepoint(tmp_path, backend_kind)
    restored = restore_backend(backend_kind, sp1, KEY, config={"state.schema-evolution.enable": True})
    try:
        with pytest.raises(StateMigrationError) as info:
            restored.get_value_state(ValueStateDescriptor("person", PERSON_RENAMED))
        message = str(info.value)
        assert "row field 'name'" in message and "'person'" in message and "must not be incompatible" in message, (
            f"got {message!r}, should name the state and the field"
        )
        # nothing lost: the old serializer still reads everything
        value = restored.get_value_state(ValueStateDescriptor("person", PERSON_V1))
        restored.set_current_key("a")
        assert value.value() == PEOPLE["a"], f"got {value.value()!r}, should be {PEOPLE['a']!r}"
    finally:
        restored.close()


def test_evolving_row_user_key_is_refused(tmp_path, backend_kind):
    backend = make_backend(backend_kind, KEY)
    try:
        state = backend.get_map_state(MapStateDescriptor("m", ADDRESS_V1, LongSerializer()))
        backend.set_current_key("k")
        state.put(("Main", 1), 5)
        sp1 = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()
    restored = restore_backend(backend_kind, sp1, KEY, config={"state.schema-evolution.enable": True})
    try:
        with pytest.raises(StateMigrationError, match="only allows value schema evolutions"):
            restored.get_map_state(MapStateDescriptor("m", ADDRESS_V2, LongSerializer()))
    finally:
        restored.close()
