"""``AvroSerializer``: Avro data in Flink's encoding (or, on request, Avro's binary encoding)
with schema evolution.

``AvroSerializer(schema)`` writes what Flink's ``AvroSerializer`` writes (its
``DataOutputEncoder``: fixed-width big-endian numbers, int-prefixed strings and bytes, int union
and enum indexes; ``_avro_flink`` has the table); ``AvroSerializer(schema, encoding="binary")``
writes Avro's standard binary encoding (fastavro's schemaless form). The snapshot records the
encoding: Flink's snapshot versions 1-3 mean Flink's encoding, this project's version 1 (what
release 0.1.0 wrote) the binary one, so old savepoints keep restoring; a change of encoding is
compatible after migration.

Values are what fastavro reads and writes (dicts for records, strings for enum symbols, bytes for
fixed and bytes, lists, dicts for maps, logical types converted). The snapshot keeps the writer
schema as canonical JSON text; a new serializer judges an old snapshot on the two schemas with
Avro Java's compatibility rules (see ``_avro_compat``): identical schemas (documentation aside)
are compatible as is, readable ones after migration, anything else is incompatible with every
reason and its place in the schema.

In Flink's encoding, records go through code generated for the schema (``_codegen``,
``_avro_flink.gen_support``) that reads and writes the encoding directly; the methods through
fastavro stay the reference it falls back to and agrees with.

Reading is bounded: corrupt bytes raise ``SerializationError`` (``EndOfDataError`` when they
end too soon), never an exception of fastavro's; a negative union or enum index (which fastavro
would count from the end) is refused; for recursive schemas and arrays of items that take no
bytes (where fastavro would recurse past the C stack or loop on a corrupt count) a bounded
pure-Python pass checks the bytes first.

Migration reads the old bytes with a bounded resolving decoder of our own (writer schema = the
prior serializer's, reader schema = the new one's) and writes the result with fastavro. It
follows Avro Java's resolution where fastavro's differs: defaults of bytes, fixed and float
fields take their Avro types, nested record defaults get their own fields' defaults, values
promoted to float are rounded to 32 bits, a union value goes into the reader branch of its own
type first, reader logical types apply after resolution, and named types match only as the
compatibility check decided (never a fixed read as a record, never an alias by short name).
One deliberate difference from Java: bytes promoted to a string that are not UTF-8 become
U+FFFD (Java keeps them as raw bytes in its Utf8, which a Python str cannot hold).
"""

from __future__ import annotations

import json
import struct
import threading
from collections.abc import Iterable
from io import BytesIO
from typing import Any

from fastavro import parse_schema as _fastavro_parse
from fastavro import schemaless_reader as _fastavro_read
from fastavro import schemaless_writer as _fastavro_write

from .._bounds import MAX_JSON_DEPTH, ZERO_WIDTH_ALLOWANCE, json_depth_exceeds
from .._compat import SchemaCompatibility
from .._errors import (
    EndOfDataError,
    NoFlinkFormError,
    SerializationError,
    SnapshotFormatError,
    StateMigrationError,
)
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import TypeSerializerSnapshot, add_snapshot_alias, snapshot_dialect
from . import _codegen
from ._avro_compat import (
    AvroSchema,
    AvroSchemaError,
    Checker,
    Incompatibility,
    NamedNode,
    Node,
    RecordNode,
    _min_size,
    _pointer,
    canonical_object,
    default_value,
    describe_incompatibilities,
    parse_avro_schema,
    same_full_name,
    to_json,
    writer_fields_for,
)
from ._avro_flink import binary_to_flink, flink_to_binary, gen_read, gen_skip, gen_support, gen_write
from ._primitives import StringSerializer

__all__ = ["AvroSerializer", "AvroSerializerSnapshot", "AvroSchemaError", "MAX_NESTING", "ENCODINGS"]

#: ``"flink"``: Flink's AvroSerializer encoding (the default); ``"binary"``: Avro's standard one.
ENCODINGS = ("flink", "binary")
GENERIC_RECORD = "org.apache.avro.generic.GenericRecord"

#: Deepest nesting of records, arrays and maps read or written for a recursive schema: deeper
#: data would overflow fastavro's C stack (a crash, not an error).
MAX_NESTING = 200
#: Items of arrays (and entries of maps) whose items take no bytes (e.g. ``array<null>``) that one
#: record may hold beyond one per byte: their count is not bounded by the bytes available, so
#: a corrupt count is bounded by the record's element budget (``reference._bounds``).
MAX_ZERO_WIDTH_ITEMS = ZERO_WIDTH_ALLOWANCE

_FLOAT = struct.Struct("<f")
_DOUBLE = struct.Struct("<d")
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def _window(source: Any) -> tuple[bytes, int, int]:
    """The bytes under ``source`` and the read position, without copying when possible."""
    if type(source) is DataInputView and isinstance(source._data, bytes):
        return source._data, source._pos, source._end
    data = source.peek(source.available())
    return data, 0, len(data)


