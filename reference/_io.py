"""Java ``DataOutput`` / ``DataInput`` semantics over ``bytearray`` and ``memoryview``.

Big-endian fixed-width numbers, and ``write_utf`` / ``read_utf`` in Java's *modified* UTF-8
(NUL as ``C0 80``, a supplementary character as two 3-byte surrogates) behind an unsigned
16-bit length.
"""

from __future__ import annotations

import codecs
import re
import struct

from ._bounds import ZERO_WIDTH_ALLOWANCE
from ._errors import EndOfDataError, SerializationError

__all__ = ["DataOutputView", "DataInputView", "encode_modified_utf8", "decode_modified_utf8"]

_BOOL = struct.Struct(">?")
_BYTE = struct.Struct(">b")
_UBYTE = struct.Struct(">B")
_SHORT = struct.Struct(">h")
_USHORT = struct.Struct(">H")
_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")
_FLOAT = struct.Struct(">f")
_DOUBLE = struct.Struct(">d")
_FLOAT_BITS = struct.Struct(">I")
_DOUBLE_BITS = struct.Struct(">Q")

_NON_BMP = re.compile("[\U00010000-\U0010ffff]")
# Codecs are imported on first use; load the ones decoding needs now, so that reading bytes
# never imports a module (decoding a savepoint must not import anything).
for _codec in ("utf-8", "utf-16-be", "utf-16-le", "ascii", "latin-1"):
    codecs.lookup(_codec)


def _split_surrogates(match: re.Match[str]) -> str:
    code = ord(match.group()) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def encode_modified_utf8(text: str) -> bytes:
    """Encode ``text`` as Java's modified UTF-8 (without the length prefix)."""
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    # Python's utf-8 codec with surrogatepass writes each lone surrogate as 3 bytes, which is
    # exactly how modified UTF-8 writes the two halves of a supplementary character.
    cesu = _NON_BMP.sub(_split_surrogates, text).encode("utf-8", "surrogatepass")
    return cesu.replace(b"\x00", b"\xc0\x80")


def decode_modified_utf8(data: bytes) -> str:
    """Decode Java's modified UTF-8; raises ``SerializationError`` on malformed input."""
    if data.isascii():
        return data.decode("ascii")
    if max(data) >= 0xF0:
        raise SerializationError(
            "malformed modified UTF-8: a 4-byte sequence (modified UTF-8 writes supplementary "
            "characters as two 3-byte surrogates); the data is corrupt or not Java's writeUTF"
        )
    try:
        text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        # Re-pair surrogate halves into supplementary characters; lone halves stay as they are.
        return text.encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise SerializationError(
            f"malformed modified UTF-8 at byte {exc.start}: {exc.reason}; "
            "the data is corrupt or was not written by writeUTF"
        ) from None


def _range_error(what: str, value: object, bits: int) -> SerializationError:
    """The refusal of an int past ``bits``: what the caller passes, and what a serializer whose
    values need more bits writes instead (a format change, so a new snapshot version)."""
    wider = (
        "write_long (and read_long), in a new snapshot version"
        if bits == 32
        else "a length (write_int) and the bytes of int.to_bytes (write), in a new snapshot version"
    )
    return SerializationError(
        f"{what}: {value!r} is not a signed {bits}-bit integer; pass an int in "
        f"[{-(1 << (bits - 1))}, {(1 << (bits - 1)) - 1}], or, if the state's values need more "
        f"bits, write them with {wider}"
    )


class DataOutputView:
    """A growable big-endian output buffer (Flink's ``DataOutputSerializer``)."""

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def write_boolean(self, value: bool) -> None:
        self._buf.append(1 if value else 0)

    # Like Java, byte and short keep the low bits; int and long refuse values out of range
    # instead of silently wrapping (a Python int has no width of its own).
    def write_byte(self, value: int) -> None:
        self._buf.append(value & 0xFF)

    def write_short(self, value: int) -> None:
        self._buf += _USHORT.pack(value & 0xFFFF)

    def write_int(self, value: int) -> None:
        try:
            self._buf += _INT.pack(value)
        except struct.error:
            raise _range_error("write_int", value, 32) from None

    def write_long(self, value: int) -> None:
        try:
            self._buf += _LONG.pack(value)
        except struct.error:
            raise _range_error("write_long", value, 64) from None

    def write_float(self, value: float) -> None:
        try:
            self._buf += _FLOAT.pack(value)
        except (struct.error, OverflowError):
            raise SerializationError(
                f"write_float: {value!r} is not a float that fits 32 bits; pass a float "
                "within +-3.4e38 (or inf/nan)"
            ) from None

    def write_double(self, value: float) -> None:
        try:
            self._buf += _DOUBLE.pack(value)
        except struct.error:
            raise SerializationError(f"write_double: {value!r} is not a float") from None

    def write_float_bits(self, bits: int) -> None:
        self._buf += _FLOAT_BITS.pack(bits)

    def write_double_bits(self, bits: int) -> None:
        self._buf += _DOUBLE_BITS.pack(bits)

    def write_utf(self, text: str) -> None:
        data = encode_modified_utf8(text)
        if len(data) > 0xFFFF:
            raise SerializationError(
                f"write_utf: encoded string is {len(data)} bytes, more than the 65535 an unsigned "
                "16-bit length can hold (Java's UTFDataFormatException); shorten the string"
            )
        self._buf += _USHORT.pack(len(data))
        self._buf += data

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self._buf += data

    def getvalue(self) -> bytes:
        return bytes(self._buf)

    def len(self) -> int:
        return len(self._buf)

    def __len__(self) -> int:
        return len(self._buf)

    def clear(self) -> None:
        """Forget what was written, keeping the buffer for reuse."""
        del self._buf[:]

    def truncate(self, size: int) -> None:
        """Forget everything written after the first ``size`` bytes (a refused record's part)."""
        del self._buf[size:]


