"""Primitive, String and byte[] serializers: Flink byte layouts, bit-exact round trips."""

from __future__ import annotations

import pickle
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    EndOfDataError,
    SerializationError,
    StateError,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.serializers import (
    BooleanSerializer,
    ByteSerializer,
    BytesSerializer,
    DoubleSerializer,
    FloatSerializer,
    IntSerializer,
    LongSerializer,
    ShortSerializer,
    StringSerializer,
)


def canonical(value):
    """A comparable form that tells -0.0 from 0.0 and NaN payloads apart, and types apart."""
    if isinstance(value, float):
        return ("float", struct.pack(">d", value))
    return (type(value).__name__, value)


def _double_from_bits(bits: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", bits))[0]


def _float32_from_bits(bits: int) -> float:
    # Python floats cannot carry a binary32 *signalling* NaN (FloatSerializer's docstring):
    # generate quiet ones, with any payload.
    if (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF:
        bits |= 0x00400000
    return struct.unpack(">f", struct.pack(">I", bits))[0]


_doubles = st.one_of(
    st.sampled_from([0.0, -0.0, float("inf"), float("-inf"), float("nan")]),
    st.integers(0, 2**64 - 1).map(_double_from_bits),
)
_floats32 = st.one_of(
    st.sampled_from([0.0, -0.0, float("inf"), float("-inf")]),
    st.integers(0, 2**32 - 1).map(_float32_from_bits),
)

CASES = {
    "boolean": (BooleanSerializer(), st.booleans(), lambda v: b"\x01" if v else b"\x00"),
    "byte": (ByteSerializer(), st.integers(-(2**7), 2**7 - 1), lambda v: struct.pack(">b", v)),
    "short": (ShortSerializer(), st.integers(-(2**15), 2**15 - 1), lambda v: struct.pack(">h", v)),
    "int": (IntSerializer(), st.integers(-(2**31), 2**31 - 1), lambda v: struct.pack(">i", v)),
    "long": (LongSerializer(), st.integers(-(2**63), 2**63 - 1), lambda v: struct.pack(">q", v)),
    "float": (FloatSerializer(), _floats32, lambda v: struct.pack(">f", v)),
    "double": (DoubleSerializer(), _doubles, lambda v: struct.pack(">d", v)),
    "bytes": (BytesSerializer(), st.binary(max_size=40), lambda v: struct.pack(">i", len(v)) + v),
}


def flink_string(value: str | None) -> bytes:
    """StringValue.writeString written from its description: varint(len(UTF-16) + 1), then
    each UTF-16 code unit as a varint (7 bits a byte, low group first)."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while n >= 0x80:
            out.append(0x80 | (n & 0x7F))
            n >>= 7
        out.append(n)
        return bytes(out)

    if value is None:
        return b"\x00"
    units = struct.unpack(f">{len(value.encode('utf-16-be', 'surrogatepass')) // 2}H",
                          value.encode("utf-16-be", "surrogatepass"))
    return varint(len(units) + 1) + b"".join(varint(u) for u in units)


CASES["string"] = (StringSerializer(), st.none() | st.text(max_size=30), flink_string)


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_layout_and_bit_exact_roundtrip(name, data):
    serializer, values, layout = CASES[name]
    value = data.draw(values, label=name)
    got = serializer.to_bytes(value)
    expected = layout(value)
    assert got == expected, f"got {got.hex()}, should be {expected.hex()} for {value!r} [{name}]"
    back = serializer.from_bytes(got)
    assert canonical(back) == canonical(value), f"got {back!r}, should be {value!r} [{name}]"
    if serializer.length != -1:
        assert serializer.length == len(got), f"got length {serializer.length}, wrote {len(got)} bytes [{name}]"


@pytest.mark.parametrize("name", sorted(CASES))
@given(data=st.data())
def test_sequences_and_copy_serialized(name, data):
    serializer, values, _ = CASES[name]
    items = data.draw(st.lists(values, min_size=1, max_size=6), label="values")
    out = DataOutputView()
    for item in items:
        serializer.serialize(item, out)
    source = DataInputView(out.getvalue())
    got = [canonical(serializer.deserialize(source)) for _ in items]
    assert got == [canonical(v) for v in items], f"got {got}, should be {items} [{name}]"
    assert source.available() == 0, f"got {source.available()} bytes left [{name}]"
    # copy_serialized copies exactly the first record
    source = DataInputView(out.getvalue())
    copied = DataOutputView()
    serializer.copy_serialized(source, copied)
    first = serializer.to_bytes(items[0])
    assert copied.getvalue() == first, f"got {copied.getvalue().hex()}, should be {first.hex()} [{name}]"
    assert source.available() == len(out.getvalue()) - len(first), f"copy_serialized consumed the wrong amount [{name}]"
    assert canonical(serializer.copy(items[0])) == canonical(items[0])


def test_my_string_golden():
    got = StringSerializer().to_bytes("My string.").hex(" ")
    assert got == "0b 4d 79 20 73 74 72 69 6e 67 2e", f"got {got}, should be docs/formats.md's example"


@pytest.mark.parametrize(
    "value,expected",
    [(None, "00"), ("", "01"), ("\x80", "02 80 01"), ("\u4000", "02 80 80 01"), ("\uffff", "02 ff ff 03"),
     ("\U0001F600", "03 bd b0 03 80 bc 03"), ("a" * 127, "80 01" + " 61" * 127)],
)
def test_string_varint_golden(value, expected):
    got = StringSerializer().to_bytes(value).hex(" ")
    assert got == expected, f"got {got}, should be {expected} for {value!r}"


def test_string_length_beyond_data_is_error():
    with pytest.raises(SerializationError):
        StringSerializer().from_bytes(b"\x05ab")


def test_string_overlong_varint_is_error():
    with pytest.raises(SerializationError):
        StringSerializer().from_bytes(b"\x02\xff\xff\xff\xff\xff\x01")


def _string_outcome(read, data: bytes):
    """(value, bytes consumed) or the error type of ``read`` on a view over ``data``."""
    view = DataInputView(data)
    try:
        return read(view), view.position
    except StateError as exc:
        return type(exc)


# Code units of 1-3 varint bytes, overlong and over-long units, and plain noise.
_UNIT_BYTES = st.one_of(
    st.integers(0, 0x7F).map(lambda u: bytes([u])),
    st.tuples(st.integers(0x80, 0xFF), st.integers(0, 0x7F)).map(bytes),
    st.tuples(st.integers(0x80, 0xFF), st.integers(0x80, 0xFF), st.integers(0, 0xFF)).map(bytes),
    st.binary(min_size=1, max_size=6),
)


@given(length=st.integers(1, 12), units=st.lists(_UNIT_BYTES, max_size=14))
def test_string_fast_decoder_agrees_with_byte_at_a_time(length, units):
    # The fast path must give the same string, consume the same bytes and raise the same
    # error class as the general path, on well-formed and corrupt data alike.
    body = b"".join(units)
    serializer = StringSerializer()
    data = bytes([length + 1]) + body
    fast = _string_outcome(serializer.deserialize, data)

    def general(view):
        view.read_unsigned_byte()
        if length > view.available():
            raise EndOfDataError("too short")
        return StringSerializer._deserialize_units(view, length)

    slow = _string_outcome(general, data)
    assert fast == slow, f"got {fast!r}, should be {slow!r} [data {data.hex(' ')}]"


@settings(max_examples=60, deadline=None)
@given(length=st.integers(128, 200), units=st.lists(_UNIT_BYTES, min_size=100, max_size=220))
def test_long_strings_read_again_agree_with_byte_at_a_time(length, units):
    # Long strings are remembered by their unit count and the bytes they are read from: a read
    # of the same bytes again, and of the same bytes under another count, must give what the
    # general path gives.
    body = b"".join(units)
    serializer = StringSerializer()

    def general_for(n):
        def general(view):
            while view.read_unsigned_byte() >= 0x80:  # the varint of n + 1
                pass
            if n > view.available():
                raise EndOfDataError("too short")
            return StringSerializer._deserialize_units(view, n)
        return general

    for n in (length, length, length - 1, length):
        data = StringSerializer().to_bytes("x" * n)[:-n] + body  # the varint of n + 1, then the body
        fast = _string_outcome(serializer.deserialize, data)
        slow = _string_outcome(general_for(n), data)
        assert fast == slow, f"got {fast!r}, should be {slow!r} [{n} units, data {data.hex(' ')}]"


def test_the_remembered_strings_are_bounded():
    from reference.serializers import _primitives

    serializer = StringSerializer()
    for i in range(3 * _primitives._DECODED_ENTRIES):
        text = chr(0x100 + i) * _primitives._DECODED_MIN
        assert serializer.from_bytes(serializer.to_bytes(text)) == text, f"got another string for {i}"
    assert 0 < len(_primitives._DECODED) <= _primitives._DECODED_ENTRIES, (
        f"got {len(_primitives._DECODED)} remembered strings, should be at most {_primitives._DECODED_ENTRIES}")
    big = "é" * (_primitives._DECODED_MAX_BYTES // 2 + 1)  # 2 bytes a unit: a window past the bound
    _primitives._DECODED.clear()
    assert serializer.from_bytes(serializer.to_bytes(big)) == big
    assert not _primitives._DECODED, "got a window past _DECODED_MAX_BYTES remembered, should not be"


@pytest.mark.parametrize(
    "serializer,value",
    [(IntSerializer(), True), (IntSerializer(), 2**31), (LongSerializer(), 1.0), (DoubleSerializer(), 1),
     (ByteSerializer(), 128), (ShortSerializer(), -(2**15) - 1), (FloatSerializer(), 1e300),
     (BooleanSerializer(), 1), (StringSerializer(), b"x"), (BytesSerializer(), None), (BytesSerializer(), bytearray(b"x"))],
    ids=repr,
)
def test_wrong_values_are_serialization_errors(serializer, value):
    with pytest.raises(SerializationError):
        serializer.to_bytes(value)


def test_float_rounds_to_binary32():
    value = 0.1
    back = FloatSerializer().from_bytes(FloatSerializer().to_bytes(value))
    expected = struct.unpack(">f", struct.pack(">f", 0.1))[0]
    assert back == expected and back != value, f"got {back!r}, should be the binary32 nearest 0.1 ({expected!r})"


@pytest.mark.parametrize("name", sorted(CASES))
def test_truncated_reads_raise_end_of_data(name):
    serializer, _, _ = CASES[name]
    sample = {"bytes": b"abc", "string": "abc", "boolean": True, "float": 1.5, "double": 1.5}.get(name, 5)
    data = serializer.to_bytes(sample)
    for cut in range(len(data)):
        with pytest.raises(EndOfDataError):
            serializer.from_bytes(data[:cut])


@pytest.mark.parametrize("name", sorted(CASES))
def test_snapshot_pickle_equality_and_instance(name):
    serializer, _, _ = CASES[name]
    assert pickle.loads(pickle.dumps(serializer)) == serializer
    assert serializer.duplicate() == serializer
    snapshot = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration()))
    assert snapshot.restore_serializer() == serializer
    result = resolve_compatibility(serializer, snapshot)
    assert result.is_compatible_as_is(), f"got {result}, should be as-is [{name}]"
    assert serializer.is_immutable_type, f"{name} values are immutable"
    instance = serializer.create_instance()
    assert canonical(serializer.from_bytes(serializer.to_bytes(instance))) == canonical(instance)


@pytest.mark.parametrize("old", sorted(CASES))
@pytest.mark.parametrize("new", sorted(CASES))
def test_simple_class_change_is_incompatible(old, new):
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(CASES[old][0].snapshot_configuration()))
    result = resolve_compatibility(CASES[new][0], old_snapshot)
    if old == new:
        assert result.is_compatible_as_is(), f"got {result}, should be as-is"
    else:
        assert result.is_incompatible(), f"got {result}, should be incompatible ({old} -> {new})"


def test_bytes_negative_length_is_error():
    with pytest.raises(SerializationError):
        BytesSerializer().from_bytes(b"\xff\xff\xff\xff")
