"""``conformance savepoint inspect`` and ``conformance savepoint export`` against REAL Flink 2.3
savepoints, and on this project's own savepoints.

Every exported value is compared with what SavepointJob wrote (its expected.json, rendered by the
Java side): each dataset read back through pyarrow, its Arrow schema checked against the types
written out below by hand from the job's state declarations (not computed by the code under
test), and every row, as a multiset, equal to expected.json's entries. Inspect's JSON is checked
against expected.json (operators, uids, ids, parallelism, kinds, TTL, entry counts, operator
states). The three savepoints of tests/data/flink_savepoints run the same checks with no JDK;
the ``flink_savepoints`` fixture's seven cases run them under the ``flink`` marker. Spark
exports (marker ``spark``) must equal the one-process export, dataset by dataset.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.cli import main
from reference.savepoint import export_savepoint, operator_id_for_uid

DATA = Path(__file__).resolve().parents[1] / "data" / "flink_savepoints"
KEPT = {p.parent.name: (p.parent / json.loads(p.read_text())["savepoint"], json.loads(p.read_text()))
        for p in sorted(DATA.glob("*/expected.json"))}

_POJO = pa.struct([pa.field("name", pa.string()), pa.field("ratio", pa.float64()), pa.field("tag", pa.int32()),
                   pa.field("total", pa.int64())])
#: expected.json's ``type`` -> the Arrow type the export must give it (the module's rule, by hand).
TYPES = {
    "long": pa.int64(), "int": pa.int32(), "double": pa.float64(), "string": pa.string(), "enum": pa.string(),
    "kryo": pa.binary(), "timer": pa.int64(), "pojo": _POJO,
    "tuple2<string,long>": pa.struct([pa.field("f0", pa.string()), pa.field("f1", pa.int64())]),
    "tuple2<long,long>": pa.struct([pa.field("f0", pa.int64()), pa.field("f1", pa.int64())]),
    "row<string,long,double>": pa.struct([pa.field("f0", pa.string()), pa.field("f1", pa.int64()),
                                          pa.field("f2", pa.float64())]),
}
NAMESPACES = {"void": None, "time_window": pa.struct([pa.field("start", pa.int64()), pa.field("end", pa.int64())])}
#: expected.json's ``type`` -> the Java snapshot class inspect must name for a value of it.
JAVA = {
    "long": "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot",
    "string": "org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot",
    "pojo": "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot",
    "enum": "org.apache.flink.api.common.typeutils.base.EnumSerializer$EnumSerializerSnapshot",
    "kryo": "org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot",
}
KINDS = {"timer": "timers"}
MODES = {"operator_list": "SPLIT_DISTRIBUTE", "operator_union_list": "UNION"}


def _quoted(name: str) -> str:
    return name.replace("/", "%2F")


def _expected_type(spec: dict[str, Any]) -> pa.DataType:
    base = TYPES[spec["type"]]
    return pa.list_(base) if spec["kind"] == "list" else base


def _key_type(operator: dict[str, Any]) -> pa.DataType:
    return TYPES[operator["key_type"]]


def _to_arrow_form(value: Any, arrow_type: pa.DataType) -> Any:
    """An expected.json value in the form pyarrow's ``to_pylist`` gives for ``arrow_type``."""
    if value is None:
        return None
    if pa.types.is_struct(arrow_type):
        names = [arrow_type.field(i).name for i in range(arrow_type.num_fields)]
        if isinstance(value, dict) and "row_kind" in value:  # the row kind is not exported
            value = value["fields"]
        if isinstance(value, list):
            value = dict(zip(names, value, strict=True))
        return {n: _to_arrow_form(value[n], arrow_type.field(n).type) for n in names}
    if pa.types.is_list(arrow_type):
        return [_to_arrow_form(v, arrow_type.value_type) for v in value]
    if pa.types.is_float64(arrow_type):
        return struct.unpack(">d", bytes.fromhex(value["f64"]))[0]
    if pa.types.is_binary(arrow_type):
        return bytes.fromhex(value["bytes"])
    return value


