"""Fixed-width primitives, String (Flink's StringValue varint format) and byte arrays."""

from __future__ import annotations

import struct
import sys
from array import array
from typing import Any, ClassVar

from .._errors import EndOfDataError, SerializationError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import SimpleTypeSerializerSnapshot

__all__ = [
    "BooleanSerializer", "ByteSerializer", "ShortSerializer", "IntSerializer", "LongSerializer",
    "FloatSerializer", "DoubleSerializer", "StringSerializer", "BytesSerializer",
    "BooleanSerializerSnapshot", "ByteSerializerSnapshot", "ShortSerializerSnapshot",
    "IntSerializerSnapshot", "LongSerializerSnapshot", "FloatSerializerSnapshot",
    "DoubleSerializerSnapshot", "StringSerializerSnapshot", "BytesSerializerSnapshot",
]


class _Stateless(TypeSerializer[Any]):
    """Base of configuration-free serializers: one shared instance is as good as any."""

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__qualname__)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _FixedWidth(_Stateless):
    """A number of one fixed width, written with one ``struct`` format."""

    _struct: ClassVar[struct.Struct]
    _python_type: ClassVar[type] = int
    _zero: ClassVar[Any] = 0

    def serialize(self, value: Any, target: DataOutputView) -> None:
        if type(value) is not self._python_type:
            raise SerializationError(
                f"{type(self).__name__} got {type(value).__name__} {value!r}; it writes "
                f"{self._python_type.__name__} values only"
            )
        try:
            target.write(self._struct.pack(value))
        except (struct.error, OverflowError):
            raise SerializationError(
                f"{type(self).__name__}: {value!r} does not fit {self._struct.size} bytes"
            ) from None

    def deserialize(self, source: DataInputView) -> Any:
        return self._struct.unpack(source.read_fully(self._struct.size))[0]

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(self._struct.size))

    # -- generated-code fragments (reference.serializers._codegen) ---------------------------
    def _gen_read(self, g: Any, out: Any) -> None:
        g.emit("{out} = {unpack}(data, pos)[0]", out=out, unpack=g.const(self._struct.unpack_from))
        g.emit("pos += {n}", n=self._struct.size)

    def _gen_write(self, g: Any, value: Any) -> None:
        g.emit("if type({v}) is not {t}: raise Bail", v=value, t=g.const(self._python_type))
        g.emit("buf += {pack}({v})", v=value, pack=g.const(self._struct.pack))

    def _gen_skip(self, g: Any) -> None:
        g.emit("pos += {n}", n=self._struct.size)
        g.emit("if pos > end: raise Bail")

    def from_bytes(self, data: bytes) -> Any:
        # A whole record is one struct: unpack it without a view (savepoint reads and Spark
        # verification call this per entry). Subclasses that read differently take the
        # general path, and so does every record of the wrong size (for its precise error).
        if len(data) == self._struct.size and type(self).deserialize is _FixedWidth.deserialize:
            return self._struct.unpack(data)[0]
        return super().from_bytes(data)

    def copy(self, value: Any) -> Any:
        return value

    def create_instance(self) -> Any:
        return self._zero

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return self._struct.size


