"""Flink's Avro encoding (its ``DataOutputEncoder`` / ``DataInputDecoder``) and the standard
Avro binary encoding, translated into each other along a schema.

Flink's ``AvroSerializer`` does not write Avro's binary encoding: it drives Avro's datum writer
through an encoder over Java's ``DataOutput``. For the same datum, per schema type:

========================  ==================================  ===================================
type                      standard Avro binary                Flink's encoding
========================  ==================================  ===================================
null                      nothing                             nothing
boolean                   1 byte                              1 byte (Java reads non-zero: true)
int / long                zig-zag varint                      4 / 8 bytes, big-endian
float / double            4 / 8 bytes, little-endian          4 / 8 bytes, big-endian
bytes / string            varint length, bytes                int length (4 bytes), bytes
fixed                     the bytes                           the bytes
enum symbol index         varint                              int (4 bytes)
union branch index        varint                              int (4 bytes)
array / map               blocks: varint count (negative:     blocks: unsigned varint count
                          varint byte size follows), items;   (7 bits a byte, low group first,
                          0 ends                              no zig-zag), items; 0 ends
map key                   a string                            a string
========================  ==================================  ===================================

The serializer writes and reads values through fastavro on the binary form, and translates the
bytes here, so logical types, union branch choice and validation stay fastavro's. Translation is
bounded like the decoder in ``_avro``: lengths and counts are checked against the bytes left,
nesting is limited to ``MAX_NESTING`` and items of types written as no bytes at all to
``MAX_ZERO_WIDTH_ITEMS`` per value.
"""

from __future__ import annotations

import struct
from typing import Any

from .._errors import EndOfDataError, SerializationError
from ._avro_compat import _min_size

__all__ = ["binary_to_flink", "flink_to_binary"]

MAX_NESTING = 200
MAX_ZERO_WIDTH_ITEMS = 1 << 20

_BE_INT = struct.Struct(">i")
_BE_LONG = struct.Struct(">q")


class _Walk:
    """One translation over ``data[pos:end]`` into ``out``."""

    __slots__ = ("data", "pos", "end", "out", "depth", "zero_items", "zero_width")

    def __init__(self, data: bytes, pos: int, end: int) -> None:
        self.data, self.pos, self.end = data, pos, end
        self.out = bytearray()
        self.depth = 0
        self.zero_items = 0
        self.zero_width: dict[int, bool] = {}

    def error(self, what: str) -> SerializationError:
        return SerializationError(f"corrupt Avro data at byte {self.pos}: {what}")

    def take(self, n: int, what: str) -> bytes:
        pos = self.pos
        if n < 0:
            raise self.error(f"negative {what} length {n}")
        if pos + n > self.end:
            raise EndOfDataError(
                f"Avro {what} needs {n} bytes at offset {pos} but only {self.end - pos} remain; "
                "the data is truncated or a length in it is corrupt"
            )
        self.pos = pos + n
        return self.data[pos : pos + n]

    def varint(self, signed: bool) -> int:
        data, pos, end = self.data, self.pos, self.end
        acc = shift = 0
        while True:
            if pos >= end:
                raise EndOfDataError(f"Avro varint runs past the end of the data at offset {pos}")
            b = data[pos]
            pos += 1
            acc |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
            if shift > 63:
                raise self.error("a varint longer than 10 bytes")
        self.pos = pos
        return (acc >> 1) ^ -(acc & 1) if signed else acc

    def put_varint(self, value: int, signed: bool) -> None:
        n = ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF if signed else value
        out = self.out
        while n & ~0x7F:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(
                f"records, arrays and maps nested deeper than {MAX_NESTING} levels (the limit "
                "for recursive schemas)"
            )

    def check_count(self, n: int, items: Any, what: str) -> None:
        zero = self.zero_width.get(id(items))
        if zero is None:
            zero = self.zero_width[id(items)] = _min_size(items, set()) == 0
        if zero:
            self.zero_items += n
            if self.zero_items > MAX_ZERO_WIDTH_ITEMS:
                raise self.error(f"more than {MAX_ZERO_WIDTH_ITEMS} items of an empty type in one value")
        elif n > self.end - self.pos:
            raise self.error(f"{what} block of {n} items with {self.end - self.pos} bytes left")


