"""Built-in serializers in Flink 2.x byte formats, each with its own snapshot class."""

from ._avro import AvroSerializer, AvroSerializerSnapshot
from ._avro_compat import AvroSchemaError
from ._codegen import generated_codecs, generated_codecs_enabled, set_generated_codecs
from ._composites import (
    ListSerializer,
    ListSerializerSnapshot,
    MapSerializer,
    MapSerializerSnapshot,
    NullableSerializer,
    NullableSerializerSnapshot,
    TupleSerializer,
    TupleSerializerSnapshot,
)
from ._enum import EnumSerializer, EnumSerializerSnapshot
from ._pickle import PickleSerializer, PickleSerializerSnapshot
from ._pojo import PojoSerializer, PojoSerializerSnapshot, field_serializer_for_annotation
from ._primitives import (
    BooleanSerializer,
    BooleanSerializerSnapshot,
    ByteSerializer,
    ByteSerializerSnapshot,
    BytesSerializer,
    BytesSerializerSnapshot,
    DoubleSerializer,
    DoubleSerializerSnapshot,
    FloatSerializer,
    FloatSerializerSnapshot,
    IntSerializer,
    IntSerializerSnapshot,
    LongSerializer,
    LongSerializerSnapshot,
    ShortSerializer,
    ShortSerializerSnapshot,
    StringSerializer,
    StringSerializerSnapshot,
)
from ._row import Row, RowKind, RowSerializer, RowSerializerSnapshot

__all__ = [
    "AvroSchemaError", "AvroSerializer", "AvroSerializerSnapshot",
    "BooleanSerializer", "BooleanSerializerSnapshot",
    "ByteSerializer", "ByteSerializerSnapshot",
    "BytesSerializer", "BytesSerializerSnapshot",
    "DoubleSerializer", "DoubleSerializerSnapshot",
    "EnumSerializer", "EnumSerializerSnapshot",
    "FloatSerializer", "FloatSerializerSnapshot",
    "generated_codecs", "generated_codecs_enabled", "set_generated_codecs",
    "IntSerializer", "IntSerializerSnapshot",
    "ListSerializer", "ListSerializerSnapshot",
    "LongSerializer", "LongSerializerSnapshot",
    "MapSerializer", "MapSerializerSnapshot",
    "NullableSerializer", "NullableSerializerSnapshot",
    "PickleSerializer", "PickleSerializerSnapshot",
    "PojoSerializer", "PojoSerializerSnapshot", "field_serializer_for_annotation",
    "Row", "RowKind", "RowSerializer", "RowSerializerSnapshot",
    "ShortSerializer", "ShortSerializerSnapshot",
    "StringSerializer", "StringSerializerSnapshot",
    "TupleSerializer", "TupleSerializerSnapshot",
]