class DataInputView:
    """A big-endian reader over bytes; reading past the end raises ``EndOfDataError``.

    A view is one record as far as the element budget goes (``charge_elements``): whatever
    its serializers nest, they decode at most ``len(data) + ZERO_WIDTH_ALLOWANCE`` collection
    elements from it in total."""

    __slots__ = ("_data", "_pos", "_end", "_elements")

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._data = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        self._pos = 0
        self._end = len(self._data)
        self._elements = self._end + ZERO_WIDTH_ALLOWANCE

    def charge_elements(self, count: int, what: str) -> None:
        """Account for ``count`` collection elements about to be decoded; refuse them when the
        record's element budget (its byte length + ``ZERO_WIDTH_ALLOWANCE``) would be
        exceeded, before anything is allocated for them."""
        left = self._elements - count
        if left < 0:
            raise SerializationError(
                f"{what} {count}: more elements than a {self._end}-byte record may hold "
                f"(at most one element per byte plus {ZERO_WIDTH_ALLOWANCE} elements that take "
                "no bytes, over all nesting levels); the data is corrupt"
            )
        self._elements = left

    def elements_left(self) -> int:
        """What remains of this record's element budget."""
        return self._elements

    def _need(self, n: int, what: str) -> int:
        pos = self._pos
        if n < 0:
            raise SerializationError(f"{what}: negative length {n}; the data is corrupt")
        if pos + n > self._end:
            raise EndOfDataError(
                f"{what} needs {n} bytes at offset {pos} but only {self._end - pos} remain; "
                "the data is truncated or a length in it is corrupt"
            )
        self._pos = pos + n
        return pos

    def read_boolean(self) -> bool:
        pos = self._need(1, "read_boolean")
        return self._data[pos] != 0

    def read_byte(self) -> int:
        pos = self._need(1, "read_byte")
        return _BYTE.unpack_from(self._data, pos)[0]

    def read_unsigned_byte(self) -> int:
        pos = self._need(1, "read_unsigned_byte")
        return self._data[pos]

    def read_short(self) -> int:
        pos = self._need(2, "read_short")
        return _SHORT.unpack_from(self._data, pos)[0]

    def read_unsigned_short(self) -> int:
        pos = self._need(2, "read_unsigned_short")
        return _USHORT.unpack_from(self._data, pos)[0]

    def read_int(self) -> int:
        pos = self._need(4, "read_int")
        return _INT.unpack_from(self._data, pos)[0]

    def read_long(self) -> int:
        pos = self._need(8, "read_long")
        return _LONG.unpack_from(self._data, pos)[0]

    def read_float(self) -> float:
        pos = self._need(4, "read_float")
        return _FLOAT.unpack_from(self._data, pos)[0]

    def read_double(self) -> float:
        pos = self._need(8, "read_double")
        return _DOUBLE.unpack_from(self._data, pos)[0]

    def read_utf(self) -> str:
        n = self.read_unsigned_short()
        pos = self._need(n, "read_utf")
        return decode_modified_utf8(bytes(self._data[pos : pos + n]))

    def read_fully(self, n: int) -> bytes:
        pos = self._need(n, "read_fully")
        return bytes(self._data[pos : pos + n])

    def skip_bytes(self, n: int) -> None:
        self._need(n, "skip_bytes")

    def peek(self, n: int) -> bytes:
        """The next ``n`` bytes (fewer at the end) without consuming them."""
        return bytes(self._data[self._pos : self._pos + n])

    def unread(self, n: int) -> None:
        """Step back ``n`` bytes (only over bytes this view has already read)."""
        if n < 0 or n > self._pos:
            raise ValueError(f"cannot step back {n} bytes from offset {self._pos}")
        self._pos -= n

    def available(self) -> int:
        return self._end - self._pos

    @property
    def position(self) -> int:
        """Offset of the next byte to read."""
        return self._pos

    def mark(self) -> tuple[int, int]:
        """Where reading stands: the position and what remains of the element budget. Give it
        to ``reset`` to read the same bytes again another way (a record one reader gave up)."""
        return self._pos, self._elements

    def reset(self, mark: tuple[int, int]) -> None:
        """Go back to a ``mark`` of this view: the position and the element budget it saw."""
        pos, elements = mark
        if not 0 <= pos <= self._end:
            raise ValueError(f"cannot reset to offset {pos} of a {self._end}-byte view")
        self._pos, self._elements = pos, elements

    def slice_from(self, start: int) -> bytes:
        """The bytes between ``start`` and the current position (for copying records)."""
        return bytes(self._data[start : self._pos])
