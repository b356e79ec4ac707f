"""RowData (Flink's ``org.apache.flink.table.runtime.typeutils.RowDataSerializer``): the rows of
Flink's Table API and SQL, in the ``BinaryRowData`` layout (``reference.serializers._binary``
specifies the layout and the Python value of each logical type).

``RowDataSerializer(RowType([...]))`` writes a record as Flink's ``BinaryRowDataSerializer``
does: an int (big-endian) byte length, then the ``BinaryRowData`` bytes. Values are tuples in
field order (``None`` for null), or ``reference.serializers.Row`` for a row kind other than
INSERT; nested rows likewise.
"""

from __future__ import annotations

from typing import Any

from .._compat import SchemaCompatibility
from .._errors import SerializationError, SnapshotFormatError, StateMigrationError
from .._io import DataInputView, DataOutputView
from .._javaser import (
    JavaArray,
    JavaClass,
    JavaClassDesc,
    JavaEnum,
    JavaObject,
    SharedString,
    graph_difference,
    read_java_object,
    write_java_object,
)
from .._serializer import TypeSerializer
from .._snapshot import TypeSerializerSnapshot, snapshot_dialect
from ..sqltypes import LogicalType
from ._binary import fixed_part_size, read_row, row_bytes
from ._row import Row, RowKind

__all__ = ["RowDataSerializer", "RowDataSerializerSnapshot"]

_MUTABLE_ROOTS = ("ARRAY", "MAP", "MULTISET")


def _holds(t: LogicalType, roots: tuple[str, ...]) -> bool:
    return t.root in roots or any(_holds(c, roots) for c in t.children) or any(
        _holds(f[1], roots) for f in t.fields)


class RowDataSerializer(TypeSerializer[tuple[Any, ...]]):
    """Rows of a ROW ``LogicalType`` in Flink's ``BinaryRowData`` layout."""

    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self, row_type: LogicalType) -> None:
        if not isinstance(row_type, LogicalType) or row_type.root != "ROW":
            raise TypeError(f"RowDataSerializer takes a ROW LogicalType (RowType([...])), got {row_type!r}")
        self.row_type = row_type
        self._cache_positional = False
        self._cache_fixed = fixed_part_size(len(row_type.fields))
        self._cache_immutable = not _holds(row_type, _MUTABLE_ROOTS)

    def __getstate__(self) -> dict[str, Any]:
        return {"row_type": self.row_type}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["row_type"])  # type: ignore[misc]

    @property
    def positional(self) -> bool:
        """Restored from a snapshot in Flink's form (no top-level field names): its snapshot is
        judged by Flink 2.3's rule (``RowDataSerializerSnapshot``). Not configuration (equality
        ignores it)."""
        return self._cache_positional

    @positional.setter
    def positional(self, value: bool) -> None:
        self._cache_positional = bool(value)

    @property
    def field_names(self) -> list[str]:
        return self.row_type.field_names

    @property
    def arity(self) -> int:
        return len(self.row_type.fields)

    def serialize(self, value: tuple[Any, ...], target: DataOutputView) -> None:
        data = row_bytes(self.row_type, value)
        target.write_int(len(data))
        target.write(data)

    def _read(self, source: DataInputView) -> tuple[bytes, int]:
        size = source.read_int()
        if not self._cache_fixed <= size <= source.available():
            raise SerializationError(
                f"RowDataSerializer of {self.row_type}: a record of {size} bytes, with "
                f"{source.available()} left and {self._cache_fixed} needed for the fixed part; the data "
                "is corrupt or not a BinaryRowData of this type"
            )
        return source.read_fully(size), size

    def deserialize(self, source: DataInputView) -> tuple[Any, ...]:
        data, size = self._read(source)
        return read_row(self.row_type, data, 0, size)  # type: ignore[no-any-return]

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        """Copies the record's bytes as they are (as Flink's copy does), once they read as a
        row of this type."""
        start = source.position
        data, size = self._read(source)
        read_row(self.row_type, data, 0, size)
        target.write(source.slice_from(start))

    @property
    def is_immutable_type(self) -> bool:
        return self._cache_immutable

    def snapshot_configuration(self) -> RowDataSerializerSnapshot:
        return RowDataSerializerSnapshot(self)

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, self.row_type))

    def __repr__(self) -> str:
        return f"RowDataSerializer({self.row_type})"


# -- the snapshot: Flink's RowDataSerializerSnapshot (version 3) -------------------------------
_LOGICAL = "org.apache.flink.table.types.logical."
_TYPEUTILS = "org.apache.flink.table.runtime.typeutils."
_BASE = "org.apache.flink.api.common.typeutils.base."
_TYPE_SIG = "Lorg/apache/flink/table/types/logical/LogicalType;"
_ENUM = JavaClassDesc("java.lang.Enum", 0, 0x12, (), None)
_ROOT_ENUM = JavaClassDesc(_LOGICAL + "LogicalTypeRoot", 0, 0x12, (), _ENUM)
_KIND_ENUM = JavaClassDesc(_LOGICAL + "TimestampKind", 0, 0x12, (), _ENUM)
_LOGICAL_TYPE = JavaClassDesc(_LOGICAL + "LogicalType", 1, 2, (
    ("Z", "isNullable", None), ("L", "typeRoot", "Lorg/apache/flink/table/types/logical/LogicalTypeRoot;")), None)
