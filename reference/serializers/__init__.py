"""Built-in serializers in Flink 2.x byte formats, each with its own snapshot class; the
serializers of Flink's state runtime read from Flink's savepoints (void namespace, TTL, timers);
and ``record_serializer``, which reads state without the user's POJO and enum classes; and
``RowDataSerializer``, the rows of Flink's Table API and SQL in the ``BinaryRowData`` layout (their
types in ``reference.sqltypes``)."""

from ._avro import AvroSerializer, AvroSerializerSnapshot
from ._avro_compat import AvroSchemaError
from ._binary import TimestampData
from ._codegen import (
    ENVIRONMENT_VARIABLE,
    generated_codecs,
    generated_codecs_enabled,
    has_generated_codecs,
    set_generated_codecs,
    uses_generic_methods,
)
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
from ._flink_runtime import (
    GlobalWindowSerializer,
    GlobalWindowSerializerSnapshot,
    KryoSerializerSnapshot,
    Timer,
    TimerSerializer,
    TimerSerializerSnapshot,
    TimeWindow,
    TimeWindowSerializer,
    TimeWindowSerializerSnapshot,
    TtlSerializer,
    TtlSerializerSnapshot,
    TtlValue,
    VoidNamespaceSerializer,
    VoidNamespaceSerializerSnapshot,
)
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
from ._records import EnumNameSerializer, PojoRecordSerializer, Record, record_serializer
from ._row import Row, RowKind, RowSerializer, RowSerializerSnapshot
from ._rowdata import RowDataSerializer, RowDataSerializerSnapshot

__all__ = [
    "AvroSchemaError", "AvroSerializer", "AvroSerializerSnapshot",
    "BooleanSerializer", "BooleanSerializerSnapshot",
    "ByteSerializer", "ByteSerializerSnapshot",
    "BytesSerializer", "BytesSerializerSnapshot",
    "DoubleSerializer", "DoubleSerializerSnapshot",
    "EnumNameSerializer", "EnumSerializer", "EnumSerializerSnapshot",
    "FloatSerializer", "FloatSerializerSnapshot",
    "generated_codecs", "generated_codecs_enabled", "has_generated_codecs", "set_generated_codecs",
    "uses_generic_methods", "ENVIRONMENT_VARIABLE",
    "IntSerializer", "IntSerializerSnapshot",
    "ListSerializer", "ListSerializerSnapshot",
    "LongSerializer", "LongSerializerSnapshot",
    "MapSerializer", "MapSerializerSnapshot",
    "NullableSerializer", "NullableSerializerSnapshot",
    "PickleSerializer", "PickleSerializerSnapshot",
    "PojoRecordSerializer", "PojoSerializer", "PojoSerializerSnapshot", "field_serializer_for_annotation",
    "Record", "record_serializer",
    "Row", "RowKind", "RowSerializer", "RowSerializerSnapshot",
    "RowDataSerializer", "RowDataSerializerSnapshot", "TimestampData",
    "ShortSerializer", "ShortSerializerSnapshot",
    "StringSerializer", "StringSerializerSnapshot",
    "GlobalWindowSerializer", "GlobalWindowSerializerSnapshot", "KryoSerializerSnapshot",
    "TimeWindow", "TimeWindowSerializer", "TimeWindowSerializerSnapshot",
    "Timer", "TimerSerializer", "TimerSerializerSnapshot",
    "TtlSerializer", "TtlSerializerSnapshot", "TtlValue",
    "TupleSerializer", "TupleSerializerSnapshot",
    "VoidNamespaceSerializer", "VoidNamespaceSerializerSnapshot",
]
