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

The serializer's generic methods write and read values through fastavro on the binary form, and
translate the bytes here, so logical types, union branch choice and validation stay fastavro's.
The fragments at the end (``gen_read``, ``gen_write``, ``gen_skip``) are what its generated code
(``_codegen``) does instead: read, write and copy Flink's encoding directly, for the schemas and
values where the result is exactly the generic one (``gen_support``). Translation is
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

__all__ = ["binary_to_flink", "flink_to_binary", "gen_support", "gen_read", "gen_write", "gen_skip"]

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


# -- generated-code fragments (reference.serializers._codegen) ------------------------------------
# Flink's encoding read, written and copied along the schema, straight into the values fastavro
# reads and from the values it writes. Only what the generic path would do exactly the same is
# inlined (see ``gen_support``); anything else leaves the fast path (``Bail``) for the generic
# methods, which decide.
_BE_FLOAT = struct.Struct(">f")
_BE_DOUBLE = struct.Struct(">d")
_MAX_COUNT = (1 << 63) - 1
#: Nodes and nesting beyond which a schema is left to the generic methods.
GEN_MAX_NODES = 400
GEN_MAX_DEPTH = 12
_NUMBERS = {"int": (_BE_INT, 4), "long": (_BE_LONG, 8), "float": (_BE_FLOAT, 4), "double": (_BE_DOUBLE, 8)}


def gen_support(root: Any) -> set[str]:
    """The generated functions (of "read", "write", "copy") whose result is exactly the
    generic one for every input, for a schema that is neither recursive nor has items of
    empty types: none with a logical type (fastavro converts those) or a schema too large;
    no write with a union other than ``null`` and one other branch (fastavro's branch choice
    by value is left to fastavro)."""
    count = 0
    writable = True

    def walk(node: Any, depth: int) -> bool:
        nonlocal count, writable
        count += 1
        if count > GEN_MAX_NODES or depth > GEN_MAX_DEPTH or "logicalType" in node.props:
            return False
        t = node.type
        if t == "record":
            return all(walk(f.type, depth + 1) for f in node.fields)
        if t == "union":
            names = [b.type for b in node.branches]
            if len(names) != 2 or "null" not in names or names[0] == names[1]:
                writable = False
            return all(walk(b, depth + 1) for b in node.branches)
        if t == "array":
            return walk(node.items, depth + 1)
        if t == "map":
            return walk(node.values, depth + 1)
        return True

    if not walk(root, 0):
        return set()
    return {"read", "write", "copy"} if writable else {"read", "copy"}


def _gen_sized(g: Any) -> tuple[Any, Any]:
    """An int length at ``pos`` bounded by the bytes left; the position after the bytes."""
    n, stop = g.var(), g.var()
    g.emit("{n} = {unpack}(data, pos)[0]", n=n, unpack=g.const(_BE_INT.unpack_from))
    g.emit("{stop} = pos + 4 + {n}", stop=stop, n=n)
    g.emit("if {n} < 0 or {stop} > end: raise Bail", n=n, stop=stop)
    return n, stop


def _gen_index(g: Any, size: int) -> Any:
    """An enum or union index at ``pos`` within ``0..size-1``."""
    i = g.var()
    g.emit("{i} = {unpack}(data, pos)[0]", i=i, unpack=g.const(_BE_INT.unpack_from))
    g.emit("pos += 4")
    g.emit("if not 0 <= {i} < {size}: raise Bail", i=i, size=size)
    return i


def _gen_blocks(g: Any) -> Any:
    """Open the loop over the blocks of an array or map; returns the block's count."""
    n = g.var()
    g.emit("{n} = data[pos]", n=n)
    with g.block("if {n} < 128:", n=n):
        g.emit("pos += 1")
    with g.block("else:"):
        g.emit("{n}, pos = {varint}(data, pos, end)", n=n, varint=g.const(_varint))
        g.emit("if {n} > {most}: raise Bail", n=n, most=g.const(_MAX_COUNT))
    g.emit("if not {n}: break", n=n)
    g.emit("if {n} > end - pos: raise Bail", n=n)
    return n


def gen_read(g: Any, node: Any, out: Any) -> None:
    """Code reading one datum of ``node`` at ``pos`` into ``out``, as fastavro returns it."""
    t = node.type
    if t == "null":
        g.emit("{out} = None", out=out)
    elif t == "boolean":
        g.emit("{out} = data[pos] != 0", out=out)  # Java reads any non-zero byte as true
        g.emit("pos += 1")
    elif t in _NUMBERS:
        number, size = _NUMBERS[t]
        g.emit("{out} = {unpack}(data, pos)[0]", out=out, unpack=g.const(number.unpack_from))
        g.emit("pos += {size}", size=size)
    elif t in ("string", "bytes"):
        _, stop = _gen_sized(g)
        decode = ".decode()" if t == "string" else ""
        g.emit("{out} = data[pos + 4:{stop}]" + decode, out=out, stop=stop)
        g.emit("pos = {stop}", stop=stop)
    elif t == "fixed":
        g.emit("{out} = data[pos:pos + {size}]", out=out, size=node.size)
        g.emit("pos += {size}", size=node.size)
        g.emit("if pos > end: raise Bail")
    elif t == "enum":
        i = _gen_index(g, len(node.symbols))
        g.emit("{out} = {symbols}[{i}]", out=out, symbols=g.const(node.symbols), i=i)
    elif t == "union":
        i = _gen_index(g, len(node.branches))
        for k, branch in enumerate(node.branches):
            with g.block(("if" if k == 0 else "elif") + " {i} == {k}:", i=i, k=k):
                gen_read(g, branch, out)
    elif t == "record":
        items = g.names(len(node.fields))
        for field, item in zip(node.fields, items, strict=True):
            gen_read(g, field.type, item)
        g.emit("{out} = {record}", out=out,
               record=g.dict_of([(g.const(f.name), item) for f, item in zip(node.fields, items, strict=True)]))
    else:  # array or map
        key, item = g.var(), g.var()
        g.emit("{out} = []" if t == "array" else "{out} = {{}}", out=out)
        with g.block("while True:"):
            with g.block("for _ in range({n}):", n=_gen_blocks(g)):
                if t == "map":
                    gen_read(g, _STRING, key)
                    gen_read(g, node.values, item)
                    g.emit("{out}[{key}] = {item}", out=out, key=key, item=item)
                else:
                    gen_read(g, node.items, item)
                    g.emit("{out}.append({item})", out=out, item=item)


