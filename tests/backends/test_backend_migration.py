"""Flink's StateBackendMigrationTestBase, on heap, bytes/memory and bytes/rocksdb:
value / list / map state x migration / reconfiguration / incompatible, map user-key changes,
key and namespace serializers, the row-evolution option, kind mismatches, failed migrations."""


import pytest
from backend_support import (
    BACKENDS,
    STEP,
    EvolvingSerializer,
    make_backend,
    restore_backend,
    tree_bytes,
)

from reference import StateError, StateMigrationError, snapshot_from_bytes
from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from reference.savepoint import decode_list_value, read_savepoint_metadata, read_state_rows
from reference.serializers import IntSerializer, LongSerializer, StringSerializer

KEYS = ["k1", "k2", "k3"]
KEY = StringSerializer()
ROWS = {"config": None}


def descriptor(kind, serializer, name="s", namespace=None, user_key=None):
    if kind == "value":
        return ValueStateDescriptor(name, serializer, namespace_serializer=namespace)
    if kind == "list":
        return ListStateDescriptor(name, serializer, namespace_serializer=namespace)
    return MapStateDescriptor(name, user_key or StringSerializer(), serializer, namespace_serializer=namespace)


def get_state(backend, desc):
    return getattr(backend, f"get_{desc.kind}_state")(desc)


def old_content(i):
    """What key i holds before the restore, per kind."""
    return {"value": 10 * i, "list": [i, i + 1, 44], "map": {"a": i, "b": None, "c": -i}}


def write(state, kind, content):
    if kind == "value":
        state.update(content)
    elif kind == "list":
        state.add(content[0])
        state.add_all(content[1:])
    else:
        for k, v in content.items():
            state.put(k, v)


def read(state, kind):
    if kind == "value":
        return state.value()
    if kind == "list":
        return state.get()
    return dict(state.items())


def migrated(kind, content, steps=1):
    delta = STEP * steps
    if kind == "value":
        return content + delta
    if kind == "list":
        return [x + delta for x in content]
    return {k: (None if v is None else v + delta) for k, v in content.items()}


def write_savepoint(tmp_path, backend_kind, kind, serializer, **desc_kw):
    backend = make_backend(backend_kind, KEY)
    try:
        state = get_state(backend, descriptor(kind, serializer, **desc_kw))
        other = backend.get_value_state(ValueStateDescriptor("other", LongSerializer()))
        for i, key in enumerate(KEYS):
            backend.set_current_key(key)
            if desc_kw.get("namespace") is not None:
                state.set_current_namespace(7)
            write(state, kind, old_content(i)[kind])
            other.update(i * 100)
        return backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()


def check_all(backend, desc, kind, expected_for, namespace=None):
    state = get_state(backend, desc)
    for i, key in enumerate(KEYS):
        backend.set_current_key(key)
        if namespace is not None:
            state.set_current_namespace(namespace)
        got = read(state, kind)
        want = expected_for(i)
        assert got == want, f"got {got!r}, should be {want!r} for key {key} ({kind} state)"
    return state


@pytest.mark.parametrize("kind", ["value", "list", "map"])
def test_migration_rewrites_every_entry_and_next_savepoint_is_new_format(tmp_path, backend_kind, kind):
    sp1 = write_savepoint(tmp_path, backend_kind, kind, EvolvingSerializer(1))
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        new = EvolvingSerializer(2, "after_migration")
        state = check_all(restored, descriptor(kind, new), kind, lambda i: migrated(kind, old_content(i)[kind]))
        restored.set_current_key("k9")
        write(state, kind, old_content(9)[kind])
        sp2 = restored.savepoint(tmp_path / "sp2")
    finally:
        restored.close()
    meta = read_savepoint_metadata(sp2).state("s")
    version = snapshot_from_bytes(meta.value_serializer_snapshot).version
    assert version == 2, f"got snapshot version {version}, should be 2 (the new serializer)"
    for _kg, key, _ns, _uk, value in read_state_rows(sp2, meta):
        if value is None:
            continue
        elements = decode_list_value(value, new) if kind == "list" else [value]
        for element in elements:
            assert element[0] == 2, f"got format v{element[0]}, should be v2 in {value.hex()} for {key!r}"
    # The new savepoint restores as is with the new serializer, on every backend.
    for other_kind in BACKENDS:
        again = restore_backend(other_kind, sp2, KEY)
        try:
            check_all(again, descriptor(kind, EvolvingSerializer(2)), kind,
                      lambda i: migrated(kind, old_content(i)[kind]))
        finally:
            again.close()