def _canonical(row: dict[str, Any]) -> str:
    def plain(v: Any) -> Any:
        if isinstance(v, bytes):
            return {"bytes": v.hex()}
        if isinstance(v, float):
            return {"f64": struct.pack(">d", v).hex()}
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v
    return json.dumps(plain(row), sort_keys=True, ensure_ascii=False)


def check_export(out: Path, expected: dict[str, Any], only: tuple[str, str] | None = None) -> int:
    """Every state of expected.json (or ``only`` (uid, state)) in the export at ``out``, typed
    and valued as expected; returns the rows checked."""
    checked = 0
    for uid, operator in expected["operators"].items():
        for name, spec in operator["states"].items():
            if spec["kind"].startswith("operator_") or (only is not None and only != (uid, name)):
                continue
            key_type = _key_type(operator)
            directory = out / uid / _quoted(name)
            assert directory.is_dir(), f"{uid}/{name}: no dataset at {directory}; the export should write one per keyed state"
            table = pq.read_table(directory)
            value_type = _expected_type(spec)
            namespace = NAMESPACES[spec["namespace"]]
            want = [pa.field("key_group", pa.int32(), nullable=False), pa.field("key", key_type)]
            if namespace is not None:
                want.append(pa.field("namespace", namespace))
            if spec["kind"] == "map":
                want.append(pa.field("user_key", pa.string()))
            want.append(pa.field("value", value_type))
            if spec["ttl_ms"] is not None:
                want.append(pa.field("ttl_last_access", pa.int64()))
            assert table.schema.remove_metadata() == pa.schema(want), (
                f"{uid}/{name}: exported schema {table.schema}, should be {pa.schema(want)}")
            rows = table.to_pylist()
            expected_rows: dict[str, list[Any]] = {}
            for entry in spec["entries"]:
                row = {"key_group": entry["key_group"], "key": _to_arrow_form(entry["key"], key_type),
                       "value": _to_arrow_form(entry["timestamp"] if spec["kind"] == "timer" else entry["value"],
                                               value_type)}
                if namespace is not None:
                    row["namespace"] = _to_arrow_form(entry["namespace"], namespace)
                if spec["kind"] == "map":
                    row["user_key"] = entry["user_key"]
                expected_rows.setdefault(_canonical(row), []).append(entry.get("ttl_last_access"))
            for row in rows:
                ttl = row.pop("ttl_last_access", None)
                key = _canonical(row)
                assert expected_rows.get(key), f"{uid}/{name}: exported row {key} is not one the job wrote (or is one too many)"
                bounds = expected_rows[key].pop()
                if bounds is not None:
                    assert bounds[0] <= ttl <= bounds[1], f"{uid}/{name}: ttl_last_access {ttl}, should be within {bounds}"
            left = [k for k, v in expected_rows.items() for _ in v]
            assert not left, f"{uid}/{name}: {len(left)} entries the job wrote are not exported, e.g. {left[:2]}"
            checked += len(rows)
    return checked