def gen_skip(g: Any, node: Any) -> None:
    """Code moving ``pos`` over one datum of ``node``, refusing exactly what reading refuses."""
    t = node.type
    if t in ("null", "boolean") or t in _NUMBERS or t == "fixed":
        size = node.size if t == "fixed" else _NUMBERS[t][1] if t in _NUMBERS else int(t == "boolean")
        if size:
            g.emit("pos += {size}", size=size)
            g.emit("if pos > end: raise Bail")
    elif t in ("string", "bytes"):
        _, stop = _gen_sized(g)
        if t == "string":
            g.emit("data[pos + 4:{stop}].decode()", stop=stop)  # fastavro refuses malformed UTF-8
        g.emit("pos = {stop}", stop=stop)
    elif t == "enum":
        _gen_index(g, len(node.symbols))
    elif t == "union":
        i = _gen_index(g, len(node.branches))
        for k, branch in enumerate(node.branches):
            with g.block(("if" if k == 0 else "elif") + " {i} == {k}:", i=i, k=k):
                gen_skip(g, branch)
    elif t == "record":
        for field in node.fields:
            gen_skip(g, field.type)
    else:
        with g.block("while True:"):
            with g.block("for _ in range({n}):", n=_gen_blocks(g)):
                if t == "map":
                    gen_skip(g, _STRING)
                gen_skip(g, node.values if t == "map" else node.items)


def gen_write(g: Any, node: Any, value: Any, in_union: bool = False) -> None:
    """Code writing ``value`` as ``node`` in Flink's encoding, as fastavro and the translation
    write it; any value fastavro might write otherwise (another type it converts, a union
    branch it would choose differently, a record under a union naming another branch in its
    ``"-type"`` key) leaves the fast path."""
    t = node.type
    if t == "null":
        g.emit("if {v} is not None: raise Bail", v=value)
    elif t == "boolean":
        g.emit("if {v} is True: buf.append(1)", v=value)
        g.emit("elif {v} is False: buf.append(0)", v=value)
        g.emit("else: raise Bail")
    elif t in _NUMBERS:
        number, _ = _NUMBERS[t]
        python = float if t in ("float", "double") else int
        g.emit("if type({v}) is not {python}: raise Bail", v=value, python=g.const(python))
        if t == "float":
            g.emit("if {v} != {v}: raise Bail", v=value)  # NaN payloads: fastavro's own rounding
        g.emit("buf += {pack}({v})", v=value, pack=g.const(number.pack))
    elif t in ("string", "bytes"):
        encoded = g.var()
        g.emit("if type({v}) is not {python}: raise Bail", v=value, python=g.const(str if t == "string" else bytes))
        g.emit("{e} = {v}" + (".encode()" if t == "string" else ""), e=encoded, v=value)
        g.emit("buf += {pack}(len({e}))", e=encoded, pack=g.const(_BE_INT.pack))
        g.emit("buf += {e}", e=encoded)
    elif t == "fixed":
        g.emit("if type({v}) is not bytes or len({v}) != {size}: raise Bail", v=value, size=node.size)
        g.emit("buf += {v}", v=value)
    elif t == "enum":
        index = {symbol: _BE_INT.pack(i) for i, symbol in enumerate(node.symbols)}
        g.emit("if type({v}) is not str: raise Bail", v=value)
        g.emit("buf += {index}[{v}]", v=value, index=g.const(index))
    elif t == "union":  # null and one other branch (gen_support)
        null = [b.type for b in node.branches].index("null")
        other = node.branches[1 - null]
        with g.block("if {v} is None:", v=value):
            g.emit("buf += {tag}", tag=g.const(_BE_INT.pack(null)))
        with g.block("else:"):
            g.emit("buf += {tag}", tag=g.const(_BE_INT.pack(1 - null)))
            gen_write(g, other, value, True)
    elif t == "record":
        items = g.names(len(node.fields))
        g.emit("if type({v}) is not dict: raise Bail", v=value)
        if in_union:  # fastavro's "-type" key names the branch
            g.emit("if {key} in {v}: raise Bail", key=g.const("-type"), v=value)
        for field, item in zip(node.fields, items, strict=True):
            g.emit("{item} = {v}[{name}]", item=item, v=value, name=g.const(field.name))
            gen_write(g, field.type, item, in_union)
    else:
        key, item = g.var(), g.var()
        g.emit("if type({v}) is not {python}: raise Bail", v=value, python=g.const(list if t == "array" else dict))
        with g.block("if {v}:", v=value):
            g.emit("{put}(len({v}), buf)", v=value, put=g.const(_put))
            if t == "map":
                with g.block("for {key}, {item} in {v}.items():", key=key, item=item, v=value):
                    gen_write(g, _STRING, key)
                    gen_write(g, node.values, item, in_union)
            else:
                with g.block("for {item} in {v}:", item=item, v=value):
                    gen_write(g, node.items, item, in_union)
        g.emit("buf.append(0)")
