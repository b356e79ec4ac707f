"""reference.savepoint.read_flink_savepoint against REAL Flink 2.3 canonical savepoints.

The savepoints and what they hold come from the ``flink_savepoints`` session fixture
(tests/flink/savepoints.py: SavepointJob.java run in a MiniCluster writes each case's savepoint
and an ``expected.json`` of every value it wrote, rendered by the Java side). Every keyed entry the
reader decodes is compared with expected.json exactly (as multisets: entry order carries no
meaning); so are the operators, their uids, ids, parallelism, the state kinds and TTL flags, and
the operator states' names, distribution modes and elements (per subtask, in order).

Without that fixture (a branch where it is not merged, no JDK, no ``flink`` extra) the ``flink``
tests skip; ``FLINK_SAVEPOINTS_DIR`` may instead name a directory of ``<case>/{savepoint-*/,
expected.json}`` as SavepointJob writes them. Three of those cases are kept in
tests/data/flink_savepoints (state inline in ``_metadata``; Snappy-compressed state files; state
files of two subtasks with two-byte key-group prefixes), so that the same comparison runs with
no JDK at all (and the fuzzing campaign mutates them).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

import pytest

from reference.savepoint import Undecoded, operator_id_for_uid, read_flink_savepoint
from reference.serializers import (
    FloatSerializerSnapshot,
    ListSerializerSnapshot,
    PojoSerializerSnapshot,
    Row,
    RowKind,
    RowSerializerSnapshot,
    TimeWindow,
    TtlValue,
    TupleSerializerSnapshot,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "flink_savepoints"
_KINDS = {"value": "value", "list": "list", "map": "map", "reducing": "reducing",
          "aggregating": "aggregating", "timer": "timers"}
_MODES = {"operator_list": "SPLIT_DISTRIBUTE", "operator_union_list": "UNION"}


def _from_directory(root: Path) -> dict[str, tuple[Path, dict[str, Any]]]:
    cases = {}
    for expected_file in sorted(root.glob("*/expected.json")):
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        cases[expected_file.parent.name] = (expected_file.parent / expected["savepoint"], expected)
    return cases


@pytest.fixture(scope="module")
def savepoints(request) -> dict[str, tuple[Path, dict[str, Any]]]:
    try:
        return request.getfixturevalue("flink_savepoints")  # type: ignore[no-any-return]
    except (pytest.FixtureLookupError, pytest.skip.Exception):
        pass
    directory = os.environ.get("FLINK_SAVEPOINTS_DIR")
    if directory and _from_directory(Path(directory)):
        return _from_directory(Path(directory))
    pytest.skip("no real Flink savepoints: the flink_savepoints fixture (tests/flink/savepoints.py) is not "
                "available here and FLINK_SAVEPOINTS_DIR names no <case>/expected.json")


def _render(value: Any, snapshot: Any = None) -> Any:
    """A decoded value in expected.json's form (tests/flink/savepoints.py, "Values"), guided by
    the serializer snapshot it was written with where the Python value alone is ambiguous (a
    Row of kind INSERT reads as a plain tuple; a float is a Java float or double)."""
    nested = list(getattr(snapshot, "nested_snapshots", None) or [])
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if isinstance(snapshot, FloatSerializerSnapshot):
            return {"f32": struct.pack(">f", value).hex()}
        return {"f64": struct.pack(">d", value).hex()}
    if isinstance(snapshot, RowSerializerSnapshot):
        kind = getattr(value, "kind", RowKind.INSERT)
        return {"row_kind": kind.name, "fields": [_render(v, n) for v, n in zip(value, nested, strict=True)]}
    if isinstance(snapshot, PojoSerializerSnapshot) and isinstance(value, dict):
        types = dict(zip(snapshot.field_names, nested, strict=True))
        return {k: _render(v, types.get(k)) for k, v in value.items()}
    if isinstance(snapshot, TupleSerializerSnapshot):
        return [_render(v, n) for v, n in zip(value, nested, strict=True)]
    if isinstance(snapshot, ListSerializerSnapshot):
        return [_render(v, nested[0]) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": bytes(value).hex()}
    if isinstance(value, Undecoded):
        return {"opaque": True, "class": value.java_class, "bytes": value.data.hex()}
    if isinstance(value, TimeWindow):
        return {"start": value.start, "end": value.end}
    if isinstance(value, Row):
        return {"row_kind": value.kind.name, "fields": [_render(v) for v in value]}
    if isinstance(value, dict):
        return {k: _render(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_render(v) for v in value]
    raise AssertionError(f"got a decoded value of type {type(value).__name__} ({value!r}), which the test cannot render")


def _ttl_value(value: Any, bounds: list[int], where: str) -> Any:
    assert isinstance(value, TtlValue), f"{where}: got {value!r}, should be a TtlValue (a TTL state)"
    assert bounds[0] <= value.last_access <= bounds[1], (
        f"{where}: last access {value.last_access}, should lie in {bounds} (when the job wrote it)")
    return value.value


def _value_snapshot(state: Any) -> Any:
    """The snapshot of one stored value: the element of a list, the value of a map, inside TTL."""
    snapshot = state.value_serializer
    if state.kind in ("list", "map"):
        snapshot = snapshot.nested_snapshots[0 if state.kind == "list" else 1]
    if state.ttl:
        snapshot = snapshot.nested_snapshots[1]
    return snapshot


def _decoded(state: Any, expected_entries: list[dict[str, Any]], where: str) -> list[str]:
    """The state's entries rendered as expected.json's entries (canonical JSON strings)."""
    element = _value_snapshot(state) if state.kind != "timers" else None
    bounds_by_key = {json.dumps([e["key"], e.get("user_key")]): e.get("ttl_last_access") for e in expected_entries}
    rendered = []
    for entry in state.entries():
        row: dict[str, Any] = {"key": _render(entry.key, state.key_serializer), "key_group": entry.key_group,
                               "namespace": _render(entry.namespace, state.namespace_serializer)}
        if state.kind == "timers":
            row["timestamp"] = entry.value
        else:
            value = entry.value
            user_key = _render(entry.user_key, state.user_key_serializer)
            if state.ttl:
                bounds = bounds_by_key.get(json.dumps([row["key"], user_key]))
                assert bounds is not None, f"{where}: decoded key {row['key']!r}, which expected.json lacks"
                if state.kind == "list":
                    value = [_ttl_value(v, bounds, where) for v in value]
                elif value is not None:
                    value = _ttl_value(value, bounds, where)
                row["ttl_last_access"] = bounds
            if state.kind == "map":
                row["user_key"] = user_key
            if state.kind == "list":
                row["value"] = [_render(v, element) for v in value]
            else:
                row["value"] = _render(value, element)
        rendered.append(json.dumps(row, sort_keys=True))
    return sorted(rendered)


@pytest.mark.flink
def test_every_keyed_entry_of_every_real_savepoint_is_decoded_exactly(savepoints):
    assert _compare_all(savepoints) > 0, "got no keyed entries to compare; the savepoints should hold some"


def test_every_keyed_entry_of_the_kept_real_savepoints_is_decoded_exactly():
    kept = _from_directory(DATA)
    assert len(kept) == 3, f"got {sorted(kept)} in {DATA}, should be the three kept cases"
    assert _compare_all(kept) >= 3 * 130, "got fewer keyed entries than the kept savepoints hold"


def _per_subtask(pairs: Any) -> dict[int, list[Any]]:
    """Operator-state elements by subtask, each subtask's in the order written."""
    grouped: dict[int, list[Any]] = {}
    for subtask, value in pairs:
        grouped.setdefault(subtask, []).append(value)
    return grouped