_LENGTH = (("I", "length", None),)
_PRECISION = (("I", "precision", None),)
_TIMESTAMP = (("I", "precision", None), ("L", "kind", "Lorg/apache/flink/table/types/logical/TimestampKind;"))
#: root -> (Java class, its fields after LogicalType's)
_JAVA_TYPES: dict[str, tuple[str, tuple[tuple[str, str, str | None], ...]]] = {
    "BOOLEAN": ("BooleanType", ()), "TINYINT": ("TinyIntType", ()), "SMALLINT": ("SmallIntType", ()),
    "INTEGER": ("IntType", ()), "BIGINT": ("BigIntType", ()), "FLOAT": ("FloatType", ()),
    "DOUBLE": ("DoubleType", ()), "DATE": ("DateType", ()), "CHAR": ("CharType", _LENGTH),
    "VARCHAR": ("VarCharType", _LENGTH), "BINARY": ("BinaryType", _LENGTH),
    "VARBINARY": ("VarBinaryType", _LENGTH),
    "DECIMAL": ("DecimalType", (("I", "precision", None), ("I", "scale", None))),
    "TIME_WITHOUT_TIME_ZONE": ("TimeType", _PRECISION),
    "TIMESTAMP_WITHOUT_TIME_ZONE": ("TimestampType", _TIMESTAMP),
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": ("LocalZonedTimestampType", _TIMESTAMP),
    "ARRAY": ("ArrayType", (("L", "elementType", _TYPE_SIG),)),
    "MULTISET": ("MultisetType", (("L", "elementType", _TYPE_SIG),)),
    "MAP": ("MapType", (("L", "keyType", _TYPE_SIG), ("L", "valueType", _TYPE_SIG))),
    "ROW": ("RowType", (("L", "fields", "Ljava/util/List;"),)),
}
_ROOT_OF_CLASS = {_LOGICAL + cls: root for root, (cls, _) in _JAVA_TYPES.items()}
_ROW_FIELD = JavaClassDesc(_LOGICAL + "RowType$RowField", 1, 2, (
    ("L", "description", "Ljava/lang/String;"), ("L", "name", "Ljava/lang/String;"), ("L", "type", _TYPE_SIG)), None)
_COLLECTION = JavaClassDesc("java.util.Collections$UnmodifiableCollection", 1820017752578914078, 2,
                            (("L", "c", "Ljava/util/Collection;"),), None)
_LIST = JavaClassDesc("java.util.Collections$UnmodifiableList", -283967356065247728, 2,
                      (("L", "list", "Ljava/util/List;"),), _COLLECTION)
_ARRAY_LIST = JavaClassDesc("java.util.ArrayList", 8683452581122892189, 3, (("I", "size", None),), None)
_MULTISET_VALUE = LogicalType("INTEGER", False)


def _java_type(t: LogicalType) -> JavaObject:
    """``t`` as the Java object Flink's class of it serializes into."""
    cls, fields = _JAVA_TYPES[t.root]
    desc = JavaClassDesc(_LOGICAL + cls, 1, 2, fields, _LOGICAL_TYPE)
    own: dict[str, Any] = {}
    if fields == _LENGTH:
        own["length"] = t.length
    elif t.root == "DECIMAL":
        own.update(precision=t.precision, scale=t.scale)
    elif fields == _PRECISION:
        own["precision"] = t.precision
    elif fields == _TIMESTAMP:
        own.update(precision=t.precision, kind=JavaEnum(_KIND_ENUM, SharedString(t.kind)))
    elif t.root in ("ARRAY", "MULTISET"):
        own["elementType"] = _java_type(t.children[0])
    elif t.root == "MAP":
        own.update(keyType=_java_type(t.children[0]), valueType=_java_type(t.children[1]))
    elif t.root == "ROW":
        items = [JavaObject(_ROW_FIELD, {_ROW_FIELD.name: {"description": d, "name": n, "type": _java_type(ft)}})
                 for n, ft, d in t.fields]
        array_list = JavaObject(_ARRAY_LIST, {_ARRAY_LIST.name: {"size": len(items)}},
                                {_ARRAY_LIST.name: [len(items).to_bytes(4, "big"), *items]})
        own["fields"] = JavaObject(_LIST, {_COLLECTION.name: {"c": array_list}, _LIST.name: {"list": array_list}})
    return JavaObject(desc, {_LOGICAL_TYPE.name: {
        "isNullable": t.nullable, "typeRoot": JavaEnum(_ROOT_ENUM, SharedString(t.root))}, desc.name: own})


def _bad_type(what: str) -> SnapshotFormatError:
    return SnapshotFormatError(f"RowDataSerializerSnapshot: {what}; the snapshot is corrupt or holds a type "
                               "this reader does not model (reference.sqltypes lists the roots it does)")


def _check_desc(desc: JavaClassDesc, expected: JavaClassDesc) -> None:
    got = (desc.name, desc.suid, desc.flags, desc.fields)
    want = (expected.name, expected.suid, expected.flags, expected.fields)
    if got != want:
        raise _bad_type(f"class {desc.name} is described as {got[1:]}, Flink 2.3 describes it as {want[1:]}")
    if (desc.superclass is None) != (expected.superclass is None):
        raise _bad_type(f"class {desc.name} has another superclass than Flink 2.3's")
    if desc.superclass is not None and expected.superclass is not None:
        _check_desc(desc.superclass, expected.superclass)