def _schema_label(schema: AvroSchema) -> str:
    root = schema.root
    return root.fullname if isinstance(root, NamedNode) else root.type


# -- bounded decoding and resolution ------------------------------------------------------------
class _Resolution:
    """What reading ``writer`` data as ``reader`` needs: the verdict, and per reader union and
    record the chosen branch / field pairing (memoized, as schemas may be recursive)."""

    def __init__(self, reader: AvroSchema, writer: AvroSchema) -> None:
        self.reader, self.writer = reader, writer
        self.checker = Checker(full_names=True)
        self.incompatibilities = [
            Incompatibility(kind, _pointer(loc), message)
            for kind, loc, message in self.checker.check(reader.root, writer.root)
        ]
        self._branches: dict[tuple[int, int], tuple[Any, Node]] = {}
        self._pairings: dict[tuple[int, int], tuple[list[tuple[Any, Any]], list[Any]]] = {}
        # The checker's memo marks pairs in progress: a concurrent lookup must not see them.
        self._lock = threading.Lock()

    def branch(self, reader_union: Any, writer: Node) -> tuple[Any, Node]:
        """Avro's rule: the first reader branch that reads the writer's type; returns the tag
        fastavro's tuple notation uses to write exactly that branch, and the branch."""
        key = (id(reader_union), id(writer))
        found = self._branches.get(key)
        if found is None:
            with self._lock:
                return self._choose_branch(key, reader_union, writer)
        return found

    def _choose_branch(self, key: tuple[int, int], reader_union: Any, writer: Node) -> tuple[Any, Node]:
        found = self._branches.get(key)
        if found is None:
            # As Avro Java's resolver (bestBranch): a readable branch of the writer's own type
            # (same full name, or an alias naming it, for named types) first, then the first
            # readable one (promotion, a record of another full name); an enum or fixed only by
            # its full name. Taking the first readable branch outright, as fastavro does, would
            # turn bytes into a string when a union lists string before bytes.
            branches = reader_union.branches
            exact = [b for b in branches if same_full_name(b, writer)]
            rest = [] if writer.type in ("enum", "fixed") else branches
            for branch in [*exact, *rest]:
                if self.checker.compatible(branch, writer):
                    tag = branch.fullname if isinstance(branch, NamedNode) else branch.type
                    found = self._branches[key] = (tag, branch)
                    break
            else:
                raise SerializationError(
                    f"no branch of the reader union reads a writer {writer.type}; the schemas "
                    "are incompatible (resolve_schema_compatibility says why)"
                )
        return found

    def pairing(self, reader: RecordNode, writer: RecordNode) -> tuple[list[tuple[Any, Any]], list[Any]]:
        """Per writer field, the reader field it fills (or None: skipped); reader fields the
        writer lacks with their default values."""
        key = (id(reader), id(writer))
        found = self._pairings.get(key)
        if found is None:
            target: dict[str, Any] = {}
            missing = []
            for rf in reader.fields:
                matches = writer_fields_for(rf, writer)
                if matches:
                    target[matches[0].name] = rf
                else:
                    missing.append((rf.name, default_value(rf.type, rf.default)))
            pairs = [(wf, target.get(wf.name)) for wf in writer.fields]
            found = self._pairings[key] = (pairs, missing)
        return found


