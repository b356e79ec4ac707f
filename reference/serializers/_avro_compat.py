"""Avro schemas as this project reads them, and Avro Java's reader/writer compatibility rules.

``parse_avro_schema`` validates a schema (as ``fastavro.parse_schema`` accepts it: a dict, a list
for a union, or a type name) against the Avro specification, stricter than fastavro where fastavro
is lenient (invalid names, duplicate fields or union branches, nested unions, negative fixed
sizes), and gives a node graph in which every named type is one shared node, plus the schema's
canonical JSON text.

``check_compatibility(reader, writer)`` decides, on the schemas alone, whether data written with
``writer`` can be read with ``reader``, following ``org.apache.avro.SchemaCompatibility``:
promotions int→long/float/double, long→float/double, float→double, string↔bytes; named types
match by unqualified name or by a reader alias equal to the writer's full name (writer aliases
never count; relative aliases take the reader's namespace); fixed sizes equal; every writer enum
symbol known to the reader unless the reader enum has a default; reader fields missing from the
writer need defaults; every writer union branch readable, a reader union needs one branch that
reads the writer; recursion terminates (a pair already being checked counts as compatible);
logical types are ignored. It returns every incompatibility with its kind and location.

Where this differs from Java, on purpose:
- ``full_names=True`` (the default) adds the project's rule that a record's full name may not
  change without a reader alias naming the old full name (Flink: generated classes may not be
  relocated); Java alone accepts a namespace change because it compares unqualified names.
  It also requires an enum or fixed read into a reader union to find a branch of its full name
  (or whose aliases name it): Java's compatibility check accepts a branch of the same
  unqualified name, but its resolver (``bestBranch``) then fails on the data.
- Java memoizes results per pair of schema objects, so a named type used in several places
  reports its problems at the first place, once per use; here each use reports its own
  location. The verdict is the same.
- A reader field matching several writer fields (by name and aliases) makes Java throw
  ``AvroRuntimeException``; here it is the incompatibility ``ambiguous_field``.

Where the PyPI ``avro`` port differs from Java (we follow Java): it never qualifies relative
aliases with the reader's namespace (so a relative alias matches only a writer in the null
namespace), and it resolves a reader field by its name first without checking aliases for a
second match.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from .._errors import StateError

__all__ = [
    "AvroSchemaError",
    "AvroSchema",
    "Incompatibility",
    "parse_avro_schema",
    "check_compatibility",
    "describe_incompatibilities",
    "default_is_valid",
    "MAX_SCHEMA_DEPTH",
]

PRIMITIVES = frozenset(("null", "boolean", "int", "long", "float", "double", "bytes", "string"))
NAMED = frozenset(("record", "enum", "fixed"))
#: Deeper schemas are refused: they are certainly a mistake and would exhaust the stack.
MAX_SCHEMA_DEPTH = 100

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_INT_RANGE = (-(1 << 31), (1 << 31) - 1)
_LONG_RANGE = (-(1 << 63), (1 << 63) - 1)
_FASTAVRO_KEYS = frozenset(("__fastavro_parsed", "__named_schemas"))
_FIELD_KEYS = frozenset(("name", "type", "default", "aliases", "order", "doc"))
_TYPE_KEYS = {
    "record": frozenset(("type", "name", "namespace", "aliases", "doc", "fields")),
    "enum": frozenset(("type", "name", "namespace", "aliases", "doc", "symbols", "default")),
    "fixed": frozenset(("type", "name", "namespace", "aliases", "doc", "size")),
    "array": frozenset(("type", "items")),
    "map": frozenset(("type", "values")),
}


class AvroSchemaError(StateError, ValueError):
    """An Avro schema is invalid; the message says where (a JSON-pointer-like path) and why."""


# -- the node graph ----------------------------------------------------------------------------
class Node:
    """One schema occurrence. Named types are one shared node however often they are used."""

    __slots__ = ("type", "props", "__weakref__")

    def __init__(self, type_: str, props: dict[str, Any]) -> None:
        self.type = type_
        self.props = props  # attributes beyond the structural ones (logicalType, custom ones)


class ArrayNode(Node):
    __slots__ = ("items",)
    items: Node


class MapNode(Node):
    __slots__ = ("values",)
    values: Node


class UnionNode(Node):
    __slots__ = ("branches",)
    branches: tuple[Node, ...]


class NamedNode(Node):
    __slots__ = ("fullname", "name", "namespace", "aliases", "doc")
    fullname: str
    name: str
    namespace: str
    aliases: tuple[str, ...]
    doc: str | None


class RecordNode(NamedNode):
    __slots__ = ("fields", "fields_by_name")
    fields: tuple[Field, ...]
    fields_by_name: dict[str, Field]


class EnumNode(NamedNode):
    __slots__ = ("symbols", "default")
    symbols: tuple[str, ...]
    default: str | None


class FixedNode(NamedNode):
    __slots__ = ("size",)
    size: int


@dataclass(frozen=True)
class Field:
    name: str
    type: Node
    pos: int
    has_default: bool
    default: Any
    aliases: tuple[str, ...]
    order: str | None
    doc: str | None
    props: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class AvroSchema:
    """A validated schema: its node graph, canonical JSON, and what bounded reading needs."""

    root: Node
    canonical: Any  # the canonical schema as JSON-compatible objects
    canonical_json: str
    recursive: bool  # some named type contains itself
    zero_width_items: bool  # some array holds items that may take no bytes at all


def _fail(path: str, what: str) -> AvroSchemaError:
    return AvroSchemaError(f"invalid Avro schema at {path or '/'}: {what}")


def _qualify(name: str, namespace: str) -> str:
    return name if "." in name or not namespace else f"{namespace}.{name}"


class _Parser:
    def __init__(self) -> None:
        self.names: dict[str, NamedNode] = {}
        self.in_progress: set[str] = set()
        self.recursive = False
        self.defaults: list[tuple[str, str, Node, Any]] = []

    def check_defaults(self) -> None:
        for where, name, ftype, default in self.defaults:
            if not default_is_valid(ftype, default):
                raise _fail(
                    f"{where}/default",
                    f"default {default!r} of field {name!r} is not a valid {_describe(ftype)} value "
                    "(a record default needs a finite value for every field)",
                )

    def parse(self, obj: Any, namespace: str, path: str, depth: int) -> Node:
        if depth > MAX_SCHEMA_DEPTH:
            raise _fail(path, f"nested deeper than {MAX_SCHEMA_DEPTH} levels; flatten the schema")
        if isinstance(obj, str):
            return self.reference(obj, namespace, path)
        if isinstance(obj, list):
            return self.union(obj, namespace, path, depth)
        if not isinstance(obj, dict):
            raise _fail(path, f"a schema is a type name, an object or a list, not {type(obj).__name__}")
        if _FASTAVRO_KEYS.intersection(obj):  # a schema fastavro.parse_schema returned
            obj = {k: v for k, v in obj.items() if k not in _FASTAVRO_KEYS}
        type_ = obj.get("type")
        if not isinstance(type_, str):
            raise _fail(path, f'a schema object needs a "type" that is a string, got {type_!r}')
        if type_ in PRIMITIVES:
            node = Node(type_, {k: v for k, v in obj.items() if k != "type"})
            _check_decimal(node, None, path)
            return node
        if type_ in NAMED:
            return self.named(type_, obj, namespace, path, depth)
        if type_ == "error":  # an Avro protocol's error is a record
            return self.named("record", obj, namespace, path, depth)
        if type_ == "array":
            if "items" not in obj:
                raise _fail(path, 'an array needs "items"')
            array = ArrayNode("array", _extra(obj, "array"))
            array.items = self.parse(obj["items"], namespace, f"{path}/items", depth + 1)
            return array
        if type_ == "map":
            if "values" not in obj:
                raise _fail(path, 'a map needs "values"')
            map_ = MapNode("map", _extra(obj, "map"))
            map_.values = self.parse(obj["values"], namespace, f"{path}/values", depth + 1)
            return map_
        return self.reference(type_, namespace, path)

    def reference(self, name: str, namespace: str, path: str) -> Node:
        if name in PRIMITIVES:
            return Node(name, {})
        full = _qualify(name, namespace)
        node = self.names.get(full) or ("." not in name and self.names.get(name)) or None
        if node is None:
            raise _fail(path, f"unknown type {name!r} (named types must be defined before use)")
        if node.fullname in self.in_progress:
            self.recursive = True
        return node

    def union(self, obj: list[Any], namespace: str, path: str, depth: int) -> Node:
        union = UnionNode("union", {})
        branches: list[Node] = []
        seen: set[str] = set()
        for i, item in enumerate(obj):
            branch = self.parse(item, namespace, f"{path}/{i}", depth + 1)
            if branch.type == "union":
                raise _fail(f"{path}/{i}", "a union may not directly contain another union")
            key = branch.fullname if isinstance(branch, NamedNode) else branch.type
            if key in seen:
                raise _fail(f"{path}/{i}", f"the union already has a {key!r} branch")
            seen.add(key)
            branches.append(branch)
        union.branches = tuple(branches)
        return union

    def named(self, type_: str, obj: dict[str, Any], namespace: str, path: str, depth: int) -> Node:
        name = obj.get("name")
        if not isinstance(name, str) or not all(_NAME.match(p) for p in name.split(".")):
            raise _fail(path, f"{type_} name {name!r} is not a valid Avro name ([A-Za-z_][A-Za-z0-9_]*, dotted)")
        if "." in name:
            own_namespace, _, short = name.rpartition(".")
        else:
            given = obj.get("namespace", namespace)
            if given is None:
                given = ""
            if not isinstance(given, str) or (given and not all(_NAME.match(p) for p in given.split("."))):
                raise _fail(path, f"namespace {given!r} is not a valid dotted Avro name")
            own_namespace, short = given, name
        full = _qualify(short, own_namespace)
        if short in PRIMITIVES:
            raise _fail(path, f"{full!r} redefines the primitive type {short!r}")
        if full in self.names:
            raise _fail(path, f"named type {full!r} is defined twice (refer to it by name instead)")
        aliases = obj.get("aliases", [])
        if not isinstance(aliases, list) or not all(
            isinstance(a, str) and all(_NAME.match(p) for p in a.split(".")) for a in aliases
        ):
            raise _fail(f"{path}/aliases", f"aliases must be a list of Avro names, got {aliases!r}")
        doc = obj.get("doc")
        node: NamedNode
        if type_ == "record":
            node = RecordNode("record", _extra(obj, "record"))
        elif type_ == "enum":
            node = EnumNode("enum", _extra(obj, "enum"))
        else:
            node = FixedNode("fixed", _extra(obj, "fixed"))
        node.fullname, node.name, node.namespace = full, short, own_namespace
        node.aliases = tuple(_qualify(a, own_namespace) for a in aliases)
        node.doc = doc if isinstance(doc, str) else None
        self.names[full] = node
        if isinstance(node, RecordNode):
            self.in_progress.add(full)
            self.record_fields(node, obj, own_namespace, path, depth)
            self.in_progress.discard(full)
        elif isinstance(node, EnumNode):
            symbols = obj.get("symbols")
            if not isinstance(symbols, list) or not all(isinstance(s, str) and _NAME.match(s) for s in symbols):
                raise _fail(f"{path}/symbols", f"enum symbols must be a list of Avro names, got {symbols!r}")
            if len(set(symbols)) != len(symbols):
                raise _fail(f"{path}/symbols", f"enum symbols must be unique, got {symbols!r}")
            node.symbols = tuple(symbols)
            node.default = obj.get("default")
            if node.default is not None and node.default not in node.symbols:
                raise _fail(f"{path}/default", f"enum default {node.default!r} is not one of its symbols")
        else:
            size = obj.get("size")
            if type(size) is not int or size < 0:
                raise _fail(f"{path}/size", f"fixed size must be a non-negative integer, got {size!r}")
            node.size = size
            _check_decimal(node, size, path)
        return node

    def record_fields(self, node: RecordNode, obj: dict[str, Any], namespace: str, path: str, depth: int) -> None:
        fields = obj.get("fields")
        if not isinstance(fields, list):
            raise _fail(f"{path}/fields", f'a record needs a "fields" list, got {fields!r}')
        parsed: list[Field] = []
        by_name: dict[str, Field] = {}
        for i, spec in enumerate(fields):
            where = f"{path}/fields/{i}"
            if not isinstance(spec, dict):
                raise _fail(where, f"a field is an object, got {spec!r}")
            name = spec.get("name")
            if not isinstance(name, str) or not _NAME.match(name):
                raise _fail(where, f"field name {name!r} is not a valid Avro name")
            if name in by_name:
                raise _fail(where, f"field {name!r} is defined twice in record {node.fullname}")
            if "type" not in spec:
                raise _fail(where, f'field {name!r} needs a "type"')
            ftype = self.parse(spec["type"], namespace, f"{where}/type", depth + 1)
            aliases = spec.get("aliases", [])
            if not isinstance(aliases, list) or not all(isinstance(a, str) and _NAME.match(a) for a in aliases):
                raise _fail(f"{where}/aliases", f"field aliases must be a list of names, got {aliases!r}")
            order = spec.get("order")
            if order is not None and order not in ("ascending", "descending", "ignore"):
                raise _fail(f"{where}/order", f"order must be ascending, descending or ignore, got {order!r}")
            has_default = "default" in spec
            if has_default:
                # Checked once every record is complete: a default may be a value of a record
                # whose fields are still being parsed (a recursive schema).
                self.defaults.append((where, name, ftype, spec["default"]))
            doc = spec.get("doc")
            field = Field(
                name=name, type=ftype, pos=i, has_default=has_default, default=spec.get("default"),
                aliases=tuple(aliases), order=order, doc=doc if isinstance(doc, str) else None,
                props=tuple(sorted((k, v) for k, v in spec.items() if k not in _FIELD_KEYS)),
            )
            parsed.append(field)
            by_name[name] = field
        node.fields = tuple(parsed)
        node.fields_by_name = by_name


def _check_decimal(node: Node, size: int | None, path: str) -> None:
    """A decimal needs a precision that its bytes can hold and a scale within it (Java would
    silently drop an invalid one, fastavro would use it: refusing it keeps both readings equal)."""
    if node.props.get("logicalType") != "decimal" or node.type not in ("bytes", "fixed"):
        return
    precision, scale = node.props.get("precision"), node.props.get("scale", 0)
    if type(precision) is not int or precision < 1:
        raise _fail(path, f"a decimal needs a positive integer precision, got {precision!r}")
    if type(scale) is not int or not 0 <= scale <= precision:
        raise _fail(path, f"a decimal's scale must be an integer in 0..precision, got {scale!r}")
    if size is not None and precision > int((8 * size - 1) * 0.3010299956639812):
        raise _fail(path, f"precision {precision} does not fit a decimal in {size} bytes")


def _extra(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    keys = _TYPE_KEYS[type_]
    return {k: v for k, v in obj.items() if k not in keys}


def _describe(node: Node) -> str:
    return node.fullname if isinstance(node, NamedNode) else node.type


def default_is_valid(node: Node, value: Any, _expanding: frozenset[int] = frozenset()) -> bool:
    """Whether a JSON default value is a value of ``node`` (Avro's JSON encoding of defaults;
    a union default may match any branch, the first matching one gives its type). A record
    field the value leaves out takes the field's own default, which must be valid and must not
    need itself again (a recursive record's default would be infinite)."""
    t = node.type
    if t == "null":
        return value is None
    if t == "boolean":
        return type(value) is bool
    if t == "int":
        return type(value) is int and _INT_RANGE[0] <= value <= _INT_RANGE[1]
    if t == "long":
        return type(value) is int and _LONG_RANGE[0] <= value <= _LONG_RANGE[1]
    if t in ("float", "double"):
        return type(value) in (int, float) or value in ("NaN", "Infinity", "-Infinity")
    if t == "string":
        return isinstance(value, str)
    if t == "bytes":
        return isinstance(value, str) and all(ord(c) < 256 for c in value)
    if t == "fixed":
        return isinstance(value, str) and len(value) == node.size and all(ord(c) < 256 for c in value)  # type: ignore[attr-defined]
    if t == "enum":
        return isinstance(value, str) and value in node.symbols  # type: ignore[attr-defined]
    if t == "array":
        return isinstance(value, list) and all(default_is_valid(node.items, v, _expanding) for v in value)  # type: ignore[attr-defined]
    if t == "map":
        return isinstance(value, dict) and all(default_is_valid(node.values, v, _expanding) for v in value.values())  # type: ignore[attr-defined]
    if t == "record":
        return isinstance(value, dict) and all(
            default_is_valid(f.type, value[f.name], _expanding) if f.name in value else (
                f.has_default and id(f) not in _expanding
                and default_is_valid(f.type, f.default, _expanding | {id(f)})
            )
            for f in node.fields  # type: ignore[attr-defined]
        )
    if t == "union":
        return any(default_is_valid(b, value, _expanding) for b in node.branches)  # type: ignore[attr-defined]
    return False


def default_value(node: Node, value: Any) -> Any:
    """The Python value (as fastavro reads it, without logical types) of a valid JSON default."""
    t = node.type
    if t in ("float", "double"):
        return float(value)  # also "NaN", "Infinity", "-Infinity"
    if t in ("bytes", "fixed"):
        return value.encode("latin-1")
    if t == "array":
        return [default_value(node.items, v) for v in value]  # type: ignore[attr-defined]
    if t == "map":
        return {k: default_value(node.values, v) for k, v in value.items()}  # type: ignore[attr-defined]
    if t == "record":
        return {
            f.name: default_value(f.type, value[f.name] if f.name in value else f.default)
            for f in node.fields  # type: ignore[attr-defined]
        }
    if t == "union":
        for branch in node.branches:  # type: ignore[attr-defined]
            if default_is_valid(branch, value):
                return default_value(branch, value)
    return value


# -- canonical form ----------------------------------------------------------------------------
def _canonical(node: Node, defined: set[str], namespace: str, docs: bool, logical: bool) -> Any:
    if isinstance(node, NamedNode):
        if node.fullname in defined:
            return node.fullname
        defined.add(node.fullname)
        out: dict[str, Any] = {"type": node.type, "name": node.fullname}
        if "." not in node.fullname and namespace:
            out["namespace"] = ""  # a null-namespace type inside a namespaced one
        if node.aliases:
            out["aliases"] = list(node.aliases)
        if docs and node.doc is not None:
            out["doc"] = node.doc
        if isinstance(node, RecordNode):
            fields = []
            for f in node.fields:
                fo: dict[str, Any] = {"name": f.name, "type": _canonical(f.type, defined, node.namespace, docs, logical)}
                if f.has_default:
                    fo["default"] = f.default
                if f.aliases:
                    fo["aliases"] = list(f.aliases)
                if f.order is not None:
                    fo["order"] = f.order
                if docs and f.doc is not None:
                    fo["doc"] = f.doc
                fo.update(f.props)
                fields.append(fo)
            out["fields"] = fields
        elif isinstance(node, EnumNode):
            out["symbols"] = list(node.symbols)
            if node.default is not None:
                out["default"] = node.default
        else:
            out["size"] = node.size  # type: ignore[attr-defined]
        out.update(_props(node, logical))
        return out
    if isinstance(node, UnionNode):
        return [_canonical(b, defined, namespace, docs, logical) for b in node.branches]
    if isinstance(node, ArrayNode):
        out = {"type": "array", "items": _canonical(node.items, defined, namespace, docs, logical)}
        out.update(_props(node, logical))
        return out
    if isinstance(node, MapNode):
        out = {"type": "map", "values": _canonical(node.values, defined, namespace, docs, logical)}
        out.update(_props(node, logical))
        return out
    props = _props(node, logical)
    return {"type": node.type, **props} if props else node.type


def _props(node: Node, logical: bool) -> dict[str, Any]:
    if logical:
        return node.props
    return {k: v for k, v in node.props.items() if k != "logicalType"}


def canonical_object(schema: AvroSchema, *, docs: bool = True, logical: bool = True) -> Any:
    """The schema as JSON objects: full names, no namespace attributes, each named type defined
    once; ``docs=False`` drops documentation, ``logical=False`` drops logical types."""
    return _canonical(schema.root, set(), "", docs, logical)


def to_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)


