"""Random histories on every backend against a dict model: reads, keys, savepoint, restore on
another backend with an evolved serializer (migrated values), and identical savepoint content
for heap and bytes backends given the same history."""

import os

from backend_support import (
    BACKENDS,
    STEP,
    EvolvingSerializer,
    make_backend,
    restore_backend,
    savepoint_content,
    scratch_directory,
    tree_bytes,
)
from hypothesis import given
from hypothesis import strategies as st

from reference.backends import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from reference.serializers import IntSerializer, LongSerializer, StringSerializer

KEY = StringSerializer()
KEYS = st.sampled_from(["k0", "k1", "k2", "", "ключ"])
USER_KEYS = st.sampled_from(["a", "b", "c"])
NUMBERS = st.integers(-(2**40), 2**40)
WINDOWS = st.integers(0, 2)

OPS = st.one_of(
    st.tuples(st.just("set_value"), KEYS, st.none() | NUMBERS),
    st.tuples(st.just("add"), KEYS, NUMBERS),
    st.tuples(st.just("put"), KEYS, USER_KEYS, st.none() | NUMBERS),
    st.tuples(st.just("remove"), KEYS, USER_KEYS),
    st.tuples(st.just("add_all"), KEYS, st.lists(NUMBERS, max_size=3)),
    st.tuples(st.just("update_list"), KEYS, st.lists(NUMBERS, max_size=3)),
    st.tuples(st.just("clear"), KEYS, st.sampled_from(["v", "l", "m"])),
    st.tuples(st.just("window"), KEYS, WINDOWS, st.none() | NUMBERS),
)
HISTORIES = st.lists(OPS, max_size=30)


def descriptors(version):
    return (
        ValueStateDescriptor("v", EvolvingSerializer(version)),
        ListStateDescriptor("l", EvolvingSerializer(version)),
        MapStateDescriptor("m", StringSerializer(), EvolvingSerializer(version)),
        ValueStateDescriptor("w", LongSerializer(), namespace_serializer=IntSerializer()),
    )


def open_states(backend, version):
    v, lst, m, w = descriptors(version)
    return backend.get_value_state(v), backend.get_list_state(lst), backend.get_map_state(m), backend.get_value_state(w)


def apply(backend, states, model, op):
    v, lst, m, w = states
    name, key = op[0], op[1]
    backend.set_current_key(key)
    if name == "set_value":
        v.update(op[2])
        if op[2] is None:
            model["v"].pop(key, None)
        else:
            model["v"][key] = op[2]
    elif name == "add":
        lst.add(op[2])
        model["l"].setdefault(key, []).append(op[2])
    elif name == "add_all":
        lst.add_all(op[2])
        if op[2]:
            model["l"].setdefault(key, []).extend(op[2])
    elif name == "update_list":
        lst.update(op[2])
        if op[2]:
            model["l"][key] = list(op[2])
        else:
            model["l"].pop(key, None)
    elif name == "put":
        m.put(op[2], op[3])
        model["m"].setdefault(key, {})[op[2]] = op[3]
    elif name == "remove":
        m.remove(op[2])
        model["m"].get(key, {}).pop(op[2], None)
        if not model["m"].get(key, True):
            del model["m"][key]
    elif name == "clear":
        {"v": v, "l": lst, "m": m}[op[2]].clear()
        model[op[2]].pop(key, None)
    elif name == "window":
        w.set_current_namespace(op[2])
        w.update(op[3])
        if op[3] is None:
            model["w"].pop((key, op[2]), None)
        else:
            model["w"][(key, op[2])] = op[3]


def check(backend, states, model, shift, where):
    v, lst, m, w = states
    for key in ["k0", "k1", "k2", "", "ключ"]:
        backend.set_current_key(key)
        expected_v = model["v"].get(key)
        expected_v = None if expected_v is None else expected_v + shift
        assert v.value() == expected_v, f"got {v.value()!r}, should be {expected_v!r} (value, key {key!r}, {where})"
        expected_l = [x + shift for x in model["l"].get(key, [])]
        assert lst.get() == expected_l, f"got {lst.get()!r}, should be {expected_l!r} (list, key {key!r}, {where})"
        expected_m = {k: (None if x is None else x + shift) for k, x in model["m"].get(key, {}).items()}
        got_m = dict(m.items())
        assert got_m == expected_m, f"got {got_m!r}, should be {expected_m!r} (map, key {key!r}, {where})"
        for k in ("a", "b", "c"):
            assert m.contains(k) == (k in expected_m), f"got contains({k!r})={m.contains(k)}, should be {k in expected_m} ({where})"
        for window in range(3):
            w.set_current_namespace(window)
            expected_w = model["w"].get((key, window))
            assert w.value() == expected_w, f"got {w.value()!r}, should be {expected_w!r} (window {window}, {where})"
    for name in ("v", "l", "m"):
        got_keys = sorted(backend.keys(name))
        want = sorted(model[name])
        assert got_keys == want, f"got keys {got_keys}, should be {want} (state {name}, {where})"
    got_w = sorted(backend.keys("w", namespace=1))
    want_w = sorted(k for k, window in model["w"] if window == 1)
    assert got_w == want_w, f"got keys {got_w}, should be {want_w} (window 1, {where})"


@given(
    history=HISTORIES,
    first=st.sampled_from(BACKENDS),
    second=st.sampled_from(BACKENDS),
)
def test_random_history_savepoint_and_evolved_restore_match_the_model(history, first, second):
    model = {"v": {}, "l": {}, "m": {}, "w": {}}
    with scratch_directory() as tmp:
        backend = make_backend(first, KEY)
        try:
            states = open_states(backend, 1)
            for op in history:
                apply(backend, states, model, op)
            check(backend, states, model, 0, f"live on {first}")
            path = backend.savepoint(os.path.join(tmp, "sp"))
        finally:
            backend.close()
        restored = restore_backend(second, path, KEY)
        try:
            check(restored, open_states(restored, 2), model, STEP, f"{first} -> {second} migrated")
        finally:
            restored.close()


@given(history=HISTORIES)
def test_heap_and_bytes_memory_write_identical_savepoints(history):
    _identical_savepoints(history, "bytes-memory")


@given(history=HISTORIES)
def test_heap_and_bytes_rocksdb_write_identical_savepoints(history):
    _identical_savepoints(history, "bytes-rocksdb")


def _identical_savepoints(history, bytes_kind):
    with scratch_directory() as tmp:
        paths = {}
        for kind in ("heap", bytes_kind):
            backend = make_backend(kind, KEY)
            try:
                states = open_states(backend, 1)
                model = {"v": {}, "l": {}, "m": {}, "w": {}}
                for op in history:
                    apply(backend, states, model, op)
                first = backend.savepoint(os.path.join(tmp, f"{kind}-1"))
            finally:
                backend.close()
            # and after restore + migration on the same kind of backend
            restored = restore_backend(kind, first, KEY)
            try:
                open_states(restored, 2)
                second = restored.savepoint(os.path.join(tmp, f"{kind}-2"))
            finally:
                restored.close()
            paths[kind] = (first, second)
        for i, label in enumerate(("written", "migrated")):
            heap, other = paths["heap"][i], paths[bytes_kind][i]
            heap_content, other_content = savepoint_content(heap), savepoint_content(other)
            assert heap_content == other_content, (
                f"got different {label} savepoint content on heap and {bytes_kind}: "
                f"{heap_content} vs {other_content}, should be identical"
            )
            assert tree_bytes(heap) == tree_bytes(other), (
                f"got different {label} savepoint files on heap and {bytes_kind}, should be byte-identical"
            )