@pytest.mark.parametrize("kind", ["value", "list", "map"])
def test_reconfiguration_keeps_bytes_and_uses_reconfigured_serializer(tmp_path, backend_kind, kind):
    sp1 = write_savepoint(tmp_path, backend_kind, kind, EvolvingSerializer(1))
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        state = check_all(restored, descriptor(kind, EvolvingSerializer(2, "reconfigured")), kind,
                          lambda i: old_content(i)[kind])
        restored.set_current_key("k9")
        write(state, kind, old_content(9)[kind])
        sp2 = restored.savepoint(tmp_path / "sp2")
    finally:
        restored.close()
    meta = read_savepoint_metadata(sp2).state("s")
    version = snapshot_from_bytes(meta.value_serializer_snapshot).version
    assert version == 1, f"got snapshot version {version}, should be 1 (the reconfigured serializer)"
    again = restore_backend(backend_kind, sp2, KEY)
    try:
        state = get_state(again, descriptor(kind, EvolvingSerializer(1)))
        again.set_current_key("k9")
        got = read(state, kind)
        assert got == old_content(9)[kind], f"got {got!r}, should be {old_content(9)[kind]!r} after reconfiguration"
    finally:
        again.close()


@pytest.mark.parametrize("kind", ["value", "list", "map"])
def test_incompatible_fails_and_loses_nothing(tmp_path, backend_kind, kind):
    sp1 = write_savepoint(tmp_path, backend_kind, kind, EvolvingSerializer(1))
    before = tree_bytes(sp1)
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        with pytest.raises(StateMigrationError) as info:
            get_state(restored, descriptor(kind, EvolvingSerializer(2, "incompatible")))
        message = str(info.value)
        for fragment in ("'s'", "EvolvingSerializer(v1)", "EvolvingSerializer(v2)", "version 1 cannot become version 2"):
            assert fragment in message, f"got {message!r}, should mention {fragment!r}"
        # The other state keeps working, and the failed one is untouched for the old serializer.
        other = restored.get_value_state(ValueStateDescriptor("other", LongSerializer()))
        restored.set_current_key("k3")
        assert other.value() == 200, f"got {other.value()}, should be 200 from the other state"
        check_all(restored, descriptor(kind, EvolvingSerializer(1)), kind, lambda i: old_content(i)[kind])
    finally:
        restored.close()
    after = tree_bytes(sp1)
    assert after == before, "got a changed savepoint on disk, should be untouched"
    again = restore_backend(backend_kind, sp1, KEY)
    try:
        check_all(again, descriptor(kind, EvolvingSerializer(1)), kind, lambda i: old_content(i)[kind])
    finally:
        again.close()


@pytest.mark.parametrize("kind", ["value", "list", "map"])
def test_failed_migration_is_all_or_nothing(tmp_path, backend_kind, kind):
    sp1 = write_savepoint(tmp_path, backend_kind, kind, EvolvingSerializer(1))
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        # Key k2 (i=2) holds the poisoned value; k0/k1 would migrate first.
        poison = {"value": 20, "list": 3, "map": -2}[kind]
        with pytest.raises(StateMigrationError, match="poisoned value") as info:
            get_state(restored, descriptor(kind, EvolvingSerializer(2, "after_migration", poison=poison)))
        assert "'s'" in str(info.value), f"got {info.value}, should name the state"
        check_all(restored, descriptor(kind, EvolvingSerializer(1)), kind, lambda i: old_content(i)[kind])
        sp2 = restored.savepoint(tmp_path / "sp2")
    finally:
        restored.close()
    version = snapshot_from_bytes(read_savepoint_metadata(sp2).state("s").value_serializer_snapshot).version
    assert version == 1, f"got snapshot version {version}, should stay 1 after a failed migration"


