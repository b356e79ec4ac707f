"""Snappy decompression and the Snappy framing format, written from Google's published format
descriptions (``format_description.txt``, ``framing_format.txt``).

Flink compresses each key group of a keyed-state file, when snapshot compression is on, as one
framed stream (``SnappyStreamCompressionDecorator``: xerial's ``SnappyFramedOutputStream``, 64 KiB
blocks). ``FramedReader`` reads such a stream chunk by chunk from a byte source: at most one
chunk (at most 64 KiB once decompressed, 16 MiB as stored) is held at a time. Chunk checksums
are not verified, as Flink's own reader does not (``SnappyFramedInputStream(in, false)``); a
damaged stream still fails, on its structure, as a ``SavepointFormatError``.

The compressor side (``frame``) writes the stream identifier, then one compressed-data chunk
(type 0x00) per 64 KiB of input, each holding a Snappy block made of literals only (no copies:
a valid block any Snappy decompressor reads, a few bytes longer than its input) with the
chunk's masked CRC-32C as the format asks. It trades size for simplicity: the output is never
smaller than the input, which a savepoint writer may accept.
"""

from __future__ import annotations

from collections.abc import Callable

from ._format import SavepointFormatError

__all__ = ["FramedReader", "decompress", "frame", "literal_block", "MAX_BLOCK"]

