"""The one rule from a serializer snapshot to an Arrow type, and of a decoded value to that type.

``arrow_form(snapshot)`` gives an ``ArrowForm``: the Arrow ``type`` the values a serializer with
this snapshot writes take, and ``convert(value)``, the Python value pyarrow builds that type
from (a value as ``read_flink_savepoint`` or a restored serializer decodes it). No user class is
needed: the type comes from the snapshot alone.

- String, primitives and ``byte[]`` as themselves (``string``, ``bool``, ``int8`` .. ``int64``,
  ``float32``, ``float64``, ``binary``); Nullable: its inner type;
- Row: a struct of its field names (``f0..fN`` when the snapshot keeps none, as Flink's
  ``RowSerializer`` snapshot does); the row kind is not kept;
- POJO: a struct of its field names in the snapshot's order (Flink's: by name);
- Tuple: a struct ``f0..fN``; List: a list; Map: a map;
- Enum: ``string`` (the constant's name);
- Avro: the schema's Arrow form (record -> struct, array -> list, map -> map of string keys,
  enum -> string, fixed/bytes -> binary, a union of null and one type -> that type, any other
  union -> ``string`` holding the value as JSON);
- ``TimeWindow``: struct ``start``, ``end`` (int64); ``GlobalWindow``: ``string``;
- a TTL wrapper: a struct ``value``, ``ttl_last_access`` (int64, epoch ms) - where a state's top
  level value carries the TTL, the export puts ``ttl_last_access`` in a column of its own
  (``reference.savepoint._export``);
- anything else (Kryo, a snapshot class the reference does not know, a user's own serializer):
  ``binary`` holding the value's bytes (an ``Undecoded``'s ``data``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from .. import StateError

__all__ = ["ArrowForm", "arrow_form", "arrow_type", "list_form"]


@dataclass(frozen=True)
class ArrowForm:
    """The Arrow type of a snapshot's values and the conversion of one value to it."""

    type: pa.DataType
    convert: Callable[[Any], Any]


def arrow_type(snapshot: Any) -> pa.DataType:
    """The Arrow type of the values written with a serializer of ``snapshot``."""
    return arrow_form(snapshot).type


def _same(value: Any) -> Any:
    return value


def _bytes(value: Any) -> Any:
    if value is None:
        return None
    data = getattr(value, "data", value)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise StateError(f"a value of type {type(value).__name__} where the serializer snapshot says the "
                     "value stays as bytes (undecodable); the savepoint's snapshots and values disagree")


_BINARY = ArrowForm(pa.binary(), _bytes)