@pytest.mark.parametrize("kind", ["value", "map"])
def test_row_evolution_needs_the_option(tmp_path, backend_kind, kind):
    sp1 = write_savepoint(tmp_path, backend_kind, kind, EvolvingSerializer(1))
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        with pytest.raises(StateMigrationError) as info:
            get_state(restored, descriptor(kind, EvolvingSerializer(2, "row_migration")))
        assert "state.schema-evolution.enable" in str(info.value), f"got {info.value}, should name the option"
        assert "evolved_field" in str(info.value), f"got {info.value}, should name the row field"
    finally:
        restored.close()
    enabled = restore_backend(backend_kind, sp1, KEY, config={"state.schema-evolution.enable": True})
    try:
        check_all(enabled, descriptor(kind, EvolvingSerializer(2, "row_migration")), kind,
                  lambda i: migrated(kind, old_content(i)[kind]))
    finally:
        enabled.close()


def test_unknown_config_key_is_refused():
    with pytest.raises(StateError, match="unknown state backend config key"):
        make_backend("heap", KEY, config={"state.schema-evolution.enabled": True})


def _map_with_evolving_user_keys(tmp_path, backend_kind):
    backend = make_backend(backend_kind, KEY)
    try:
        state = backend.get_map_state(MapStateDescriptor("s", EvolvingSerializer(1), EvolvingSerializer(1)))
        for i, key in enumerate(KEYS):
            backend.set_current_key(key)
            state.put(i, 10 * i)
            state.put(i + 50, None)
        return backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()


@pytest.mark.parametrize(
    "user_key, value, fragment",
    [
        ("after_migration", 1, "only allows value schema evolutions"),
        ("reconfigured", 2, "only allows value schema evolutions"),
        ("incompatible", 1, "must not be incompatible"),
        ("incompatible", 2, "must not be incompatible"),
    ],
)
def test_map_user_key_change_is_refused(tmp_path, backend_kind, user_key, value, fragment):
    sp1 = _map_with_evolving_user_keys(tmp_path, backend_kind)
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        desc = MapStateDescriptor("s", EvolvingSerializer(2, user_key), EvolvingSerializer(value))
        with pytest.raises(StateMigrationError) as info:
            restored.get_map_state(desc)
        message = str(info.value)
        assert fragment in message, f"got {message!r}, should contain {fragment!r}"
        assert "'s'" in message, f"got {message!r}, should name the state"
        # untouched: the old serializers still read everything
        state = restored.get_map_state(MapStateDescriptor("s", EvolvingSerializer(1), EvolvingSerializer(1)))
        restored.set_current_key("k2")
        assert dict(state.items()) == {1: 10, 51: None}, f"got {dict(state.items())}, should be the old map"
    finally:
        restored.close()


def test_map_user_key_reconfiguration_alone_is_accepted(tmp_path, backend_kind):
    sp1 = _map_with_evolving_user_keys(tmp_path, backend_kind)
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        state = restored.get_map_state(MapStateDescriptor("s", EvolvingSerializer(2, "reconfigured"), EvolvingSerializer(1)))
        restored.set_current_key("k2")
        state.put(7, 70)
        got = dict(state.items())
        assert got == {1: 10, 51: None, 7: 70}, f"got {got}, should be the old map plus 7 -> 70"
    finally:
        restored.close()