class _ToFlink(_Walk):
    """Standard binary in, Flink's encoding out."""

    __slots__ = ()

    def index(self, size: int, what: str) -> int:
        i = self.varint(True)
        if not 0 <= i < size:
            raise self.error(f"{what} index {i} outside 0..{size - 1}")
        self.out += _BE_INT.pack(i)
        return i

    def count(self, items: Any, what: str) -> int:
        n = self.varint(True)
        if n < 0:
            n = -n
            self.varint(True)  # the block's byte size: Flink's encoding has none
        if n:
            self.check_count(n, items, what)
        self.put_varint(n, False)
        return n

    def walk(self, node: Any) -> None:
        t = node.type
        out = self.out
        if t == "null":
            return
        if t == "boolean":
            out += self.take(1, "boolean")
        elif t == "int":
            out += _BE_INT.pack(self.varint(True))
        elif t == "long":
            out += _BE_LONG.pack(self.varint(True))
        elif t == "float":
            out += self.take(4, "float")[::-1]  # the same bits, the other byte order
        elif t == "double":
            out += self.take(8, "double")[::-1]
        elif t in ("bytes", "string"):
            raw = self.take(self.varint(True), t)
            out += _BE_INT.pack(len(raw))
            out += raw
        elif t == "fixed":
            out += self.take(node.size, "fixed")
        elif t == "enum":
            self.index(len(node.symbols), "enum symbol")
        elif t == "union":
            self.walk(node.branches[self.index(len(node.branches), "union branch")])
        else:
            self.enter()
            if t == "array":
                while n := self.count(node.items, "array"):
                    for _ in range(n):
                        self.walk(node.items)
            elif t == "map":
                while n := self.count(node.values, "map"):
                    for _ in range(n):
                        raw = self.take(self.varint(True), "map key")
                        out += _BE_INT.pack(len(raw))
                        out += raw
                        self.walk(node.values)
            else:
                for field in node.fields:
                    self.walk(field.type)
            self.depth -= 1


class _ToBinary(_Walk):
    """Flink's encoding in, standard binary out."""

    __slots__ = ()

    def read_int(self, what: str) -> int:
        return int(_BE_INT.unpack(self.take(4, what))[0])

    def index(self, size: int, what: str) -> int:
        i = self.read_int(what)
        if not 0 <= i < size:
            raise self.error(f"{what} index {i} outside 0..{size - 1}")
        self.put_varint(i, True)
        return i

    def count(self, items: Any, what: str) -> int:
        n = self.varint(False)
        if n > (1 << 63) - 1:
            raise self.error(f"{what} count {n} does not fit a long")
        if n:
            self.check_count(n, items, what)
        self.put_varint(n, True)
        return n

    def length_prefixed(self, what: str) -> None:
        raw = self.take(self.read_int(what), what)
        self.put_varint(len(raw), True)
        self.out += raw

    def walk(self, node: Any) -> None:
        t = node.type
        out = self.out
        if t == "null":
            return
        if t == "boolean":
            out.append(1 if self.take(1, "boolean")[0] else 0)
        elif t == "int":
            self.put_varint(self.read_int("int"), True)
        elif t == "long":
            self.put_varint(_BE_LONG.unpack(self.take(8, "long"))[0], True)
        elif t == "float":
            out += self.take(4, "float")[::-1]
        elif t == "double":
            out += self.take(8, "double")[::-1]
        elif t in ("bytes", "string"):
            self.length_prefixed(t)
        elif t == "fixed":
            out += self.take(node.size, "fixed")
        elif t == "enum":
            self.index(len(node.symbols), "enum symbol")
        elif t == "union":
            self.walk(node.branches[self.index(len(node.branches), "union branch")])
        else:
            self.enter()
            if t == "array":
                while n := self.count(node.items, "array"):
                    for _ in range(n):
                        self.walk(node.items)
            elif t == "map":
                while n := self.count(node.values, "map"):
                    for _ in range(n):
                        self.length_prefixed("map key")
                        self.walk(node.values)
            else:
                for field in node.fields:
                    self.walk(field.type)
            self.depth -= 1


def _run(walk: _Walk, root: Any) -> tuple[bytes, int]:
    try:
        walk.walk(root)  # type: ignore[attr-defined]
    except RecursionError:
        raise SerializationError("Avro data nests too deeply to translate") from None
    except struct.error as exc:
        raise SerializationError(f"corrupt Avro data: {exc}") from None
    return bytes(walk.out), walk.pos


def binary_to_flink(root: Any, data: bytes, pos: int = 0, end: int | None = None) -> tuple[bytes, int]:
    """One datum of standard binary at ``data[pos:]`` in Flink's encoding, and where it ended."""
    return _run(_ToFlink(data, pos, len(data) if end is None else end), root)


def flink_to_binary(root: Any, data: bytes, pos: int = 0, end: int | None = None) -> tuple[bytes, int]:
    """One datum of Flink's encoding at ``data[pos:]`` in standard binary, and where it ended."""
    return _run(_ToBinary(data, pos, len(data) if end is None else end), root)