def _logical_from_java(obj: Any, where: str) -> LogicalType:
    """The LogicalType a Java object read from a snapshot stands for (checked class by class
    against Flink 2.3's descriptions of them)."""
    if not isinstance(obj, JavaObject) or obj.desc.name not in _ROOT_OF_CLASS:
        name = obj.desc.name if isinstance(obj, (JavaObject, JavaEnum)) else type(obj).__name__
        raise _bad_type(f"{where} is a {name}, not a supported LogicalType class")
    root = _ROOT_OF_CLASS[obj.desc.name]
    _check_desc(obj.desc, JavaClassDesc(obj.desc.name, 1, 2, _JAVA_TYPES[root][1], _LOGICAL_TYPE))
    base = obj.values[_LOGICAL_TYPE.name]
    type_root = base["typeRoot"]
    if not isinstance(type_root, JavaEnum) or type_root.name != root:
        raise _bad_type(f"{where}: a {obj.desc.name} whose typeRoot is {getattr(type_root, 'name', type_root)!r}")
    _check_desc(type_root.desc, _ROOT_ENUM)
    own = obj.values[obj.desc.name]
    nullable = base["isNullable"]
    try:
        if root in ("ARRAY", "MULTISET"):
            return LogicalType(root, nullable, children=(_logical_from_java(own["elementType"], f"{where}.element"),))
        if root == "MAP":
            return LogicalType(root, nullable, children=(_logical_from_java(own["keyType"], f"{where}.key"),
                                                         _logical_from_java(own["valueType"], f"{where}.value")))
        if root == "ROW":
            return LogicalType(root, nullable, fields=tuple(_row_fields(own["fields"], where)))
        kind = "REGULAR"
        if _JAVA_TYPES[root][1] == _TIMESTAMP:
            java_kind = own["kind"]
            if not isinstance(java_kind, JavaEnum):
                raise _bad_type(f"{where}: timestamp kind {java_kind!r}, should be a TimestampKind")
            _check_desc(java_kind.desc, _KIND_ENUM)
            kind = str(java_kind.name)
        return LogicalType(root, nullable, length=own.get("length"), precision=own.get("precision"),
                           scale=own.get("scale"), kind=kind)
    except (ValueError, TypeError) as exc:
        raise _bad_type(f"{where}: {exc}") from None


def _row_fields(fields: Any, where: str) -> list[tuple[str, LogicalType, str | None]]:
    if not isinstance(fields, JavaObject):
        raise _bad_type(f"{where}: the row's fields are not a list")
    _check_desc(fields.desc, _LIST)
    array_list = fields.values[_COLLECTION.name]["c"]
    if fields.values[_LIST.name]["list"] is not array_list or not isinstance(array_list, JavaObject):
        raise _bad_type(f"{where}: the row's field list is not Flink's unmodifiable ArrayList")
    _check_desc(array_list.desc, _ARRAY_LIST)
    size = array_list.values[_ARRAY_LIST.name]["size"]
    items = array_list.annotations.get(_ARRAY_LIST.name, [])
    if not items or items[0] != int(size).to_bytes(4, "big", signed=True) or len(items) != size + 1:
        raise _bad_type(f"{where}: the row's field list holds {len(items) - 1} items for size {size}")
    result = []
    for i, item in enumerate(items[1:]):
        if not isinstance(item, JavaObject):
            raise _bad_type(f"{where}: row field {i} is not a RowField")
        _check_desc(item.desc, _ROW_FIELD)
        values = item.values[_ROW_FIELD.name]
        name, description = values["name"], values["description"]
        if not isinstance(name, str) or not (description is None or isinstance(description, str)):
            raise _bad_type(f"{where}: row field {i} has name {name!r} and description {description!r}")
        result.append((str(name), _logical_from_java(values["type"], f"{where}.{name}"), description))
    return result


# Flink's serializer of each root (InternalSerializers.create) as the Java object graph it
# serializes into: the objects Flink shares are shared here (the logical types a collection's
# serializer and its type hold, singleton serializers, cached Integers, non-capturing lambdas),
# so that the stream's back references fall where Flink's do.
_SERIALIZER = JavaClassDesc("org.apache.flink.api.common.typeutils.TypeSerializer", 1, 2, (), None)
_SINGLETON = JavaClassDesc(_BASE + "TypeSerializerSingleton", 8766687317209282373, 2, (), _SERIALIZER)
_SIMPLE_SERIALIZERS = {
    "BOOLEAN": _BASE + "BooleanSerializer", "TINYINT": _BASE + "ByteSerializer",
    "SMALLINT": _BASE + "ShortSerializer", "INTEGER": _BASE + "IntSerializer", "DATE": _BASE + "IntSerializer",
    "TIME_WITHOUT_TIME_ZONE": _BASE + "IntSerializer", "BIGINT": _BASE + "LongSerializer",
    "FLOAT": _BASE + "FloatSerializer", "DOUBLE": _BASE + "DoubleSerializer",
    "CHAR": _TYPEUTILS + "StringDataSerializer", "VARCHAR": _TYPEUTILS + "StringDataSerializer",
    "BINARY": _BASE + "array.BytePrimitiveArraySerializer", "VARBINARY": _BASE + "array.BytePrimitiveArraySerializer",
}
#: each simple serializer's INSTANCE: one object per class
_INSTANCES = {cls: JavaObject(JavaClassDesc(cls, 1, 2, (), _SINGLETON)) for cls in set(_SIMPLE_SERIALIZERS.values())}
_NESTED_MAGIC, _NESTED_VERSION = 1333245, 1
_DATA = "org/apache/flink/table/data/"
_SERIALIZER_SIG = "Lorg/apache/flink/api/common/typeutils/TypeSerializer;"
_ELEMENT_GETTER_SIG = f"L{_DATA}ArrayData$ElementGetter;"
_DECIMAL_SERIALIZER = JavaClassDesc(_TYPEUTILS + "DecimalDataSerializer", 1, 2,
                                    (("I", "precision", None), ("I", "scale", None)), _SERIALIZER)
_TIMESTAMP_SERIALIZER = JavaClassDesc(_TYPEUTILS + "TimestampDataSerializer", 1, 2, _PRECISION, _SERIALIZER)
_ARRAY_SERIALIZER = JavaClassDesc(_TYPEUTILS + "ArrayDataSerializer", 1, 2, (
    ("L", "eleSer", _SERIALIZER_SIG), ("L", "eleType", _TYPE_SIG), ("L", "elementGetter", _ELEMENT_GETTER_SIG)),
    _SERIALIZER)
_MAP_SERIALIZER = JavaClassDesc(_TYPEUTILS + "MapDataSerializer", 4073842523628732956, 2, (
    ("L", "keyGetter", _ELEMENT_GETTER_SIG), ("L", "keySerializer", _SERIALIZER_SIG), ("L", "keyType", _TYPE_SIG),
    ("L", "valueGetter", _ELEMENT_GETTER_SIG), ("L", "valueSerializer", _SERIALIZER_SIG),
    ("L", "valueType", _TYPE_SIG)), _SERIALIZER)