@pytest.mark.parametrize("judge, ok", [("after_migration", False), ("reconfigured", True), ("incompatible", False)])
def test_key_serializer_never_migrates(tmp_path, backend_kind, judge, ok):
    backend = make_backend(backend_kind, EvolvingSerializer(1))
    try:
        state = backend.get_value_state(ValueStateDescriptor("v", LongSerializer()))
        for key in (1, 2, 3):
            backend.set_current_key(key)
            state.update(key * 11)
        sp1 = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()
    if not ok:
        with pytest.raises(StateMigrationError) as info:
            restore_backend(backend_kind, sp1, EvolvingSerializer(2, judge))
        message = str(info.value)
        for fragment in ("new key serializer (EvolvingSerializer(v2))", "previous key serializer (EvolvingSerializer(v1))"):
            assert fragment in message, f"got {message!r}, should contain {fragment!r}"
        return
    restored = restore_backend(backend_kind, sp1, EvolvingSerializer(2, judge))
    try:
        keys = restored.keys("v")
        assert sorted(keys) == [1, 2, 3], f"got keys {keys}, should be [1, 2, 3]"
        state = restored.get_value_state(ValueStateDescriptor("v", LongSerializer()))
        restored.set_current_key(2)
        assert state.value() == 22, f"got {state.value()}, should be 22 under the reconfigured key serializer"
    finally:
        restored.close()


@pytest.mark.parametrize("judge, ok", [("after_migration", False), ("reconfigured", True), ("incompatible", False)])
def test_namespace_serializer_never_migrates(tmp_path, backend_kind, judge, ok):
    backend = make_backend(backend_kind, KEY)
    try:
        state = backend.get_value_state(ValueStateDescriptor("v", LongSerializer(), namespace_serializer=EvolvingSerializer(1)))
        backend.set_current_key("k")
        for window in (1, 2):
            state.set_current_namespace(window)
            state.update(window * 5)
        sp1 = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        desc = ValueStateDescriptor("v", LongSerializer(), namespace_serializer=EvolvingSerializer(2, judge))
        if not ok:
            with pytest.raises(StateMigrationError) as info:
                restored.get_value_state(desc)
            message = str(info.value)
            assert "namespace serializer" in message and "'v'" in message, (
                f"got {message!r}, should name the namespace serializer and the state"
            )
            return
        state = restored.get_value_state(desc)
        restored.set_current_key("k")
        state.set_current_namespace(2)
        assert state.value() == 10, f"got {state.value()}, should be 10 in namespace 2"
        state.set_current_namespace(3)
        state.update(15)
        assert restored.keys("v", namespace=3) == ["k"], f"got {restored.keys('v', namespace=3)}, should be ['k']"
    finally:
        restored.close()


def test_namespace_presence_change_is_refused(tmp_path, backend_kind):
    sp1 = write_savepoint(tmp_path, backend_kind, "value", EvolvingSerializer(1))
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        with pytest.raises(StateMigrationError, match="namespace serializer"):
            restored.get_value_state(ValueStateDescriptor("s", EvolvingSerializer(1), namespace_serializer=IntSerializer()))
    finally:
        restored.close()


@pytest.mark.parametrize("stored, asked", [("value", "list"), ("list", "map"), ("map", "value")])
def test_state_kind_mismatch_is_a_clear_error(tmp_path, backend_kind, stored, asked):
    sp1 = write_savepoint(tmp_path, backend_kind, stored, EvolvingSerializer(1))
    restored = restore_backend(backend_kind, sp1, KEY)
    try:
        with pytest.raises(StateMigrationError) as info:
            get_state(restored, descriptor(asked, EvolvingSerializer(1)))
        message = str(info.value)
        assert f"holds {stored} state" in message and f"as {asked} state" in message, (
            f"got {message!r}, should say it holds {stored} state and was asked as {asked}"
        )
    finally:
        restored.close()
    live = make_backend(backend_kind, KEY)
    try:
        get_state(live, descriptor(stored, EvolvingSerializer(1)))
        with pytest.raises(StateMigrationError, match=f"holds {stored} state"):
            get_state(live, descriptor(asked, EvolvingSerializer(1)))
    finally:
        live.close()