def _min_size(node: Node, active: set[int]) -> int:
    """Fewest bytes a value can take (0 for a record still being measured: a lower bound)."""
    if isinstance(node, FixedNode):
        return node.size
    if isinstance(node, RecordNode):
        if id(node) in active:
            return 0
        active.add(id(node))
        try:
            return sum(_min_size(f.type, active) for f in node.fields)
        finally:
            active.discard(id(node))
    return {"null": 0, "float": 4, "double": 8}.get(node.type, 1)  # boolean, int, long, bytes, string, enum, array, map, union


def _has_zero_width_items(node: Node, seen: set[int]) -> bool:
    if id(node) in seen:
        return False
    seen.add(id(node))
    if isinstance(node, ArrayNode):
        return _min_size(node.items, set()) == 0 or _has_zero_width_items(node.items, seen)
    if isinstance(node, MapNode):
        return _has_zero_width_items(node.values, seen)
    if isinstance(node, UnionNode):
        return any(_has_zero_width_items(b, seen) for b in node.branches)
    if isinstance(node, RecordNode):
        return any(_has_zero_width_items(f.type, seen) for f in node.fields)
    return False


def parse_avro_schema(schema: Any) -> AvroSchema:
    """Validate ``schema`` (dict, list or type name) and build its node graph and canonical JSON.

    Raises ``AvroSchemaError`` naming the place and the problem when the schema is invalid.
    """
    parser = _Parser()
    try:
        root = parser.parse(schema, "", "", 0)
        parser.check_defaults()
    except RecursionError:
        raise _fail("", "nested too deeply to parse") from None
    provisional = AvroSchema(root, None, "", parser.recursive, False)
    canonical = canonical_object(provisional)
    return AvroSchema(
        root=root,
        canonical=canonical,
        canonical_json=to_json(canonical),
        recursive=parser.recursive,
        zero_width_items=_has_zero_width_items(root, set()),
    )