class BooleanSerializer(_FixedWidth):
    """1 byte: 01 true, 00 false; any non-zero byte reads as true (as Flink)."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    _struct = struct.Struct(">?")
    _python_type = bool
    _zero = False

    def serialize(self, value: Any, target: DataOutputView) -> None:
        if type(value) is not bool:
            raise SerializationError(f"BooleanSerializer got {type(value).__name__} {value!r}")
        target.write_boolean(value)

    def deserialize(self, source: DataInputView) -> Any:
        return source.read_boolean()

    def _gen_read(self, g: Any, out: Any) -> None:
        g.emit("{out} = data[pos] != 0", out=out)
        g.emit("pos += 1")

    def _gen_write(self, g: Any, value: Any) -> None:
        g.emit("if {v} is True: buf.append(1)", v=value)
        g.emit("elif {v} is False: buf.append(0)", v=value)
        g.emit("else: raise Bail")

    _gen_skip = _FixedWidth._gen_skip

    def snapshot_configuration(self) -> BooleanSerializerSnapshot:
        return BooleanSerializerSnapshot()


class ByteSerializer(_FixedWidth):
    __module__ = "reference.serializers"  # stable identity in savepoints

    _struct = struct.Struct(">b")

    def snapshot_configuration(self) -> ByteSerializerSnapshot:
        return ByteSerializerSnapshot()


class ShortSerializer(_FixedWidth):
    __module__ = "reference.serializers"  # stable identity in savepoints

    _struct = struct.Struct(">h")

    def snapshot_configuration(self) -> ShortSerializerSnapshot:
        return ShortSerializerSnapshot()


class IntSerializer(_FixedWidth):
    __module__ = "reference.serializers"  # stable identity in savepoints

    _struct = struct.Struct(">i")

    def snapshot_configuration(self) -> IntSerializerSnapshot:
        return IntSerializerSnapshot()


class LongSerializer(_FixedWidth):
    __module__ = "reference.serializers"  # stable identity in savepoints

    _struct = struct.Struct(">q")

    def snapshot_configuration(self) -> LongSerializerSnapshot:
        return LongSerializerSnapshot()


class FloatSerializer(_FixedWidth):
    """IEEE 754 binary32. Values are Python floats; a value that is not exactly a binary32 is
    rounded on write (as Java's ``(float)`` cast would). NaN payloads that a Python float can
    carry survive (binary32 signalling NaNs cannot be held by a Python float at all)."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    _struct = struct.Struct(">f")
    _python_type = float
    _zero = 0.0

    def snapshot_configuration(self) -> FloatSerializerSnapshot:
        return FloatSerializerSnapshot()


class DoubleSerializer(_FixedWidth):
    """IEEE 754 binary64 with raw bits: every NaN payload and -0.0 survive."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    _struct = struct.Struct(">d")
    _python_type = float
    _zero = 0.0

    def snapshot_configuration(self) -> DoubleSerializerSnapshot:
        return DoubleSerializerSnapshot()


_INT = struct.Struct(">i")
_LITTLE = sys.byteorder == "little"
_NATIVE_UTF16 = "utf-16-le" if _LITTLE else "utf-16-be"


# -- String ---------------------------------------------------------------------------------------
def _write_varint(out: bytearray, value: int) -> None:
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(source: DataInputView, what: str) -> int:
    value = source.read_unsigned_byte()
    if value < 0x80:
        return value
    value &= 0x7F
    shift = 7
    while True:
        byte = source.read_unsigned_byte()
        if shift > 28:
            raise SerializationError(f"{what}: varint longer than 5 bytes; the data is corrupt")
        if byte < 0x80:
            return value | (byte << shift)
        value |= (byte & 0x7F) << shift
        shift += 7


_UNIT_VARINTS: list[bytes] = []


def _unit_varints() -> list[bytes]:
    """The varint of every UTF-16 code unit, built on first use (65,536 short bytes, ~2.5 MB):
    encoding a non-ASCII string is then one C-level join instead of a Python loop."""
    if not _UNIT_VARINTS:
        table = []
        for unit in range(0x10000):
            buf = bytearray()
            _write_varint(buf, unit)
            table.append(bytes(buf))
        _UNIT_VARINTS[:] = table
    return _UNIT_VARINTS


def _decode_units(window: bytes, length: int) -> tuple[array[int], int]:
    """Up to ``length`` UTF-16 code units of 1-3 varint bytes each from ``window`` and the bytes
    they took; it stops before a unit that takes more bytes, exceeds 0xFFFF or runs past
    ``window`` (the caller reads on from there byte at a time, for the precise outcome). Indexing
    one local bytes object instead of a method call per byte: most of a non-ASCII string's cost."""
    units = array("H")
    append = units.append
    end = len(window)
    i = 0
    for _ in range(length):
        if i >= end:
            break
        unit = window[i]
        if unit >= 0x80:
            if i + 1 >= end:
                break
            byte = window[i + 1]
            if byte < 0x80:
                unit = (unit & 0x7F) | (byte << 7)
                i += 2
            else:
                if i + 2 >= end:
                    break
                third = window[i + 2]
                unit = (unit & 0x7F) | ((byte & 0x7F) << 7) | (third << 14)
                if third >= 0x80 or unit > 0xFFFF:
                    break
                i += 3
        else:
            i += 1
        append(unit)
    return units, i


#: Long non-ASCII strings decoded lately: (unit count, the bytes they were read from) -> (the
#: string, the bytes its units took). State is read again and again (each restore, each check
#: of a value), and decoding a unit at a time is a string's whole cost; the answer is a function
#: of the key alone. Bounded: strings of ``_DECODED_MIN`` units or more with windows up to
#: ``_DECODED_MAX_BYTES``, at most ``_DECODED_ENTRIES`` of them (then it starts again).
_DECODED: dict[tuple[int, bytes], tuple[str, int]] = {}
_DECODED_MIN, _DECODED_MAX_BYTES, _DECODED_ENTRIES = 128, 1 << 18, 64


def _decode_text(window: bytes, length: int) -> tuple[str | array[int], int]:
    """``_decode_units`` as a string when all ``length`` units decoded (remembered for long
    strings, ``_DECODED``), else the units that did; with the bytes they took."""
    remembered = length >= _DECODED_MIN and len(window) <= _DECODED_MAX_BYTES
    if remembered:
        found = _DECODED.get((length, window))
        if found is not None:
            return found
    units, consumed = _decode_units(window, length)
    if len(units) < length:
        return units, consumed
    result = units.tobytes().decode(_NATIVE_UTF16, "surrogatepass"), consumed
    if remembered:
        if len(_DECODED) >= _DECODED_ENTRIES:
            _DECODED.clear()
        _DECODED[(length, window)] = result
    return result


class StringSerializer(_Stateless):
    """Flink's ``StringValue.writeString``: varint (UTF-16 length + 1, 0 = None), then each
    UTF-16 code unit as a varint. ``None`` is a valid value."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    def serialize(self, value: str | None, target: DataOutputView) -> None:
        out = bytearray()
        if value is None:
            target.write(b"\x00")
            return
        if type(value) is not str:
            raise SerializationError(f"StringSerializer got {type(value).__name__} {value!r}")
        if value.isascii():
            _write_varint(out, len(value) + 1)
            out += value.encode("ascii")
        else:
            units = array("H", value.encode(_NATIVE_UTF16, "surrogatepass"))
            _write_varint(out, len(units) + 1)
            out += b"".join(map(_unit_varints().__getitem__, units))
        target.write(out)

    def deserialize(self, source: DataInputView) -> str | None:
        length = _read_varint(source, "StringSerializer length")
        if length == 0:
            return None
        length -= 1
        if length > source.available():
            raise EndOfDataError(
                f"StringSerializer: string of {length} characters but only "
                f"{source.available()} bytes remain; the data is truncated or corrupt"
            )
        head = source.peek(length)
        if head.isascii():
            source.skip_bytes(length)
            return head.decode("ascii")
        text, consumed = _decode_text(source.peek(3 * length), length)
        source.skip_bytes(consumed)
        if isinstance(text, str):
            return text
        # A unit over 3 bytes or the data ending: read on from there byte at a time, for the
        # precise outcome (a corrupt or truncated record's error, or a long varint's unit).
        return self._deserialize_units(source, length - len(text), text)

    @staticmethod
    def _deserialize_units(source: DataInputView, length: int, units: array[int] | None = None) -> str:
        """``length`` more units read byte at a time, after ``units`` (those read already)."""
        units = array("H") if units is None else units
        for _ in range(length):
            unit = source.read_unsigned_byte()
            if unit >= 0x80:
                source.unread(1)
                unit = _read_varint(source, "StringSerializer character")
                if unit > 0xFFFF:
                    raise SerializationError(
                        f"StringSerializer: character code {unit:#x} exceeds 0xFFFF; "
                        "the data is corrupt"
                    )
            units.append(unit)
        return units.tobytes().decode(_NATIVE_UTF16, "surrogatepass")

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        start = source.position
        self.deserialize(source)
        target.write(source.slice_from(start))

    def _null_ahead(self, source: DataInputView) -> bool:
        """Whether the next record of ``source`` is the null string (its length reads as 0),
        reading its length only; ``source`` stays where it was."""
        mark = source.mark()
        try:
            return _read_varint(source, "StringSerializer length") == 0
        finally:
            source.reset(mark)

    # Fragments: one-byte lengths of ASCII strings inline, any other string is read by a call.
    def _gen_ascii(self, g: Any, slice_into: Any) -> Any:
        """Open the branch of a short ASCII string at ``pos`` (its length byte is ``n``)."""
        n = g.var()
        g.emit("{n} = data[pos]", n=n)
        g.emit("{s} = data[pos + 1:pos + {n}]", s=slice_into, n=n)
        return n

    def _gen_read(self, g: Any, out: Any) -> None:
        n = self._gen_ascii(g, out)
        with g.block("if 0 < {n} < 128 and pos + {n} <= end and {out}.isascii():", n=n, out=out):
            g.emit("{out} = {out}.decode()", out=out)
            g.emit("pos += {n}", n=n)
        with g.block("elif {n} == 0:", n=n):
            g.emit("{out} = None", out=out)
            g.emit("pos += 1")
        with g.block("else:"):
            g.call_read(self.deserialize, out)

    def _gen_write(self, g: Any, value: Any) -> None:
        with g.block("if type({v}) is str and len({v}) < 127 and {v}.isascii():", v=value):
            g.emit("buf.append(len({v}) + 1)", v=value)
            g.emit("buf += {v}.encode()", v=value)
        with g.block("else:"):
            g.emit("{f}({v}, target)", f=g.const(self.serialize), v=value)

    def _gen_skip(self, g: Any) -> None:
        head = g.var()
        n = self._gen_ascii(g, head)
        with g.block("if 0 < {n} < 128 and pos + {n} <= end and {s}.isascii():", n=n, s=head):
            g.emit("pos += {n}", n=n)
        with g.block("elif {n} == 0:", n=n):
            g.emit("pos += 1")
        with g.block("else:"):
            g.call_skip(self.deserialize)

    def copy(self, value: str | None) -> str | None:
        return value

    def create_instance(self) -> str:
        return ""

    @property
    def is_immutable_type(self) -> bool:
        return True

    def snapshot_configuration(self) -> StringSerializerSnapshot:
        return StringSerializerSnapshot()


class BytesSerializer(_Stateless):
    """``byte[]``: int length, then the bytes. ``None`` is refused, as in Flink."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    def serialize(self, value: bytes, target: DataOutputView) -> None:
        if type(value) is not bytes:
            raise SerializationError(
                f"BytesSerializer got {type(value).__name__}; it writes bytes (None is not allowed)"
            )
        target.write_int(len(value))
        target.write(value)

    def deserialize(self, source: DataInputView) -> bytes:
        return source.read_fully(source.read_int())

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        size = source.read_int()
        target.write_int(size)
        target.write(source.read_fully(size))

    def _gen_size(self, g: Any) -> Any:
        n = g.var()
        g.emit("{n} = {unpack}(data, pos)[0]", n=n, unpack=g.const(_INT.unpack_from))
        g.emit("pos += 4")
        g.emit("if {n} < 0 or pos + {n} > end: raise Bail", n=n)
        return n

    def _gen_read(self, g: Any, out: Any) -> None:
        n = self._gen_size(g)
        g.emit("{out} = data[pos:pos + {n}]", out=out, n=n)
        g.emit("pos += {n}", n=n)

    def _gen_write(self, g: Any, value: Any) -> None:
        g.emit("if type({v}) is not bytes: raise Bail", v=value)
        g.emit("buf += {pack}(len({v}))", v=value, pack=g.const(_INT.pack))
        g.emit("buf += {v}", v=value)

    def _gen_skip(self, g: Any) -> None:
        g.emit("pos += {n}", n=self._gen_size(g))

    def copy(self, value: bytes) -> bytes:
        return value

    def create_instance(self) -> bytes:
        return b""

    @property
    def is_immutable_type(self) -> bool:
        return True

    def snapshot_configuration(self) -> BytesSerializerSnapshot:
        return BytesSerializerSnapshot()


_ARRAY = "org.apache.flink.api.common.typeutils.base.array."


# -- snapshots: one top-level class each, as Flink has (java_name: the class Flink writes) ----------------------------------------------
class BooleanSerializerSnapshot(
    SimpleTypeSerializerSnapshot[bool],
    java_name="org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(BooleanSerializer)


class ByteSerializerSnapshot(
    SimpleTypeSerializerSnapshot[int],
    java_name="org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(ByteSerializer)


class ShortSerializerSnapshot(
    SimpleTypeSerializerSnapshot[int],
    java_name="org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(ShortSerializer)


class IntSerializerSnapshot(
    SimpleTypeSerializerSnapshot[int],
    java_name="org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(IntSerializer)


class LongSerializerSnapshot(
    SimpleTypeSerializerSnapshot[int],
    java_name="org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(LongSerializer)


class FloatSerializerSnapshot(
    SimpleTypeSerializerSnapshot[float],
    java_name="org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(FloatSerializer)


class DoubleSerializerSnapshot(
    SimpleTypeSerializerSnapshot[float],
    java_name="org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(DoubleSerializer)


class StringSerializerSnapshot(
    SimpleTypeSerializerSnapshot["str | None"],
    java_name="org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(StringSerializer)


class BytesSerializerSnapshot(
    SimpleTypeSerializerSnapshot[bytes],
    java_name=f"{_ARRAY}BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self) -> None:
        super().__init__(BytesSerializer)