_ABSTRACT_ROW = JavaClassDesc(_TYPEUTILS + "AbstractRowDataSerializer", 1, 2, (), JavaClassDesc(
    _TYPEUTILS + "PagedTypeSerializer", 1, 2, (), _SERIALIZER))
_BINARY_ROW = JavaClassDesc(_TYPEUTILS + "BinaryRowDataSerializer", 1, 2, (
    ("I", "fixedLengthPartSize", None), ("I", "numFields", None)), _ABSTRACT_ROW)
_ROW_SERIALIZER = JavaClassDesc(_TYPEUTILS + "RowDataSerializer", 1, 2, (
    ("L", "binarySerializer", "L" + _BINARY_ROW.name.replace(".", "/") + ";"),
    ("[", "fieldGetters", f"[L{_DATA}RowData$FieldGetter;"),
    ("[", "fieldSerializers", "[" + _SERIALIZER_SIG), ("[", "types", "[" + _TYPE_SIG)), _ABSTRACT_ROW)
_GETTERS = JavaClassDesc("[Lorg.apache.flink.table.data.RowData$FieldGetter;", -7646304539732967285, 2, (), None)
_SERIALIZERS = JavaClassDesc("[Lorg.apache.flink.api.common.typeutils.TypeSerializer;", 4143624638847974296, 2,
                             (), None)
_TYPES = JavaClassDesc("[Lorg.apache.flink.table.types.logical.LogicalType;", 1744097763440828726, 2, (), None)
_OBJECTS = JavaClassDesc("[Ljava.lang.Object;", -8012369246846506644, 2, (), None)
_INTEGER = JavaClassDesc("java.lang.Integer", 1360826667806852920, 2, (("I", "value", None),),
                         JavaClassDesc("java.lang.Number", -8742448824652078965, 2, (), None))
#: Integer.valueOf's cache (-128..127): a boxed int in it is one object per value
_CACHED_INTEGERS = {v: JavaObject(_INTEGER, {_INTEGER.name: {"value": v}}) for v in range(-128, 128)}
_STRING_SIG = "Ljava/lang/String;"
_LAMBDA = JavaClassDesc("java.lang.invoke.SerializedLambda", 8025925345765570181, 2, (
    ("I", "implMethodKind", None), ("[", "capturedArgs", "[Ljava/lang/Object;"),
    ("L", "capturingClass", "Ljava/lang/Class;"), ("L", "functionalInterfaceClass", _STRING_SIG),
    ("L", "functionalInterfaceMethodName", _STRING_SIG), ("L", "functionalInterfaceMethodSignature", _STRING_SIG),
    ("L", "implClass", _STRING_SIG), ("L", "implMethodName", _STRING_SIG), ("L", "implMethodSignature", _STRING_SIG),
    ("L", "instantiatedMethodType", _STRING_SIG)), None)
_INVOKE_STATIC, _INVOKE_INTERFACE = 6, 9
#: (capturing class, functional interface, its method, its signature) of RowData.FieldGetter
#: and ArrayData.ElementGetter, the lambdas RowData.createFieldGetter and
#: ArrayData.createElementGetter return
_FIELD_GETTER = (JavaClass(JavaClassDesc("org.apache.flink.table.data.RowData", 0, 0, (), None)),
                 _DATA + "RowData$FieldGetter", "getFieldOrNull", f"(L{_DATA}RowData;)Ljava/lang/Object;")
_ELEMENT_GETTER = (JavaClass(JavaClassDesc("org.apache.flink.table.data.ArrayData", 0, 0, (), None)),
                   _DATA + "ArrayData$ElementGetter", "getElementOrNull", f"(L{_DATA}ArrayData;I)Ljava/lang/Object;")
#: The lambdas' implementation methods in Flink 2.3's jars (javac names serializable lambdas
#: by a hash of their signature): per root, (name, signature) of the field getter's, and of the
#: element getter's (a method reference of ArrayData, non-capturing, when the signature is
#: that of an ArrayData getter).
_ROW_GET = f"(IL{_DATA}RowData;)Ljava/lang/Object;"
_FIELD_IMPL = {root: (f"lambda$createFieldGetter$245ca7d1${n}", _ROW_GET) for n, roots in enumerate((
    ("CHAR", "VARCHAR"), ("BOOLEAN",), ("BINARY", "VARBINARY"), ("TINYINT",), ("SMALLINT",),
    ("INTEGER", "DATE", "TIME_WITHOUT_TIME_ZONE"), ("BIGINT",), ("FLOAT",), ("DOUBLE",), ("ARRAY",),
    ("MAP", "MULTISET")), 1) for root in roots}
_FIELD_IMPL.update({
    "DECIMAL": ("lambda$createFieldGetter$89bd9445$1", f"(IIIL{_DATA}RowData;)Ljava/lang/Object;"),
    "TIMESTAMP_WITHOUT_TIME_ZONE": ("lambda$createFieldGetter$39385f9c$1", f"(IIL{_DATA}RowData;)Ljava/lang/Object;"),
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": ("lambda$createFieldGetter$39385f9c$1",
                                       f"(IIL{_DATA}RowData;)Ljava/lang/Object;"),
    "ROW": ("lambda$createFieldGetter$1547cee5$1", f"(IIL{_DATA}RowData;)Ljava/lang/Object;"),
})
_FIELD_NULL_CHECK = ("lambda$createFieldGetter$25774257$1",
                     f"(IL{_DATA}RowData$FieldGetter;L{_DATA}RowData;)Ljava/lang/Object;")