# -- compatibility -----------------------------------------------------------------------------
KINDS = (
    "name_mismatch",
    "fixed_size_mismatch",
    "missing_enum_symbols",
    "reader_field_missing_default_value",
    "type_mismatch",
    "missing_union_branch",
    "ambiguous_field",
)

_PROMOTIONS = {
    "long": frozenset(("int",)),
    "float": frozenset(("int", "long")),
    "double": frozenset(("int", "long", "float")),
    "bytes": frozenset(("string",)),
    "string": frozenset(("bytes",)),
}


@dataclass(frozen=True)
class Incompatibility:
    """One reason the reader cannot read the writer's data."""

    kind: str  # one of KINDS (Avro Java's SchemaIncompatibilityType, snake_case)
    location: str  # JSON-pointer-like path in the reader schema, e.g. "/fields/1/type/size"
    message: str

    def __str__(self) -> str:
        return f"{self.kind} at {self.location}: {self.message}"


_Found = tuple[tuple[str, tuple[str, ...], str], ...]


def _pointer(tokens: tuple[str, ...]) -> str:
    return "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in tokens)


class Checker:
    """Avro Java's ``ReaderWriterCompatibilityChecker``: results are memoized per (reader node,
    writer node) pair, a pair met again while it is being checked counts as compatible (that is
    what ends recursion), and problems are kept relative to the pair so that each occurrence
    reports its own location."""

    def __init__(self, full_names: bool = True) -> None:
        self.full_names = full_names
        self.memo: dict[tuple[int, int], _Found | None] = {}
        self._keep: list[Node] = []  # keeps ids in ``memo`` meaningful

    def compatible(self, reader: Node, writer: Node) -> bool:
        return not self.check(reader, writer)

    def check(self, reader: Node, writer: Node) -> _Found:
        key = (id(reader), id(writer))
        if key in self.memo:
            return self.memo[key] or ()
        self.memo[key] = None
        self._keep += (reader, writer)
        found = self._calculate(reader, writer)
        self.memo[key] = found
        return found

    def _nested(self, tokens: tuple[str, ...], reader: Node, writer: Node) -> _Found:
        return tuple((k, tokens + loc, m) for k, loc, m in self.check(reader, writer))

    def _calculate(self, r: Node, w: Node) -> _Found:
        if r.type == w.type:
            t = r.type
            if t in PRIMITIVES:
                return ()
            if t == "array":
                return self._nested(("items",), r.items, w.items)  # type: ignore[attr-defined]
            if t == "map":
                return self._nested(("values",), r.values, w.values)  # type: ignore[attr-defined]
            if t == "fixed":
                found = self._names(r, w)  # type: ignore[arg-type]
                if r.size != w.size:  # type: ignore[attr-defined]
                    found += (("fixed_size_mismatch", ("size",), f"expected: {w.size}, found: {r.size}"),)  # type: ignore[attr-defined]
                return found
            if t == "enum":
                return self._names(r, w) + self._symbols(r, w)  # type: ignore[arg-type]
            if t == "record":
                return self._names(r, w) + self._fields(r, w)  # type: ignore[arg-type]
            # both unions: every writer branch must be readable by the reader union
            found = ()
            for i, branch in enumerate(w.branches):  # type: ignore[attr-defined]
                if self.check(r, branch):
                    found += ((
                        "missing_union_branch", (str(i),),
                        f"reader union lacking writer type: {_java_type(branch)}",
                    ),)
            return found
        if w.type == "union":
            found = ()
            for i, branch in enumerate(w.branches):  # type: ignore[attr-defined]
                found += self._nested((str(i),), r, branch)
            return found
        if r.type == "union":
            by_name = self.full_names and w.type in ("enum", "fixed")
            for branch in r.branches:  # type: ignore[attr-defined]
                if by_name and not same_full_name(branch, w):
                    continue
                if not self.check(branch, w):
                    return ()
            if by_name and any(not self.check(branch, w) for branch in r.branches):  # type: ignore[attr-defined]
                return ((
                    "missing_union_branch", (),
                    f"reader union lacking writer type: {_java_type(w)} {w.fullname} by its full name "  # type: ignore[attr-defined]
                    "(Avro Java reads an enum or fixed into a union branch of the same full name, or one "
                    f"whose aliases name it, and fails on the data otherwise); keep the branch's full name "
                    f"{w.fullname} or name it in the branch's aliases",  # type: ignore[attr-defined]
                ),)
            return (("missing_union_branch", (), f"reader union lacking writer type: {_java_type(w)}"),)
        if w.type in _PROMOTIONS.get(r.type, ()):
            return ()
        return ((
            "type_mismatch", (),
            f"reader type: {_java_type(r)} not compatible with writer type: {_java_type(w)}",
        ),)

    def _names(self, r: NamedNode, w: NamedNode) -> _Found:
        if r.name == w.name or w.fullname in r.aliases:
            if (
                self.full_names and r.type == "record" and r.fullname != w.fullname
                and w.fullname not in r.aliases
            ):
                return ((
                    "name_mismatch", ("name",),
                    f"record full name changed from {w.fullname} to {r.fullname} without an alias "
                    f"(generated classes may not be relocated); add \"{w.fullname}\" to the "
                    "reader record's aliases",
                ),)
            return ()
        return (("name_mismatch", ("name",), f"expected: {w.fullname}"),)

    def _symbols(self, r: EnumNode, w: EnumNode) -> _Found:
        missing = sorted(set(w.symbols) - set(r.symbols))
        if not missing or (r.default is not None and r.default in r.symbols):
            return ()
        return (("missing_enum_symbols", ("symbols",), "[" + ", ".join(missing) + "]"),)

    def _fields(self, r: RecordNode, w: RecordNode) -> _Found:
        found: _Found = ()
        for i, rf in enumerate(r.fields):
            here = ("fields", str(i))
            matches = writer_fields_for(rf, w)
            if len(matches) == 1:
                found += self._nested(here + ("type",), rf.type, matches[0].type)
            elif len(matches) > 1:
                names = ", ".join(m.name for m in matches)
                found += ((
                    "ambiguous_field", here,
                    f"reader field {rf.name} matches several writer fields ({names}) by name "
                    "and aliases; Avro refuses such a schema pair",
                ),)
            elif not rf.has_default:
                if isinstance(rf.type, EnumNode) and rf.type.default is not None:
                    # Java checks such a field's enum against the writer *record*, which is
                    # always a type mismatch; we keep its verdict and its kind.
                    found += self._nested(here + ("type",), rf.type, w)
                else:
                    found += (("reader_field_missing_default_value", here, rf.name),)
        return found