class _Decoder:
    """A bounded Avro binary decoder over ``data[pos:end]``; with a resolution it reads writer
    data into the reader's shape (union values tagged for fastavro's tuple notation)."""

    __slots__ = ("data", "pos", "end", "depth", "zero_items", "zero_limit", "resolution", "zero_width")

    def __init__(
        self, data: bytes, pos: int, end: int, resolution: _Resolution | None = None,
        zero_limit: int = MAX_ZERO_WIDTH_ITEMS,
    ) -> None:
        self.data, self.pos, self.end = data, pos, end
        self.depth = 0
        self.zero_items = 0
        self.zero_limit = zero_limit
        self.resolution = resolution
        self.zero_width: dict[int, bool] = {}

    def _error(self, what: str) -> SerializationError:
        return SerializationError(f"corrupt Avro data at byte {self.pos}: {what}")

    def take(self, n: int, what: str) -> bytes:
        pos = self.pos
        if n < 0:
            raise self._error(f"negative {what} length {n}")
        if pos + n > self.end:
            raise EndOfDataError(
                f"Avro {what} needs {n} bytes at offset {pos} but only {self.end - pos} remain; "
                "the data is truncated or a length in it is corrupt"
            )
        self.pos = pos + n
        return self.data[pos : pos + n]

    def long(self) -> int:
        data, pos, end = self.data, self.pos, self.end
        acc = shift = 0
        while True:
            if pos >= end:
                raise EndOfDataError(f"Avro varint runs past the end of the data at offset {pos}")
            b = data[pos]
            pos += 1
            acc |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
            if shift > 63:
                raise self._error("a varint longer than 10 bytes")
        self.pos = pos
        value = (acc >> 1) ^ -(acc & 1)
        if not _LONG_MIN <= value <= _LONG_MAX:
            raise self._error(f"varint {value} does not fit a long")
        return value

    def index(self, size: int, what: str) -> int:
        i = self.long()
        if not 0 <= i < size:
            raise self._error(f"{what} index {i} outside 0..{size - 1}")
        return i

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self._error(
                f"records, arrays and maps nested deeper than {MAX_NESTING} levels (the limit "
                "for recursive schemas)"
            )

    def count(self, items: Node, what: str) -> int:
        """The item count of the next block (0: the end), bounded by the bytes left."""
        n = self.long()
        if n < 0:
            n = -n
            if self.long() < 0:
                raise self._error(f"negative {what} block size")
        if n:
            zero = self.zero_width.get(id(items))
            if zero is None:
                zero = self.zero_width[id(items)] = _min_size(items, set()) == 0
            if zero:
                self.zero_items += n
                if self.zero_items > self.zero_limit:
                    raise self._error(
                        f"more than {self.zero_limit} items of an empty type in one record (the "
                        f"record's element budget: one per byte plus {MAX_ZERO_WIDTH_ITEMS})"
                    )
            elif n > self.end - self.pos:
                raise self._error(f"{what} block of {n} items with {self.end - self.pos} bytes left")
        return n

    def read(self, w: Any, r: Any = None) -> Any:
        t = w.type
        if t == "union":
            wb = w.branches[self.index(len(w.branches), "union branch")]
            if r is None:
                return self.read(wb, None)
            if r.type == "union":
                tag, rb = self.resolution.branch(r, wb)  # type: ignore[union-attr]
                return (tag, self.read(wb, rb))
            return self.read(wb, r)
        if r is not None and r.type == "union":
            tag, rb = self.resolution.branch(r, w)  # type: ignore[union-attr]
            return (tag, self.read(w, rb))
        if t == "null":
            return None
        if t == "boolean":
            b = self.take(1, "boolean")[0]
            if b > 1:
                raise self._error(f"boolean byte {b} (only 0 and 1 are valid)")
            return b == 1
        if t in ("int", "long"):
            v = self.long()
            if t == "int" and not _INT_MIN <= v <= _INT_MAX:
                raise self._error(f"int value {v} does not fit 32 bits")
            return float(v) if r is not None and r.type in ("float", "double") else v
        if t == "float":
            return _FLOAT.unpack(self.take(4, "float"))[0]
        if t == "double":
            return _DOUBLE.unpack(self.take(8, "double"))[0]
        if t in ("bytes", "string"):
            raw = self.take(self.long(), t)
            if t == "string":  # what the writer's serializer cannot read is corrupt, promoted or not
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise self._error(f"string is not UTF-8 ({exc.reason} at {exc.start})") from None
                return raw if r is not None and r.type == "bytes" else text
            if r is None or r.type == "bytes":
                return raw
            if t == "bytes":
                # promoted to string: Java keeps malformed bytes in its Utf8, a str cannot;
                # U+FFFD is what Java's Utf8.toString() shows for them
                return raw.decode("utf-8", "replace")
        if t == "fixed":
            return self.take(w.size, "fixed")
        if t == "enum":
            symbol = w.symbols[self.index(len(w.symbols), "enum symbol")]
            if r is not None and symbol not in r.symbols:
                if r.default is None:
                    raise SerializationError(f"enum symbol {symbol!r} is unknown to the reader enum {r.fullname}")
                return r.default
            return symbol
        self.enter()
        try:
            if t == "array":
                items_r = r.items if r is not None else None
                out: list[Any] = []
                while n := self.count(w.items, "array"):
                    for _ in range(n):
                        out.append(self.read(w.items, items_r))
                return out
            if t == "map":
                values_r = r.values if r is not None else None
                result: dict[str, Any] = {}
                while n := self.count(w.values, "map"):
                    for _ in range(n):
                        key = self.read_key()
                        result[key] = self.read(w.values, values_r)
                return result
            # record
            if r is None:
                return {f.name: self.read(f.type, None) for f in w.fields}
            pairs, missing = self.resolution.pairing(r, w)  # type: ignore[union-attr]
            values: dict[str, Any] = {}
            for wf, rf in pairs:
                if rf is None:
                    self.read(wf.type, None)
                else:
                    values[rf.name] = self.read(wf.type, rf.type)
            for name, default in missing:
                values[name] = _copy_value(default)
            return {rf.name: values[rf.name] for rf in r.fields}
        finally:
            self.depth -= 1

    def read_key(self) -> str:
        raw = self.take(self.long(), "map key")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self._error(f"map key is not UTF-8 ({exc.reason})") from None


def _copy_value(value: Any) -> Any:
    """A deep copy of an Avro value (dicts, lists, tuples; everything else is immutable)."""
    t = type(value)
    if t is dict:
        return {k: _copy_value(v) for k, v in value.items()}
    if t is list:
        return [_copy_value(v) for v in value]
    if t is tuple:
        return tuple(_copy_value(v) for v in value)
    if t is bytearray:
        return bytearray(value)
    return value