_ELEMENT_IMPL = {
    "CHAR": ("getString", f"(I)L{_DATA}StringData;"), "VARCHAR": ("getString", f"(I)L{_DATA}StringData;"),
    "BOOLEAN": ("getBoolean", "(I)Z"), "BINARY": ("getBinary", "(I)[B"), "VARBINARY": ("getBinary", "(I)[B"),
    "TINYINT": ("getByte", "(I)B"), "SMALLINT": ("getShort", "(I)S"), "INTEGER": ("getInt", "(I)I"),
    "DATE": ("getInt", "(I)I"), "TIME_WITHOUT_TIME_ZONE": ("getInt", "(I)I"), "BIGINT": ("getLong", "(I)J"),
    "FLOAT": ("getFloat", "(I)F"), "DOUBLE": ("getDouble", "(I)D"),
    "ARRAY": ("getArray", f"(I)L{_DATA}ArrayData;"), "MAP": ("getMap", f"(I)L{_DATA}MapData;"),
    "MULTISET": ("getMap", f"(I)L{_DATA}MapData;"),
    "DECIMAL": ("lambda$createElementGetter$55d7a3db$1", f"(IIL{_DATA}ArrayData;I)Ljava/lang/Object;"),
    "TIMESTAMP_WITHOUT_TIME_ZONE": ("lambda$createElementGetter$644eb446$1",
                                    f"(IL{_DATA}ArrayData;I)Ljava/lang/Object;"),
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": ("lambda$createElementGetter$644eb446$1",
                                       f"(IL{_DATA}ArrayData;I)Ljava/lang/Object;"),
    "ROW": ("lambda$createElementGetter$3705b7fb$1", f"(IL{_DATA}ArrayData;I)Ljava/lang/Object;"),
}
_ELEMENT_NULL_CHECK = ("lambda$createElementGetter$95d74a6c$1",
                       f"(L{_DATA}ArrayData$ElementGetter;L{_DATA}ArrayData;I)Ljava/lang/Object;")


def _boxed(value: int) -> JavaObject:
    """``Integer.valueOf(value)``: the cached object, or a new one outside the cache."""
    cached = _CACHED_INTEGERS.get(value)
    return cached if cached is not None else JavaObject(_INTEGER, {_INTEGER.name: {"value": value}})


def _lambda(getter: tuple[JavaClass, str, str, str], kind: int, impl: tuple[str, str], args: list[Any]) -> JavaObject:
    """The ``SerializedLambda`` a getter lambda writes itself as."""
    capturing, interface, method, signature = getter
    shared = SharedString(signature)
    return JavaObject(_LAMBDA, {_LAMBDA.name: {
        "implMethodKind": kind, "capturedArgs": JavaArray(_OBJECTS, args), "capturingClass": capturing,
        "functionalInterfaceClass": SharedString(interface), "functionalInterfaceMethodName": SharedString(method),
        "functionalInterfaceMethodSignature": shared, "implClass": SharedString(capturing.desc.name.replace(".", "/")),
        "implMethodName": SharedString(impl[0]), "implMethodSignature": SharedString(impl[1]),
        "instantiatedMethodType": shared}})


#: ArrayData's method references: non-capturing, so one object per call site (per method)
_METHOD_REFERENCES = {impl: _lambda(_ELEMENT_GETTER, _INVOKE_INTERFACE, impl, [])
                      for impl in set(_ELEMENT_IMPL.values()) if not impl[0].startswith("lambda$")}


def _captured(t: LogicalType) -> list[int]:
    """The ints a getter of ``t`` captures besides the position."""
    if t.root == "DECIMAL":
        return [t.precision or 0, t.scale or 0]
    if t.root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return [t.precision or 0]
    if t.root == "ROW":
        return [len(t.fields)]
    return []


def _field_getter(t: LogicalType, pos: int) -> JavaObject:
    """``RowData.createFieldGetter(t, pos)``: the null check around the root's getter."""
    inner = _lambda(_FIELD_GETTER, _INVOKE_STATIC, _FIELD_IMPL[t.root], [_boxed(v) for v in (pos, *_captured(t))])
    return _lambda(_FIELD_GETTER, _INVOKE_STATIC, _FIELD_NULL_CHECK, [_boxed(pos), inner])


def _element_getter(t: LogicalType) -> JavaObject:
    """``ArrayData.createElementGetter(t)``: the null check around the root's getter."""
    impl = _ELEMENT_IMPL[t.root]
    inner = _METHOD_REFERENCES.get(impl) or _lambda(_ELEMENT_GETTER, _INVOKE_STATIC, impl,
                                                     [_boxed(v) for v in _captured(t)])
    return _lambda(_ELEMENT_GETTER, _INVOKE_STATIC, _ELEMENT_NULL_CHECK, [inner])


def _java_children(java: JavaObject) -> list[JavaObject]:
    """The Java objects of the types a collection or row type ``java`` (built by ``_java_type``)
    holds, in order."""
    own = java.values[java.desc.name]
    if "fields" in own:
        return [item.values[_ROW_FIELD.name]["type"] for item in own["fields"].values[_LIST.name]["list"]
                .annotations[_ARRAY_LIST.name][1:]]
    return [own[name] for name in ("elementType", "keyType", "valueType") if name in own]


