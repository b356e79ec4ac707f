"""The binary formats of Flink's Table runtime: ``BinaryRowData``, ``BinaryArrayData`` and
``BinaryMapData`` (``org.apache.flink.table.data.binary``), written and read for a
:class:`~reference.serializers.LogicalType`.

Python values per logical type (one representation each, what reading returns):

==============================  ===============================================================
BOOLEAN                         ``bool``
TINYINT / SMALLINT / INT / BIGINT  ``int`` in the type's signed range
FLOAT / DOUBLE                  ``float`` (a FLOAT value is rounded to binary32 when written)
CHAR / VARCHAR                  ``str`` (written as UTF-8; a lone surrogate is refused)
BINARY / VARBINARY              ``bytes``
DECIMAL(p, s)                   ``decimal.Decimal`` whose exponent is exactly ``-s``, at most
                                ``p`` digits
DATE                            ``int``: days since 1970-01-01 (Flink's internal int)
TIME(p)                         ``int``: milliseconds of the day (Flink's internal int)
TIMESTAMP(p), TIMESTAMP_LTZ(p)  :class:`TimestampData` (epoch milliseconds and the nanoseconds
                                within the millisecond; for p <= 3 the latter must be 0)
ARRAY<t>                        ``list`` (``None`` elements where ``t`` is nullable)
MAP<k, v>                       ``dict`` in the order of the map's entries
MULTISET<t>                     ``dict`` of element to count (``int``)
ROW<...>                        ``tuple`` of the field values, or ``reference.serializers.Row``
                                for a row kind other than INSERT (as ``RowSerializer``)
==============================  ===============================================================

Layout (little-endian, as Flink's ``MemorySegment`` on every platform it runs on):

- ``BinaryRowData`` of arity ``n``: a header of ``((n + 63 + 8) // 64) * 8`` bytes whose byte 0
  is the row kind and whose bit ``8 + i`` (bit ``(8 + i) % 8`` of byte ``(8 + i) // 8``) marks
  field ``i`` null; then ``n`` 8-byte slots; then the variable-length part. A slot holds a
  fixed-width value at its start (1, 2, 4 or 8 bytes), or a string or byte array of at most 7
  bytes inline (the bytes at the slot's start, its last byte ``0x80 | length``), or the offset
  (from the row's start, high 32 bits) and size (low 32 bits) of its data in the variable part,
  each piece of which is padded with zero bytes to a multiple of 8. DECIMAL of precision <= 18
  is its unscaled long in the slot; a larger one takes 16 bytes of the variable part, its
  unscaled value's two's-complement bytes (Java's ``BigInteger.toByteArray``) at their start.
  TIMESTAMP of precision <= 3 is its epoch millisecond in the slot; a larger one puts the
  millisecond in 8 bytes of the variable part and the nanoseconds of the millisecond in the
  slot's size half. A null field's slot is zero. A NOT NULL field holds no null, but for a
  timestamp (a SQL job's state row holds null for its ``PROCTIME()`` column, a NOT NULL
  TIMESTAMP_LTZ of kind PROCTIME; the kind is not part of the type's identity in Flink, so a
  job restoring the state may declare the column a plain NOT NULL timestamp and reads the same
  rows).
- ``BinaryArrayData`` of ``n`` elements: an int ``n``, null bits (bit ``i`` of byte ``i // 8``
  after the int) padded to a multiple of 4 bytes, ``n`` elements of 1 (BOOLEAN, TINYINT), 2
  (SMALLINT), 4 (INT, FLOAT, DATE, TIME) or 8 bytes (every other type, as in a row slot), zero
  padding to a multiple of 8, then the variable part.
- ``BinaryMapData``: an int, the byte size of the key array, then the key array and the value
  array (``BinaryArrayData`` each).

Writing produces what a fresh Flink writer produces (``RowDataSerializer.toBinaryRow`` on a new
serializer): every byte the format leaves unused (the rest of a slot after a narrower value,
padding) is zero, and NaN is written as Java's canonical NaN (Flink's writers normalise it). A
Flink writer reused across records may leave bytes of an earlier record in the unused bytes of a
slot; reading ignores them, so such records read the same, and are written back with zeros.

Reading is bounded by the bytes given: every offset and size is checked against its section
before anything is read for it, and the nesting is the type's (never the data's).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .._errors import SerializationError
from ..sqltypes import LogicalType
from ._row import Row, RowKind

__all__ = ["TimestampData", "row_bytes", "read_row", "element_size", "fixed_part_size"]

_LONG = struct.Struct("<q")
_ULONG = struct.Struct("<Q")
_INT = struct.Struct("<i")
_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")
_FLOAT_NAN = struct.pack("<I", 0x7FC00000)
_DOUBLE_NAN = struct.pack("<Q", 0x7FF8000000000000)
_INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64, "DATE": 32, "TIME_WITHOUT_TIME_ZONE": 32}
_WIDTH = {"BOOLEAN": 1, "TINYINT": 1, "SMALLINT": 2, "INTEGER": 4, "FLOAT": 4, "DATE": 4,
          "TIME_WITHOUT_TIME_ZONE": 4}
_STRINGS = ("CHAR", "VARCHAR")
_BINARIES = ("BINARY", "VARBINARY")
_TIMESTAMPS = ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE")
_MAX_COMPACT_DECIMAL = 18
_MAX_COMPACT_TIMESTAMP = 3
_INLINE = 7


@dataclass(frozen=True, order=True)
class TimestampData:
    """Flink's ``TimestampData``: ``millisecond`` since the epoch and ``nano_of_millisecond``
    (0..999999). TIMESTAMP and TIMESTAMP_LTZ values of a ``RowDataSerializer``."""

    __module__ = "reference.serializers"  # stable identity in savepoints

    millisecond: int
    nano_of_millisecond: int = 0

    def __post_init__(self) -> None:
        if type(self.millisecond) is not int or not -(1 << 63) <= self.millisecond < (1 << 63):
            raise ValueError(f"TimestampData: millisecond must be a 64-bit int, got {self.millisecond!r}")
        if type(self.nano_of_millisecond) is not int or not 0 <= self.nano_of_millisecond <= 999_999:
            raise ValueError(
                f"TimestampData: nano_of_millisecond must be 0..999999, got {self.nano_of_millisecond!r}")


def element_size(t: LogicalType) -> int:
    """Bytes of one element of type ``t`` in a ``BinaryArrayData`` (Flink's
    ``BinaryArrayData.calculateFixLengthPartSize``)."""
    return _WIDTH.get(t.root, 8)


def fixed_part_size(arity: int) -> int:
    """Bytes of a ``BinaryRowData``'s header and slots."""
    return _null_bits_size(arity) + 8 * arity


