"""A small logical type model: describe a state type, get its reference serializer.

>>> from reference import types as t
>>> t.serializer_for(t.RowType((t.RowField("id", t.LongType(), nullable=False),
...                              t.RowField("tags", t.ListType(t.StringType())))))
RowSerializer(...)

Types are frozen dataclasses, so they compare and hash by value; the strategies generate them
and ``serializer_for`` maps each to the built-in serializer of ``reference.serializers``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

__all__ = [
    "LogicalType", "BooleanType", "ByteType", "ShortType", "IntType", "LongType", "FloatType",
    "DoubleType", "StringType", "BytesType", "PickleType", "NullableType", "ListType", "MapType",
    "TupleType", "RowField", "RowType", "PojoType", "EnumType", "AvroType", "serializer_for",
    "PRIMITIVES",
]


@dataclass(frozen=True)
class BooleanType:
    pass


@dataclass(frozen=True)
class ByteType:
    pass


@dataclass(frozen=True)
class ShortType:
    pass


@dataclass(frozen=True)
class IntType:
    pass


@dataclass(frozen=True)
class LongType:
    pass


@dataclass(frozen=True)
class FloatType:
    pass


@dataclass(frozen=True)
class DoubleType:
    pass


@dataclass(frozen=True)
class StringType:
    """Text; ``None`` is a valid value of the String serializer."""


@dataclass(frozen=True)
class BytesType:
    pass


@dataclass(frozen=True)
class PickleType:
    """Any picklable Python value (the Kryo analogue: works, never evolves)."""


@dataclass(frozen=True)
class NullableType:
    inner: LogicalType
    padded: bool = False


@dataclass(frozen=True)
class ListType:
    element: LogicalType


@dataclass(frozen=True)
class MapType:
    key: LogicalType
    value: LogicalType


@dataclass(frozen=True)
class TupleType:
    fields: tuple[LogicalType, ...]


@dataclass(frozen=True)
class RowField:
    name: str
    type: LogicalType
    nullable: bool = True


@dataclass(frozen=True)
class RowType:
    fields: tuple[RowField, ...]

    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]


@dataclass(frozen=True)
class PojoType:
    """A dataclass; its fields' serializers come from ``PojoSerializer`` (annotations or
    ``field(metadata={"serializer": ...})``)."""

    cls: type


@dataclass(frozen=True)
class EnumType:
    cls: type[enum.Enum]


@dataclass(frozen=True)
class AvroType:
    """An Avro schema as canonical JSON text (hashable); ``schema`` gives the parsed form."""

    schema_json: str

    @property
    def schema(self) -> Any:
        import json

        return json.loads(self.schema_json)


LogicalType = (
    BooleanType | ByteType | ShortType | IntType | LongType | FloatType | DoubleType | StringType |
    BytesType | PickleType | NullableType | ListType | MapType | TupleType | RowType | PojoType |
    EnumType | AvroType
)

PRIMITIVES: tuple[type, ...] = (
    BooleanType, ByteType, ShortType, IntType, LongType, FloatType, DoubleType, StringType,
    BytesType,
)


def serializer_for(logical_type: LogicalType) -> Any:
    """The reference serializer for ``logical_type``."""
    from . import serializers as s

    simple: dict[type, Any] = {
        BooleanType: s.BooleanSerializer, ByteType: s.ByteSerializer,
        ShortType: s.ShortSerializer, IntType: s.IntSerializer, LongType: s.LongSerializer,
        FloatType: s.FloatSerializer, DoubleType: s.DoubleSerializer,
        StringType: s.StringSerializer, BytesType: s.BytesSerializer,
        PickleType: s.PickleSerializer,
    }
    kind = type(logical_type)
    if kind in simple:
        return simple[kind]()
    if isinstance(logical_type, NullableType):
        return s.NullableSerializer(serializer_for(logical_type.inner), padded=logical_type.padded)
    if isinstance(logical_type, ListType):
        return s.ListSerializer(serializer_for(logical_type.element))
    if isinstance(logical_type, MapType):
        return s.MapSerializer(serializer_for(logical_type.key), serializer_for(logical_type.value))
    if isinstance(logical_type, TupleType):
        return s.TupleSerializer(*[serializer_for(f) for f in logical_type.fields])
    if isinstance(logical_type, RowType):
        return s.RowSerializer(
            [(f.name, serializer_for(f.type), f.nullable) for f in logical_type.fields]
        )
    if isinstance(logical_type, PojoType):
        return s.PojoSerializer(logical_type.cls)
    if isinstance(logical_type, EnumType):
        return s.EnumSerializer(logical_type.cls)
    if isinstance(logical_type, AvroType):
        return s.AvroSerializer(logical_type.schema)
    raise TypeError(f"not a logical type: {logical_type!r}")