def _java_serializer(t: LogicalType, java: JavaObject) -> JavaObject:
    """Flink's serializer of ``t`` (``InternalSerializers.create``) as a Java object; ``java`` is
    the Java object of ``t`` the serializer shares (from ``_java_type``)."""
    if t.root in _SIMPLE_SERIALIZERS:
        return _INSTANCES[_SIMPLE_SERIALIZERS[t.root]]
    if t.root == "DECIMAL":
        return JavaObject(_DECIMAL_SERIALIZER, {_DECIMAL_SERIALIZER.name: {"precision": t.precision,
                                                                          "scale": t.scale}})
    if t.root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return JavaObject(_TIMESTAMP_SERIALIZER, {_TIMESTAMP_SERIALIZER.name: {"precision": t.precision}})
    children = _java_children(java)
    if t.root == "ARRAY":
        element = t.children[0]
        return JavaObject(_ARRAY_SERIALIZER, {_ARRAY_SERIALIZER.name: {
            "eleSer": _java_serializer(element, children[0]), "eleType": children[0],
            "elementGetter": _element_getter(element)}})
    if t.root in ("MAP", "MULTISET"):
        if t.root == "MULTISET":  # a map of the elements to their counts (a new INT NOT NULL)
            key, value, children = t.children[0], _MULTISET_VALUE, [children[0], _java_type(_MULTISET_VALUE)]
        else:
            key, value = t.children
        return JavaObject(_MAP_SERIALIZER, {_MAP_SERIALIZER.name: {
            "keyGetter": _element_getter(key), "keySerializer": _java_serializer(key, children[0]),
            "keyType": children[0], "valueGetter": _element_getter(value),
            "valueSerializer": _java_serializer(value, children[1]), "valueType": children[1]}})
    types = [ftype for _, ftype, _ in t.fields]
    binary = JavaObject(_BINARY_ROW, {_BINARY_ROW.name: {"fixedLengthPartSize": fixed_part_size(len(types)),
                                                         "numFields": len(types)}})
    return JavaObject(_ROW_SERIALIZER, {_ROW_SERIALIZER.name: {
        "binarySerializer": binary,
        "fieldGetters": JavaArray(_GETTERS, [_field_getter(ft, i) for i, ft in enumerate(types)]),
        "fieldSerializers": JavaArray(_SERIALIZERS, [_java_serializer(ft, j) for ft, j in zip(types, children,
                                                                                             strict=True)]),
        "types": JavaArray(_TYPES, children)}})


def _serializer_stream(t: LogicalType) -> bytes:
    """The Java object stream of Flink's serializer of ``t`` (``InstantiationUtil.serializeObject``)."""
    return write_java_object(_java_serializer(t, _java_type(t)))


def _field_parts(t: LogicalType) -> tuple[str, int, list[tuple[str, Any]]]:
    """The versioned snapshot Flink writes for the serializer of a field of type ``t``: its
    class, its version, and what follows the two: ``("int", v)``, ``("type", u)`` (a Java object
    stream of type ``u``), ``("serializer", u)`` (one of Flink's serializer of ``u``) and
    ``("row", u)`` (row ``u``'s snapshot). The one description writing and reading follow."""
    root = t.root
    if root in _SIMPLE_SERIALIZERS:
        cls = _SIMPLE_SERIALIZERS[root]
        return f"{cls}${cls.rsplit('.', 1)[1]}Snapshot", 3, []
    if root == "DECIMAL":
        return (_TYPEUTILS + "DecimalDataSerializer$DecimalSerializerSnapshot", 3,
                [("int", t.precision or 0), ("int", t.scale or 0)])
    if root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        return _TYPEUTILS + "TimestampDataSerializer$TimestampDataSerializerSnapshot", 1, [("int", t.precision or 0)]
    if root == "ROW":
        return _ROW_DATA_SNAPSHOT, RowDataSerializerSnapshot.FLINK_VERSION, [("row", t)]
    if root == "ARRAY":
        element = t.children[0]
        return (_TYPEUTILS + "ArrayDataSerializer$ArrayDataSerializerSnapshot", 3,
                [("type", element), ("serializer", element)])
    key, value = (t.children[0], _MULTISET_VALUE) if root == "MULTISET" else t.children
    return (_TYPEUTILS + "MapDataSerializer$MapDataSerializerSnapshot", 3,
            [("type", key), ("type", value), ("serializer", key), ("serializer", value)])


def _write_row_snapshot(t: LogicalType, out: DataOutputView) -> None:
    out.write_int(len(t.fields))
    for _, ftype, _ in t.fields:
        out.write(write_java_object(_java_type(ftype)))
    out.write(_nested_block(t))


def _nested_block(t: LogicalType) -> bytes:
    """The nested-snapshot block Flink writes after the types of row ``t``."""
    out = DataOutputView()
    out.write_int(_NESTED_MAGIC)
    out.write_int(_NESTED_VERSION)
    out.write_int(len(t.fields))
    for _, ftype, _ in t.fields:
        cls, version, parts = _field_parts(ftype)
        out.write_utf(cls)
        out.write_int(version)
        for kind, item in parts:
            if kind == "int":
                out.write_int(item)
            elif kind == "type":
                out.write(write_java_object(_java_type(item)))
            elif kind == "serializer":
                out.write(_serializer_stream(item))
            else:
                _write_row_snapshot(item, out)
    return out.getvalue()


def _not_derived(where: str, t: LogicalType, what: str) -> SnapshotFormatError:
    return SnapshotFormatError(
        f"RowDataSerializerSnapshot: the field serializers' snapshots are not those Flink's RowDataSerializer "
        f"derives from the field types: at {where} (of type {t}), {what}; the snapshot is corrupt or its "
        "serializers were configured otherwise")


def _read_java(view: DataInputView, data: bytes) -> Any:
    """The Java object stream at ``view``'s position in ``data`` (the bytes ``view`` reads)."""
    obj, end = read_java_object(data, view.position)
    view.skip_bytes(end - view.position)
    return obj


def _read_nested_block(t: LogicalType, view: DataInputView, data: bytes, where: str) -> None:
    """Reads the nested-snapshot block after the types of row ``t``, checking it is the one
    ``_nested_block`` writes, Java streams compared as the values they hold: a stream whose
    objects share otherwise than Flink's parsed types do (a type object in two places) reads
    as the same."""
    head = (view.read_int(), view.read_int(), view.read_int())
    if head != (_NESTED_MAGIC, _NESTED_VERSION, len(t.fields)):
        raise _not_derived(where, t, f"the block starts {head}, should be {(_NESTED_MAGIC, _NESTED_VERSION, len(t.fields))}")
    for name, ftype, _ in t.fields:
        at = f"{where}.{name}"
        cls, version, parts = _field_parts(ftype)
        frame = (view.read_utf(), view.read_int())
        if frame != (cls, version):
            raise _not_derived(at, ftype, f"the snapshot is {frame}, should be {(cls, version)}")
        for kind, item in parts:
            if kind == "int":
                got = view.read_int()
                if got != item:
                    raise _not_derived(at, ftype, f"an int {got}, should be {item}")
            elif kind == "type":
                read = _logical_from_java(_read_java(view, data), at)
                if read != item:
                    raise _not_derived(at, ftype, f"the type {read}, should be {item}")
            elif kind == "serializer":
                difference = graph_difference(_read_java(view, data), _java_serializer(item, _java_type(item)))
                if difference is not None:
                    raise _not_derived(at, ftype, f"its serializer of {item} differs at {difference}")
            else:
                _read_row_snapshot(item, view, data, at)


