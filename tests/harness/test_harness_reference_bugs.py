"""Checks that catch bugs in the reference itself (not in a user's serializer): a pre-1.7
snapshot unpickled by default, compatibility results that do not compare as values, a
create_instance() that is not the type's zero. Each planted bug must fail its check on a
built-in subject, and the built-in must pass without it."""

from __future__ import annotations

import pytest

import reference
from conformance import RunConfig, check_serializer
from conformance._builtins.subjects import builtin_subject
from reference import SchemaCompatibility
from reference.serializers import LongSerializer

EXAMPLES, SEED = 10, 3


def _status(subject, check_id):
    return check_serializer(subject, RunConfig(examples=EXAMPLES, seed=SEED, checks=(check_id,)))[check_id]


def test_the_pre_17_golden_file_is_refused_by_default_and_read_when_allowed():
    got = _status(builtin_subject("long"), "versioning.legacy_form")
    assert got.status == "passed", f"got {got}, should pass on the recorded pre-1.7 file"


def test_a_reader_that_unpickles_pre_17_snapshots_by_default_is_caught(monkeypatch):
    from conformance._checks import versioning

    original = reference.snapshot_from_bytes
    monkeypatch.setattr(versioning, "snapshot_from_bytes",
                        lambda data, allow_pickled_serializer=True: original(data, allow_pickled_serializer=allow_pickled_serializer))
    got = _status(builtin_subject("long"), "versioning.legacy_form")
    assert got.failed and "by default" in got.message, f"got {got}, should fail: the default unpickles"


def test_results_that_compare_by_identity_are_caught(monkeypatch):
    assert _status(builtin_subject("row"), "migration.verdict_values").status == "passed"
    monkeypatch.setattr(SchemaCompatibility, "__eq__", lambda self, other: self is other)
    got = _status(builtin_subject("row"), "migration.verdict_values")
    assert got.failed and "should be equal" in got.message, f"got {got}, should fail"


@pytest.mark.parametrize("zero", [None, 1])
def test_a_create_instance_other_than_the_zero_is_caught(monkeypatch, zero):
    monkeypatch.setattr(LongSerializer, "create_instance", lambda self: zero)
    got = _status(builtin_subject("long"), "roundtrip.create_instance")
    assert got.failed and "create_instance()" in got.message, f"got {got}, should fail on {zero!r}"


def _planted_in_rowdata_writes(monkeypatch, plant):
    """``plant(row_type, data)`` changes what the reference's RowDataSerializer writes for a row
    and each row nested in it (the reader is left as it is, as a bug in one of them would be)."""
    from reference import DataOutputView
    from reference.serializers import RowDataSerializer

    original = RowDataSerializer.serialize

    def planted(t, data):
        out = bytearray(plant(t, bytes(data)))
        width = ((len(t.fields) + 71) // 64) * 8
        for i, (_, ftype, _) in enumerate(t.fields):
            if ftype.root != "ROW" or data[(i + 8) >> 3] & (1 << ((i + 8) & 7)):
                continue
            word = int.from_bytes(data[width + 8 * i:width + 8 * i + 8], "little")
            offset, size = word >> 32, word & 0xFFFFFFFF
            out[offset:offset + size] = planted(ftype, data[offset:offset + size])
        return bytes(out)

    def buggy(self, value, target):
        out = DataOutputView()
        original(self, value, out)
        data = out.getvalue()
        target.write(data[:4] + planted(self.row_type, data[4:]))

    monkeypatch.setattr(RowDataSerializer, "serialize", buggy)


def _null_bits_one_off(t, data):
    # field i's null bit written at bit 9 + i instead of 8 + i
    width = ((len(t.fields) + 71) // 64) * 8
    bits = int.from_bytes(data[:width], "little")
    kind, nulls = bits & 0xFF, bits >> 8
    return ((nulls << 9 | kind) & ((1 << (8 * width)) - 1)).to_bytes(width, "little") + data[width:]


def _eighth_byte_inline(t, data):
    # a string of exactly 8 bytes kept in its slot: its last byte overwrites the inline mark
    width = ((len(t.fields) + 71) // 64) * 8
    out = bytearray(data)
    for i, (_, ftype, _) in enumerate(t.fields):
        slot = width + 8 * i
        word = int.from_bytes(out[slot:slot + 8], "little")
        offset, size = word >> 32, word & 0xFFFFFFFF
        if ftype.root == "VARCHAR" and size == 8 and not word >> 63 and offset + 8 <= len(out):
            out[slot:slot + 8] = out[offset:offset + 8]
    return bytes(out)


#: The checks that read back what serialize wrote. Which one meets the planted string first
#: depends on the draws, and hypothesis draws from constants it finds in the loaded modules,
#: so the process's earlier tests change them.
READ_BACK = ("roundtrip.bit_exact", "roundtrip.value_equality", "roundtrip.sequence", "roundtrip.copy_serialized")


@pytest.mark.parametrize("plant", [_null_bits_one_off, _eighth_byte_inline], ids=["null bit offset",
                                                                                 "8-byte string inline"])
def test_a_planted_binary_row_bug_is_caught_by_the_round_trip(monkeypatch, plant):
    subject = builtin_subject("rowdata")
    assert _status(subject, "roundtrip.bit_exact").status == "passed"
    _planted_in_rowdata_writes(monkeypatch, plant)
    report = check_serializer(subject, RunConfig(examples=100, seed=SEED, exitfirst=True))
    failed = [result.id for result in report.results if result.failed]
    # the checks that read back what serialize wrote, before any later family
    assert len(failed) == 1 and failed[0] in READ_BACK, f"got failures {failed}, the first should be one of {READ_BACK}"


def test_a_bug_planted_in_the_rowdata_writer_and_reader_alike_is_caught_by_its_golden_files(monkeypatch):
    # both flip the top-level null bit of field 1 (the device row): every round trip agrees
    # with itself, only the bytes release 0.1.0 recorded tell
    import struct

    from reference import DataInputView, DataOutputView
    from reference.serializers import RowDataSerializer

    subject = builtin_subject("rowdata")
    assert _status(subject, "versioning.upgrade_records").status == "passed"
    serialize, deserialize = RowDataSerializer.serialize, RowDataSerializer.deserialize

    def flipped(data):
        return data[:1] + bytes([data[1] ^ 0x02]) + data[2:]

    def buggy_serialize(self, value, target):
        out = DataOutputView()
        serialize(self, value, out)
        data = out.getvalue()
        target.write(data[:4] + flipped(data[4:]))

    def buggy_deserialize(self, source):
        size = source.read_int()
        return deserialize(self, DataInputView(struct.pack(">i", size) + flipped(source.read_fully(size))))

    monkeypatch.setattr(RowDataSerializer, "serialize", buggy_serialize)
    monkeypatch.setattr(RowDataSerializer, "deserialize", buggy_deserialize)
    report = check_serializer(subject, RunConfig(examples=EXAMPLES, seed=SEED))
    for agreeing in ("roundtrip.bit_exact", "roundtrip.sequence"):
        assert report[agreeing].status == "passed", f"got {report[agreeing]}, should pass (the bug agrees with itself)"
    got = report["versioning.upgrade_restore"]
    assert got.failed and "0.1.0" in got.message, f"got {got}, should fail on the bytes release 0.1.0 recorded"