def _nullable(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def run(value: Any) -> Any:
        return None if value is None else convert(value)
    return run


def _struct(names: list[str], forms: list[ArrowForm], by_name: bool) -> ArrowForm:
    struct = pa.struct([pa.field(n, f.type) for n, f in zip(names, forms, strict=True)])
    converts = [f.convert for f in forms]
    pairs = list(zip(names, converts, strict=True))

    def convert(value: Any) -> Any:
        if value is None:
            return None
        if by_name and isinstance(value, dict):
            return {n: c(value.get(n)) for n, c in pairs}
        if by_name and not isinstance(value, (tuple, list)):
            return {n: c(getattr(value, n, None)) for n, c in pairs}
        items = tuple(value)
        if len(items) != len(pairs):
            raise StateError(f"a value of {len(items)} fields where the serializer snapshot has "
                             f"{len(pairs)} ({names}); the savepoint's snapshots and values disagree")
        return {n: c(v) for (n, c), v in zip(pairs, items, strict=True)}

    return ArrowForm(struct, convert)


def list_form(element: ArrowForm) -> ArrowForm:
    """A list of ``element`` (a List snapshot's values; a list state's value)."""
    convert = element.convert
    return ArrowForm(pa.list_(element.type), _nullable(lambda value: [convert(v) for v in value]))


def _nested(snapshot: Any) -> list[Any]:
    return list(getattr(snapshot, "nested_snapshots", None) or [])


def _enum_name(value: Any) -> Any:
    if value is None or isinstance(value, str):
        return value
    return getattr(value, "name", str(value))


def arrow_form(snapshot: Any) -> ArrowForm:
    """``ArrowForm`` of ``snapshot`` (see the module docstring for the rule)."""
    from ..serializers import (
        AvroSerializerSnapshot,
        BooleanSerializerSnapshot,
        ByteSerializerSnapshot,
        BytesSerializerSnapshot,
        DoubleSerializerSnapshot,
        EnumSerializerSnapshot,
        FloatSerializerSnapshot,
        IntSerializerSnapshot,
        ListSerializerSnapshot,
        LongSerializerSnapshot,
        MapSerializerSnapshot,
        NullableSerializerSnapshot,
        PojoSerializerSnapshot,
        RowSerializerSnapshot,
        ShortSerializerSnapshot,
        StringSerializerSnapshot,
        TupleSerializerSnapshot,
    )
    from ..serializers._flink_runtime import (
        GlobalWindowSerializerSnapshot,
        TimeWindowSerializerSnapshot,
        TtlSerializerSnapshot,
    )

    simple = {
        StringSerializerSnapshot: pa.string(), BooleanSerializerSnapshot: pa.bool_(),
        ByteSerializerSnapshot: pa.int8(), ShortSerializerSnapshot: pa.int16(),
        IntSerializerSnapshot: pa.int32(), LongSerializerSnapshot: pa.int64(),
        FloatSerializerSnapshot: pa.float32(), DoubleSerializerSnapshot: pa.float64(),
    }
    kind = type(snapshot)
    if kind in simple:
        return ArrowForm(simple[kind], _same)
    if kind is BytesSerializerSnapshot:
        return ArrowForm(pa.binary(), _same)
    nested = _nested(snapshot)
    if isinstance(snapshot, NullableSerializerSnapshot) and len(nested) == 1:
        inner = arrow_form(nested[0])
        return ArrowForm(inner.type, _nullable(inner.convert))
    if isinstance(snapshot, TtlSerializerSnapshot) and len(nested) == 2:
        inner = arrow_form(nested[1])
        struct = pa.struct([pa.field("value", inner.type), pa.field("ttl_last_access", pa.int64())])
        convert = inner.convert

        def ttl(value: Any) -> Any:
            return None if value is None else {"value": convert(value.value), "ttl_last_access": value.last_access}
        return ArrowForm(struct, ttl)
    if isinstance(snapshot, ListSerializerSnapshot) and len(nested) == 1:
        return list_form(arrow_form(nested[0]))
    if isinstance(snapshot, MapSerializerSnapshot) and len(nested) == 2:
        key, value_form = arrow_form(nested[0]), arrow_form(nested[1])
        convert_key, convert_value = key.convert, value_form.convert
        return ArrowForm(pa.map_(key.type, value_form.type),
                         _nullable(lambda value: [(convert_key(k), convert_value(v)) for k, v in value.items()]))
    if isinstance(snapshot, TupleSerializerSnapshot) and nested:
        return _struct([f"f{i}" for i in range(len(nested))], [arrow_form(n) for n in nested], by_name=False)
    if isinstance(snapshot, RowSerializerSnapshot) and nested:
        names = list(getattr(snapshot, "field_names", None) or [])
        if len(names) != len(nested):
            names = [f"f{i}" for i in range(len(nested))]
        return _struct(names, [arrow_form(n) for n in nested], by_name=False)
    if isinstance(snapshot, PojoSerializerSnapshot):
        names = list(snapshot.field_names)
        if names and len(names) == len(nested):
            return _struct(names, [arrow_form(n) for n in nested], by_name=True)
    if isinstance(snapshot, EnumSerializerSnapshot):
        return ArrowForm(pa.string(), _enum_name)
    if isinstance(snapshot, TimeWindowSerializerSnapshot):
        struct = pa.struct([pa.field("start", pa.int64()), pa.field("end", pa.int64())])
        return ArrowForm(struct, _nullable(lambda w: {"start": w.start, "end": w.end}))
    if isinstance(snapshot, GlobalWindowSerializerSnapshot):
        return ArrowForm(pa.string(), _nullable(lambda w: "GlobalWindow"))
    if isinstance(snapshot, AvroSerializerSnapshot):
        schema = _avro_schema(snapshot)
        if schema is not None:
            return _avro_form(schema, {})
    return _BINARY


# -- Avro ------------------------------------------------------------------------------------------
def _avro_schema(snapshot: Any) -> Any:
    serializer = getattr(snapshot, "_serializer", None)
    text = getattr(serializer, "schema_json", None)
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


_AVRO_SIMPLE = {"string": pa.string(), "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(),
                "float": pa.float32(), "double": pa.float64(), "bytes": pa.binary(), "null": pa.null()}


def _avro_form(schema: Any, names: dict[str, Any]) -> ArrowForm:
    if isinstance(schema, str):
        if schema in _AVRO_SIMPLE:
            return ArrowForm(_AVRO_SIMPLE[schema], _same)
        if schema in names:
            return _avro_form(names[schema], names)
        return ArrowForm(pa.string(), _json_text)
    if isinstance(schema, list):
        others = [s for s in schema if s != "null"]
        if len(others) == 1:
            inner = _avro_form(others[0], names)
            return ArrowForm(inner.type, _nullable(inner.convert))
        return ArrowForm(pa.string(), _nullable(_json_text))
    kind = schema.get("type")
    if kind == "record":
        if "name" in schema:
            names[schema["name"]] = schema
            if "namespace" in schema:
                names[f"{schema['namespace']}.{schema['name']}"] = schema
        fields = [f["name"] for f in schema.get("fields", [])]
        if not fields:
            return ArrowForm(pa.string(), _nullable(_json_text))
        return _struct(fields, [_avro_form(f["type"], names) for f in schema["fields"]], by_name=True)
    if kind == "array":
        element = _avro_form(schema["items"], names)
        convert = element.convert
        return ArrowForm(pa.list_(element.type), _nullable(lambda value: [convert(v) for v in value]))
    if kind == "map":
        value_form = _avro_form(schema["values"], names)
        convert = value_form.convert
        return ArrowForm(pa.map_(pa.string(), value_form.type),
                         _nullable(lambda value: [(k, convert(v)) for k, v in value.items()]))
    if kind == "enum":
        return ArrowForm(pa.string(), _enum_name)
    if kind == "fixed":
        return ArrowForm(pa.binary(), _same)
    if isinstance(kind, (str, list, dict)):
        return _avro_form(kind, names)
    return ArrowForm(pa.string(), _nullable(_json_text))


def _json_text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)
