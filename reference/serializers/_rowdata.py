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
from .._javaser import JavaClassDesc, JavaEnum, JavaObject, SharedString, read_java_object, write_java_object
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


# Flink's serializer of each root (InternalSerializers.create) as a Java object and its snapshot.
_SINGLETON = JavaClassDesc(_BASE + "TypeSerializerSingleton", 8766687317209282373, 2, (),
                           JavaClassDesc("org.apache.flink.api.common.typeutils.TypeSerializer", 1, 2, (), None))
_SIMPLE_SERIALIZERS = {
    "BOOLEAN": _BASE + "BooleanSerializer", "TINYINT": _BASE + "ByteSerializer",
    "SMALLINT": _BASE + "ShortSerializer", "INTEGER": _BASE + "IntSerializer", "DATE": _BASE + "IntSerializer",
    "TIME_WITHOUT_TIME_ZONE": _BASE + "IntSerializer", "BIGINT": _BASE + "LongSerializer",
    "FLOAT": _BASE + "FloatSerializer", "DOUBLE": _BASE + "DoubleSerializer",
    "CHAR": _TYPEUTILS + "StringDataSerializer", "VARCHAR": _TYPEUTILS + "StringDataSerializer",
    "BINARY": _BASE + "array.BytePrimitiveArraySerializer", "VARBINARY": _BASE + "array.BytePrimitiveArraySerializer",
}
_NESTED_MAGIC, _NESTED_VERSION = 1333245, 1


def _java_serializer(t: LogicalType, where: str) -> JavaObject:
    if t.root in _SIMPLE_SERIALIZERS:
        return JavaObject(JavaClassDesc(_SIMPLE_SERIALIZERS[t.root], 1, 2, (), _SINGLETON))
    if t.root == "DECIMAL":
        desc = JavaClassDesc(_TYPEUTILS + "DecimalDataSerializer", 1, 2,
                             (("I", "precision", None), ("I", "scale", None)), _SINGLETON.superclass)
        return JavaObject(desc, {desc.name: {"precision": t.precision, "scale": t.scale}})
    if t.root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        desc = JavaClassDesc(_TYPEUTILS + "TimestampDataSerializer", 1, 2, _PRECISION, _SINGLETON.superclass)
        return JavaObject(desc, {desc.name: {"precision": t.precision}})
    raise SnapshotFormatError(
        f"RowDataSerializerSnapshot: {where} is an array, map or multiset of {t}; Flink's snapshot of it holds "
        "its element serializer as a Java object with arrays and lambdas, which this reader does not model "
        "(elements of the numeric, string, binary, decimal, date, time and timestamp types are)")


def _field_snapshot(t: LogicalType, out: DataOutputView, where: str) -> None:
    """The versioned snapshot Flink writes for the serializer of a field of type ``t``."""
    def frame(name: str, version: int) -> None:
        out.write_utf(name)
        out.write_int(version)

    root = t.root
    if root in _SIMPLE_SERIALIZERS:
        cls = _SIMPLE_SERIALIZERS[root]
        frame(f"{cls}${cls.rsplit('.', 1)[1]}Snapshot", 3)
    elif root == "DECIMAL":
        frame(_TYPEUTILS + "DecimalDataSerializer$DecimalSerializerSnapshot", 3)
        out.write_int(t.precision or 0)
        out.write_int(t.scale or 0)
    elif root in ("TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"):
        frame(_TYPEUTILS + "TimestampDataSerializer$TimestampDataSerializerSnapshot", 1)
        out.write_int(t.precision or 0)
    elif root == "ROW":
        frame(_ROW_DATA_SNAPSHOT, RowDataSerializerSnapshot.FLINK_VERSION)
        _write_row_snapshot(t, out, where)
    elif root == "ARRAY":
        frame(_TYPEUTILS + "ArrayDataSerializer$ArrayDataSerializerSnapshot", 3)
        out.write(write_java_object(_java_type(t.children[0])))
        out.write(write_java_object(_java_serializer(t.children[0], where)))
    else:  # MAP, MULTISET
        key, value = (t.children[0], _MULTISET_VALUE) if root == "MULTISET" else t.children
        frame(_TYPEUTILS + "MapDataSerializer$MapDataSerializerSnapshot", 3)
        for part in (_java_type(key), _java_type(value), _java_serializer(key, where),
                     _java_serializer(value, where)):
            out.write(write_java_object(part))


def _write_row_snapshot(t: LogicalType, out: DataOutputView, where: str = "row") -> None:
    out.write_int(len(t.fields))
    for _, ftype, _ in t.fields:
        out.write(write_java_object(_java_type(ftype)))
    out.write(_nested_block(t))


_ROW_DATA_SNAPSHOT = _TYPEUTILS + "RowDataSerializer$RowDataSerializerSnapshot"


class RowDataSerializerSnapshot(TypeSerializerSnapshot[tuple[Any, ...]], java_name=_ROW_DATA_SNAPSHOT):
    """Flink's ``RowDataSerializerSnapshot``: version 3 (Flink's, the Flink dialect) is an int
    ``n``, the ``n`` field types each as its own Java object stream
    (``InstantiationUtil.serializeObject``), then the field serializers' snapshots (Flink's
    nested-snapshot block: magic 1333245, version 1, ``n``, each versioned). Version 4 (this
    project's, the reference dialect) adds the top-level field names Flink's form lacks: an int
    ``n`` and per field its UTF name, a bool and, when true, its UTF description.

    The field serializers are those Flink's ``InternalSerializers`` derives from the types, so
    reading checks the block is exactly the one the types give, and writing writes it; an array,
    map or multiset whose elements are rows, arrays or maps is refused (its snapshot holds a
    Java-serialized serializer with lambdas). A version-3 snapshot names the top-level fields
    ``f0..fn-1`` (``positional``).

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
        types = []
        rest, end = source.peek(source.available()), 0  # one copy of the rest, read in place
        for i in range(count):
            obj, end = read_java_object(rest, end)
            types.append(_logical_from_java(obj, f"field {i}"))
        source.skip_bytes(end)
        # Flink's form holds the types without their names (a RowType's children): the
        # top-level fields read back as f0..fn-1, as Flink's restored serializer knows them.
        fields: list[tuple[str, LogicalType, str | None]] = [(f"f{i}", t, None) for i, t in enumerate(types)]
        nested = _nested_block(LogicalType("ROW", fields=tuple(fields)))
        if source.peek(len(nested)) != nested:
            raise SnapshotFormatError(
                "RowDataSerializerSnapshot: the field serializers' snapshots are not those Flink's "
                f"RowDataSerializer derives from the field types {[str(t) for t in types]}; the snapshot is "
                "corrupt or its serializers were configured otherwise")
        source.skip_bytes(len(nested))
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
            problems.append(f"row field {prefix + name!r} changed its type from {old_type} to {new_type} "
                            "(FLIP-527 evolves rows only, not a row inside an array, map or multiset)")
    order = {name: k for k, (name, _, _) in enumerate(new.fields)}
    # as RowSerializerSnapshot orders them: by top-level field, then by path
    return sorted(set(paths), key=lambda p: (order.get(p[len(prefix):].split(".", 1)[0], 0), p))


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


def _nested_block(t: LogicalType) -> bytes:
    """The nested-snapshot block Flink writes after the types of row ``t``."""
    out = DataOutputView()
    out.write_int(_NESTED_MAGIC)
    out.write_int(_NESTED_VERSION)
    out.write_int(len(t.fields))
    for name, ftype, _ in t.fields:
        _field_snapshot(ftype, out, name)
    return out.getvalue()