def test_unknown_state_name_is_a_clear_error(backend_kind):
    backend = make_backend(backend_kind, KEY)
    try:
        backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
        with pytest.raises(StateError) as info:
            backend.keys("cnt")
        assert "'cnt'" in str(info.value) and "'count'" in str(info.value), (
            f"got {info.value}, should name the unknown state and the known ones"
        )
    finally:
        backend.close()


def test_live_state_reregistered_with_evolved_serializer_migrates(backend_kind):
    backend = make_backend(backend_kind, KEY)
    try:
        state = backend.get_list_state(ListStateDescriptor("l", EvolvingSerializer(1)))
        backend.set_current_key("a")
        state.add_all([1, 2])
        state = backend.get_list_state(ListStateDescriptor("l", EvolvingSerializer(3)))
        assert state.get() == [1 + 2 * STEP, 2 + 2 * STEP], f"got {state.get()}, should be migrated by two steps"
    finally:
        backend.close()


@pytest.mark.parametrize("store", ["memory", "rocksdb"])
@pytest.mark.parametrize("kind", ["value", "list", "map"])
def test_migrating_equal_values_once_writes_the_same_savepoint(tmp_path, monkeypatch, store, kind):
    """``migrate_equal_values_once``: each distinct stored value is migrated once, and the
    savepoint is the one a migration of every entry writes."""
    from backend_support import EvolvingSnapshot, _rocksdb_path

    from reference.backends import BytesStateBackend

    backend = make_backend(f"bytes-{store}", LongSerializer())
    try:
        state = get_state(backend, descriptor(kind, EvolvingSerializer(1)))
        for key in range(200):
            backend.set_current_key(key)
            write(state, kind, {"value": key % 3, "list": [key % 2, 5], "map": {"a": key % 3, "b": None}}[kind])
        source = backend.savepoint(tmp_path / "sp1")
    finally:
        backend.close()

    calls = []
    original = EvolvingSnapshot.migrate_element

    def counting(self, prior, new, element, target=None):
        calls.append(element)
        return original(self, prior, new, element, target)

    monkeypatch.setattr(EvolvingSnapshot, "migrate_element", counting)
    outputs = {}
    for once in (False, True):
        calls.clear()
        restored = BytesStateBackend.restore(source, LongSerializer(), store=store, path=_rocksdb_path(store),
                                             migrate_equal_values_once=once)
        try:
            get_state(restored, descriptor(kind, EvolvingSerializer(2)))
            outputs[once] = restored.savepoint(tmp_path / f"sp2-{once}")
        finally:
            restored.close()
        if once:
            distinct = {"value": 3, "list": 2 * 2, "map": 3}[kind]  # a list value holds 2 elements
            assert len(calls) == distinct, f"got {len(calls)} migrations, should be {distinct} (one per distinct value)"
        else:
            every = {"value": 200, "list": 400, "map": 200}[kind]
            assert len(calls) == every, f"got {len(calls)} migrations, should be {every} (every entry)"
    assert tree_bytes(outputs[True]) == tree_bytes(outputs[False]), "the savepoints differ, should be identical"
    rows = read_savepoint_metadata(outputs[True]).states[0].rows
    assert rows == {"value": 200, "list": 200, "map": 400}[kind], f"got {rows} rows"


def test_migrating_equal_values_once_keeps_a_bounded_memo(monkeypatch):
    """Results are reused only while the memo stays within its byte budget; past it, each
    new value is migrated as it comes and nothing more is kept."""
    from reference.backends import _bytes

    monkeypatch.setattr(_bytes, "MIGRATION_MEMO_BYTES", 10)
    calls = []

    def migrate(raw):
        calls.append(raw)
        return raw + b"!"

    once = _bytes._once_per_value(migrate)
    got = [once(raw) for raw in (b"ab", b"ab", b"cdefgh", b"cdefgh", b"ab")]
    assert got == [b"ab!", b"ab!", b"cdefgh!", b"cdefgh!", b"ab!"], f"got {got}"
    assert calls == [b"ab", b"cdefgh", b"cdefgh"], f"got {calls}, should migrate b'cdefgh' (over budget) each time"
