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
import weakref
from typing import Any

from .._bounds import ZERO_WIDTH_ALLOWANCE
from .._errors import EndOfDataError, SerializationError
from ._avro_compat import _min_size

__all__ = ["binary_to_flink", "flink_to_binary"]

MAX_NESTING = 200
#: The same allowance as every other reader of a record (``reference._bounds``).
MAX_ZERO_WIDTH_ITEMS = ZERO_WIDTH_ALLOWANCE

_BE_INT = struct.Struct(">i")
_BE_LONG = struct.Struct(">q")


class _State:
    """What one translation tracks across nodes: nesting depth and items of empty types."""

    __slots__ = ("depth", "zero_items")

    def __init__(self) -> None:
        self.depth = 0
        self.zero_items = 0


def _error(pos: int, what: str) -> SerializationError:
    return SerializationError(f"corrupt Avro data at byte {pos}: {what}")


def _short(pos: int, need: int, end: int, what: str) -> EndOfDataError:
    return EndOfDataError(
        f"Avro {what} needs {need} bytes at offset {pos} but only {end - pos} remain; the data "
        "is truncated or a length in it is corrupt"
    )


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """An unsigned varint (7 bits a byte, low group first) and the position after it."""
    acc = shift = 0
    while True:
        if pos >= end:
            raise EndOfDataError(f"Avro varint runs past the end of the data at offset {pos}")
        b = data[pos]
        pos += 1
        acc |= (b & 0x7F) << shift
        if b < 0x80:
            return acc, pos
        shift += 7
        if shift > 63:
            raise _error(pos, "a varint longer than 10 bytes")


def _put(n: int, out: bytearray) -> None:
    """Append ``n`` (non-negative, below 2**64) as an unsigned varint."""
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)


def _zigzag(value: int) -> int:
    return ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF


def _enter(state: _State, pos: int) -> None:
    state.depth += 1
    if state.depth > MAX_NESTING:
        raise _error(
            pos, f"records, arrays and maps nested deeper than {MAX_NESTING} levels (the limit "
            "for recursive schemas)"
        )


def _count_check(items: Any) -> Any:
    """The check of an array or map block count for items of ``items``' type."""
    zero = _min_size(items, set()) == 0

    def check(n: int, pos: int, end: int, state: _State, what: str) -> None:
        if zero:
            state.zero_items += n
            if state.zero_items > MAX_ZERO_WIDTH_ITEMS:
                raise _error(pos, f"more than {MAX_ZERO_WIDTH_ITEMS} items of an empty type in one value")
        elif n > end - pos:
            raise _error(pos, f"{what} block of {n} items with {end - pos} bytes left")

    return check


_Step = Any  # (data, pos, end, out, state) -> pos