def check_inspection(doc: dict[str, Any], expected: dict[str, Any]) -> None:
    assert doc["format"] == "flink" and doc["metadata_version"] in (3, 4, 5, 6), f"got {doc['format']!r} v{doc['metadata_version']}"
    by_uid = {op["uid"]: op for op in doc["operators"]}
    for uid, operator in expected["operators"].items():
        assert uid in by_uid, f"operator {uid!r} missing from inspect (has {sorted(map(str, by_uid))})"
        op = by_uid[uid]
        # Flink names a source "Source: <name>" in _metadata (expected.json gives either form)
        assert op["name"] in (operator["name"], f"Source: {operator['name']}"), (
            f"operator {uid!r}: name {op['name']!r}, should be {operator['name']!r}")
        assert (op["operator_id"], op["parallelism"], op["max_parallelism"]) == (
            operator_id_for_uid(uid), operator["parallelism"], operator["max_parallelism"]), (
            f"operator {uid!r}: got {op}, should match expected.json's {operator}")
        keyed = {s["name"]: s for s in op["keyed_states"]}
        ops = {s["name"]: s for s in op["operator_states"]}
        for name, spec in operator["states"].items():
            if spec["kind"].startswith("operator_"):
                got = ops[name]
                assert (got["mode"], got["entries"]) == (MODES[spec["kind"]], len(spec["entries"])), (
                    f"{uid}/{name}: got {got}, should be {MODES[spec['kind']]} with {len(spec['entries'])} entries")
                continue
            got = keyed[name]
            assert got["kind"] == KINDS.get(spec["kind"], spec["kind"]), f"{uid}/{name}: kind {got['kind']!r}, should be {spec['kind']!r}"
            assert got["entries"] == len(spec["entries"]), f"{uid}/{name}: {got['entries']} entries, should be {len(spec['entries'])}"
            assert got["ttl"] == (spec["ttl_ms"] is not None), f"{uid}/{name}: ttl {got['ttl']}, should be {spec['ttl_ms'] is not None}"
            value = got["value_serializer"]
            if spec["ttl_ms"] is not None:
                assert value == "org.apache.flink.runtime.state.ttl.TtlStateFactory$TtlSerializerSnapshot", f"{uid}/{name}: {value}"
            elif spec["kind"] in ("value", "reducing") and spec["type"] in JAVA:
                assert value == JAVA[spec["type"]], f"{uid}/{name}: value serializer {value}, should be {JAVA[spec['type']]}"
            if spec["kind"] == "map":
                assert got["user_key_serializer"] == JAVA["string"], f"{uid}/{name}: user key serializer {got['user_key_serializer']}"
            else:
                assert got["user_key_serializer"] is None, f"{uid}/{name}: a user key serializer outside map state"


# -- the kept savepoints (no JDK) ---------------------------------------------------------------
@pytest.mark.parametrize("case", sorted(KEPT))
def test_export_of_kept_savepoint_equals_what_flink_wrote(tmp_path, case):
    savepoint, expected = KEPT[case]
    out = tmp_path / "export"
    assert main(["savepoint", "export", str(savepoint), "--out", str(out)]) == 0
    assert check_export(out, expected) > 100
    manifest = json.loads((out / "_export.json").read_text())
    assert manifest["format"] == "flink" and len(manifest["datasets"]) == sum(
        1 for op in expected["operators"].values() for s in op["states"].values() if not s["kind"].startswith("operator_"))


@pytest.mark.parametrize("case", sorted(KEPT))
def test_inspect_of_kept_savepoint_matches_expected(tmp_path, case, capsys):
    savepoint, expected = KEPT[case]
    assert main(["savepoint", "inspect", str(savepoint), "--json", str(tmp_path / "i.json")]) == 0
    check_inspection(json.loads((tmp_path / "i.json").read_text()), expected)
    table = capsys.readouterr().out
    assert "keyed-states" in table and "amounts" in table and "map" in table, f"the table lacks states: {table}"