def _read_row_snapshot(t: LogicalType, view: DataInputView, data: bytes, where: str) -> None:
    """Reads a nested row's snapshot, checking it is the one ``_write_row_snapshot`` writes."""
    count = view.read_int()
    if count != len(t.fields):
        raise _not_derived(where, t, f"{count} field types, should be {len(t.fields)}")
    for name, ftype, _ in t.fields:
        read = _logical_from_java(_read_java(view, data), f"{where}.{name}")
        if read != ftype:
            raise _not_derived(f"{where}.{name}", ftype, f"the type {read}")
    _read_nested_block(t, view, data, where)


_ROW_DATA_SNAPSHOT = _TYPEUTILS + "RowDataSerializer$RowDataSerializerSnapshot"


class RowDataSerializerSnapshot(TypeSerializerSnapshot[tuple[Any, ...]], java_name=_ROW_DATA_SNAPSHOT):
    """Flink's ``RowDataSerializerSnapshot``: version 3 (Flink's, the Flink dialect) is an int
    ``n``, the ``n`` field types each as its own Java object stream
    (``InstantiationUtil.serializeObject``), then the field serializers' snapshots (Flink's
    nested-snapshot block: magic 1333245, version 1, ``n``, each versioned). Version 4 (this
    project's, the reference dialect) adds the top-level field names Flink's form lacks: an int
    ``n`` and per field its UTF name, a bool and, when true, its UTF description.

    The field serializers are those Flink's ``InternalSerializers`` derives from the types, so
    reading checks the block is exactly the one the types give, and writing writes it. An array,
    map or multiset's snapshot holds its element types and serializers as Java object streams;
    a serializer of rows, arrays or maps is a graph of serializers, arrays, serialized lambdas
    (the field and element getters) and the element's logical types, written with the back
    references Flink's objects give (``_java_serializer``: each type node one object, as Flink's
    parser builds them). Reading compares those streams as the values they unfold to, so a type
    graph sharing one object in two places (hand-built Java types may) reads as the same. A
    version-3 snapshot names the top-level fields ``f0..fn-1`` (``positional``).

    Compatibility (the new snapshot judges the old): FLIP-527 by field name, the rules of
    ``RowSerializerSnapshot``: adding nullable fields anywhere, reordering fields, and evolving
    nested rows by the same rules need migration (``row_paths`` name the evolved fields);
    removing or renaming a field, changing a field's type (a row inside an array, map or
    multiset included), adding a NOT NULL field and turning a nullable field NOT NULL are
    incompatible; relaxing NOT NULL to nullable and changing a description are compatible as is
    (the bytes do not change). When either snapshot is positional (Flink's form), Flink 2.3's
    rule applies instead, as for a positional ``RowSerializerSnapshot``: the field types equal
    (nested names, nullability and descriptions included) are compatible as is, anything else is
    incompatible. ``named()`` gives a positional snapshot's by-name form (top-level fields
    ``f0..fn-1``, nested rows with the names Flink's form keeps), which the FLIP-527 rules judge.
    """

    __module__ = "reference.serializers"  # stable identity in savepoints

    VERSION = 4
    FLINK_VERSION = 3

    def __init__(self, serializer: RowDataSerializer | None = None) -> None:
        self.row_type: LogicalType | None = serializer.row_type if serializer is not None else None
        self.positional = serializer.positional if serializer is not None else False

    def get_current_version(self) -> int:
        return self.FLINK_VERSION if snapshot_dialect() == "flink" else self.VERSION

    def write_snapshot(self, target: DataOutputView) -> None:
        assert self.row_type is not None, "write_snapshot of a snapshot neither read nor taken"
        _write_row_snapshot(self.row_type, target)
        if snapshot_dialect() == "flink":
            return
        target.write_int(len(self.row_type.fields))
        for name, _, description in self.row_type.fields:
            target.write_utf(name)
            target.write_boolean(description is not None)
            if description is not None:
                target.write_utf(description)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version not in (1, 2, 3, self.VERSION):
            raise SnapshotFormatError(f"RowDataSerializerSnapshot: version {read_version}, Flink writes 1 to 3 and "
                                      f"this project {self.VERSION}; the snapshot is corrupt or from a newer release")
        count = source.read_int()
        # Each type takes at least its stream header and an object tag.
        if not 0 <= count <= source.available() // 5:
            raise SnapshotFormatError(f"RowDataSerializerSnapshot: {count} field types in {source.available()} "
                                      "bytes; the snapshot is corrupt")
        rest = source.peek(source.available())  # one copy of the rest, read in place
        view = DataInputView(rest)
        types = [_logical_from_java(_read_java(view, rest), f"field {i}") for i in range(count)]
        # Flink's form holds the types without their names (a RowType's children): the
        # top-level fields read back as f0..fn-1, as Flink's restored serializer knows them.
        fields: list[tuple[str, LogicalType, str | None]] = [(f"f{i}", t, None) for i, t in enumerate(types)]
        _read_nested_block(LogicalType("ROW", fields=tuple(fields)), view, rest, "row")
        source.skip_bytes(view.position)
        self.positional = read_version != self.VERSION
        if not self.positional:
            if source.read_int() != count:
                raise SnapshotFormatError("RowDataSerializerSnapshot: the field names do not match the field "
                                          "types in number; the snapshot is corrupt")
            for i in range(count):
                name = source.read_utf()
                description = source.read_utf() if source.read_boolean() else None
                fields[i] = (name, types[i], description)
        try:
            self.row_type = LogicalType("ROW", fields=tuple(fields))
        except ValueError as exc:
            raise SnapshotFormatError(f"RowDataSerializerSnapshot: {exc}; the snapshot is corrupt") from None

    def named(self) -> RowDataSerializerSnapshot:
        """This snapshot judged by name (not positional): a positional one's fields keep the
        names ``f0..fn-1`` it was read with."""
        assert self.row_type is not None
        return RowDataSerializerSnapshot(RowDataSerializer(self.row_type))

    def restore_serializer(self) -> RowDataSerializer:
        assert self.row_type is not None
        restored = RowDataSerializer(self.row_type)
        restored.positional = self.positional
        return restored

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> SchemaCompatibility[Any]:
        if not isinstance(old_snapshot, RowDataSerializerSnapshot):
            return SchemaCompatibility.incompatible(
                f"a {type(old_snapshot).__name__} cannot become a RowData row (RowDataSerializerSnapshot)")
        assert self.row_type is not None and old_snapshot.row_type is not None
        if self.positional or old_snapshot.positional:
            new, old = self.row_type.field_types, old_snapshot.row_type.field_types
            if new != old:
                return SchemaCompatibility.incompatible(
                    f"the row's field types changed from {[str(t) for t in old]} to {[str(t) for t in new]}, and "
                    "one of the snapshots is in Flink's form (no field names): Flink 2.3's "
                    "RowDataSerializerSnapshot requires them equal")
            return SchemaCompatibility.compatible_as_is()
        problems: list[str] = []
        paths = _evolution(self.row_type, old_snapshot.row_type, "", problems)
        if problems:
            return SchemaCompatibility.incompatible("; ".join(problems))
        if paths:
            return SchemaCompatibility.compatible_after_migration(row_paths=paths)
        return SchemaCompatibility.compatible_as_is()

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        """An old row (``prior``'s type) in ``new``'s type: fields matched by name, added fields
        null, nested rows migrated alike, row kinds kept; also written to ``target`` when given
        (FLIP-527's writing form)."""
        if not isinstance(prior, RowDataSerializer) or not isinstance(new, RowDataSerializer):
            raise StateMigrationError(f"RowDataSerializerSnapshot.migrate_element needs RowDataSerializers, got "
                                      f"{type(prior).__name__} and {type(new).__name__}")
        migrated = _migrated(prior.row_type, new.row_type, element)
        if target is not None:
            new.serialize(migrated, target)
        return migrated