def _compile(root: Any, to_flink: bool) -> _Step:
    """One function per schema node, translating one datum of that node (records shared, so a
    recursive schema compiles to recursive functions)."""
    done: dict[int, _Step] = {}

    def build(node: Any) -> _Step:
        found = done.get(id(node))
        if found is not None:
            return found
        if node.type == "record":
            steps: list[_Step] = []

            def record(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
                _enter(state, pos)
                for step in steps:
                    pos = step(data, pos, end, out, state)
                state.depth -= 1
                return pos

            done[id(node)] = record
            steps.extend(build(f.type) for f in node.fields)
            return record
        step = (_to_flink if to_flink else _to_binary)(node, build)
        done[id(node)] = step
        return step

    return build(root)


def _to_flink(node: Any, build: Any) -> _Step:
    """Standard binary in, Flink's encoding out, for one non-record node."""
    t = node.type
    if t == "null":
        return lambda data, pos, end, out, state: pos
    if t in ("boolean", "fixed", "float", "double"):
        size = {"boolean": 1, "float": 4, "double": 8}.get(t) or node.size
        flip = t in ("float", "double")  # the same bits, the other byte order

        def fixed(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            stop = pos + size
            if stop > end:
                raise _short(pos, size, end, t)
            out += data[pos:stop][::-1] if flip else data[pos:stop]
            return stop

        return fixed
    if t in ("int", "long", "enum"):
        pack = _BE_LONG.pack if t == "long" else _BE_INT.pack
        symbols = len(node.symbols) if t == "enum" else 0

        def number(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            raw, pos = _varint(data, pos, end)
            value = (raw >> 1) ^ -(raw & 1)
            if symbols and not 0 <= value < symbols:
                raise _error(pos, f"enum symbol index {value} outside 0..{symbols - 1}")
            try:
                out += pack(value)
            except struct.error:
                raise _error(pos, f"{t} value {value} out of range") from None
            return pos

        return number
    if t in ("bytes", "string"):

        def sized(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            raw, pos = _varint(data, pos, end)
            n = (raw >> 1) ^ -(raw & 1)
            if n < 0:
                raise _error(pos, f"negative {t} length {n}")
            stop = pos + n
            if stop > end:
                raise _short(pos, n, end, t)
            out += _BE_INT.pack(n)
            out += data[pos:stop]
            return stop

        return sized
    if t == "union":
        branches = [build(b) for b in node.branches]

        def union(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            raw, pos = _varint(data, pos, end)
            i = (raw >> 1) ^ -(raw & 1)
            if not 0 <= i < len(branches):
                raise _error(pos, f"union branch index {i} outside 0..{len(branches) - 1}")
            out += _BE_INT.pack(i)
            return branches[i](data, pos, end, out, state)

        return union
    items_node = node.items if t == "array" else node.values
    items = build(items_node)
    key = build(_STRING) if t == "map" else None
    check = _count_check(items_node)

    def blocks(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
        _enter(state, pos)
        while True:
            raw, pos = _varint(data, pos, end)
            n = (raw >> 1) ^ -(raw & 1)
            if n < 0:
                n = -n
                _, pos = _varint(data, pos, end)  # the block's byte size: Flink has none
            _put(n, out)
            if not n:
                state.depth -= 1
                return pos
            check(n, pos, end, state, t)
            for _ in range(n):
                if key is not None:
                    pos = key(data, pos, end, out, state)
                pos = items(data, pos, end, out, state)

    return blocks


def _to_binary(node: Any, build: Any) -> _Step:
    """Flink's encoding in, standard binary out, for one non-record node."""
    t = node.type
    if t == "null":
        return lambda data, pos, end, out, state: pos
    if t in ("fixed", "float", "double"):
        size = {"float": 4, "double": 8}.get(t) or node.size
        flip = t != "fixed"

        def fixed(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            stop = pos + size
            if stop > end:
                raise _short(pos, size, end, t)
            out += data[pos:stop][::-1] if flip else data[pos:stop]
            return stop

        return fixed
    if t == "boolean":

        def boolean(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            if pos >= end:
                raise _short(pos, 1, end, t)
            out.append(1 if data[pos] else 0)  # Java reads any non-zero byte as true
            return pos + 1

        return boolean
    if t in ("int", "long", "enum"):
        unpack, size = (_BE_LONG.unpack_from, 8) if t == "long" else (_BE_INT.unpack_from, 4)
        symbols = len(node.symbols) if t == "enum" else 0

        def number(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            if pos + size > end:
                raise _short(pos, size, end, t)
            value = unpack(data, pos)[0]
            if symbols and not 0 <= value < symbols:
                raise _error(pos, f"enum symbol index {value} outside 0..{symbols - 1}")
            _put(_zigzag(value), out)
            return pos + size

        return number
    if t in ("bytes", "string"):

        def sized(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            if pos + 4 > end:
                raise _short(pos, 4, end, t)
            n = _BE_INT.unpack_from(data, pos)[0]
            pos += 4
            if n < 0:
                raise _error(pos, f"negative {t} length {n}")
            stop = pos + n
            if stop > end:
                raise _short(pos, n, end, t)
            _put(n << 1, out)
            out += data[pos:stop]
            return stop

        return sized
    if t == "union":
        branches = [build(b) for b in node.branches]

        def union(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
            if pos + 4 > end:
                raise _short(pos, 4, end, "union branch")
            i = _BE_INT.unpack_from(data, pos)[0]
            if not 0 <= i < len(branches):
                raise _error(pos, f"union branch index {i} outside 0..{len(branches) - 1}")
            _put(i << 1, out)
            return branches[i](data, pos + 4, end, out, state)

        return union
    items_node = node.items if t == "array" else node.values
    items = build(items_node)
    key = build(_STRING) if t == "map" else None
    check = _count_check(items_node)

    def blocks(data: bytes, pos: int, end: int, out: bytearray, state: _State) -> int:
        _enter(state, pos)
        while True:
            n, pos = _varint(data, pos, end)
            if n > (1 << 63) - 1:
                raise _error(pos, f"{t} count {n} does not fit a long")
            _put(n << 1, out)
            if not n:
                state.depth -= 1
                return pos
            check(n, pos, end, state, t)
            for _ in range(n):
                if key is not None:
                    pos = key(data, pos, end, out, state)
                pos = items(data, pos, end, out, state)

    return blocks


class _StringNode:
    """The schema node of a map key."""

    type = "string"


_STRING = _StringNode()
_COMPILED: weakref.WeakKeyDictionary[Any, tuple[_Step, _Step]] = weakref.WeakKeyDictionary()


def _steps(root: Any) -> tuple[_Step, _Step]:
    found = _COMPILED.get(root)
    if found is None:
        found = _COMPILED[root] = (_compile(root, True), _compile(root, False))
    return found


def _run(step: _Step, data: bytes, pos: int, end: int | None) -> tuple[bytes, int]:
    out = bytearray()
    try:
        stop = step(data, pos, len(data) if end is None else end, out, _State())
    except RecursionError:
        raise SerializationError("Avro data nests too deeply to translate") from None
    return bytes(out), stop


def binary_to_flink(root: Any, data: bytes, pos: int = 0, end: int | None = None) -> tuple[bytes, int]:
    """One datum of standard binary at ``data[pos:]`` in Flink's encoding, and where it ended."""
    return _run(_steps(root)[0], data, pos, end)


def flink_to_binary(root: Any, data: bytes, pos: int = 0, end: int | None = None) -> tuple[bytes, int]:
    """One datum of Flink's encoding at ``data[pos:]`` in standard binary, and where it ended."""
    return _run(_steps(root)[1], data, pos, end)