def _compare_all(savepoints: dict[str, tuple[Path, dict[str, Any]]]) -> int:
    """Compare every operator and keyed entry with expected.json; the number of entries compared."""
    compared = 0
    for case, (directory, expected) in sorted(savepoints.items()):
        savepoint = read_flink_savepoint(directory)
        assert savepoint.metadata_version == 6, f"{case}: got metadata version {savepoint.metadata_version}, should be 6 (Flink 2.3)"
        for uid, want in expected["operators"].items():
            operator = savepoint.operator(uid)
            where = f"{case}, operator {uid}"
            assert operator.uid == uid and operator.operator_id == operator_id_for_uid(uid), (
                f"{where}: got uid {operator.uid!r} and id {operator.operator_id}, should be the uid's "
                f"murmur3_128 {operator_id_for_uid(uid)}")
            assert (operator.parallelism, operator.max_parallelism) == (want["parallelism"], want["max_parallelism"]), (
                f"{where}: got parallelism {operator.parallelism}/{operator.max_parallelism}, should be "
                f"{want['parallelism']}/{want['max_parallelism']}")
            keyed = {s.name: s for s in operator.keyed_states}
            operator_states = {s.name: s for s in operator.operator_states}
            for name, state_want in want["states"].items():
                at = f"{where}, state {name!r}"
                if state_want["kind"] in _MODES:
                    found = operator_states.get(name)
                    assert found is not None, f"{at}: missing from operator states {sorted(operator_states)}"
                    assert found.mode == _MODES[state_want["kind"]], f"{at}: got mode {found.mode}"
                    got = _per_subtask((v.subtask, _render(v.value, found.value_serializer)) for v in found.values())
                    want_values = _per_subtask((e["subtask"], e["value"]) for e in state_want["entries"])
                    assert got == want_values, f"{at}: got elements {got}, should be {want_values}"
                    compared += len(state_want["entries"])
                    continue
                state = keyed.get(name)
                assert state is not None, f"{at}: missing from the keyed states {sorted(keyed)}"
                assert state.kind == _KINDS[state_want["kind"]], f"{at}: got kind {state.kind}, should be {state_want['kind']}"
                assert state.ttl == (state_want["ttl_ms"] is not None), f"{at}: got ttl {state.ttl}"
                want_rows = sorted(json.dumps(e, sort_keys=True) for e in state_want["entries"])
                got_rows = _decoded(state, state_want["entries"], at)
                assert got_rows == want_rows, (
                    f"{at}: decoded entries differ from what the job wrote;\nonly decoded: "
                    f"{sorted(set(got_rows) - set(want_rows))[:5]}\nonly expected: "
                    f"{sorted(set(want_rows) - set(got_rows))[:5]}")
                compared += len(want_rows)
    return compared


def test_raw_entries_match_decoded_entries_and_key_groups_filter():
    case, (directory, _) = sorted(_from_directory(DATA).items())[0]
    state = read_flink_savepoint(directory).operator("keyed-states").keyed_state("count")
    raw = list(state.raw_entries())
    decoded = list(state.entries())
    assert len(raw) == len(decoded) > 0, f"{case}: got {len(raw)} raw and {len(decoded)} decoded entries"
    assert [r.key_group for r in raw] == [d.key_group for d in decoded], f"{case}: key groups differ between raw and decoded"
    one = decoded[0].key_group
    only = list(state.entries(key_groups=[one]))
    assert only and all(e.key_group == one for e in only), f"{case}: entries(key_groups=[{one}]) gave {only}"
    assert len(only) == sum(1 for e in decoded if e.key_group == one), f"{case}: filtering by key group lost entries"
