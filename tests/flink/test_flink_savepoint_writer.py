"""reference.savepoint.write_flink_savepoint: a Flink canonical savepoint read and written again
holds the same content (read back by the reader), REAL Flink 2.3 restores it with every value
of expected.json, and the commit protocol holds (the input untouched, nothing left by a failure).

The checks without a JVM run on the three savepoints kept in tests/data/flink_savepoints; the
``flink`` ones on every case the ``flink_savepoints`` fixture writes.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import savepoints

from reference import StateError
from reference.savepoint import (
    SavepointFormatError,
    SnappyFramedReader,
    StateReplacement,
    file_tree,
    read_flink_savepoint,
    snappy_frame,
    write_flink_savepoint,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "flink_savepoints"
KEPT = sorted(p.parent for p in DATA.glob("*/savepoint-*/_metadata"))


def _content(path) -> dict:
    """Everything the reader decodes from a savepoint: per operator its identity, per keyed
    state its kind, TTL flag and entries (as a sorted list of reprs), per operator state its
    mode and values in order."""
    savepoint = read_flink_savepoint(path)
    out: dict = {"version": savepoint.metadata_version, "checkpoint": savepoint.checkpoint_id,
                 "properties": savepoint.metadata.properties, "masters": savepoint.metadata.master_states}
    for op in savepoint.operators:
        where = op.uid or op.operator_id
        out[where] = (op.name, op.operator_id, op.parallelism, op.max_parallelism, op.metadata.coordinator_state)
        for state in op.keyed_states:
            out[(where, state.name)] = (state.kind, state.ttl, sorted(repr(e) for e in state.entries()))
        for ostate in op.operator_states:
            out[(where, "operator", ostate.name)] = (ostate.mode, [repr(v) for v in ostate.values()])
    return out


def _rewrite_all(savepoint) -> dict:
    """Replacements that rewrite every keyed-state stream with the values unchanged."""
    return {op.uid or op.operator_id: {s.name: StateReplacement({}, lambda value: value) for s in op.keyed_states}
            for op in savepoint.operators if op.keyed_states}


def _entries(content: dict) -> int:
    return sum(len(v[2]) for k, v in content.items() if isinstance(k, tuple) and len(k) == 2)


@pytest.mark.parametrize("directory", KEPT, ids=lambda p: p.parent.name)
@pytest.mark.parametrize("rewrite", [False, True], ids=["copied", "rewritten"])
def test_round_trip_keeps_the_content_and_the_input(directory, rewrite, tmp_path):
    before = file_tree(directory)
    savepoint = read_flink_savepoint(directory)
    out = write_flink_savepoint(savepoint, tmp_path / "out", _rewrite_all(savepoint) if rewrite else None)
    want = _content(directory)
    got = _content(out)
    assert _entries(want) > 100, f"{directory}: only {_entries(want)} keyed entries read; the data is not the kept savepoint"
    assert got == want, (
        f"{directory} written again ({'rewritten' if rewrite else 'copied'}) reads differently: states "
        f"{sorted(str(k) for k in set(got) ^ set(want) or [k for k in want if got.get(k) != want[k]])[:3]}")
    assert file_tree(directory) == before, f"{directory}: writing a copy modified the input"
    assert sorted(os.listdir(tmp_path)) == ["out"], f"left beside the output: {sorted(os.listdir(tmp_path))}"


def test_inline_savepoint_copied_has_the_same_metadata_bytes(tmp_path):
    directory = next(p for p in KEPT if not [f for f in os.listdir(p) if f != "_metadata"])
    out = write_flink_savepoint(read_flink_savepoint(directory), tmp_path / "out")
    assert os.listdir(out) == ["_metadata"], f"an all-inline savepoint written with files: {os.listdir(out)}"
    ours, theirs = Path(out, "_metadata").read_bytes(), (directory / "_metadata").read_bytes()
    first = next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
    assert ours == theirs, f"{directory}: _metadata written differs from Flink's at byte {first} ({len(ours)} vs {len(theirs)} bytes)"


def test_rewritten_compressed_key_groups_are_framed(tmp_path):
    directory = next(p for p in KEPT if "compressed" in p.parent.name)
    savepoint = read_flink_savepoint(directory)
    out = write_flink_savepoint(savepoint, tmp_path / "out", _rewrite_all(savepoint))
    written = b"".join(p.read_bytes() for p in Path(out).iterdir() if p.name != "_metadata")
    assert written.count(b"\xff\x06\x00\x00sNaPpY") >= 2, "no Snappy framed key groups in the rewritten state files"


def test_a_failing_replacement_leaves_nothing(tmp_path):
    directory = KEPT[0]
    savepoint = read_flink_savepoint(directory)

    def fails(value: bytes) -> bytes:
        raise StateError("no")

    op = next(o for o in savepoint.operators if o.keyed_states)
    with pytest.raises(StateError, match="no"):
        write_flink_savepoint(savepoint, tmp_path / "out", {op.uid: {op.keyed_states[0].name: StateReplacement({}, fails)}})
    assert os.listdir(tmp_path) == [], f"a failed write left {os.listdir(tmp_path)}"


def test_unknown_operators_and_states_are_refused_before_writing(tmp_path):
    savepoint = read_flink_savepoint(KEPT[0])
    with pytest.raises(SavepointFormatError, match="no operator 'nope'"):
        write_flink_savepoint(savepoint, tmp_path / "a", {"nope": {"x": StateReplacement()}})
    with pytest.raises(SavepointFormatError, match="no keyed state 'nope'"):
        write_flink_savepoint(savepoint, tmp_path / "b", {"keyed-states": {"nope": StateReplacement()}})
    assert os.listdir(tmp_path) == [], f"a refused write left {os.listdir(tmp_path)}"
    out = write_flink_savepoint(savepoint, tmp_path / "c")
    with pytest.raises(SavepointFormatError, match="already exists"):
        write_flink_savepoint(savepoint, out)


@pytest.mark.parametrize("size", [0, 1, 60, 61, 256, 65536, 65537, 140_000])
def test_snappy_frame_reads_back(size):
    data = bytes((i * 7919 + i // 3) & 0xFF for i in range(size))
    framed = snappy_frame(data)
    assert framed.startswith(b"\xff\x06\x00\x00sNaPpY"), "a framed stream starts with the stream identifier"
    got = SnappyFramedReader(io.BytesIO(framed).read, "test").read(size + 1)
    assert got == data, f"{size} bytes framed read back as {len(got)} different bytes"


def test_snappy_frame_checksum_is_the_masked_crc32c():
    # framing_format.txt: the chunk checksum is CRC-32C masked as ((c >> 15 | c << 17) + 0xa282ead8);
    # CRC-32C("123456789") is 0xe3069283 (RFC 3720 B.4's check value).
    crc = 0xE3069283
    masked = (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    framed = snappy_frame(b"123456789")
    assert framed[10] == 0x00, f"chunk type {framed[10]:#x}, should be 0 (compressed data)"
    assert int.from_bytes(framed[14:18], "little") == masked, "wrong chunk checksum"


@pytest.mark.flink
@pytest.mark.xdist_group("flink")
def test_flink_restores_savepoints_written_again(flink_savepoints, flink_restore, tmp_path):
    requests = []
    for name, (directory, expected) in sorted(flink_savepoints.items()):
        savepoint = read_flink_savepoint(directory)
        copied = write_flink_savepoint(savepoint, tmp_path / f"{name}-copied")
        rewritten = write_flink_savepoint(savepoint, tmp_path / f"{name}-rewritten", _rewrite_all(savepoint))
        for written in (copied, rewritten):
            assert _content(written) == _content(directory), f"{written}: reads differently from {directory}"
        requests.append(savepoints.RestoreRequest.of(f"{name}-copied", Path(copied), expected))
        requests.append(savepoints.RestoreRequest.of(f"{name}-rewritten", Path(rewritten), expected))
    results = flink_restore(requests)
    for request in requests:
        result = results[request.name]
        assert result.verdict == "restored", f"Flink failed to restore {request.name}: {result.error}"
        want = savepoints.restorable(flink_savepoints[request.name.rsplit("-", 1)[0]][1])
        got = savepoints.read_back(result)
        assert got == want, (f"{request.name}: Flink read back differs from expected.json; missing "
                             f"{sorted(set(want) - set(got))[:3]}, unexpected {sorted(set(got) - set(want))[:3]}")


def test_a_replacement_failing_on_corrupt_bytes_is_a_state_error(tmp_path):
    savepoint = read_flink_savepoint(KEPT[0])

    def corrupt(value: bytes) -> bytes:
        return value[10**6]  # type: ignore[return-value]  (an IndexError, as corrupt bytes may raise)

    with pytest.raises(SavepointFormatError, match="a value of state 'count' cannot be migrated .IndexError"):
        write_flink_savepoint(savepoint, tmp_path / "out", {"keyed-states": {"count": StateReplacement({}, corrupt)}})
    assert os.listdir(tmp_path) == [], f"a failed write left {os.listdir(tmp_path)}"
