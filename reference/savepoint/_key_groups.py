"""Key groups: the unit in which keyed state is partitioned, as Flink defines it.

A key belongs to one of ``max_parallelism`` key groups (1..32768); a job running at
``parallelism`` subtasks gives each subtask one contiguous range of key groups
(``key_group_range``), the one Flink's ``KeyGroupRangeAssignment`` computes, so a savepoint can be
restored at any parallelism up to its max parallelism.

This project's savepoints assign a key to its group by the unsigned MurmurHash3_x86_32 (seed 0)
of the key's serialized bytes (``key_group_for``): stable in every process and engine.

Flink assigns a key by its Java ``hashCode`` (``KeyGroupRangeAssignment.assignToKeyGroup``):
``MathUtils.murmurHash(key.hashCode()) % maxParallelism``, where ``murmurHash`` is one
MurmurHash3_x86_32 round over the 4-byte int (seed 0, length 4) made non-negative (a negative
result negated, ``Integer.MIN_VALUE`` giving 0). ``flink_key_group(key, key_serializer,
max_parallelism)`` computes it for a key the reference can give Java's ``hashCode`` of
(``java_hash_code``), by the key serializer's Java type:

- ``StringSerializer`` (``java.lang.String``): ``h = 31*h + unit`` over the UTF-16 code units
  (a character outside the BMP is its two surrogates), in 32-bit two's complement;
- ``IntSerializer``, ``ShortSerializer``, ``ByteSerializer``: the value (``Integer``,
  ``Short``, ``Byte``); ``LongSerializer``: ``(int)(v ^ (v >>> 32))``; ``BooleanSerializer``:
  1231 for true, 1237 for false; ``DoubleSerializer``: that of the long
  ``Double.doubleToLongBits(v)`` (every NaN is the canonical 0x7ff8000000000000, -0.0 is not
  0.0); ``FloatSerializer``: ``Float.floatToIntBits(v)`` (canonical NaN 0x7fc00000);
- ``TupleSerializer`` (Flink's ``Tuple1``..``Tuple25``): ``result = 31*result + hash(f_i)``
  from ``hash(f0)``, a null field hashing to 0 (``Tuple0``: 0);
- ``NullableSerializer``: its inner serializer's (a key is never null).
- ``java.lang.Character`` has no reference serializer; ``java_hash_code(value, "char")`` gives
  its hash (the UTF-16 code unit) for callers that hold one.

Any other key type (a POJO or Row, whose ``hashCode`` is the user's or the runtime object's,
an enum, whose ``hashCode`` is its identity, ``byte[]``, ...) is refused with a
``StateError`` naming the type: its key group cannot be computed outside the JVM. A key that was
read from a Flink savepoint keeps the key group it was stored in; only new keys need this rule.
"""

from __future__ import annotations

import struct
from typing import Any

from .._errors import StateError
from .._serializer import TypeSerializer
from ._format import SavepointFormatError
from ._murmur import murmur3_32, murmur3_32_many

__all__ = [
    "MAX_MAX_PARALLELISM",
    "check_parallelism",
    "flink_key_group",
    "flink_key_group_for_hash",
    "has_java_hash_code",
    "java_hash_code",
    "key_group_for",
    "key_group_range",
    "key_groups_for",
    "subtask_for_key_group",
]

MAX_MAX_PARALLELISM = 32768


def key_group_for(key_bytes: bytes, max_parallelism: int) -> int:
    """The key group of a serialized key: unsigned MurmurHash3_x86_32 (seed 0) of the key
    bytes, modulo ``max_parallelism``."""
    if not 1 <= max_parallelism <= MAX_MAX_PARALLELISM:
        raise ValueError(f"max_parallelism must be in [1, {MAX_MAX_PARALLELISM}], got {max_parallelism}")
    return murmur3_32(key_bytes) % max_parallelism


def key_groups_for(keys: list[bytes], max_parallelism: int) -> list[int]:
    """``key_group_for`` of each serialized key of a batch (vectorized when it can be)."""
    if not 1 <= max_parallelism <= MAX_MAX_PARALLELISM:
        raise ValueError(f"max_parallelism must be in [1, {MAX_MAX_PARALLELISM}], got {max_parallelism}")
    return [h % max_parallelism for h in murmur3_32_many(keys)]