def _evolution(new: LogicalType, old: LogicalType, prefix: str, problems: list[str]) -> list[str]:
    """FLIP-527's judgement of row ``old`` becoming row ``new``, fields by name: the row paths
    that migrate; ``problems`` gets what makes it incompatible."""
    old_index = {name: i for i, (name, _, _) in enumerate(old.fields)}
    new_names = {name for name, _, _ in new.fields}
    for name, _, _ in old.fields:
        if name not in new_names:
            problems.append(f"row field {prefix + name!r} was removed or renamed (FLIP-527 allows only adding "
                            "nullable fields, reordering, and evolving nested rows; keep the field)")
    added = [name for name, _, _ in new.fields if name not in old_index]
    for name, ftype, _ in new.fields:
        if name not in old_index and not ftype.nullable:
            problems.append(f"row field {prefix + name!r} was added as NOT NULL; old rows have no value "
                            "for it (declare it nullable)")
    pairs = [(n, nt, old.fields[old_index[n]][1]) for n, nt, _ in new.fields if n in old_index]
    old_order = [n for n, _, _ in old.fields if n in new_names]
    reordered = [a for a, b in zip([p[0] for p in pairs], old_order, strict=True) if a != b]
    paths = [prefix + name for name in added + reordered]
    for name, new_type, old_type in pairs:
        if old_type.nullable and not new_type.nullable:
            problems.append(f"row field {prefix + name!r} changed from nullable to NOT NULL; old rows may hold "
                            "null there (keep it nullable)")
        if new_type.root == "ROW" and old_type.root == "ROW":
            paths += _evolution(new_type, old_type, f"{prefix}{name}.", problems)
        elif new_type.copy(True) != old_type.copy(True):
            problems.append(f"row field {prefix + name!r} changed its type from {old_type} to "
                            f"{new_type} ({_type_change_advice(old_type, new_type)})")
    order = {name: k for k, (name, _, _) in enumerate(new.fields)}
    # as RowSerializerSnapshot orders them: by top-level field, then by path
    return sorted(set(paths), key=lambda p: (order.get(p[len(prefix):].split(".", 1)[0], 0), p))


def _type_change_advice(old: LogicalType, new: LogicalType) -> str:
    collections = ("ARRAY", "MAP", "MULTISET")
    if old.root in collections or new.root in collections:
        return "FLIP-527 evolves rows only, not a row inside an array, map or multiset: keep the old type"
    return "FLIP-527 adds nullable fields and reorders them, it changes no field's type: keep the old type"


def _migrated(old: LogicalType, new: LogicalType, element: Any) -> Any:
    if element is None:
        return None
    index = {name: i for i, (name, _, _) in enumerate(old.fields)}
    values: list[Any] = []
    for name, ftype, _ in new.fields:
        i = index.get(name)
        if i is None:
            values.append(None)
        elif ftype.root == "ROW":
            values.append(_migrated(old.fields[i][1], ftype, element[i]))
        else:
            values.append(element[i])
    kind = element.kind if type(element) is Row else RowKind.INSERT
    return tuple(values) if kind is RowKind.INSERT else Row(values, kind)