def test_export_one_state_of_one_operator(tmp_path):
    savepoint, expected = KEPT["hashmap_compressed_tuple"]
    out = tmp_path / "one"
    assert main(["savepoint", "export", str(savepoint), "--out", str(out), "--uid", "keyed-states",
                 "--state", "amounts"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["_export.json", "keyed-states"]
    assert [p.name for p in (out / "keyed-states").iterdir()] == ["amounts"]
    assert check_export(out, expected, only=("keyed-states", "amounts")) == len(
        expected["operators"]["keyed-states"]["states"]["amounts"]["entries"])


def test_export_streams_in_bounded_batches(tmp_path, monkeypatch):
    """Rows are written BATCH_ROWS at a time: with a batch of 3, a state of 19 entries is in
    several row groups and still equal to what Flink wrote."""
    from reference.savepoint import _export

    monkeypatch.setattr(_export, "BATCH_ROWS", 3)
    savepoint, expected = KEPT["rocksdb_inline_string"]
    export_savepoint(savepoint, tmp_path / "e", uid="keyed-states", state="amounts")
    file = next((tmp_path / "e" / "keyed-states" / "amounts").glob("*.parquet"))
    assert pq.ParquetFile(file).metadata.num_row_groups >= 6
    check_export(tmp_path / "e", expected, only=("keyed-states", "amounts"))


# -- errors -------------------------------------------------------------------------------------
def _one_sentence_error(capsys, *what: str) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("conformance savepoint: error:"), f"got {err!r}, should be one line"
    for w in what:
        assert w in err, f"got {err!r}, should mention {w!r}"
    return err


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_not_a_savepoint_is_unusable(tmp_path, capsys, command):
    (tmp_path / "notes.txt").write_text("hello")
    extra = ["--out", str(tmp_path / "out")] if command == "export" else []
    assert main(["savepoint", command, str(tmp_path), *extra]) == 2
    _one_sentence_error(capsys, "not a savepoint", "give the savepoint's directory")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_truncated_metadata_is_unusable(tmp_path, capsys, command):
    import shutil

    savepoint, _ = KEPT["rocksdb_inline_string"]
    copy = tmp_path / "sp"
    shutil.copytree(savepoint, copy)
    data = (copy / "_metadata").read_bytes()
    (copy / "_metadata").write_bytes(data[: len(data) // 2])
    extra = ["--out", str(tmp_path / "out")] if command == "export" else []
    assert main(["savepoint", command, str(copy), *extra]) == 2
    _one_sentence_error(capsys, "_metadata")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("option, value, named", [("--uid", "no-such-operator", "keyed-states"),
                                                  ("--state", "no-such-state", "amounts")])
def test_unknown_uid_or_state_is_unusable(tmp_path, capsys, option, value, named):
    savepoint, _ = KEPT["hashmap_files_long"]
    uid = [] if option == "--uid" else ["--uid", "keyed-states"]
    assert main(["savepoint", "export", str(savepoint), "--out", str(tmp_path / "o"), *uid, option, value]) == 2
    _one_sentence_error(capsys, value, named)
    assert not (tmp_path / "o").exists()


def test_export_refuses_an_existing_directory(tmp_path, capsys):
    savepoint, _ = KEPT["hashmap_files_long"]
    (tmp_path / "o").mkdir()
    assert main(["savepoint", "export", str(savepoint), "--out", str(tmp_path / "o")]) == 2
    _one_sentence_error(capsys, "exists already")


def test_failed_export_leaves_nothing_that_looks_complete(tmp_path, monkeypatch):
    from reference.savepoint import _export

    real = _export.write_units
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the second operator: the first one's datasets are written
            raise OSError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(_export, "write_units", failing)
    savepoint, _ = KEPT["hashmap_files_long"]
    with pytest.raises(OSError):
        export_savepoint(savepoint, tmp_path / "o")
    assert list(tmp_path.iterdir()) == [], f"a failed export left {list(tmp_path.iterdir())}"


# -- this project's own savepoints ------------------------------------------------------------------
def _own_savepoint(path: Path) -> str:
    from reference.backends import (
        BytesStateBackend,
        ListStateDescriptor,
        MapStateDescriptor,
        ValueStateDescriptor,
    )
    from reference.serializers import LongSerializer, StringSerializer, TupleSerializer

    backend = BytesStateBackend(StringSerializer())
    count = backend.get_value_state(ValueStateDescriptor("count", LongSerializer()))
    pair = backend.get_value_state(ValueStateDescriptor("pair", TupleSerializer(StringSerializer(), LongSerializer())))
    names = backend.get_list_state(ListStateDescriptor("names", StringSerializer()))
    amounts = backend.get_map_state(MapStateDescriptor("amounts", StringSerializer(), LongSerializer()))
    for i in range(5):
        backend.set_current_key(f"k{i}")
        count.update(i)
        pair.update((f"p{i}", i * 10))
        names.add(f"a{i}")
        names.add(f"b{i}")
        for j in range(i):
            amounts.put(f"m{j}", i * j)
    written = backend.savepoint(str(path))
    backend.close()
    return written


def test_inspect_and_export_this_projects_savepoint(tmp_path, capsys):
    savepoint = _own_savepoint(tmp_path / "sp")
    assert main(["savepoint", "inspect", savepoint, "--json", str(tmp_path / "i.json")]) == 0
    doc = json.loads((tmp_path / "i.json").read_text())
    assert doc["format"] == "state-conformance", f"got format {doc['format']!r}"
    states = {s["name"]: (s["kind"], s["entries"]) for s in doc["operators"][0]["keyed_states"]}
    assert states == {"count": ("value", 5), "pair": ("value", 5), "names": ("list", 5), "amounts": ("map", 10)}
    out = tmp_path / "o"
    assert main(["savepoint", "export", savepoint, "--out", str(out)]) == 0
    rows = {name: sorted(pq.read_table(out / name).to_pylist(), key=lambda r: json.dumps(r, sort_keys=True))
            for name in states}
    assert pq.read_table(out / "pair").schema.field("value").type == TYPES["tuple2<string,long>"]
    assert pq.read_table(out / "names").schema.field("value").type == pa.list_(pa.string())
    assert [(r["key"], r["value"]) for r in rows["count"]] == [(f"k{i}", i) for i in range(5)]
    assert sorted((r["key"], r["value"]["f0"], r["value"]["f1"]) for r in rows["pair"]) == [
        (f"k{i}", f"p{i}", i * 10) for i in range(5)]
    assert sorted((r["key"], r["value"]) for r in rows["names"]) == [(f"k{i}", [f"a{i}", f"b{i}"]) for i in range(5)]
    assert sorted((r["key"], r["user_key"], r["value"]) for r in rows["amounts"]) == sorted(
        (f"k{i}", f"m{j}", i * j) for i in range(5) for j in range(i))
    assert "namespace" not in pq.read_table(out / "count").schema.names


# -- real Flink savepoints (the fixture) -----------------------------------------------------------
@pytest.mark.flink
@pytest.mark.xdist_group("flink")
def test_export_and_inspect_of_every_flink_case(flink_savepoints, tmp_path):
    for case, (savepoint, expected) in flink_savepoints.items():
        out = tmp_path / case
        assert main(["savepoint", "export", str(savepoint), "--out", str(out)]) == 0, case
        assert check_export(out, expected) > 100, case
        assert main(["savepoint", "inspect", str(savepoint), "--json", str(tmp_path / f"{case}.json")]) == 0, case
        check_inspection(json.loads((tmp_path / f"{case}.json").read_text()), expected)


# -- Spark --------------------------------------------------------------------------------------
def _same_datasets(one: Path, other: Path) -> None:
    names = sorted(str(p.relative_to(one)) for p in one.glob("*/*") if p.is_dir())
    assert names == sorted(str(p.relative_to(other)) for p in other.glob("*/*") if p.is_dir()) and names
    for name in names:
        a, b = pq.read_table(one / name), pq.read_table(other / name)
        assert a.schema == b.schema and a.equals(b), f"{name}: the Spark export differs from the one-process export"


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("case", sorted(KEPT))
def test_spark_export_equals_one_process_export(tmp_path, case):
    savepoint, expected = KEPT[case]
    assert main(["savepoint", "export", str(savepoint), "--out", str(tmp_path / "one")]) == 0
    assert main(["savepoint", "export", str(savepoint), "--out", str(tmp_path / "spark"), "--spark", "local[2]"]) == 0
    _same_datasets(tmp_path / "one", tmp_path / "spark")
    check_export(tmp_path / "spark", expected)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_export_of_this_projects_savepoint(tmp_path):
    savepoint = _own_savepoint(tmp_path / "sp")
    export_savepoint(savepoint, tmp_path / "one")
    assert main(["savepoint", "export", savepoint, "--out", str(tmp_path / "spark"), "--spark", "local[2]"]) == 0
    for name in ("count", "pair", "names", "amounts"):
        a, b = pq.read_table(tmp_path / "one" / name), pq.read_table(tmp_path / "spark" / name)
        assert a.equals(b), f"{name}: the Spark export differs from the one-process export"


@pytest.mark.parametrize("option, value, named", [("--uid", "some-uid", "leave --uid out"),
                                                  ("--state", "no-such-state", "amounts")])
def test_unknown_uid_or_state_of_this_projects_savepoint(tmp_path, capsys, option, value, named):
    savepoint = _own_savepoint(tmp_path / "sp")
    assert main(["savepoint", "export", savepoint, "--out", str(tmp_path / "o"), option, value]) == 2
    _one_sentence_error(capsys, value, named)
    assert not (tmp_path / "o").exists()