#: The largest uncompressed chunk the framing format allows.
MAX_BLOCK = 65536
_STREAM_ID = b"sNaPpY"


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    for _ in range(5):
        if pos >= len(data):
            raise SavepointFormatError("Snappy block: truncated length varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    raise SavepointFormatError("Snappy block: length varint longer than 5 bytes")


def decompress(data: bytes, limit: int = MAX_BLOCK) -> bytes:
    """One raw Snappy block; its declared length must not exceed ``limit``."""
    size, pos = _varint(data, 0)
    if size > limit:
        raise SavepointFormatError(f"Snappy block declares {size} bytes, more than the {limit} allowed")
    out = bytearray()
    end = len(data)
    while pos < end:
        tag = data[pos]
        pos += 1
        kind = tag & 3
        if kind == 0:
            length = tag >> 2
            if length >= 60:
                extra = length - 59
                if pos + extra > end:
                    raise SavepointFormatError("Snappy block: truncated literal length")
                length = int.from_bytes(data[pos : pos + extra], "little")
                pos += extra
            length += 1
            if pos + length > end or len(out) + length > size:
                raise SavepointFormatError(
                    f"Snappy block: a literal of {length} bytes at byte {pos} overruns the block "
                    f"({end} bytes) or its declared length {size}"
                )
            out += data[pos : pos + length]
            pos += length
            continue
        if kind == 1:
            if pos >= end:
                raise SavepointFormatError("Snappy block: truncated copy")
            length = 4 + ((tag >> 2) & 7)
            offset = ((tag >> 5) << 8) | data[pos]
            pos += 1
        else:
            width = 2 if kind == 2 else 4
            if pos + width > end:
                raise SavepointFormatError("Snappy block: truncated copy")
            length = (tag >> 2) + 1
            offset = int.from_bytes(data[pos : pos + width], "little")
            pos += width
        have = len(out)
        if offset == 0 or offset > have or have + length > size:
            raise SavepointFormatError(
                f"Snappy block: a copy of {length} bytes from offset {offset} with {have} bytes "
                f"written (declared {size}); the block is corrupt"
            )
        start = have - offset
        if offset >= length:
            out += out[start : start + length]
        else:
            pattern = bytes(out[start:])
            out += (pattern * (length // offset + 1))[:length]
    if len(out) != size:
        raise SavepointFormatError(f"Snappy block: {len(out)} bytes decompressed, {size} declared")
    return bytes(out)


class FramedReader:
    """The decompressed bytes of a Snappy framed stream, read from ``read_raw(n)`` (which
    returns at most ``n`` bytes, fewer only at the end of the source)."""

    def __init__(self, read_raw: Callable[[int], bytes], where: str, started: bool = False) -> None:
        """``started``: the stream identifier was already read (a read from a chunk in the
        middle of a stream, as Flink's operator-state offsets point)."""
        self._read_raw = read_raw
        self._where = where
        self._buffer = b""
        self._pos = 0
        self._started = started

    def _exact(self, n: int) -> bytes:
        data = self._read_raw(n)
        if len(data) != n:
            raise SavepointFormatError(
                f"{self._where}: the Snappy framed stream ends inside a chunk ({len(data)} of "
                f"{n} bytes); the file is truncated"
            )
        return data

    def _next_chunk(self) -> bool:
        while True:
            header = self._read_raw(4)
            if not header:
                return False
            if len(header) != 4:
                raise SavepointFormatError(f"{self._where}: truncated Snappy chunk header")
            kind = header[0]
            length = int.from_bytes(header[1:4], "little")
            if not self._started:
                if kind != 0xFF or length != len(_STREAM_ID) or self._exact(length) != _STREAM_ID:
                    raise SavepointFormatError(
                        f"{self._where}: a compressed key group should start with the Snappy "
                        f"stream identifier, got chunk type 0x{kind:02x}; the file is corrupt or "
                        "not compressed although its header says so"
                    )
                self._started = True
                continue
            if kind == 0xFF:
                if length != len(_STREAM_ID) or self._exact(length) != _STREAM_ID:
                    raise SavepointFormatError(f"{self._where}: corrupt Snappy stream identifier")
                continue
            if kind in (0x00, 0x01):
                if length < 4 or length > 4 + (MAX_BLOCK if kind == 1 else (1 << 24)):
                    raise SavepointFormatError(
                        f"{self._where}: Snappy chunk of {length} bytes, outside the format's limits"
                    )
                body = self._exact(length)[4:]
                self._buffer = decompress(body) if kind == 0 else body
                self._pos = 0
                if self._buffer:
                    return True
                continue
            if 0x02 <= kind <= 0x7F:
                raise SavepointFormatError(
                    f"{self._where}: unskippable reserved Snappy chunk type 0x{kind:02x}; the stream is corrupt"
                )
            self._exact(length)  # padding (0xfe) or a reserved skippable chunk

    def read(self, n: int) -> bytes:
        """Exactly ``n`` decompressed bytes, or fewer only where the stream ends."""
        left = len(self._buffer) - self._pos
        if n <= left:
            start = self._pos
            self._pos += n
            return self._buffer[start : self._pos]
        parts = [self._buffer[self._pos :]]
        need = n - left
        self._buffer, self._pos = b"", 0
        while need > 0 and self._next_chunk():
            take = min(need, len(self._buffer))
            parts.append(self._buffer[:take])
            self._pos = take
            need -= take
        return b"".join(parts)


# -- the compressor side ------------------------------------------------------------------------
def _crc32c_table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_CRC32C = _crc32c_table()


def _masked_crc32c(data: bytes) -> int:
    """CRC-32C (Castagnoli) of ``data``, masked as the framing format says."""
    crc = 0xFFFFFFFF
    table = _CRC32C
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _varint_bytes(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def literal_block(data: bytes) -> bytes:
    """A raw Snappy block of ``data`` (at most ``MAX_BLOCK`` bytes) made of one literal."""
    if len(data) > MAX_BLOCK:
        raise ValueError(f"a Snappy block of {len(data)} bytes, at most {MAX_BLOCK} allowed here")
    out = bytearray(_varint_bytes(len(data)))
    if data:
        n = len(data) - 1
        if n < 60:
            out.append(n << 2)
        else:
            width = (n.bit_length() + 7) // 8
            out.append((59 + width) << 2)
            out += n.to_bytes(width, "little")
        out += data
    return bytes(out)


def frame(data: bytes) -> bytes:
    """``data`` as one Snappy framed stream (see the module docstring)."""
    out = bytearray(b"\xff" + len(_STREAM_ID).to_bytes(3, "little") + _STREAM_ID)
    for start in range(0, len(data), MAX_BLOCK):
        piece = data[start : start + MAX_BLOCK]
        body = _masked_crc32c(piece).to_bytes(4, "little") + literal_block(piece)
        out += b"\x00" + len(body).to_bytes(3, "little") + body
    return bytes(out)
