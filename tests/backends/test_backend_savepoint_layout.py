"""The public savepoint layout: hash, list encoding, metadata, data files, atomic commit."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import SerializationError, snapshot_to_bytes
from reference.savepoint import (
    METADATA_FILE,
    SavepointFormatError,
    SavepointMetadata,
    StateMetadata,
    atomic_directory,
    decode_list_value,
    encode_list_value,
    key_group_for,
    key_groups_for,
    read_savepoint_content,
    read_savepoint_metadata,
    read_state_rows,
    state_data_dir,
    write_savepoint_metadata,
    write_state_rows,
)
from reference.savepoint._murmur import murmur3_32, murmur3_32_many
from reference.serializers import IntSerializer, LongSerializer, StringSerializer


@pytest.mark.parametrize(
    "data, seed, expected",
    [
        (b"", 0, 0),
        (b"", 1, 0x514E28B7),
        (b"", 0xFFFFFFFF, 0x81F16F39),
        (b"\x00\x00\x00\x00", 0, 0x2362F9DE),
        (b"hello", 0, 0x248BFA47),
        (b"The quick brown fox jumps over the lazy dog", 0, 0x2E4FF723),
        (b"abc", 0, 0xB3DD93FA),
    ],
)
def test_murmur3_matches_published_vectors(data, seed, expected):
    got = murmur3_32(data, seed)
    assert got == expected, f"got 0x{got:08x}, should be 0x{expected:08x} for {data!r} seed {seed}"


def test_key_group_is_hash_mod_max_parallelism():
    for key in (b"", b"hello", b"user-1"):
        for mp in (1, 7, 128, 32768):
            got = key_group_for(key, mp)
            assert got == murmur3_32(key) % mp, f"got {got}, should be murmur3 % {mp} for {key!r}"
    with pytest.raises(ValueError):
        key_group_for(b"x", 0)


@given(size=st.integers(0, 13), count=st.integers(64, 150), seed=st.integers(0, 2**32 - 1),
       data=st.data())
def test_batched_murmur3_equals_one_key_at_a_time(size, count, seed, data):
    # Equal-length batches of 64 keys or more take the vectorized path, others the scalar one.
    keys = data.draw(st.lists(st.binary(min_size=size, max_size=size), min_size=count, max_size=count), label="keys")
    if data.draw(st.booleans(), label="one odd length"):
        keys.append(b"\x01" * (size + 1))
    got = murmur3_32_many(keys, seed)
    should = [murmur3_32(k, seed) for k in keys]
    assert got == should, f"got {got[:4]}..., should be {should[:4]}... [size {size}, {len(keys)} keys]"
    groups = key_groups_for(keys, 128)
    assert groups == [key_group_for(k, 128) for k in keys], "key_groups_for should equal key_group_for per key"


def test_list_value_is_flink_delimited_layout():
    ints = IntSerializer()
    # 44 is 0x2C: an element may contain the delimiter byte, the serializer finds the boundary.
    elements = [ints.to_bytes(44), ints.to_bytes(-1), ints.to_bytes(0x2C2C2C2C)]
    value = encode_list_value(elements)
    should = elements[0] + b"," + elements[1] + b"," + elements[2]
    assert value == should, f"got {value.hex()}, should be {should.hex()}"
    got = decode_list_value(value, ints)
    assert got == elements, f"got {got}, should be {elements}"
    one = decode_list_value(ints.to_bytes(7), ints)
    assert one == [ints.to_bytes(7)], f"got {one}, should be a single element"


@pytest.mark.parametrize(
    "data, why",
    [
        (b"\x00\x00\x00\x01;\x00\x00\x00\x02", "wrong delimiter"),
        (b"\x00\x00\x00\x01,", "trailing delimiter"),
        (b"\x00\x00\x00\x01,\x00\x00", "truncated element"),
        (b"", "empty value"),
    ],
)
def test_corrupt_list_value_is_a_serialization_error(data, why):
    with pytest.raises(SerializationError):
        decode_list_value(data, IntSerializer())


def _metadata():
    snap = lambda s: snapshot_to_bytes(s.snapshot_configuration())  # noqa: E731
    return SavepointMetadata(
        max_parallelism=64,
        key_serializer_snapshot=snap(StringSerializer()),
        states=(
            StateMetadata("count", "value", snap(LongSerializer()), data=state_data_dir(0), rows=2),
            StateMetadata(
                "m", "map", snap(LongSerializer()), namespace_serializer_snapshot=snap(IntSerializer()),
                user_key_serializer_snapshot=snap(StringSerializer()), data=state_data_dir(1), rows=0,
            ),
        ),
    )


def test_metadata_round_trips(tmp_path):
    md = _metadata()
    write_savepoint_metadata(tmp_path, md)
    got = read_savepoint_metadata(tmp_path)
    assert got == md, f"got {got}, should be {md}"
    assert got.state("m").kind == "map", f"got {got.state('m').kind}, should be map"


@pytest.mark.parametrize(
    "mutate, fragment",
    [
        (lambda t: "{not json", "not valid JSON"),
        (lambda t: t.replace('"format_version": 1', '"format_version": 99'), "format version 99"),
        (lambda t: t.replace('"max_parallelism": 64', '"max_parallelism": "64"'), "max_parallelism"),
        (lambda t: t.replace('"kind": "value"', '"kind": "set"'), "unknown kind"),
        (lambda t: t.replace('"data": "state-0000"', '"data": "../x"'), "invalid data directory"),
        (lambda t: t.replace('"state-conformance-savepoint"', '"other"'), "not a state-conformance"),
    ],
)
def test_corrupt_metadata_is_a_clear_error(tmp_path, mutate, fragment):
    write_savepoint_metadata(tmp_path, _metadata())
    file = tmp_path / METADATA_FILE
    file.write_text(mutate(file.read_text()))
    with pytest.raises(SavepointFormatError) as info:
        read_savepoint_metadata(tmp_path)
    assert fragment in str(info.value), f"got {info.value}, should mention {fragment!r}"


def test_missing_metadata_means_no_savepoint(tmp_path):
    with pytest.raises(SavepointFormatError, match="not a savepoint"):
        read_savepoint_metadata(tmp_path)


def test_data_rows_round_trip_and_files_are_deterministic(tmp_path):
    rows = [(3, b"k", b"", None, b"v"), (3, b"k", b"n", b"u", None), (9, b"\x00", b"", None, b"")]
    a = write_state_rows(tmp_path / "a", rows)
    b = write_state_rows(tmp_path / "b", rows)
    assert open(a, "rb").read() == open(b, "rb").read(), "got different bytes, should be identical files"
    state = StateMetadata("s", "value", b"x", data="a")
    got = list(read_state_rows(tmp_path, state))
    assert got == rows, f"got {got}, should be {rows}"


def test_rows_given_as_an_arrow_table_write_the_same_file_as_tuples(tmp_path):
    import pyarrow as pa

    from reference.savepoint import savepoint_arrow_schema

    rows = [(3, b"k", b"", None, b"v"), (3, b"k", b"n", b"u", None), (9, b"\x00", b"", None, b"")]
    table = pa.Table.from_arrays(
        [pa.array(list(column), f.type) for column, f in zip(zip(*rows, strict=True), savepoint_arrow_schema(), strict=True)],
        schema=savepoint_arrow_schema())
    chunked = pa.concat_tables([table.slice(0, 1), table.slice(1)])  # two chunks: written as one
    a = write_state_rows(tmp_path / "tuples", rows)
    b = write_state_rows(tmp_path / "table", chunked)
    assert open(a, "rb").read() == open(b, "rb").read(), "got a different file from the table, should be the same bytes"
    with pytest.raises(ValueError, match="savepoint's columns"):
        write_state_rows(tmp_path / "wrong", chunked.drop_columns(["user_key"]))


def test_atomic_directory_renames_on_success_only(tmp_path):
    final = tmp_path / "sp"
    with atomic_directory(final) as temp:
        assert not final.exists(), "got a final directory before the commit, should appear last"
        (open(os.path.join(temp, "f"), "w")).write("x")
    assert (final / "f").read_text() == "x", "got no committed file, should be renamed into place"
    with pytest.raises(SavepointFormatError, match="already exists"):
        with atomic_directory(final):
            pass
    assert (final / "f").read_text() == "x", "existing savepoint changed, should be untouched"
    with pytest.raises(RuntimeError):
        with atomic_directory(tmp_path / "other"):
            raise RuntimeError("writer failed")
    left = sorted(os.listdir(tmp_path))
    assert left == ["sp"], f"got {left}, should be only the committed savepoint"


def test_savepoint_content_ignores_part_files_and_row_order(tmp_path):
    rows = [(1, b"a", b"", None, b"1"), (1, b"b", b"", None, b"2"), (5, b"c", b"", None, b"3")]
    for name, parts in (("one", [rows]), ("two", [[rows[2], rows[0]], [rows[1]]])):
        root = tmp_path / name
        root.mkdir()
        write_savepoint_metadata(root, SavepointMetadata(
            max_parallelism=8, key_serializer_snapshot=b"k",
            states=(StateMetadata("s", "value", b"v", data="state-0000", rows=3),),
        ))
        for i, part in enumerate(parts):
            write_state_rows(root / "state-0000", part, part=i)
    one, two = read_savepoint_content(tmp_path / "one"), read_savepoint_content(tmp_path / "two")
    assert one == two, f"got {one} vs {two}, should be equal content"
    assert one[1]["s"] == rows, f"got {one[1]['s']}, should be the sorted rows {rows}"
