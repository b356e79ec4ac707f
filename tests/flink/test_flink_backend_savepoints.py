"""The reference's state backends and Flink's canonical savepoints, held to Flink 2.3 itself.

- A savepoint written by ``HeapStateBackend`` / ``BytesStateBackend`` with
  ``savepoint(path, format="flink", operator_uid=..., max_parallelism=...)`` is restored by
  SavepointJob.java (tests/flink/savepoints.py) with the matching descriptors, on Flink's hashmap
  and RocksDB backends, at parallelism 2 (so key groups are split between subtasks), for String,
  Long and Tuple2<String, Long> keys, max parallelism 128 and above 128 (two-byte key-group
  prefixes): every key the job probes must read back exactly the value the reference wrote, in
  the key group Flink computes for it (a key stored in another key group is not found); one case
  is this project's savepoint converted by ``convert_to_flink_savepoint``. All the requests run
  in one JVM.
- Savepoints Flink wrote, restored into a reference backend (value, list, map, tuple, row, TTL,
  reducing and aggregating states, left as restored) and written back with ``format="flink"``
  (at the same and at another max parallelism), are restored by Flink with every value the job
  wrote, in the same run.
- A Flink savepoint's POJO state restored into a reference backend with a descriptor whose
  class gained a field (the backend migrates it: the heap backend object by object, the bytes
  backend every entry) and written back is restored by Flink with the new Java class, every
  old value in place and the new field null.
- Every savepoint Flink wrote (the ``flink_savepoints`` cases) restored into both reference
  backends gives exactly the values expected.json says the job wrote, read through the states'
  descriptors; a new key then lands in Flink's key group (compared with the key groups Flink
  reported for the same keys).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
import savepoints
from test_flink_savepoint_migrate import POJO_WITH_A_NOTE, PojoWithNote
from test_flink_savepoint_reader import _render

from reference import StateError, _classes
from reference.backends import (
    BytesStateBackend,
    HeapStateBackend,
    ListStateDescriptor,
    MapStateDescriptor,
    ValueStateDescriptor,
    convert_to_flink_savepoint,
)
from reference.savepoint import read_flink_savepoint
from reference.serializers import (
    DoubleSerializer,
    LongSerializer,
    PojoSerializer,
    Row,
    RowKind,
    RowSerializer,
    StringSerializer,
    TupleSerializer,
)

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

# SavepointJob's probe keys (KEY_STRINGS, KEY_LONGS): the restored job reads these keys only.
KEY_STRINGS = ["alpha", "", "\u00e9\u20ac\U0001d11e", "k3", "a longer key with spaces", "k5", "k6", "k7"]
KEY_LONGS = [0, 1, -1, 42, 2**63 - 1, -(2**63), 1 << 40, -123456789012]
KEY_SERIALIZERS = {"string": StringSerializer(), "long": LongSerializer(),
                   "tuple": TupleSerializer(StringSerializer(), LongSerializer())}
ROW = RowSerializer([("f0", StringSerializer(), True), ("f1", LongSerializer(), True), ("f2", DoubleSerializer(), True)])
TUPLE = TupleSerializer(StringSerializer(), LongSerializer())
BACKENDS = {"heap": HeapStateBackend, "bytes": BytesStateBackend}
WRITERS = {**BACKENDS, "converted-heap": HeapStateBackend}

# (reference backend, key type, max parallelism, Flink's backend restoring it)
WRITTEN = [
    ("heap", "string", 128, "hashmap"),
    ("bytes", "long", 256, "rocksdb"),
    ("bytes", "tuple", 128, "hashmap"),
    ("heap", "tuple", 300, "rocksdb"),
    ("heap", "long", 128, "rocksdb"),
    ("bytes", "string", 200, "hashmap"),
    ("bytes", "string", 128, "rocksdb"),
    ("converted-heap", "tuple", 256, "hashmap"),
]


def _key(kind: str, i: int) -> Any:
    return {"string": KEY_STRINGS[i], "long": KEY_LONGS[i], "tuple": (KEY_STRINGS[i], KEY_LONGS[i])}[kind]


def _json_key(kind: str, i: int) -> Any:
    key = _key(kind, i)
    return list(key) if isinstance(key, tuple) else key


def _f64(value: float) -> dict[str, str]:
    return {"f64": struct.pack(">d", value).hex()}


def _write(tmp: Path, backend_name: str, key_kind: str, maxp: int, flink_backend: str) -> tuple[Path, list[str]]:
    """A savepoint of the reference backend, and what SavepointJob must read back from it
    (canonical entries without key groups)."""
    backend = WRITERS[backend_name](KEY_SERIALIZERS[key_kind], max_parallelism=64)
    converted = backend_name.startswith("converted-")
    count = backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    names = backend.get_list_state(ListStateDescriptor("names", StringSerializer()))
    amounts = backend.get_map_state(MapStateDescriptor("amounts", StringSerializer(), LongSerializer()))
    pairs = backend.get_value_state(ValueStateDescriptor("tuple", TUPLE))
    rows = backend.get_value_state(ValueStateDescriptor("row", ROW))
    expected = []

    def entry(i: int, state: str, **more: Any) -> None:
        expected.append(savepoints.canonical({"uid": "keyed-states", "state": state, "key": _json_key(key_kind, i),
                                              "namespace": None, **more}))

    for i in range(len(KEY_STRINGS)):
        backend.set_current_key(_key(key_kind, i))
        count.update(1000 * i - 7)
        entry(i, "count", value=1000 * i - 7)
        if i % 3 != 2:  # some keys have no list
            elements = [f"r{i}-{j}-\u00e9\U0001f600" for j in range(i % 4 + 1)]
            names.update(elements)
            entry(i, "names", value=elements)
        user_keys = {f"u{j}": i * 10 + j for j in range(i % 3 + 1)}
        if flink_backend == "rocksdb" and i % 2:  # Flink's heap backend cannot snapshot a null map value
            user_keys["null"] = None
        amounts.put_all(user_keys)
        for user_key, value in user_keys.items():
            entry(i, "amounts", user_key=user_key, value=value)
        pairs.update((f"t{i}", -i))
        entry(i, "tuple", value=[f"t{i}", -i])
        row_kind = RowKind.UPDATE_AFTER if i % 2 else RowKind.INSERT
        fields = (None if i == 3 else KEY_STRINGS[i], i * 11, -0.0 if i == 5 else i / 4)
        rows.update(Row(fields, row_kind))
        entry(i, "row", value={"row_kind": row_kind.name, "fields": [fields[0], fields[1], _f64(fields[2])]})
    backend.set_current_key({"string": "never probed", "long": 987654321, "tuple": ("never", 9)}[key_kind])
    count.update(5)
    out = tmp / f"{backend_name}-{key_kind}-{maxp}-{flink_backend}"
    if converted:  # this project's savepoint, converted
        own = backend.savepoint(str(tmp / f"own-{out.name}"))
        written = convert_to_flink_savepoint(own, str(out), operator_uid="keyed-states", max_parallelism=maxp)
    else:
        written = backend.savepoint(str(out), format="flink", operator_uid="keyed-states", max_parallelism=maxp)
    backend.close()
    return Path(written), sorted(expected)


# Flink -> a reference backend -> Flink: (case of flink_savepoints, backend, max parallelism written)
ROUND_TRIPS = [
    ("hashmap_compressed_tuple", "heap", None),
    ("rocksdb_compressed_long", "bytes", None),
    ("hashmap_inline_string", "bytes", 256),
]
ROUND_TRIP_STATES = ("count", "tuple", "row", "names", "amounts", "fresh", "sum", "avg")


def _round_trip(tmp: Path, flink_savepoints: Any, case: str, backend_name: str,
                maxp: int | None) -> tuple[str, Path, list[str], savepoints.RestoreRequest]:
    """A Flink savepoint restored into a reference backend (every state left as restored) and
    written in Flink's format again; what Flink must read back from it (the job's own values,
    key groups included) and the request restoring it."""
    path, expected = flink_savepoints[case]
    key_kind = {"tuple2<string,long>": "tuple"}.get(expected["config"]["key_type"], expected["config"]["key_type"])
    backend = BACKENDS[backend_name].restore(str(path), KEY_SERIALIZERS[key_kind], operator_uid="keyed-states",
                                             states=ROUND_TRIP_STATES)
    name = f"round-trip-{case}-{backend_name}-{maxp}"
    out = Path(backend.savepoint(str(tmp / name), format="flink", operator_uid="keyed-states", max_parallelism=maxp))
    backend.close()
    want = []
    for line in savepoints.restorable(expected):
        entry = json.loads(line)
        if entry["uid"] == "keyed-states" and entry["state"] in ROUND_TRIP_STATES:
            if maxp is not None:  # another max parallelism: Flink's key group at it, from the job's reads
                entry.pop("key_group")
            want.append(savepoints.canonical(entry))
    request = savepoints.RestoreRequest.of(name, out, expected, **({"maxp": maxp} if maxp else {}))
    return name, out, sorted(want), request


# A Flink savepoint's POJO migrated on restore by a reference backend (the Java class gained a
# field), written back, and restored by Flink with the new class: (case, backend).
POJO_MIGRATIONS = [("rocksdb_files_tuple", "heap"), ("hashmap_compressed_string_max", "bytes")]


def _pojo_migration(tmp: Path, flink_savepoints: Any, case: str,
                    backend_name: str) -> tuple[str, Path, list[str], savepoints.RestoreRequest]:
    path, expected = flink_savepoints[case]
    key_kind = {"tuple2<string,long>": "tuple"}.get(expected["config"]["key_type"], expected["config"]["key_type"])
    name = f"pojo-{case}-{backend_name}"
    with pytest.MonkeyPatch.context() as patch:  # PojoWithNote stands in for SavepointPojo here only
        patch.setitem(_classes._TYPES, "SavepointPojo", PojoWithNote)
        patch.setitem(_classes._JAVA_NAMES, PojoWithNote, "SavepointPojo")
        backend = BACKENDS[backend_name].restore(str(path), KEY_SERIALIZERS[key_kind], operator_uid="keyed-states",
                                                 states=["pojo", "count"])
        pojo = backend.get_value_state(ValueStateDescriptor("pojo", PojoSerializer(PojoWithNote)))  # migrates
        for key in backend.keys("pojo"):
            backend.set_current_key(key)
            assert isinstance(pojo.value(), PojoWithNote) and pojo.value().note is None, f"{name}: {pojo.value()!r}"
        out = Path(backend.savepoint(str(tmp / name), format="flink", operator_uid="keyed-states"))
        backend.close()
    want = []
    for line in savepoints.restorable(expected):
        entry = json.loads(line)
        if entry["uid"] == "keyed-states" and entry["state"] in ("pojo", "count"):
            if entry["state"] == "pojo":
                entry["value"]["note"] = None
            want.append(savepoints.canonical(entry))
    return name, out, sorted(want), savepoints.RestoreRequest.of(name, out, expected)


@pytest.fixture(scope="module")
def restored_by_flink(flink_restore, flink_savepoints, flink_job, tmp_path_factory) -> dict[str, tuple[Path, list[str], savepoints.RestoreResult]]:
    """{case: (savepoint, expected reads, Flink's restore)} for every WRITTEN case and every
    ROUND_TRIPS case, one JVM run."""
    tmp = tmp_path_factory.mktemp("reference-written")
    cases = {}
    requests = []
    for case, backend_name, maxp in ROUND_TRIPS:
        name, path, want, request = _round_trip(tmp, flink_savepoints, case, backend_name, maxp)
        cases[name] = (path, want)
        requests.append(request)
    for case, backend_name in POJO_MIGRATIONS:
        name, path, want, request = _pojo_migration(tmp, flink_savepoints, case, backend_name)
        cases[name] = (path, want)
        requests.append(request)
    # SavepointPojo with the field ``note`` first on the classpath: no other case holds a POJO.
    classes = savepoints.compile_user_classes(flink_job, {"SavepointPojo.java": POJO_WITH_A_NOTE}, tmp / "pojo2")
    for backend_name, key_kind, maxp, flink_backend in WRITTEN:
        name = f"{backend_name}-{key_kind}-{maxp}-{flink_backend}"
        path, expected = _write(tmp, backend_name, key_kind, maxp, flink_backend)
        cases[name] = (path, expected)
        requests.append(savepoints.RestoreRequest(name=name, savepoint=path, backend=flink_backend, maxp=maxp, p=2,
                                                  key=key_kind))
    results = flink_restore(requests, classpath_first=[classes])
    return {name: (*cases[name], results[name]) for name in cases}


@pytest.mark.parametrize("case", [f"{b}-{k}-{m}-{f}" for b, k, m, f in WRITTEN])
def test_flink_restores_every_value_the_reference_backend_wrote(restored_by_flink, case):
    path, expected, result = restored_by_flink[case]
    assert result.verdict == "restored", f"{case}: Flink refused the reference's savepoint {path}: {result.error}"
    reads = [json.loads(r) for r in savepoints.read_back(result)]
    groups = {json.dumps(r["key"]): r.pop("key_group") for r in reads}
    got = sorted(savepoints.canonical(r) for r in reads)
    missing = sorted(set(expected) - set(got))
    extra = sorted(set(got) - set(expected))
    assert got == expected, (f"{case}: Flink read back {len(got)} entries, the reference wrote {len(expected)}; "
                             f"missing {missing[:4]}, unexpected {extra[:4]}")
    stored = {json.dumps(_render(e.key, s.key_serializer)): e.key_group
              for s in read_flink_savepoint(path).operator("keyed-states").keyed_states for e in s.entries()}
    wrong = {k: (g, stored.get(k)) for k, g in groups.items() if stored.get(k) != g}
    assert not wrong, f"{case}: keys stored in another key group than Flink's (key: (Flink, stored)): {wrong}"


@pytest.mark.parametrize("case", [f"pojo-{c}-{b}" for c, b in POJO_MIGRATIONS])
def test_flink_restores_a_pojo_the_reference_backend_migrated(restored_by_flink, case):
    path, want, result = restored_by_flink[case]
    assert result.verdict == "restored", f"{case}: Flink refused {path}: {result.error}"
    got = savepoints.read_back(result)
    assert any('"state": "pojo"' in g for g in want), f"{case}: no POJO expected"
    assert got == want, (f"{case}: Flink read back differs; missing {sorted(set(want) - set(got))[:3]}, "
                         f"unexpected {sorted(set(got) - set(want))[:3]}")


@pytest.mark.parametrize("case", [f"round-trip-{c}-{b}-{m}" for c, b, m in ROUND_TRIPS])
def test_flink_restores_what_a_reference_backend_restored_from_flink_and_wrote_back(restored_by_flink, case):
    path, want, result = restored_by_flink[case]
    assert result.verdict == "restored", f"{case}: Flink refused {path}: {result.error}"
    reads = [json.loads(r) for r in savepoints.read_back(result)]
    if case.endswith("-None"):
        got = sorted(savepoints.canonical(r) for r in reads)
    else:  # written at another max parallelism: compare values, and key groups with the savepoint's
        stored = {json.dumps(_render(e.key, s.key_serializer)): e.key_group
                  for s in read_flink_savepoint(path).operator("keyed-states").keyed_states for e in s.entries()}
        wrong = {json.dumps(r["key"]): (r["key_group"], stored.get(json.dumps(r["key"]))) for r in reads
                 if stored.get(json.dumps(r["key"])) != r["key_group"]}
        assert not wrong, f"{case}: keys stored in another key group than Flink's: {wrong}"
        got = sorted(savepoints.canonical({k: v for k, v in r.items() if k != "key_group"}) for r in reads)
    assert len(want) > 40, f"{case}: only {len(want)} entries expected"
    assert got == want, (f"{case}: Flink read back differs; missing {sorted(set(want) - set(got))[:3]}, "
                         f"unexpected {sorted(set(got) - set(want))[:3]}")


def _read_state(backend: Any, name: str, kind: str, value_type: str) -> Any:
    serializer = {"long": LongSerializer(), "string": StringSerializer(), "tuple2<string,long>": TUPLE,
                  "tuple2<long,long>": TupleSerializer(LongSerializer(), LongSerializer()),
                  "row<string,long,double>": ROW}[value_type]
    if kind == "list":
        return backend.get_list_state(ListStateDescriptor(name, serializer))
    if kind == "map":
        return backend.get_map_state(MapStateDescriptor(name, StringSerializer(), serializer))
    return backend.get_value_state(ValueStateDescriptor(name, serializer))


READ_STATES = ("count", "tuple", "row", "names", "amounts", "sum", "avg")


@pytest.mark.parametrize("backend_name", sorted(BACKENDS))
def test_flink_written_savepoints_restore_into_the_reference_backends(flink_savepoints, backend_name):
    checked = 0
    for case, (path, expected) in flink_savepoints.items():
        if expected["config"].get("bulk"):
            continue
        operator = expected["operators"]["keyed-states"]
        key_kind = {"tuple2<string,long>": "tuple"}.get(operator["key_type"], operator["key_type"])
        backend = BACKENDS[backend_name].restore(str(path), KEY_SERIALIZERS[key_kind], operator_uid="keyed-states",
                                                 states=READ_STATES)
        try:
            assert backend.max_parallelism == operator["max_parallelism"], f"{case}: max parallelism"
            snapshots = {s.name: s for s in read_flink_savepoint(path).operator("keyed-states").keyed_states}
            for name in READ_STATES:
                spec = operator["states"][name]
                state = _read_state(backend, name, spec["kind"] if spec["kind"] in ("list", "map") else "value", spec["type"])
                element = snapshots[name].value_serializer
                if spec["kind"] in ("list", "map"):
                    element = element.nested_snapshots[0 if spec["kind"] == "list" else 1]
                want = sorted(savepoints.canonical({k: v for k, v in e.items() if k != "key_group"}) for e in spec["entries"])
                got = []
                for key in backend.keys(name):
                    backend.set_current_key(key)
                    json_key = _render(key, snapshots[name].key_serializer)
                    if spec["kind"] == "map":
                        for user_key, value in state.items():
                            got.append({"key": json_key, "namespace": None, "user_key": user_key,
                                        "value": _render(value, element)})
                    else:
                        value = state.get() if spec["kind"] == "list" else state.value()
                        got.append({"key": json_key, "namespace": None, "value": _render(value, element)})
                got_sorted = sorted(savepoints.canonical(g) for g in got)
                assert got_sorted == want, (f"{case}, {backend_name}: state {name!r} restored {got_sorted[:3]}..., "
                                            f"the job wrote {want[:3]}...")
                checked += len(want)
            # Keys keep their groups: set_current_key of every key the job wrote finds the group Flink gave it.
            count = _read_state(backend, "count", "value", "long")
            for e in operator["states"]["count"]["entries"]:
                key = tuple(e["key"]) if key_kind == "tuple" else e["key"]
                backend.set_current_key(key)
                assert backend._key_group == e["key_group"], f"{case}: key {key!r} in key group {backend._key_group}, Flink's is {e['key_group']}"
                assert count.value() == e["value"], f"{case}: count of {key!r}"
        finally:
            backend.close()
    assert checked > 100, f"only {checked} entries checked"


def test_a_flink_savepoint_needs_the_operator_uid(flink_savepoints):
    path, _expected = next(iter(flink_savepoints.values()))
    with pytest.raises(StateError) as raised:
        HeapStateBackend.restore(str(path), StringSerializer())
    assert "operator_uid=" in str(raised.value) and "keyed-states" in str(raised.value), f"got {raised.value}"
    with pytest.raises(StateError) as raised:
        HeapStateBackend.restore(str(path), StringSerializer(), operator_uid="keyed-states", states=["nope"])
    assert "no keyed state 'nope'" in str(raised.value) and "count" in str(raised.value), f"got {raised.value}"