def same_full_name(reader: Node, writer: Node) -> bool:
    """Whether ``reader`` is of ``writer``'s type and, for a named type, has its full name or
    names it among its aliases: how Avro Java's resolver picks a union branch first, and the
    only way it picks one for an enum or fixed."""
    if reader.type != writer.type:
        return False
    if not isinstance(writer, NamedNode):
        return True
    return reader.fullname == writer.fullname or writer.fullname in reader.aliases  # type: ignore[attr-defined]


def writer_fields_for(reader_field: Field, writer: RecordNode) -> list[Field]:
    """Java's ``lookupWriterField``: the writer field of the same name, plus one per reader
    alias naming a writer field (more than one match is an error)."""
    found = []
    direct = writer.fields_by_name.get(reader_field.name)
    if direct is not None:
        found.append(direct)
    for alias in reader_field.aliases:
        match = writer.fields_by_name.get(alias)
        if match is not None:
            found.append(match)
    return found


def _java_type(node: Node) -> str:
    return node.type.upper()


def check_compatibility(reader: Any, writer: Any, *, full_names: bool = True) -> list[Incompatibility]:
    """Every reason data written with ``writer`` cannot be read with ``reader`` (empty: readable).

    ``reader`` and ``writer`` are schemas (dict, list, type name) or ``AvroSchema`` objects.
    ``full_names=False`` gives Avro Java's verdict alone, without the project's rule that a
    record's full name may not change without an alias.
    """
    r = reader if isinstance(reader, AvroSchema) else parse_avro_schema(reader)
    w = writer if isinstance(writer, AvroSchema) else parse_avro_schema(writer)
    found = Checker(full_names).check(r.root, w.root)
    return [Incompatibility(kind, _pointer(loc), message) for kind, loc, message in found]


def describe_incompatibilities(found: list[Incompatibility]) -> str:
    return "; ".join(str(i) for i in found)
