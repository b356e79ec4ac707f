"""The executor side of verification (``batch_verifier``), fed Arrow batches directly (no Spark): what
each kind of damage is reported as, which problem an entry with several gets, and that every
entry is counted and judged, however many share their bytes."""

from __future__ import annotations

import pyarrow as pa
import pytest

from conformance.spark import batch_verifier
from reference.savepoint import StateMetadata, encode_list_value, key_group_for, savepoint_arrow_schema
from reference.serializers import IntSerializer, LongSerializer, StringSerializer

MAX_PARALLELISM = 128
LONGS, INTS, STRINGS = LongSerializer(), IntSerializer(), StringSerializer()


def _entry(key, value, user_key=None, namespace=b"", group=None):
    key_bytes = None if key is None else LONGS.to_bytes(key)
    if group is None and key_bytes is not None:
        group = key_group_for(key_bytes, MAX_PARALLELISM)
    return (group if group is not None else 0, key_bytes, namespace, user_key, value)


def _run(kind, entries, ns=None, uk=None, judge=None, sample=5):
    state = StateMetadata(name="s", kind=kind, value_serializer_snapshot=b"",
                          user_key_serializer_snapshot=b"" if kind == "map" else None)
    decode = batch_verifier(state, MAX_PARALLELISM, LONGS, ns, uk, INTS, sample, judge)
    columns = list(zip(*entries, strict=True))
    batch = pa.RecordBatch.from_arrays(
        [pa.array(list(c), f.type) for c, f in zip(columns, savepoint_arrow_schema(), strict=True)],
        schema=pa.schema([f.with_nullable(True) for f in savepoint_arrow_schema()]),
    )
    (summary,) = list(decode([batch]))
    return summary._asdict()


def test_clean_entries_are_all_counted_and_judged_even_when_they_share_bytes():
    seen = []

    def judge(key, namespace, user_key, value):
        seen.append((key, namespace, user_key, value))
        return None if value == key % 3 else f"key {key}: got {value}"

    entries = [_entry(k, INTS.to_bytes(k % 3)) for k in range(300)]
    got = _run("value", entries, judge=judge)
    assert (got["entries"], got["bad"], got["rejected"]) == (300, 0, 0), f"got {got}, should be 300 clean entries"
    assert seen == [(k, None, None, k % 3) for k in range(300)], (
        f"got {seen[:3]}..., should judge every entry in order with its decoded key and value")


def test_the_judge_counts_every_entry_it_rejects():
    entries = [_entry(k, INTS.to_bytes(7)) for k in range(10)]
    got = _run("value", entries, judge=lambda key, ns, uk, value: None if key < 4 else f"key {key} rejected", sample=2)
    assert (got["bad"], got["rejected"]) == (0, 6), f"got {got}, should be 6 entries rejected by the judge"
    assert got["rejected_samples"] == ["key 4 rejected", "key 5 rejected"], f"got {got['rejected_samples']}"


@pytest.mark.parametrize("entry, kind, serializers, says", [
    (_entry(None, INTS.to_bytes(1)), "value", {}, "key is null"),
    (_entry(5, INTS.to_bytes(1), group=(key_group_for(LONGS.to_bytes(5), MAX_PARALLELISM) + 1) % MAX_PARALLELISM),
     "value", {}, "key group"),
    ((key_group_for(b"\x00\x01", MAX_PARALLELISM), b"\x00\x01", b"", None, INTS.to_bytes(1)), "value", {},
     "key 0001 does not decode"),
    (_entry(5, INTS.to_bytes(1), namespace=b"\x07"), "value", {}, "namespace 07 present where the state has none"),
    (_entry(5, INTS.to_bytes(1), namespace=None), "value", {"ns": INTS}, "namespace is null"),
    (_entry(5, INTS.to_bytes(1), namespace=b"\x00"), "value", {"ns": INTS}, "namespace 00 does not decode"),
    (_entry(5, INTS.to_bytes(1)), "map", {"uk": STRINGS}, "map key is null"),
    (_entry(5, INTS.to_bytes(1), user_key=b"\x05a"), "map", {"uk": STRINGS}, "map key 0561 does not decode"),
    (_entry(5, None), "value", {}, "null value in value state"),
    (_entry(5, INTS.to_bytes(1) + b"\x00"), "value", {}, "left"),
    (_entry(5, b"\x00\x00"), "list", {}, "does not decode"),
])
def test_each_damage_is_one_bad_entry_that_says_what_is_wrong(entry, kind, serializers, says):
    good = [_entry(k, INTS.to_bytes(k), user_key=STRINGS.to_bytes("a") if "uk" in serializers else None,
                   namespace=INTS.to_bytes(0) if "ns" in serializers else b"") for k in (100, 101)]
    judged = []
    got = _run(kind, [good[0], entry, good[1]], ns=serializers.get("ns"), uk=serializers.get("uk"),
               judge=lambda *e: judged.append(e[0]))
    assert (got["entries"], got["bad"]) == (3, 1), f"got {got}, should be 3 entries with 1 bad [{says}]"
    assert len(got["samples"]) == 1 and says in got["samples"][0], f"got {got['samples']}, should say {says!r}"
    assert judged == [100, 101], f"got {judged}, should judge only the entries that decode [{says}]"


def test_an_entry_with_several_problems_reports_the_first_in_column_order():
    misplaced = (key_group_for(LONGS.to_bytes(5), MAX_PARALLELISM) + 1) % MAX_PARALLELISM
    entries = [
        _entry(5, b"\x00", namespace=b"\x07", group=misplaced),  # group, namespace, value
        _entry(6, b"\x00", namespace=b"\x07"),  # namespace, value
    ]
    got = _run("value", entries)
    assert got["bad"] == 2, f"got {got}, should be 2 bad entries"
    assert "key group" in got["samples"][0] and "namespace" in got["samples"][1], (
        f"got {got['samples']}, should report the key group first, then the namespace before the value")


def test_a_null_map_value_decodes_as_none_and_every_entry_holding_bad_bytes_counts():
    entries = [_entry(1, None, user_key=STRINGS.to_bytes("a"))] + [
        _entry(k, b"\x01", user_key=STRINGS.to_bytes("b")) for k in range(2, 6)]
    judged = []
    got = _run("map", entries, uk=STRINGS, judge=lambda *e: judged.append(e))
    assert judged == [(1, None, "a", None)], f"got {judged}, a null map value should reach the judge as None"
    assert (got["bad"], len(got["samples"])) == (4, 4), f"got {got}, every entry holding the short value is bad"


def test_list_values_decode_to_their_elements():
    judged = []
    value = encode_list_value([INTS.to_bytes(1), INTS.to_bytes(2)])
    got = _run("list", [_entry(3, value)], judge=lambda *e: judged.append(e[3]))
    assert (got["bad"], judged) == (0, [[1, 2]]), f"got {got}, {judged}, should decode the list [1, 2]"
