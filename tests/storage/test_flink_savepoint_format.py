"""Corner cases of the Flink savepoint reader on bytes built by hand (the real savepoints are
compared in tests/flink/test_flink_savepoint_reader.py): the hashes, Snappy, metadata versions,
refused handles, file names from the metadata, truncation, and the record stand-ins."""

from __future__ import annotations

import dataclasses
import enum
import shutil
import struct
from pathlib import Path

import pytest

from reference import StateError, snapshot_from_bytes, snapshot_to_bytes
from reference.savepoint import (
    SavepointFormatError,
    SnappyFramedReader,
    Undecoded,
    UnreadSnapshot,
    murmur3_128,
    operator_id_for_uid,
    parse_flink_metadata,
    read_flink_metadata,
    read_flink_savepoint,
    snappy_decompress,
)
from reference.serializers import (
    EnumSerializer,
    IntSerializer,
    PickleSerializer,
    PojoSerializer,
    Record,
    StringSerializer,
    record_serializer,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "flink_savepoints"
MAGIC = struct.pack(">i", 0x4960672D)


def _utf(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack(">H", len(raw)) + raw


def _metadata(version: int, keyed: bytes, uid: str = "op", properties: bool = True) -> bytes:
    """A _metadata of one operator (parallelism 1, max parallelism 128) whose one subtask has
    ``keyed`` as its managed keyed-state handle."""
    body = MAGIC + struct.pack(">iqi", version, 7, 0) + struct.pack(">i", 1)
    if version >= 5:
        body += _utf("Name") + _utf(uid)
    body += bytes.fromhex(operator_id_for_uid(uid)) + struct.pack(">ii", 1, 128) + b"\x00"
    body += struct.pack(">ii", 1, 0) + struct.pack(">ii", 0, 0) + keyed + b"\x00" + struct.pack(">ii", 0, 0)
    if version >= 4 and properties:
        body += b"\xac\xed\x00\x05" + b"\x73\x72"  # an object stream's start: kept opaque
    return body


def _key_groups(stream: bytes, offsets: tuple[int, ...] = (0,)) -> bytes:
    return b"\x07" + struct.pack(">ii", 0, len(offsets)) + b"".join(struct.pack(">q", o) for o in offsets) + stream


def test_murmur3_128_is_guavas_and_gives_flinks_operator_ids():
    assert murmur3_128(b"The quick brown fox jumps over the lazy dog").hex() == "6c1b07bc7bbc4be347939ac4a93c437a", (
        "got another hash, should be Guava's murmur3_128 test vector")
    assert murmur3_128(b"").hex() == "0" * 32, "got a non-zero hash of nothing, should be zero (seed 0)"
    directory = next(DATA.glob("hashmap_files_long/savepoint-*"))
    ids = {op.uid: op.operator_id for op in read_flink_metadata(directory).operators}
    assert ids and all(operator_id_for_uid(uid) == found for uid, found in ids.items()), (
        f"got operator ids {ids}, should be murmur3_128 of each uid as Flink writes them")


def test_snappy_blocks_and_frames():
    block = bytes([12, 0x08]) + b"abc" + bytes([0x15, 3])  # literal "abc", copy 9 bytes from 3 back
    assert snappy_decompress(block) == b"abcabcabcabc", f"got {snappy_decompress(block)!r}, should repeat the overlapping copy"
    for bad, why in [(bytes([12, 0x08]) + b"abc" + bytes([0x15, 0]), "a copy from offset 0"),
                     (bytes([13, 0x08]) + b"abc" + bytes([0x15, 3]), "a declared length not reached"),
                     (bytes([12, 0x08]) + b"ab", "a literal past the end")]:
        with pytest.raises(SavepointFormatError):
            snappy_decompress(bad)
            pytest.fail(f"got no error for {why}")
    frames = b"\xff\x06\x00\x00sNaPpY" + b"\x01" + (4 + 5).to_bytes(3, "little") + b"\0\0\0\0hello"
    frames += b"\x00" + (4 + len(block)).to_bytes(3, "little") + b"\0\0\0\0" + block
    reader = SnappyFramedReader(lambda n, rest=[frames]: _take(rest, n), "test")
    assert reader.read(17) == b"helloabcabcabcabc", "got other bytes from an uncompressed and a compressed chunk"
    with pytest.raises(SavepointFormatError, match="stream identifier"):
        SnappyFramedReader(lambda n, rest=[frames[10:]]: _take(rest, n), "test").read(1)


def _take(rest: list[bytes], n: int) -> bytes:
    data, rest[0] = rest[0][:n], rest[0][n:]
    return data


@pytest.mark.parametrize("version", [3, 4, 5, 6])
def test_metadata_versions_3_to_6(version):
    inline = b"\x01" + _utf("handle") + struct.pack(">i", 3) + b"abc"
    parsed = parse_flink_metadata(_metadata(version, _key_groups(inline)))
    op = parsed.operators[0]
    assert (parsed.version, parsed.checkpoint_id, op.parallelism, op.max_parallelism) == (version, 7, 1, 128)
    assert op.uid == ("op" if version >= 5 else None), f"got uid {op.uid!r} for version {version}"
    handle = op.subtasks[0].managed_keyed_state
    assert handle is not None and handle.stream.data == b"abc" and handle.offsets == (0,)
    assert (parsed.properties is not None) == (version >= 4), "got properties only where version 4+ has them"


@pytest.mark.parametrize("kind, words", [(5, "incremental RocksDB"), (11, "incremental RocksDB"),
                                         (3, "checkpoint"), (12, "checkpoint"), (8, "changelog"), (14, "changelog")])
def test_non_canonical_handles_are_refused_saying_what_to_do(kind, words):
    with pytest.raises(SavepointFormatError, match=f"not canonical.*{words}.*canonical"):
        parse_flink_metadata(_metadata(6, bytes([kind]) + b"\x00" * 64))


def test_every_truncation_of_a_real_metadata_is_a_savepoint_format_error():
    """Up to the opaque CheckpointProperties trailer (a Java object stream, never parsed, so a
    cut inside it cannot be told from a shorter stream)."""
    directory = next(DATA.glob("hashmap_files_long/savepoint-*"))
    data = (directory / "_metadata").read_bytes()
    trailer = data.rindex(b"\xac\xed\x00\x05")
    for end in range(0, trailer + 4, 3):
        with pytest.raises(SavepointFormatError):
            parse_flink_metadata(data[:end])
            pytest.fail(f"got no error for the first {end} of {len(data)} bytes")


def _savepoint_with_stream(tmp_path: Path, stream: bytes) -> Path:
    directory = tmp_path / "sp"
    directory.mkdir()
    (directory / "_metadata").write_bytes(_metadata(6, _key_groups(stream)))
    return directory


@pytest.mark.parametrize("name", ["../outside", "a/b", "..", "", "a\\b"])
def test_a_relative_handle_must_name_a_plain_file_in_the_directory(tmp_path, name):
    directory = _savepoint_with_stream(tmp_path, b"\x06" + _utf(name) + struct.pack(">q", 10))
    with pytest.raises(SavepointFormatError, match="not a plain file name"):
        read_flink_savepoint(directory)


def test_an_absolute_handle_outside_the_directory_needs_the_callers_consent(tmp_path):
    real = next(DATA.glob("hashmap_files_long/savepoint-*"))
    state_file = next(p for p in real.iterdir() if p.name != "_metadata" and p.stat().st_size > 1000)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    shutil.copy(state_file, outside / "state")
    stream = b"\x02" + struct.pack(">q", state_file.stat().st_size) + _utf(f"file:{outside / 'state'}")
    directory = _savepoint_with_stream(tmp_path, stream)
    with pytest.raises(SavepointFormatError, match="outside the savepoint directory.*allow_external_files"):
        read_flink_savepoint(directory)
    # inside the directory, an absolute path is used as written
    shutil.copy(state_file, directory / "state")
    (directory / "_metadata").write_bytes(_metadata(6, _key_groups(
        b"\x02" + struct.pack(">q", state_file.stat().st_size) + _utf(f"file://{directory / 'state'}"))))
    read_flink_savepoint(directory)
    (directory / "_metadata").write_bytes(_metadata(6, _key_groups(stream)))
    read_flink_savepoint(directory, allow_external_files=True)


def test_a_state_file_of_another_size_than_listed_is_refused(tmp_path):
    real = next(DATA.glob("hashmap_files_long/savepoint-*"))
    copy = tmp_path / "sp"
    shutil.copytree(real, copy)
    victim = max((p for p in copy.iterdir() if p.name != "_metadata"), key=lambda p: p.stat().st_size)
    victim.write_bytes(victim.read_bytes()[:-1])
    with pytest.raises(SavepointFormatError, match="bytes, the savepoint's _metadata says"):
        read_flink_savepoint(copy)


def test_not_a_flink_savepoint_says_so(tmp_path):
    with pytest.raises(SavepointFormatError, match="not a Flink savepoint"):
        read_flink_metadata(tmp_path)
    (tmp_path / "_metadata").write_bytes(b"\x00" * 16)
    with pytest.raises(SavepointFormatError, match="magic number"):
        read_flink_metadata(tmp_path)


# -- record stand-ins ---------------------------------------------------------------------------
class Shade(enum.Enum):
    LIGHT = 1
    DARK = 2


@dataclasses.dataclass
class Paint:
    name: str = ""
    coats: int = 0
    shade: Shade = Shade.LIGHT


def test_record_serializer_reads_pojos_and_enums_without_their_classes():
    serializer = PojoSerializer(Paint)
    data = serializer.to_bytes(Paint("ochre", 2, Shade.DARK))
    flink_form = snapshot_to_bytes(serializer.snapshot_configuration(), dialect="flink")
    unknown = flink_form.replace(b"Paint", b"Qaint").replace(b"Shade", b"Qhade")  # names no class here
    snapshot = snapshot_from_bytes(unknown)
    record = record_serializer(snapshot).from_bytes(data)
    assert isinstance(record, Record) and record == {"coats": 2, "name": "ochre", "shade": "DARK"}, (
        f"got {record!r}, should be a plain record with the enum constant's name")
    assert record.java_class.endswith("Qaint"), f"got java_class {record.java_class!r}"
    known = record_serializer(snapshot_from_bytes(flink_form)).from_bytes(data)
    assert known == Paint("ochre", 2, Shade.DARK), f"got {known!r}, should be the registered dataclass"
    assert record_serializer(EnumSerializer(Shade).snapshot_configuration()).from_bytes(b"\0\0\0\1") is Shade.DARK
    assert record_serializer(IntSerializer().snapshot_configuration()).from_bytes(b"\0\0\0\5") == 5
    with pytest.raises(StateError, match="unpickling"):
        record_serializer(PickleSerializer().snapshot_configuration())


def test_a_snapshot_class_nobody_knows_is_skipped_and_its_values_stay_bytes(tmp_path):
    """A user's own serializer snapshot has no length: the reader finds where it ends (the rest
    of the header must read from there to its exact end) and keeps that state's values as bytes."""
    copy = tmp_path / "sp"
    shutil.copytree(next(DATA.glob("hashmap_files_long/savepoint-*")), copy)
    known = b"org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot"
    patched = 0
    for file in copy.iterdir():
        data = file.read_bytes()
        if known in data:
            file.write_bytes(data.replace(known, known[:-1] + b"X"))
            patched += 1
    assert patched, "got no state file naming the Kryo snapshot; the kept savepoint should have one"
    operator = read_flink_savepoint(copy).operator("keyed-states")
    opaque = operator.keyed_state("opaque")
    assert isinstance(opaque.value_serializer, UnreadSnapshot), f"got {opaque.value_serializer!r}"
    assert opaque.value_serializer.java_class.endswith("KryoSerializerSnapshoX")
    values = [e.value for e in opaque.entries()]
    assert values and all(isinstance(v, Undecoded) and "does not know" in v.why for v in values), (
        f"got {values[:2]}, should be Undecoded values naming the unknown snapshot class")
    counts = {e.value for e in operator.keyed_state("count").entries()}
    assert counts and all(isinstance(c, int) for c in counts), f"got {counts}, the other states should still decode"


def _keyed_stream(key: bytes, value: bytes) -> bytes:
    """A keyed-state stream of one VALUE state ``s`` with String keys, String namespaces and
    String values, holding one entry in key group 0 (the header's layout: module docstring of
    reference/savepoint/_flink_keyed.py)."""
    string = snapshot_to_bytes(StringSerializer().snapshot_configuration(), dialect="flink")
    header = struct.pack(">i?", 6, False) + string + struct.pack(">h", 1) + _utf("s") + struct.pack(">ii", 0, 1)
    header += _utf("KEYED_STATE_TYPE") + _utf("VALUE") + struct.pack(">i", 2)
    header += _utf("NAMESPACE_SERIALIZER") + string + _utf("VALUE_SERIALIZER") + string
    marked = bytes([key[0] | 0x80]) + key[1:]
    body = struct.pack(">hi", 0, len(marked)) + marked + struct.pack(">i", len(value)) + value + struct.pack(">h", -1)
    stream = header + body
    return b"\x07" + struct.pack(">iiq", 0, 1, len(header)) + b"\x01" + _utf("inline") + struct.pack(">i", len(stream)) + stream


def test_variable_length_keys_and_namespaces_carry_their_lengths(tmp_path):
    """Both serializers of variable length: the key and the namespace are each followed by their
    length in bytes (CompositeKeySerializationUtils), which the reader checks."""
    text = StringSerializer()
    key, namespace = text.to_bytes("k" * 300), text.to_bytes("ns")
    suffix = (len(key)).to_bytes(2, "little")  # 302 bytes: two length bytes, low byte first
    composite = b"\x00" + key + suffix + namespace + bytes([len(namespace)])
    directory = tmp_path / "sp"
    directory.mkdir()
    (directory / "_metadata").write_bytes(_metadata(6, _keyed_stream(composite, text.to_bytes("v"))))
    state = read_flink_savepoint(directory).operators[0].keyed_state("s")
    assert [tuple(e) for e in state.entries()] == [(0, "k" * 300, "ns", None, "v")], "got another entry"
    bad = b"\x00" + key + (len(key) + 1).to_bytes(2, "little") + namespace + bytes([len(namespace)])
    (directory / "_metadata").write_bytes(_metadata(6, _keyed_stream(bad, text.to_bytes("v"))))
    with pytest.raises(SavepointFormatError, match="length suffix"):
        list(read_flink_savepoint(directory).operators[0].keyed_state("s").entries())