def key_group_range(max_parallelism: int, parallelism: int, subtask: int) -> range:
    """The key groups owned by ``subtask`` of ``parallelism`` (Flink's
    ``KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex``)."""
    check_parallelism(max_parallelism, parallelism)
    if not 0 <= subtask < parallelism:
        raise ValueError(f"subtask {subtask} outside [0, {parallelism})")
    start = (subtask * max_parallelism + parallelism - 1) // parallelism
    end = ((subtask + 1) * max_parallelism - 1) // parallelism
    return range(start, end + 1)


def subtask_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    """The subtask that owns ``key_group`` (Flink's ``computeOperatorIndexForKeyGroup``)."""
    return key_group * parallelism // max_parallelism


def check_parallelism(max_parallelism: int, parallelism: int) -> None:
    """Refuse a parallelism a savepoint of ``max_parallelism`` key groups cannot run at."""
    if not 1 <= parallelism <= max_parallelism:
        raise SavepointFormatError(
            f"parallelism {parallelism} is not in [1, max_parallelism={max_parallelism}]; a "
            "savepoint can be restored at most at its max parallelism (its number of key groups)"
        )


# -- Flink's assignment: MathUtils.murmurHash(key.hashCode()) % maxParallelism ---------------------
_M32 = 0xFFFFFFFF


def _int32(value: int) -> int:
    value &= _M32
    return value - (1 << 32) if value >= 1 << 31 else value


def _rotl32(value: int, r: int) -> int:
    return ((value << r) | (value >> (32 - r))) & _M32


def flink_key_group_for_hash(hash_code: int, max_parallelism: int) -> int:
    """Flink's ``KeyGroupRangeAssignment.computeKeyGroupForKeyHash``: the key group of a key
    whose Java ``hashCode`` is ``hash_code`` (a signed or unsigned 32-bit int)."""
    if not 1 <= max_parallelism <= MAX_MAX_PARALLELISM:
        raise ValueError(f"max_parallelism must be in [1, {MAX_MAX_PARALLELISM}], got {max_parallelism}")
    code = (hash_code * 0xCC9E2D51) & _M32
    code = _rotl32(code, 15)
    code = (code * 0x1B873593) & _M32
    code = _rotl32(code, 13)
    code = (code * 5 + 0xE6546B64) & _M32
    code ^= 4
    code ^= code >> 16
    code = (code * 0x85EBCA6B) & _M32
    code ^= code >> 13
    code = (code * 0xC2B2AE35) & _M32
    code ^= code >> 16
    signed = _int32(code)
    non_negative = signed if signed >= 0 else (-signed if signed != -(1 << 31) else 0)
    return non_negative % max_parallelism


def _string_hash(value: str) -> int:
    h = 0
    data = value.encode("utf-16-be", "surrogatepass")
    for (unit,) in struct.iter_unpack(">H", data):
        h = (31 * h + unit) & _M32
    return _int32(h)


def _long_hash(value: int) -> int:
    v = value & 0xFFFFFFFFFFFFFFFF
    return _int32((v ^ (v >> 32)) & _M32)


def _double_hash(value: float) -> int:
    if value != value:
        return _long_hash(0x7FF8000000000000)
    return _long_hash(struct.unpack(">q", struct.pack(">d", value))[0])


def _float_hash(value: float) -> int:
    if value != value:
        return _int32(0x7FC00000)
    return struct.unpack(">i", struct.pack(">f", value))[0]  # type: ignore[no-any-return]


def _bool_hash(value: bool) -> int:
    return 1231 if value else 1237


def _char_hash(value: str) -> int:
    units = value.encode("utf-16-be", "surrogatepass")
    if len(units) != 2:
        raise StateError(f"a java.lang.Character is one UTF-16 code unit, got {value!r}")
    return int.from_bytes(units, "big")


def _checked_int(bits: int) -> Any:
    def hash_of(value: int) -> int:
        if type(value) is not int or not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
            raise StateError(f"a {bits}-bit integer key should be an int in range, got {value!r}")
        return value

    return hash_of


#: ``java_hash_code``'s rules by Java type name (the names ``java_hash_code`` also takes).
_JAVA_HASHES = {
    "string": _string_hash,
    "int": _checked_int(32),
    "short": _checked_int(16),
    "byte": _checked_int(8),
    "long": _long_hash,
    "boolean": _bool_hash,
    "double": _double_hash,
    "float": _float_hash,
    "char": _char_hash,
}


