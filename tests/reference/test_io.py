"""DataOutputView / DataInputView: Java DataOutput semantics, golden bytes, end-of-data errors."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference import DataInputView, DataOutputView, EndOfDataError, SerializationError, StateError


def java_modified_utf8(text: str) -> bytes:
    """Independent encoder written from the java.io.DataOutput#writeUTF specification:
    each UTF-16 code unit c is written as 1 byte if 0x0001 <= c <= 0x007F, 2 bytes if
    c == 0 or c <= 0x07FF, else 3 bytes (so surrogate halves are 3 bytes each)."""
    units = []
    for ch in text:
        cp = ord(ch)
        if cp >= 0x10000:
            cp -= 0x10000
            units += [0xD800 | (cp >> 10), 0xDC00 | (cp & 0x3FF)]
        else:
            units.append(cp)
    out = bytearray()
    for c in units:
        if 0x0001 <= c <= 0x007F:
            out.append(c)
        elif c <= 0x07FF:
            out += bytes([0xC0 | (c >> 6), 0x80 | (c & 0x3F)])
        else:
            out += bytes([0xE0 | (c >> 12), 0x80 | ((c >> 6) & 0x3F), 0x80 | (c & 0x3F)])
    return bytes(out)


def _written(method: str, value) -> bytes:
    out = DataOutputView()
    getattr(out, method)(value)
    return out.getvalue()


@pytest.mark.parametrize(
    "method,value,expected",
    [
        ("write_boolean", True, "01"),
        ("write_boolean", False, "00"),
        ("write_byte", -1, "ff"),
        ("write_byte", 0x7F, "7f"),
        ("write_byte", 0x1FF, "ff"),  # Java keeps the low 8 bits
        ("write_short", -2, "fffe"),
        ("write_short", 0x1234, "1234"),
        ("write_short", 0x12345, "2345"),  # low 16 bits
        ("write_int", 1, "00000001"),
        ("write_int", -(2**31), "80000000"),
        ("write_int", 0x01020304, "01020304"),
        ("write_long", -1, "ffffffffffffffff"),
        ("write_long", 0x0102030405060708, "0102030405060708"),
        ("write_float", 1.0, "3f800000"),
        ("write_float", -0.0, "80000000"),
        ("write_float", float("inf"), "7f800000"),
        ("write_double", 1.0, "3ff0000000000000"),
        ("write_double", -0.0, "8000000000000000"),
        ("write_double", float("-inf"), "fff0000000000000"),
        ("write_utf", "", "0000"),
        ("write_utf", "My string.", "000a4d7920737472696e672e"),
        ("write_utf", "\x00", "0002c080"),
        ("write_utf", "é", "0002c3a9"),
        ("write_utf", "\u20ac", "0003e282ac"),
        ("write_utf", "\U0001F600", "0006eda0bdedb880"),
        ("write", b"\x01\x02", "0102"),
    ],
)
def test_golden_bytes(method, value, expected):
    got = _written(method, value).hex()
    assert got == expected, f"got {got}, should be {expected} for {method}({value!r})"


@pytest.mark.parametrize(
    "method,value",
    [("write_int", 2**31), ("write_int", -(2**31) - 1), ("write_long", 2**63), ("write_long", -(2**63) - 1),
     ("write_float", 1e39), ("write_double", "x"), ("write_int", "1")],
)
def test_out_of_range_writes_are_serialization_errors(method, value):
    with pytest.raises(SerializationError, match=method):
        _written(method, value)


@pytest.mark.parametrize(
    "method,value,wider",
    [("write_int", 2**40, "write_long (and read_long)"), ("write_long", 2**70, "int.to_bytes")],
)
def test_out_of_range_writes_say_how_to_write_wider_values(method, value, wider):
    """A serializer's author meets this error when a state's values outgrow the width written:
    it names the range and what to write instead, in a new snapshot version."""
    with pytest.raises(SerializationError) as raised:
        _written(method, value)
    message = str(raised.value)
    for part in (repr(value), wider, "new snapshot version"):
        assert part in message, f"got {message!r}, should mention {part!r} [{method}({value!r})]"


def test_len_getvalue_and_clear():
    out = DataOutputView()
    out.write_int(7)
    out.write_long(8)
    assert out.len() == 12 and len(out) == 12, f"got {out.len()}, should be 12"
    assert out.getvalue() == bytes.fromhex("00000007" "0000000000000008")
    out.clear()
    assert out.getvalue() == b"" and out.len() == 0, "clear should empty the buffer"


def _quiet_if_nan(bits: int) -> int:
    # A Python float cannot hold a binary32 signalling NaN (see FloatSerializer): quiet it.
    is_nan = (bits & 0x7F800000) == 0x7F800000 and bits & 0x7FFFFF
    return bits | 0x00400000 if is_nan else bits


_ops = st.one_of(
    st.tuples(st.just("boolean"), st.booleans()),
    st.tuples(st.just("byte"), st.integers(-128, 127)),
    st.tuples(st.just("short"), st.integers(-(2**15), 2**15 - 1)),
    st.tuples(st.just("int"), st.integers(-(2**31), 2**31 - 1)),
    st.tuples(st.just("long"), st.integers(-(2**63), 2**63 - 1)),
    st.tuples(st.just("double_bits"), st.integers(0, 2**64 - 1)),
    st.tuples(st.just("float_bits"), st.integers(0, 2**32 - 1).map(_quiet_if_nan)),
    st.tuples(st.just("utf"), st.text(max_size=30)),
    st.tuples(st.just("bytes"), st.binary(max_size=20)),
)

_fmt = {"byte": ">b", "short": ">h", "int": ">i", "long": ">q"}


@given(st.lists(_ops, max_size=20))
def test_every_method_roundtrips_and_matches_struct(ops):
    out = DataOutputView()
    expected = bytearray()
    for kind, value in ops:
        if kind == "boolean":
            out.write_boolean(value)
            expected += b"\x01" if value else b"\x00"
        elif kind in _fmt:
            getattr(out, f"write_{kind}")(value)
            expected += struct.pack(_fmt[kind], value)
        elif kind == "double_bits":
            out.write_double(struct.unpack(">d", struct.pack(">Q", value))[0])
            expected += struct.pack(">Q", value)
        elif kind == "float_bits":
            out.write_float(struct.unpack(">f", struct.pack(">I", value))[0])
            expected += struct.pack(">I", value)
        elif kind == "utf":
            out.write_utf(value)
            data = java_modified_utf8(value)
            expected += struct.pack(">H", len(data)) + data
        else:
            out.write(value)
            expected += value
    assert out.getvalue() == bytes(expected), f"got {out.getvalue().hex()}, should be {bytes(expected).hex()}"
    source = DataInputView(memoryview(bytearray(expected)))
    for kind, value in ops:
        if kind == "boolean":
            got = source.read_boolean()
        elif kind in _fmt:
            got = getattr(source, f"read_{kind}")()
        elif kind == "double_bits":
            got = struct.unpack(">Q", struct.pack(">d", source.read_double()))[0]
        elif kind == "float_bits":
            got = struct.unpack(">I", struct.pack(">f", source.read_float()))[0]
        elif kind == "utf":
            got = source.read_utf()
        else:
            got = source.read_fully(len(value))
        assert got == value, f"got {got!r}, should be {value!r} reading {kind}"
    assert source.available() == 0, f"got {source.available()} bytes left, should be 0"


@given(st.text())
def test_modified_utf8_matches_independent_encoder(text):
    data = java_modified_utf8(text)
    if len(data) > 0xFFFF:
        return
    got = _written("write_utf", text)
    assert got == struct.pack(">H", len(data)) + data, f"got {got.hex()}, should be {data.hex()} for {text!r}"
    assert b"\x00" not in got[2:], "modified UTF-8 never contains a zero byte"
    assert DataInputView(got).read_utf() == text


def test_lone_surrogates_roundtrip():
    text = "a\ud800b\udfff"
    got = _written("write_utf", text)
    assert got[2:] == java_modified_utf8(text), f"got {got.hex()}"
    assert DataInputView(got).read_utf() == text


@pytest.mark.parametrize("text,ok", [("a" * 65535, True), ("a" * 65536, False), ("\u20ac" * 21845, True), ("\u20ac" * 21846, False), ("\x00" * 32768, False)])
def test_utf_length_limit(text, ok):
    if ok:
        data = _written("write_utf", text)
        assert DataInputView(data).read_utf() == text
        return
    with pytest.raises(SerializationError, match="65535"):
        _written("write_utf", text)


@pytest.mark.parametrize(
    "payload",
    [b"\xc0", b"\xe2\x82", b"\x80", b"\xf0\x9f\x98\x80", b"\xc3\x28", b"\xff"],
    ids=["cut-2byte", "cut-3byte", "lone-continuation", "4-byte-utf8", "bad-continuation", "ff"],
)
def test_malformed_modified_utf8_is_serialization_error(payload):
    with pytest.raises(SerializationError):
        DataInputView(struct.pack(">H", len(payload)) + payload).read_utf()


_readers = {
    "read_boolean": 1, "read_byte": 1, "read_unsigned_byte": 1, "read_short": 2, "read_int": 4,
    "read_long": 8, "read_float": 4, "read_double": 8,
}


@pytest.mark.parametrize("method,size", sorted(_readers.items()))
def test_every_read_past_the_end_raises_end_of_data(method, size):
    for available in range(size):
        source = DataInputView(b"\x01" * available)
        with pytest.raises(EndOfDataError) as info:
            getattr(source, method)()
        assert isinstance(info.value, EOFError) and isinstance(info.value, SerializationError)
        assert isinstance(info.value, StateError)
        assert str(size) in str(info.value), f"got {info.value}, should say {size} bytes were needed"


@pytest.mark.parametrize(
    "data,call",
    [
        (b"", lambda s: s.read_utf()),
        (b"\x00", lambda s: s.read_utf()),
        (b"\x00\x05abc", lambda s: s.read_utf()),
        (b"abc", lambda s: s.read_fully(4)),
        (b"abc", lambda s: s.skip_bytes(4)),
        (b"", lambda s: s.read_unsigned_short()),
    ],
    ids=["utf-no-length", "utf-half-length", "utf-short-body", "read_fully", "skip_bytes", "ushort"],
)
def test_other_reads_past_the_end(data, call):
    source = DataInputView(data)
    with pytest.raises(EndOfDataError):
        call(source)


def test_available_read_unsigned_and_skip():
    source = DataInputView(bytes.fromhex("ff 80 00 01 02 03"))
    assert source.available() == 6
    assert source.read_unsigned_byte() == 255
    assert source.read_byte() == -128
    source.skip_bytes(1)
    assert source.available() == 3, f"got {source.available()}, should be 3"
    assert source.read_fully(3) == b"\x01\x02\x03"
    assert source.available() == 0


def test_boolean_reads_any_nonzero_as_true():
    got = [DataInputView(bytes([b])).read_boolean() for b in (0, 1, 2, 0x80, 0xFF)]
    assert got == [False, True, True, True, True], f"got {got}, should be False then all True"


def test_negative_lengths_are_serialization_errors():
    with pytest.raises(SerializationError, match="negative"):
        DataInputView(b"abc").read_fully(-1)


def test_double_nan_payload_survives_raw():
    bits = bytes.fromhex("7ff0000000000001")
    value = DataInputView(bits).read_double()
    assert _written("write_double", value) == bits, "a NaN payload should survive a read and a write"


def test_mark_and_reset_read_a_record_again_with_its_element_budget():
    source = DataInputView(bytes(range(10)))
    source.read_int()
    mark = source.mark()
    source.charge_elements(5, "list size")
    assert (source.read_short(), source.position, source.elements_left()) == (0x0405, 6, mark[1] - 5)
    source.reset(mark)
    assert (source.position, source.elements_left(), source.read_short()) == (4, mark[1], 0x0405)
    with pytest.raises(ValueError):
        source.reset((11, 0))