def _null_bits_size(arity: int) -> int:
    return ((arity + 63 + 8) // 64) * 8


def _array_header_size(count: int) -> int:
    return 4 + ((count + 31) // 32) * 4


def _round8(n: int) -> int:
    return (n + 7) & ~7


def _refuse(where: str, t: LogicalType, value: Any, should: str) -> SerializationError:
    return SerializationError(
        f"RowDataSerializer at {where}: got {type(value).__name__} {value!r} for {t}; it should be {should}")


# -- writing -----------------------------------------------------------------------------------
_TIMESTAMPS = ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE")


def _may_be_null(t: LogicalType) -> bool:
    """Whether a field of type ``t`` may hold null: a nullable type, or a timestamp. A SQL job's
    ``PROCTIME()`` column is a NOT NULL time attribute, and its state rows hold null there (the
    planner materializes processing time only when a query reads it); Flink's types leave the
    time attribute kind out of their equality, so the restoring job's type of that column may be
    a plain NOT NULL timestamp, which must read (and write back) the same rows."""
    return t.nullable or t.root in _TIMESTAMPS


def row_bytes(t: LogicalType, value: Any, where: str = "row") -> bytes:
    """The ``BinaryRowData`` bytes of ``value`` (a tuple or ``Row``) of the ROW type ``t``."""
    fields = t.fields
    if (type(value) is not tuple and type(value) is not Row) or len(value) != len(fields):
        raise _refuse(where, t, value, f"a tuple (or reference.serializers.Row) of {len(fields)} values")
    kind = value.kind if type(value) is Row else RowKind.INSERT
    bits = _null_bits_size(len(fields))
    buf = bytearray(bits + 8 * len(fields))
    buf[0] = int(kind)
    for i, ((name, ftype, _), item) in enumerate(zip(fields, value, strict=True)):
        if item is None:
            if not _may_be_null(ftype):
                raise _refuse(f"{where}.{name}", ftype, item, "a value: the field is NOT NULL")
            buf[(i + 8) >> 3] |= 1 << ((i + 8) & 7)
            continue
        _put(buf, bits + 8 * i, ftype, item, f"{where}.{name}")
    return bytes(buf)


def _array_bytes(t: LogicalType, value: Any, where: str) -> bytes:
    if type(value) is not list:
        raise _refuse(where, t, value, "a list")
    element = t.children[0]
    size = element_size(element)
    header = _array_header_size(len(value))
    buf = bytearray(_round8(header + size * len(value)))
    _INT.pack_into(buf, 0, len(value))
    for i, item in enumerate(value):
        if item is None:
            if not element.nullable:
                raise _refuse(f"{where}[{i}]", element, item, "a value: the elements are NOT NULL")
            buf[4 + (i >> 3)] |= 1 << (i & 7)
            continue
        _put(buf, header + size * i, element, item, f"{where}[{i}]")
    return bytes(buf)


def _map_bytes(t: LogicalType, value: Any, where: str) -> bytes:
    if type(value) is not dict:
        raise _refuse(where, t, value, "a dict")
    if t.root == "MULTISET":
        key_type, value_type = t.children[0], LogicalType("INTEGER", False)
    else:
        key_type, value_type = t.children
    keys = _array_bytes(LogicalType("ARRAY", children=(key_type,)), list(value), f"{where}.keys")
    values = _array_bytes(LogicalType("ARRAY", children=(value_type,)), list(value.values()), f"{where}.values")
    return _INT.pack(len(keys)) + keys + values


def _put_var(buf: bytearray, at: int, data: bytes) -> None:
    offset = len(buf)
    buf += data
    buf += bytes(_round8(len(data)) - len(data))
    _ULONG.pack_into(buf, at, (offset << 32) | len(data))


def _put_bytes(buf: bytearray, at: int, data: bytes) -> None:
    if len(data) <= _INLINE:
        buf[at:at + len(data)] = data
        buf[at + 7] = 0x80 | len(data)
    else:
        _put_var(buf, at, data)


def _unscaled(t: LogicalType, value: Any, where: str) -> int:
    precision, scale = t.precision, t.scale
    assert precision is not None and scale is not None
    if type(value) is not Decimal or not value.is_finite():
        raise _refuse(where, t, value, f"a finite decimal.Decimal of scale {scale}")
    sign, digits, exponent = value.as_tuple()
    if exponent != -scale:
        raise _refuse(where, t, value, f"a Decimal of scale {scale} (exponent {-scale}); "
                      f"quantize it: value.quantize(Decimal(1).scaleb({-scale}))")
    unscaled = int("".join(map(str, digits)))
    if sign and not unscaled:
        raise _refuse(where, t, value, "a Decimal without a negative zero (Flink's decimals have none: "
                      "write abs(value))")
    if len(str(unscaled)) > precision:
        raise _refuse(where, t, value, f"a Decimal of at most {precision} digits")
    return -unscaled if sign else unscaled


def _java_big_integer_bytes(n: int) -> bytes:
    """Java's ``BigInteger.toByteArray``: the shortest two's-complement big-endian form."""
    bits = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def _put(buf: bytearray, at: int, t: LogicalType, value: Any, where: str) -> None:
    """Write ``value`` of type ``t`` into the slot (or array element) at ``at`` of ``buf``,
    appending its variable-length data to ``buf``."""
    root = t.root
    if root in _INT_BITS:
        bits = _INT_BITS[root]
        if type(value) is not int or not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise _refuse(where, t, value, f"an int of {bits} bits")
        buf[at:at + bits // 8] = value.to_bytes(bits // 8, "little", signed=True)
    elif root == "BOOLEAN":
        if type(value) is not bool:
            raise _refuse(where, t, value, "a bool")
        buf[at] = 1 if value else 0
    elif root == "FLOAT" or root == "DOUBLE":
        if type(value) is not float:
            raise _refuse(where, t, value, "a float")
        if value != value:
            data = _FLOAT_NAN if root == "FLOAT" else _DOUBLE_NAN
        else:
            try:
                data = (_FLOAT if root == "FLOAT" else _DOUBLE).pack(value)
            except OverflowError:
                raise _refuse(where, t, value, "a float within binary32's range") from None
        buf[at:at + len(data)] = data
    elif root in _STRINGS:
        if type(value) is not str:
            raise _refuse(where, t, value, "a str")
        try:
            data = value.encode("utf-8")
        except UnicodeEncodeError:
            raise _refuse(where, t, value, "a str without lone surrogates (it is written as UTF-8)") from None
        _put_bytes(buf, at, data)
    elif root in _BINARIES:
        if type(value) is not bytes:
            raise _refuse(where, t, value, "bytes")
        _put_bytes(buf, at, value)
    elif root == "DECIMAL":
        unscaled = _unscaled(t, value, where)
        assert t.precision is not None
        if t.precision <= _MAX_COMPACT_DECIMAL:
            _LONG.pack_into(buf, at, unscaled)
        else:
            data = _java_big_integer_bytes(unscaled)
            offset = len(buf)
            buf += data + bytes(16 - len(data))
            _ULONG.pack_into(buf, at, (offset << 32) | len(data))
    elif root in _TIMESTAMPS:
        if type(value) is not TimestampData:
            raise _refuse(where, t, value, "a reference.serializers.TimestampData")
        assert t.precision is not None
        if t.precision <= _MAX_COMPACT_TIMESTAMP:
            if value.nano_of_millisecond:
                raise _refuse(where, t, value, f"a TimestampData without nanoseconds (precision {t.precision} "
                              "keeps milliseconds only)")
            _LONG.pack_into(buf, at, value.millisecond)
        else:
            offset = len(buf)
            buf += _LONG.pack(value.millisecond)
            _ULONG.pack_into(buf, at, (offset << 32) | value.nano_of_millisecond)
    elif root == "ROW":
        _put_var(buf, at, row_bytes(t, value, where))
    elif root == "ARRAY":
        _put_var(buf, at, _array_bytes(t, value, where))
    else:  # MAP, MULTISET
        _put_var(buf, at, _map_bytes(t, value, where))


# -- reading -----------------------------------------------------------------------------------
def _corrupt(where: str, what: str) -> SerializationError:
    return SerializationError(f"RowDataSerializer at {where}: {what}; the data is corrupt or of another type")


def read_row(t: LogicalType, data: bytes, base: int, size: int, where: str = "row") -> Any:
    """The value of the ``BinaryRowData`` of ROW type ``t`` at ``data[base:base + size]``."""
    fields = t.fields
    bits = _null_bits_size(len(fields))
    if size < bits + 8 * len(fields):
        raise _corrupt(where, f"{size} bytes for a row of {len(fields)} fields, which needs at least "
                       f"{bits + 8 * len(fields)}")
    kind_byte = data[base]
    if kind_byte > 3:
        raise _corrupt(where, f"row kind byte {kind_byte}, should be 0..3")
    values: list[Any] = []
    for i, (name, ftype, _) in enumerate(fields):
        if data[base + ((i + 8) >> 3)] & (1 << ((i + 8) & 7)):
            if not _may_be_null(ftype):
                raise _corrupt(f"{where}.{name}", "a NOT NULL field is marked null")
            values.append(None)
        else:
            values.append(_get(data, base, size, base + bits + 8 * i, ftype, f"{where}.{name}"))
    kind = RowKind(kind_byte)
    return tuple(values) if kind is RowKind.INSERT else Row(values, kind)


def _read_array(t: LogicalType, data: bytes, base: int, size: int, where: str) -> list[Any]:
    element = t.children[0]
    if size < 4:
        raise _corrupt(where, f"{size} bytes for an array, which needs at least 4")
    count = _INT.unpack_from(data, base)[0]
    width = element_size(element)
    if count < 0 or _array_header_size(count) + width * count > size:
        raise _corrupt(where, f"an array of {count} elements in {size} bytes")
    header = _array_header_size(count)
    values: list[Any] = []
    for i in range(count):
        if data[base + 4 + (i >> 3)] & (1 << (i & 7)):
            if not element.nullable:
                raise _corrupt(f"{where}[{i}]", "a NOT NULL element is marked null")
            values.append(None)
        else:
            values.append(_get(data, base, size, base + header + width * i, element, f"{where}[{i}]"))
    return values


def _read_map(t: LogicalType, data: bytes, base: int, size: int, where: str) -> dict[Any, Any]:
    if size < 4:
        raise _corrupt(where, f"{size} bytes for a map, which needs at least 4")
    key_size = _INT.unpack_from(data, base)[0]
    if not 0 <= key_size <= size - 4:
        raise _corrupt(where, f"a key array of {key_size} bytes in a map of {size}")
    if t.root == "MULTISET":
        key_type, value_type = t.children[0], LogicalType("INTEGER", False)
    else:
        key_type, value_type = t.children
    keys = _read_array(LogicalType("ARRAY", children=(key_type,)), data, base + 4, key_size, f"{where}.keys")
    values = _read_array(LogicalType("ARRAY", children=(value_type,)), data, base + 4 + key_size,
                         size - 4 - key_size, f"{where}.values")
    if len(keys) != len(values):
        raise _corrupt(where, f"{len(keys)} keys and {len(values)} values")
    result: dict[Any, Any] = {}
    for i, (key, item) in enumerate(zip(keys, values, strict=True)):
        try:
            if key in result:
                raise _corrupt(f"{where}.keys[{i}]", f"key {key!r} appears twice")
        except TypeError:
            raise _corrupt(f"{where}.keys[{i}]", f"key {key!r} is unhashable (a {key_type} key) and "
                           "cannot be a dict key") from None
        result[key] = item
    return result


def _var(data: bytes, size: int, at: int, where: str) -> tuple[int, int]:
    """(offset, length) of the variable-length data a slot points at, checked against the
    section's ``size``."""
    slot = _ULONG.unpack_from(data, at)[0]
    offset, length = slot >> 32, slot & 0xFFFFFFFF
    if offset + length > size:
        raise _corrupt(where, f"data at offset {offset} of {length} bytes lies outside the {size} bytes")
    return offset, length


def _get_bytes(data: bytes, base: int, size: int, at: int, where: str) -> bytes:
    mark = data[at + 7]
    if mark & 0x80:
        length = mark & 0x7F
        if length > _INLINE:
            raise _corrupt(where, f"an inline string of {length} bytes (at most {_INLINE} fit in a slot)")
        return bytes(data[at:at + length])
    offset, length = _var(data, size, at, where)
    return bytes(data[base + offset:base + offset + length])


def _get(data: bytes, base: int, size: int, at: int, t: LogicalType, where: str) -> Any:
    root = t.root
    if root in _INT_BITS:
        width = _INT_BITS[root] // 8
        return int.from_bytes(data[at:at + width], "little", signed=True)
    if root == "BOOLEAN":
        return data[at] != 0
    if root == "FLOAT":
        return float(_FLOAT.unpack_from(data, at)[0])
    if root == "DOUBLE":
        return float(_DOUBLE.unpack_from(data, at)[0])
    if root in _STRINGS:
        raw = _get_bytes(data, base, size, at, where)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise _corrupt(where, f"string bytes {raw[:32]!r} are not UTF-8") from None
    if root in _BINARIES:
        return _get_bytes(data, base, size, at, where)
    if root == "DECIMAL":
        assert t.precision is not None and t.scale is not None
        if t.precision <= _MAX_COMPACT_DECIMAL:
            unscaled = _LONG.unpack_from(data, at)[0]
        else:
            offset, length = _var(data, size, at, where)
            if not 1 <= length <= 16:
                raise _corrupt(where, f"a decimal of {length} bytes (1..16 are written)")
            unscaled = int.from_bytes(data[base + offset:base + offset + length], "big", signed=True)
        digits = str(abs(unscaled))
        if len(digits) > t.precision:
            raise _corrupt(where, f"a decimal of {len(digits)} digits for {t}")
        return Decimal((1 if unscaled < 0 else 0, tuple(map(int, digits)), -t.scale))
    if root in _TIMESTAMPS:
        assert t.precision is not None
        if t.precision <= _MAX_COMPACT_TIMESTAMP:
            return TimestampData(_LONG.unpack_from(data, at)[0])
        offset, nanos = _ULONG.unpack_from(data, at)[0] >> 32, _ULONG.unpack_from(data, at)[0] & 0xFFFFFFFF
        if offset + 8 > size or nanos > 999_999:
            raise _corrupt(where, f"a timestamp at offset {offset} with {nanos} nanoseconds of the millisecond")
        return TimestampData(_LONG.unpack_from(data, base + offset)[0], nanos)
    offset, length = _var(data, size, at, where)
    if root == "ROW":
        return read_row(t, data, base + offset, length, where)
    if root == "ARRAY":
        return _read_array(t, data, base + offset, length, where)
    return _read_map(t, data, base + offset, length, where)