def _nesting_within(value: Any, limit: int) -> bool:
    """Whether dicts and lists in ``value`` nest at most ``limit`` deep (iteratively)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > limit and not isinstance(item, tuple):
            return False
        step = 0 if isinstance(item, tuple) else 1
        stack.extend((child, depth + step) for child in children)
    return True


def _fastavro_schema(canonical: Any, what: str) -> Any:
    try:
        return _fastavro_parse(json.loads(to_json(canonical)))
    except Exception as exc:  # fastavro raises many types; its message is what matters
        raise AvroSchemaError(f"fastavro cannot use the {what}: {type(exc).__name__}: {exc}") from None


class _NonNegativeIndex(list):
    """A union's branches or an enum's symbols as fastavro's reader sees them: a negative index
    (corrupt data) raises IndexError instead of counting from the end.

    fastavro's compiled reader indexes these lists with the index read from the data; for a list
    that is not exactly ``list`` Cython adds ``len()`` to a negative index before calling
    ``__getitem__``, so ``__len__`` says 0 to keep it negative. Only reading uses these lists;
    ``_index_guard_works`` checks the behaviour once and the guard is dropped if it fails.
    """

    __slots__ = ()

    def __len__(self) -> int:
        return 0

    def __getitem__(self, index: Any) -> Any:
        if type(index) is int and index < 0:
            raise IndexError(f"negative union or enum index {index}")
        return list.__getitem__(self, index)


def _guard_indices(node: Any, seen: set[int]) -> Any:
    """Replace, in a parsed fastavro schema, every union and enum symbol list by a
    ``_NonNegativeIndex`` (in place for dicts; returns the replacement for a union)."""
    if isinstance(node, list):
        return _NonNegativeIndex(_guard_indices(branch, seen) for branch in node)
    if not isinstance(node, dict) or id(node) in seen:
        return node
    seen.add(id(node))
    kind = node.get("type")
    if kind == "enum":
        node["symbols"] = _NonNegativeIndex(node["symbols"])
    elif kind in ("record", "error"):
        for field in node["fields"]:
            field["type"] = _guard_indices(field["type"], seen)
    elif kind == "array":
        node["items"] = _guard_indices(node["items"], seen)
    elif kind == "map":
        node["values"] = _guard_indices(node["values"], seen)
    for named in node.get("__named_schemas", {}).values():
        _guard_indices(named, seen)
    return node


class _FastavroForm:
    """A schema parsed for fastavro once: for writing, and with index guards for reading.

    fastavro parses a schema on every call unless it is a parsed record, so any other top-level
    schema is wrapped as the only field of a record (same bytes) and unwrapped by the caller.
    """

    __slots__ = ("write", "read", "wrapped")

    def __init__(self, canonical: Any, names: set[str], what: str) -> None:
        self.wrapped = not (isinstance(canonical, dict) and canonical["type"] == "record")
        if self.wrapped:
            name = next(f"AvroSerializerRoot{i}" for i in range(len(names) + 1) if f"AvroSerializerRoot{i}" not in names)
            canonical = {"type": "record", "name": name, "fields": [{"name": "v", "type": canonical}]}
        self.write = _fastavro_schema(canonical, what)
        read = _fastavro_schema(canonical, what)
        self.read = _guard_indices(read, set()) if _index_guard_works() else read


_GUARD_WORKS: list[bool] = []


def _index_guard_works() -> bool:
    """Whether fastavro's reader, with guarded lists, still reads valid data and refuses
    negative indices (checked once per process)."""
    if not _GUARD_WORKS:
        schema = {"type": "record", "name": "GuardCheck", "fields": [
            {"name": "e", "type": {"type": "enum", "name": "GuardEnum", "symbols": ["a", "b"]}},
            {"name": "u", "type": ["null", "int"]},
        ]}
        parsed = _guard_indices(_fastavro_parse(schema), set())
        works = True
        try:
            works = _fastavro_read(BytesIO(b"\x02\x02\x0a"), parsed, None) == {"e": "b", "u": 5}
            for corrupt in (b"\x01\x02\x0a", b"\x02\x01\x0a"):
                try:
                    _fastavro_read(BytesIO(corrupt), parsed, None)
                    works = False
                except IndexError:
                    pass
        except Exception:
            works = False
        _GUARD_WORKS.append(works)
    return _GUARD_WORKS[0]


# -- the serializer ----------------------------------------------------------------------------
class AvroSerializer(_codegen.GeneratedCodec, TypeSerializer[Any]):
    __module__ = "reference.serializers"  # stable public identity
    """Avro binary encoding of one schema, through fastavro (Flink's ``AvroSerializer``).

    ``schema`` is what ``fastavro.parse_schema`` accepts (a dict, a list for a union, a type
    name) or, through ``AvroSerializer.from_json``, JSON text. An invalid schema raises
    ``AvroSchemaError`` (a ``StateError`` and ``ValueError``) saying where and why. Equality,
    hashing and pickling go by the schema's canonical JSON (``schema_json``).

    What fastavro's writer decides: a union value goes to the first branch that accepts its
    Python value (so in a union listing double before int, an int is written as a double), and
    maps are written in dict order (equal maps built in another order give other bytes, so an
    Avro map is a poor key). Recursive schemas are limited to ``MAX_NESTING`` levels.
    """

    def __init__(self, schema: Any, *, encoding: str = "flink", runtime_type: str = GENERIC_RECORD) -> None:
        if encoding not in ENCODINGS:
            raise ValueError(f"AvroSerializer: unknown encoding {encoding!r}; use one of {', '.join(ENCODINGS)}")
        parsed = schema if isinstance(schema, AvroSchema) else parse_avro_schema(schema)
        self.schema_json = parsed.canonical_json
        #: ``"flink"`` (Flink's AvroSerializer encoding) or ``"binary"`` (Avro's standard one).
        self.encoding = encoding
        #: The Java class Flink's snapshot names for the records (generic, or a specific class).
        self.runtime_type = runtime_type
        self._setup(parsed)

    def _setup(self, parsed: AvroSchema) -> None:
        self._cache_avro = parsed
        self._cache_names = _named_types(parsed)
        self._cache_fastavro = _FastavroForm(parsed.canonical, self._cache_names, "schema")
        self._cache_guard = parsed.recursive or parsed.zero_width_items
        self._cache_raw: Any = None
        self._cache_resolutions: dict[str, _Resolution] = {}
        #: The generated functions this schema takes (Flink's encoding only; ``_avro_flink``).
        self._cache_gen = (
            gen_support(parsed.root) if self.encoding == "flink" and not self._cache_guard else set()
        )
        _codegen.install(self)

    @classmethod
    def from_json(cls, text: str, **options: Any) -> AvroSerializer:
        """A serializer for a schema given as JSON text (an ``.avsc`` file's content)."""
        if isinstance(text, str) and json_depth_exceeds(text, MAX_JSON_DEPTH):
            raise AvroSchemaError(
                f"the Avro schema's JSON nests deeper than {MAX_JSON_DEPTH} levels; it is corrupt "
                "or not a schema"
            )
        try:
            schema = json.loads(text)
        except (TypeError, ValueError, RecursionError) as exc:
            raise AvroSchemaError(f"the Avro schema is not valid JSON: {exc}") from None
        return cls(schema, **options)

    @property
    def schema(self) -> Any:
        """The canonical schema as JSON objects (a fresh copy)."""
        return json.loads(self.schema_json)

    @property
    def avro_schema(self) -> AvroSchema:
        return self._cache_avro

    # -- data ---------------------------------------------------------------------------------
    # Records go through code generated for the schema (``_codegen.GeneratedCodec``) where
    # ``_avro_flink.gen_support`` allows; the generic methods below define them.
    def _gen_declines(self, kind: str) -> bool:
        return kind not in self._cache_gen

    def _gen_read(self, g: Any, out: Any) -> None:
        gen_read(g, self._cache_avro.root, out)

    def _gen_write(self, g: Any, value: Any) -> None:
        gen_write(g, self._cache_avro.root, value)

    def _gen_skip(self, g: Any) -> None:
        gen_skip(g, self._cache_avro.root)

    def _serialize_generic(self, value: Any, target: DataOutputView) -> None:
        if self._cache_guard and not _nesting_within(value, MAX_NESTING):
            raise SerializationError(
                f"{self!r}: the value nests records, arrays and maps deeper than {MAX_NESTING} "
                "levels, the limit for recursive schemas"
            )
        form = self._cache_fastavro
        buf = BytesIO()
        try:
            _fastavro_write(buf, form.write, {"v": value} if form.wrapped else value)
        except Exception as exc:  # fastavro raises ValueError, TypeError, AttributeError, ...
            raise SerializationError(
                f"{self!r} cannot write {_short(value)}: {type(exc).__name__}: {exc}; the value "
                "does not match the schema"
            ) from None
        self._write_encoded(buf.getvalue(), target)

    def _write_encoded(self, binary: bytes, target: DataOutputView) -> None:
        """Write one datum given in binary form in this serializer's encoding."""
        if self.encoding == "flink":
            binary = binary_to_flink(self._cache_avro.root, binary)[0]
        target.write(binary)

    def _deserialize_generic(self, source: DataInputView) -> Any:
        if self.encoding == "flink":
            data, pos, end = _window(source)
            binary, stop = flink_to_binary(self._cache_avro.root, data, pos, end)
            value = self._from_binary(binary)
            source.skip_bytes(stop - pos)
            return value
        return self._read_binary(source)

    def _read_binary(self, source: DataInputView) -> Any:
        data, pos, end = _window(source)
        if self._cache_guard:
            self._bounded_read(data, pos, end, source)
        form = self._cache_fastavro
        buf = BytesIO(data)  # shares ``data``: no copy
        buf.seek(pos)
        try:
            value: Any = _fastavro_read(buf, form.read, None)
            if form.wrapped:
                value = value["v"]
        except EOFError as exc:
            raise EndOfDataError(
                f"{self!r}: Avro data ends too soon ({exc}); it is truncated or corrupt"
            ) from None
        except Exception as exc:  # IndexError, KeyError, UnicodeDecodeError, ... from fastavro
            raise SerializationError(
                f"{self!r}: corrupt Avro data: {type(exc).__name__}: {exc}"
            ) from None
        stop = buf.tell()
        if stop > end:
            raise EndOfDataError(f"{self!r}: Avro data ends too soon; it is truncated or corrupt")
        source.skip_bytes(stop - pos)
        return value

    def to_bytes(self, value: Any) -> bytes:
        out = DataOutputView()
        self.serialize(value, out)
        return out.getvalue()

    def from_bytes(self, data: bytes) -> Any:
        """One value from exactly ``data`` (bytes left over are an error)."""
        if self.encoding == "flink" and type(data) is bytes:
            source = DataInputView(data)
            value = self.deserialize(source)
            if source.available():
                raise SerializationError(
                    f"{self!r} left {source.available()} of {len(data)} bytes unread after one "
                    "value; the bytes were not written with this schema or are corrupt"
                )
            return value
        return self._from_binary(data)

    def _from_binary(self, data: bytes) -> Any:
        """One value from exactly ``data`` in the binary encoding."""
        if type(data) is not bytes or self._cache_guard:
            source = DataInputView(data)
            result = self._read_binary(source)
            if source.available():
                raise SerializationError(
                    f"{self!r} left {source.available()} of {len(data)} bytes unread after one "
                    "value; the bytes were not written with this schema or are corrupt"
                )
            return result
        form = self._cache_fastavro
        buf = BytesIO(data)  # the common case without the view: as cheap as fastavro alone
        try:
            value: Any = _fastavro_read(buf, form.read, None)
            if form.wrapped:
                value = value["v"]
        except EOFError as exc:
            raise EndOfDataError(f"{self!r}: Avro data ends too soon ({exc}); it is truncated or corrupt") from None
        except Exception as exc:
            raise SerializationError(f"{self!r}: corrupt Avro data: {type(exc).__name__}: {exc}") from None
        if buf.tell() != len(data):
            raise SerializationError(
                f"{self!r} left {len(data) - buf.tell()} of {len(data)} bytes unread after one "
                "value; the bytes were not written with this schema or are corrupt"
            )
        return value

    def _bounded_read(self, data: bytes, pos: int, end: int, source: Any = None) -> int:
        """Check one value with the bounded decoder; its items of empty types are charged to
        ``source``'s element budget (the record's, shared with enclosing collections)."""
        budget = getattr(source, "elements_left", None)
        decoder = _Decoder(data, pos, end, zero_limit=budget() if budget else MAX_ZERO_WIDTH_ITEMS)
        try:
            decoder.read(self._cache_avro.root)
        except RecursionError:
            raise SerializationError(f"{self!r}: Avro data nests too deeply to read") from None
        if budget and decoder.zero_items:
            source.charge_elements(decoder.zero_items, f"{self!r}: items of empty types")
        return decoder.pos

    def _copy_serialized_generic(self, source: DataInputView, target: DataOutputView) -> None:
        if type(source) is DataInputView:
            start = source.position
            self.deserialize(source)
            target.write(source.slice_from(start))
        else:
            self.serialize(self.deserialize(source), target)

    def copy(self, value: Any) -> Any:
        return _copy_value(value)

    def create_instance(self) -> Any:
        return None

    def duplicate(self) -> AvroSerializer:
        return self  # stateless: the parsed schema is only read

    def snapshot_configuration(self) -> AvroSerializerSnapshot:
        return AvroSerializerSnapshot(self)

    # -- migration support --------------------------------------------------------------------
    def _resolution(self, writer: AvroSerializer) -> _Resolution:
        """How this (reader) schema reads data of ``writer``'s schema; cached per writer."""
        found = self._cache_resolutions.get(writer.schema_json)
        if found is None:
            if len(self._cache_resolutions) > 32:
                self._cache_resolutions.clear()
            found = _Resolution(self._cache_avro, writer._cache_avro)
            self._cache_resolutions[writer.schema_json] = found
        return found

    def _write_raw(self, value: Any, target: DataOutputView) -> None:
        """Write a resolved value (no logical types, unions in tuple notation)."""
        form = self._cache_raw
        if form is None:
            form = self._cache_raw = _FastavroForm(
                canonical_object(self._cache_avro, logical=False), self._cache_names,
                "schema without logical types",
            )
        buf = BytesIO()
        try:
            _fastavro_write(buf, form.write, {"v": value} if form.wrapped else value)
        except Exception as exc:
            raise SerializationError(
                f"{self!r} cannot write the migrated value {_short(value)}: "
                f"{type(exc).__name__}: {exc}"
            ) from None
        self._write_encoded(buf.getvalue(), target)

    def _documentation_free_json(self) -> str:
        cached = getattr(self, "_cache_nodoc", None)
        if cached is None:
            cached = self._cache_nodoc = to_json(canonical_object(self._cache_avro, docs=False))
        return cached

    # -- identity -----------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return self is other or (
            type(other) is type(self)
            and other.schema_json == self.schema_json  # type: ignore[attr-defined]
            and other.encoding == self.encoding  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash(self.schema_json)

    def __getstate__(self) -> dict[str, Any]:
        return {"schema_json": self.schema_json, "encoding": self.encoding, "runtime_type": self.runtime_type}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.schema_json = state["schema_json"]
        self.encoding = state.get("encoding", "binary")
        self.runtime_type = state.get("runtime_type", GENERIC_RECORD)
        self._setup(parse_avro_schema(json.loads(self.schema_json)))

    def __deepcopy__(self, memo: dict[int, Any]) -> AvroSerializer:
        return self

    def __repr__(self) -> str:
        suffix = ", encoding='binary'" if self.encoding == "binary" else ""
        return f"AvroSerializer({_schema_label(self._cache_avro)}{suffix})"


def _named_types(schema: AvroSchema) -> set[str]:
    names: set[str] = set()
    stack = [schema.root]
    while stack:
        node = stack.pop()
        if isinstance(node, NamedNode):
            if node.fullname in names:
                continue
            names.add(node.fullname)
        if isinstance(node, RecordNode):
            stack += [f.type for f in node.fields]
        for attribute in ("items", "values"):
            if hasattr(node, attribute):
                stack.append(getattr(node, attribute))
        stack += getattr(node, "branches", ())
    return names


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _avro_serializer(what: str, serializer: Any) -> AvroSerializer:
    if not isinstance(serializer, AvroSerializer):
        raise StateMigrationError(
            f"Avro migration needs AvroSerializers; the {what} serializer is {serializer!r}"
        )
    return serializer


class AvroSerializerSnapshot(
    TypeSerializerSnapshot[Any],
    java_name="org.apache.flink.formats.avro.typeutils.AvroSerializerSnapshot",
):
    """The writer schema, the runtime type and, through the version, the encoding.

    - version 3 (Flink's current form, written for the Flink encoding in both dialects): the
      runtime type (``org.apache.avro.generic.GenericRecord`` or a specific record class) and
      the schema JSON, each as a Flink ``StringValue`` string (varint length + 1, UTF-16 code
      units as varints);
    - version 2 (Flink 1.11): the same two as Java modified UTF-8 (``writeUTF``);
    - version 1, Flink's (before 1.11): the schema as ``writeUTF``;
    - version 1, this project's (release 0.1.0, written for the binary encoding): an int byte
      length, then the schema as UTF-8 (no 64 KiB limit). The two version-1 forms differ in
      their first two bytes: zero for this project's (a length below 64 KiB), the non-zero
      ``writeUTF`` length for Flink's.

    Versions 2 and 3 and Flink's version 1 mean Flink's encoding; this project's version 1 the
    binary one. The schema text read is written back unchanged. The new snapshot judges the old
    one with Avro's resolution rules; a change of encoding alone is compatible after migration.
    """

    __module__ = "reference.serializers"  # stable identity in savepoints

    BINARY_VERSION = 1
    FLINK_VERSION = 3

    def __init__(self, serializer: AvroSerializer | None = None) -> None:
        self._serializer = serializer
        self._schema_text: str | None = None  # the schema JSON as read, written back as is

    def get_current_version(self) -> int:
        return self.BINARY_VERSION if self._configured().encoding == "binary" else self.FLINK_VERSION

    def _configured(self) -> AvroSerializer:
        if self._serializer is None:
            raise SnapshotFormatError(
                "this AvroSerializerSnapshot holds no schema; read it with read_snapshot or "
                "take it from AvroSerializer.snapshot_configuration()"
            )
        return self._serializer

    def write_snapshot(self, target: DataOutputView) -> None:
        serializer = self._configured()
        if serializer.encoding == "binary":
            if snapshot_dialect() == "flink":
                raise NoFlinkFormError(
                    f"{serializer!r} writes Avro's binary encoding, which Flink's AvroSerializer "
                    "cannot read: it has no snapshot in the Flink dialect; use the default "
                    "encoding (Flink's) for state Flink should restore"
                )
            data = serializer.schema_json.encode("utf-8")
            target.write_int(len(data))
            target.write(data)
            return
        strings = StringSerializer()
        strings.serialize(serializer.runtime_type, target)
        strings.serialize(self._schema_text or serializer.schema_json, target)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        encoding, runtime_type = "flink", GENERIC_RECORD
        if read_version == 3:
            strings = StringSerializer()
            runtime, schema_text = strings.deserialize(source), strings.deserialize(source)
            if runtime is None or schema_text is None:
                raise SnapshotFormatError("AvroSerializerSnapshot: a null runtime type or schema; the snapshot is corrupt")
            runtime_type, text = runtime, schema_text
        elif read_version == 2:
            runtime_type, text = source.read_utf(), source.read_utf()
        elif read_version == 1 and source.available() >= 2 and source.peek(2) != b"\0\0":
            text = source.read_utf()
        elif read_version == 1:
            encoding, text = "binary", self._read_sized_text(source)
        else:
            raise SnapshotFormatError(
                f"AvroSerializerSnapshot: unsupported version {read_version} (this reader knows "
                "1 to 3)"
            )
        try:
            self._serializer = AvroSerializer.from_json(text, encoding=encoding, runtime_type=runtime_type)
        except AvroSchemaError as exc:
            raise SnapshotFormatError(f"AvroSerializerSnapshot holds an unusable schema: {exc}") from None
        self._schema_text = text if encoding == "flink" else None

    @staticmethod
    def _read_sized_text(source: DataInputView) -> str:
        size = source.read_int()
        if size < 0 or size > source.available():
            raise SnapshotFormatError(
                f"AvroSerializerSnapshot: schema length {size} with {source.available()} bytes "
                "left; the snapshot is corrupt or truncated"
            )
        data = source.read_fully(size)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotFormatError(f"AvroSerializerSnapshot: the schema is not UTF-8 ({exc.reason})") from None

    def restore_serializer(self) -> AvroSerializer:
        return self._configured()

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> SchemaCompatibility[Any]:
        new = self._configured()
        if not isinstance(old_snapshot, AvroSerializerSnapshot):
            return SchemaCompatibility.incompatible(
                f"state written by {type(old_snapshot).__name__} cannot be read as Avro "
                f"({new!r}); keep the previous serializer"
            )
        old = old_snapshot._configured()
        if old._documentation_free_json() == new._documentation_free_json() and old.encoding == new.encoding:
            return SchemaCompatibility.compatible_as_is()
        found = new._resolution(old).incompatibilities
        if found:
            return SchemaCompatibility.incompatible(
                f"Avro schema {_schema_label(new._cache_avro)} (new, reader) cannot read data "
                f"written with the old schema {_schema_label(old._cache_avro)} (writer) by Avro's "
                f"schema resolution rules; {len(found)} incompatibilit"
                f"{'y' if len(found) == 1 else 'ies'}: {describe_incompatibilities(found)}. "
                "Keep the change readable: give new fields defaults, only widen types, keep enum "
                "symbols (or give the enum a default) and rename records and fields with aliases"
            )
        return SchemaCompatibility.compatible_after_migration()

    def migrate_state(
        self,
        prior_serializer: TypeSerializer[Any],
        new_serializer: TypeSerializer[Any],
        source: DataInputView,
        target: DataOutputView,
    ) -> None:
        """Read one old record with the writer (prior) schema resolved into the reader (new)
        schema, and write it with the new schema."""
        prior = _avro_serializer("prior", prior_serializer)
        new = _avro_serializer("new", new_serializer)
        resolution = new._resolution(prior)
        if resolution.incompatibilities:
            raise StateMigrationError(
                f"cannot migrate Avro data of {prior!r} to {new!r}: "
                f"{describe_incompatibilities(resolution.incompatibilities)}"
            )
        data, start, end = _window(source)
        pos = start
        if prior.encoding == "flink":  # resolution reads the binary form
            binary, consumed = flink_to_binary(prior._cache_avro.root, data, start, end)
            data, pos, end = binary, 0, len(binary)
        budget = getattr(source, "elements_left", None)
        decoder = _Decoder(data, pos, end, resolution, zero_limit=budget() if budget else MAX_ZERO_WIDTH_ITEMS)
        try:
            value = decoder.read(prior._cache_avro.root, new._cache_avro.root)
        except RecursionError:
            raise SerializationError(f"{prior!r}: Avro data nests too deeply to migrate") from None
        if budget and decoder.zero_items:
            source.charge_elements(decoder.zero_items, f"{prior!r}: items of empty types")
        source.skip_bytes(consumed - start if prior.encoding == "flink" else decoder.pos - start)
        new._write_raw(value, target)

    def migrate_element(
        self,
        prior_serializer: TypeSerializer[Any],
        new_serializer: TypeSerializer[Any],
        element: Any,
        target: DataOutputView | None = None,
    ) -> Any:
        """The value the new serializer reads after migrating ``element`` (a value read by the
        prior serializer): exactly what migrating its bytes gives."""
        prior = _avro_serializer("prior", prior_serializer)
        new = _avro_serializer("new", new_serializer)
        out = DataOutputView()
        self.migrate_state(prior, new, DataInputView(prior.to_bytes(element)), out)
        data = out.getvalue()
        if target is not None:
            target.write(data)
        return new.from_bytes(data)


# Release 0.1.0 recorded this snapshot under its private module's name; such savepoints keep
# restoring (new ones are written under the public identity).
add_snapshot_alias("reference.serializers._avro:AvroSerializerSnapshot", AvroSerializerSnapshot)
