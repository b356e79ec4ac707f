"""The spark family's large history: which values it cycles through and how often
(``history_cycle``), and the files it is written as (``_write_history``); no Spark needed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance._checks.spark import (
    _EVERY,
    _layout,
    _oracle_judge,
    _write_history,
    _write_through_backend,
    history_cycle,
)
from reference.serializers import IntSerializer, ListSerializer, NullableSerializer, StringSerializer


def test_big_values_recur_less_often_and_every_value_is_in_the_cycle():
    small, medium, big = "a", "é" * 500, "x" * 20_000  # 2, ~1 KB and ~20 KB serialized
    values = [small, medium, big]
    cycle = history_cycle(StringSerializer(), values)
    counts = {v[:3]: sum(c is v for c in cycle) for v in values}
    assert counts == {"a": 16, "ééé": 4, "xxx": 1}, f"got {counts}, should be 16, 4 and 1 (by serialized size)"
    assert all(any(c is v for c in cycle) for v in values), "every drawn value should be in the cycle"
    assert cycle[:3] == values, f"got {cycle[:3]!r}..., should start with one round of every value"
    assert cycle[3:6] == [small, medium, small], f"got {cycle[3:6]!r}, rounds should interleave"


def test_values_of_one_weight_are_the_cycle_as_drawn():
    values = [[1, 2], [], [3]]
    cycle = history_cycle(ListSerializer(IntSerializer()), values)
    assert cycle == values and all(c is v for c, v in zip(cycle, values, strict=True)), f"got {cycle}, should be {values}"


def test_layout_takes_values_from_the_cycle_by_key():
    cycle = ["a", "b", "c"]
    value, elements, entries = _layout(4, cycle)
    assert (value, elements, entries) == ("b", ["b", "c", "a"], {"a": "b", "b": "c"}), f"got {value, elements, entries}"
    assert _layout(5, cycle) == ("c", None, None), f"got {_layout(5, cycle)}"


def _files(savepoint):
    from reference.savepoint import read_savepoint_metadata, state_data_files

    metadata = read_savepoint_metadata(savepoint)
    return metadata, [open(f, "rb").read() for state in metadata.states for f in state_data_files(savepoint, state)]


@pytest.mark.parametrize("serializer, values", [
    (StringSerializer(), ["", "a", "é" * 200, "\U0001f600" * 3, "x" * 5000]),
    (NullableSerializer(IntSerializer()), [0, -1, 2**31 - 1]),
    (ListSerializer(IntSerializer()), [[], [1], list(range(300))]),
])
@pytest.mark.parametrize("periods", [0.5, 1, 2.75])
def test_history_files_are_the_bytes_backends_for_every_key(tmp_path, serializer, values, periods):
    """The history repeats the first period's rows under later keys; its files must be the
    very ones the bytes backend writes when every key is put through it."""
    ctx = SimpleNamespace(work_dir=str(tmp_path))
    cycle = history_cycle(serializer, values)
    keys = int(len(cycle) * _EVERY * periods)
    written = _write_history(ctx, serializer, cycle, keys, str(tmp_path / "history"))
    expected = _write_through_backend(ctx, serializer, cycle, range(keys), str(tmp_path / "backend"))
    got_meta, got = _files(written)
    want_meta, want = _files(expected)
    assert got_meta == want_meta, f"got metadata {got_meta}, should be the bytes backend's {want_meta} ({keys} keys)"
    assert [s.rows for s in got_meta.states] == [keys, keys // _EVERY + (keys % _EVERY > 0), 2 * (keys // _EVERY + (keys % _EVERY > 0))], (
        f"got {[s.rows for s in got_meta.states]} rows per state for {keys} keys")
    differing = [i for i, (a, b) in enumerate(zip(got, want, strict=True)) if a != b]
    assert len(got) == len(want) and not differing, (
        f"data files {differing} differ from the bytes backend's ({keys} keys, {len(cycle) * _EVERY} per period)")


def test_oracle_judge_compares_canonically_per_place_whatever_it_has_seen():
    values = [0.0, -0.0, float("nan")]
    judge = _oracle_judge(values, None, "value")
    period = len(values) * _EVERY
    assert judge(0, None, None, 0.0) is None, "key 0 holds 0.0"
    assert judge(1, None, None, 0.0) is not None, "key 1 holds -0.0: 0.0 should be rejected (bit-exact)"
    zero = -0.0
    assert judge(1 + period, None, None, zero) is None, "key 1 of the next period holds -0.0"
    assert judge(0, None, None, zero) is not None, "an object that passed at one place should be judged anew at another"
    assert judge(2, None, None, float("nan")) is None, "NaN equals NaN of the same bits"
    assert "should be" in judge(2 + period, None, None, 1.5), "got a wrong value, should say what it should be"


def test_oracle_judge_migrates_each_history_value_once_and_judges_the_migrated_values():
    calls = []

    def migrate(value):
        calls.append(value)
        return value * 10

    values = [1, 2]
    judge = _oracle_judge(values, migrate, "map")
    period = len(values) * _EVERY
    for key in range(0, 3 * period, _EVERY):  # keys with map state: "a" -> value, "b" -> the next one
        assert judge(key, None, "a", values[key % 2] * 10) is None, f"key {key} map key 'a'"
        assert judge(key, None, "b", values[(key + 1) % 2] * 10) is None, f"key {key} map key 'b'"
    assert sorted(calls) == [1, 2], f"got migrate calls {calls}, should migrate each history value once"
    assert judge(0, None, "a", 1) is not None, "the unmigrated value should be rejected"
    assert judge(0, None, "c", 10) is not None, "a map key the history never wrote should be rejected"