def _java_type(serializer: Any) -> str | None:
    from ..serializers import (
        BooleanSerializer,
        ByteSerializer,
        DoubleSerializer,
        FloatSerializer,
        IntSerializer,
        LongSerializer,
        ShortSerializer,
        StringSerializer,
    )

    for cls, name in ((StringSerializer, "string"), (IntSerializer, "int"), (LongSerializer, "long"),
                      (ShortSerializer, "short"), (ByteSerializer, "byte"), (BooleanSerializer, "boolean"),
                      (DoubleSerializer, "double"), (FloatSerializer, "float")):
        if type(serializer) is cls:
            return name
    return None


def java_hash_code(value: Any, serializer: TypeSerializer[Any] | str) -> int:
    """Java's ``hashCode`` (a signed 32-bit int) of ``value`` as the Java type of
    ``serializer`` holds it (see the module docstring); ``serializer`` may also be one of the
    names ``"string"``, ``"int"``, ``"long"``, ``"short"``, ``"byte"``, ``"boolean"``,
    ``"double"``, ``"float"``, ``"char"``. Raises a ``StateError`` for a type whose
    ``hashCode`` the reference cannot give."""
    from ..serializers import NullableSerializer, TupleSerializer

    if isinstance(serializer, str):
        rule = _JAVA_HASHES.get(serializer)
        if rule is None:
            raise StateError(f"java_hash_code: no Java hashCode for type name {serializer!r}; "
                             f"the names are {sorted(_JAVA_HASHES)}")
        return rule(value)  # type: ignore[no-any-return]
    if type(serializer) is NullableSerializer:
        return 0 if value is None else java_hash_code(value, serializer.inner)
    if type(serializer) is TupleSerializer:
        if type(value) is not tuple or len(value) != len(serializer.fields):
            raise StateError(f"a Tuple{len(serializer.fields)} key should be a tuple of {len(serializer.fields)} "
                             f"fields, got {value!r}")
        result = 0
        for i, (field, item) in enumerate(zip(serializer.fields, value, strict=True)):
            h = 0 if item is None else java_hash_code(item, field)
            result = h if i == 0 else _int32(31 * result + h)
        return result
    name = _java_type(serializer)
    if name is None:
        raise StateError(
            f"the key group Flink gives a key of {serializer!r} cannot be computed here: it is "
            "MathUtils.murmurHash(key.hashCode()), and the reference has Java's hashCode only for "
            "String, the boxed primitives (Integer, Long, Short, Byte, Boolean, Double, Float) and "
            "Flink Tuples of them (a POJO's or a Row's hashCode is the user's code, an enum's is "
            "its identity). Key the job by one of those types, or keep to keys read from a Flink "
            "savepoint (they keep their key groups)")
    if value is None:
        raise StateError(f"a key of {serializer!r} may not be None (Flink keys are never null)")
    try:
        return _JAVA_HASHES[name](value)  # type: ignore[no-any-return]
    except (TypeError, struct.error, UnicodeError, AttributeError) as exc:
        raise StateError(f"key {value!r} is not a value of {serializer!r} ({exc}); give a key the key "
                         "serializer writes") from None


def has_java_hash_code(serializer: TypeSerializer[Any]) -> bool:
    """Whether ``java_hash_code`` knows the Java ``hashCode`` of the values ``serializer``
    writes (so ``flink_key_group`` can place new keys of it)."""
    from ..serializers import NullableSerializer, TupleSerializer

    if type(serializer) is NullableSerializer:
        return has_java_hash_code(serializer.inner)
    if type(serializer) is TupleSerializer:
        return all(has_java_hash_code(f) for f in serializer.fields)
    return _java_type(serializer) is not None


def flink_key_group(key: Any, key_serializer: TypeSerializer[Any], max_parallelism: int) -> int:
    """The key group Flink assigns ``key`` (``KeyGroupRangeAssignment.assignToKeyGroup``), its
    Java type being the one ``key_serializer`` writes (see the module docstring)."""
    return flink_key_group_for_hash(java_hash_code(key, key_serializer), max_parallelism)
