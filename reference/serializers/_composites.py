"""Composite serializers: Nullable, List, Map and Tuple, with composite snapshots."""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from typing import Any

from .._compat import OuterSchemaCompatibility, SchemaCompatibility
from .._errors import SerializationError, SnapshotFormatError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import (
    CompositeTypeSerializerSnapshot,
    TypeSerializerSnapshot,
    migrated_element,
    snapshot_dialect,
)
from . import _codegen
from ._primitives import StringSerializer, _FixedWidth

__all__ = [
    "NullableSerializer", "ListSerializer", "MapSerializer", "TupleSerializer",
    "NullableSerializerSnapshot", "ListSerializerSnapshot", "MapSerializerSnapshot",
    "TupleSerializerSnapshot",
]


def _check_serializer(what: str, serializer: object) -> None:
    if not isinstance(serializer, TypeSerializer):
        raise TypeError(f"{what} must be a TypeSerializer, got {type(serializer).__name__}")


def refused(target: DataOutputView, start: int, where: str | None, exc: SerializationError) -> SerializationError:
    """Undo a refused record's partial bytes; the error, prefixed by the part it refused."""
    target.truncate(start)
    return SerializationError(f"{where}: {exc}") if where else exc


_INT = struct.Struct(">i")

#: One record's migration on bytes: reads one record of the old layout, writes it in the new.
ByteMigration = Callable[[DataInputView, DataOutputView], None]


def _gen_size(g: Any, zero_width: bool = False) -> Any:
    """Fragment: a list's or map's int size at ``pos``, bounded by the bytes left (one byte per
    element at least: sizes beyond that take the generic path) unless its elements are written
    as no bytes at all (``zero_width``: a serializer of fixed length 0, whose lists may hold
    more elements than bytes), and charged to the record's element budget as
    ``DataInputView.charge_elements`` does."""
    n, left = g.var(), g.var()
    g.emit("{n} = {unpack}(data, pos)[0]", n=n, unpack=g.const(_INT.unpack_from))
    g.emit("pos += 4")
    g.emit("if {n} < 0: raise Bail" if zero_width else "if {n} < 0 or {n} > end - pos: raise Bail", n=n)
    g.emit("{left} = source._elements - {n}", left=left, n=n)
    g.emit("if {left} < 0: raise Bail", left=left)
    g.emit("source._elements = {left}", left=left)
    return n


def _read_size(source: DataInputView, what: str) -> int:
    """A map's size, or a list's where no zero-width element is expected: at most one element
    per byte left, charged to the record's element budget."""
    size = source.read_int()
    if size < 0 or size > source.available():
        raise SerializationError(
            f"{what} {size} with {source.available()} bytes left; the data is corrupt or truncated"
        )
    source.charge_elements(size, what)
    return size


def _migrate_nested(
    snapshot: TypeSerializerSnapshot[Any], prior: TypeSerializer[Any], new: TypeSerializer[Any], value: Any
) -> Any:
    return migrated_element(snapshot, prior, new, value)


class NullableSerializer(TypeSerializer[Any]):
    """Adds a null flag to any serializer (Flink's ``NullableSerializer``).

    With ``padded=True`` and an inner serializer of fixed length, a null is followed by that
    many zero bytes so that the record keeps a fixed length.
    """

    __module__ = "reference.serializers"  # stable identity in savepoints


    def __init__(self, inner: TypeSerializer[Any], padded: bool = False) -> None:
        _check_serializer("NullableSerializer's inner serializer", inner)
        self.inner = inner
        self.padding_length = inner.length if padded and inner.length > 0 else 0
        # Padding only exists for a fixed-length inner serializer; normalising the flag keeps
        # equality by configuration true after a restore (the snapshot holds only the length).
        self.padded = self.padding_length > 0

    @classmethod
    def _with_padding_length(cls, inner: TypeSerializer[Any], padding_length: int) -> NullableSerializer:
        serializer = cls(inner, padded=padding_length > 0)
        serializer.padding_length = padding_length
        return serializer

    def serialize(self, value: Any, target: DataOutputView) -> None:
        if value is None:
            target.write_boolean(True)
            if self.padding_length:
                target.write(bytes(self.padding_length))
        else:
            start = len(target)
            target.write_boolean(False)
            try:
                self.inner.serialize(value, target)
            except SerializationError as exc:
                raise refused(target, start, None, exc) from None

    def deserialize(self, source: DataInputView) -> Any:
        if source.read_boolean():
            if self.padding_length:
                source.skip_bytes(self.padding_length)
            return None
        return self.inner.deserialize(source)

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        is_null = source.read_boolean()
        target.write_boolean(is_null)
        if is_null:
            if self.padding_length:
                target.write(source.read_fully(self.padding_length))
        else:
            self.inner.copy_serialized(source, target)

    def byte_migration(self, new: NullableSerializer, inner: ByteMigration) -> ByteMigration:
        """One record of this layout in ``new``'s: the null flag kept (a null written with
        ``new``'s padding), a value migrated by ``inner``."""
        padding = self.padding_length
        null = b"\x01" + bytes(new.padding_length)

        def run(source: DataInputView, target: DataOutputView) -> None:
            if source.read_boolean():
                if padding:
                    source.skip_bytes(padding)
                target.write(null)
            else:
                target.write(b"\x00")
                inner(source, target)

        return run

    # -- generated-code fragments (reference.serializers._codegen) ---------------------------
    def _gen_padding(self, g: Any) -> None:
        """In the null branch: move over the padding, bounded by the bytes left."""
        if self.padding_length:
            g.emit("pos += {n}", n=self.padding_length)
            g.emit("if pos > end: raise Bail")

    def _gen_read(self, g: Any, out: Any) -> None:
        g.emit("pos += 1")
        with g.block("if data[pos - 1]:"):
            self._gen_padding(g)
            g.emit("{out} = None", out=out)
        with g.block("else:"):
            g.read(self.inner, out)

    def _gen_write(self, g: Any, value: Any) -> None:
        with g.block("if {v} is None:", v=value):
            g.emit("buf += {null}", null=g.const(b"\x01" + bytes(self.padding_length)))
        with g.block("else:"):
            g.emit("buf.append(0)")
            g.write(self.inner, value)

    def _gen_skip(self, g: Any) -> None:
        g.emit("pos += 1")
        with g.block("if data[pos - 1]:"):
            g.emit("if data[pos - 1] != 1: raise Bail")  # the copy writes the flag as 1
            self._gen_padding(g)
        with g.block("else:"):
            g.skip(self.inner)

    def copy(self, value: Any) -> Any:
        return None if value is None else self.inner.copy(value)

    def duplicate(self) -> NullableSerializer:
        inner = self.inner.duplicate()
        return self if inner is self.inner else self._with_padding_length(inner, self.padding_length)

    def create_instance(self) -> Any:
        return self.inner.create_instance()

    @property
    def is_immutable_type(self) -> bool:
        return self.inner.is_immutable_type

    @property
    def length(self) -> int:
        return self.padding_length + 1 if self.padding_length else -1

    def snapshot_configuration(self) -> NullableSerializerSnapshot:
        return NullableSerializerSnapshot(self)


class NullableSerializerSnapshot(
    CompositeTypeSerializerSnapshot[Any],
    java_name="org.apache.flink.api.java.typeutils.runtime.NullableSerializer$NullableSerializerSnapshot",
):
    """Outer snapshot (version 2): the null padding length; a change is incompatible."""

    __module__ = "reference.serializers"  # stable identity in savepoints
    NESTED_ARITY = 1
    READ_OUTER_VERSIONS = (2,)

    def __init__(self, serializer: NullableSerializer | None = None) -> None:
        super().__init__(serializer)
        self.padding_length = serializer.padding_length if serializer is not None else 0

    def get_current_outer_snapshot_version(self) -> int:
        return 2

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return [outer_serializer.inner]

    def create_outer_serializer_with_nested_serializers(self, nested: Sequence[TypeSerializer[Any]]) -> NullableSerializer:
        return NullableSerializer._with_padding_length(nested[0], self.padding_length)

    def write_outer_snapshot(self, target: DataOutputView) -> None:
        target.write_int(self.padding_length)

    def read_outer_snapshot(self, read_outer_version: int, source: DataInputView) -> None:
        self.padding_length = source.read_int()
        if self.padding_length < 0:
            raise SnapshotFormatError(f"NullableSerializerSnapshot: negative padding {self.padding_length}")

    def resolve_outer_schema_compatibility(self, old_snapshot: Any) -> OuterSchemaCompatibility:
        if old_snapshot.padding_length != self.padding_length:
            return OuterSchemaCompatibility.INCOMPATIBLE
        return OuterSchemaCompatibility.COMPATIBLE_AS_IS

    def outer_incompatibility_reason(self, old_snapshot: Any) -> str:
        return (
            f"null padding changed from {old_snapshot.padding_length} to {self.padding_length} "
            "bytes (padded=True/False or the inner fixed length changed)"
        )

    def nested_labels(self) -> list[str]:
        return ["nullable value"]

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        migrated = None if element is None else _migrate_nested(self.nested_snapshots[0], prior.inner, new.inner, element)
        if target is not None:
            new.serialize(migrated, target)
        return migrated


class ListSerializer(TypeSerializer[list[Any]]):
    """``java.util.List``: int size, then the elements back to back (no null flags)."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    def __init__(self, element: TypeSerializer[Any]) -> None:
        _check_serializer("ListSerializer's element serializer", element)
        self.element = element

    def serialize(self, value: list[Any], target: DataOutputView) -> None:
        if type(value) is not list:
            raise SerializationError(f"ListSerializer got {type(value).__name__}; it writes lists")
        start = len(target)
        target.write_int(len(value))
        write = self.element.serialize
        for i, item in enumerate(value):
            try:
                write(item, target)
            except SerializationError as exc:
                raise refused(target, start, f"list element {i}", exc) from None

    def _check_size(self, size: int, source: DataInputView, first_element_width: Any) -> None:
        """Refuse sizes the bytes cannot hold. Elements take at least one byte each, except
        those of a type written as no bytes at all (an Avro null, fixed(0) or empty record):
        such a list may have more elements than bytes left, within the record's element budget
        (``DataInputView.charge_elements``, shared by every nesting level)."""
        if size < 0:
            raise SerializationError(f"ListSerializer: negative list size {size}; the data is corrupt")
        source.charge_elements(size, "ListSerializer: list size")
        if size <= source.available():
            return
        if first_element_width() == 0:
            return
        raise SerializationError(
            f"ListSerializer: list size {size} with {source.available()} bytes left; "
            "the data is corrupt or truncated"
        )

    def deserialize(self, source: DataInputView) -> list[Any]:
        size = source.read_int()
        read = self.element.deserialize
        first: list[Any] = []

        def width() -> int:
            before = source.available()
            first.append(read(source))
            return before - source.available()

        self._check_size(size, source, width)
        return first + [read(source) for _ in range(size - len(first))]

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        size = source.read_int()
        first = DataOutputView()
        done: list[bool] = []

        def width() -> int:
            before = source.available()
            self.element.copy_serialized(source, first)
            done.append(True)
            return before - source.available()

        self._check_size(size, source, width)
        target.write_int(size)
        target.write(first.getvalue())
        for _ in range(size - len(done)):
            self.element.copy_serialized(source, target)

    def byte_migration(self, new: ListSerializer, element: ByteMigration) -> ByteMigration:
        """One record of this layout in ``new``'s: the size kept, each element migrated by
        ``element``. A size the bytes left cannot hold is refused (``SerializationError``),
        zero-width elements included: ``deserialize`` decides those."""

        def run(source: DataInputView, target: DataOutputView) -> None:
            size = _read_size(source, "ListSerializer: list size")
            target.write_int(size)
            for _ in range(size):
                element(source, target)

        return run

    def _gen_read(self, g: Any, out: Any) -> None:
        n, item = _gen_size(g, self.element.length == 0), g.var()
        g.emit("{out} = []", out=out)
        with g.block("for _ in range({n}):", n=n):
            g.read(self.element, item)
            g.emit("{out}.append({item})", out=out, item=item)

    def _gen_write(self, g: Any, value: Any) -> None:
        item = g.var()
        g.emit("if type({v}) is not list: raise Bail", v=value)
        g.emit("buf += {pack}(len({v}))", v=value, pack=g.const(_INT.pack))
        with g.block("for {item} in {v}:", item=item, v=value):
            g.write(self.element, item)

    def _gen_skip(self, g: Any) -> None:
        if self.element.length != 0:
            # More elements than bytes left: only elements written as no bytes at all can be so
            # many (an Avro null, fixed(0) or empty record, whose length says -1); the list's own
            # copy measures the first, as the generic path does.
            with g.block("if {unpack}(data, pos)[0] > end - pos - 4:", unpack=g.const(_INT.unpack_from)):
                g.call_copy(self.copy_serialized)
            with g.block("else:"):
                with g.block("for _ in range({n}):", n=_gen_size(g)):
                    g.skip(self.element)
            return
        with g.block("for _ in range({n}):", n=_gen_size(g, True)):
            g.skip(self.element)

    def copy(self, value: list[Any]) -> list[Any]:
        copy = self.element.copy
        return [copy(item) for item in value]

    def duplicate(self) -> ListSerializer:
        element = self.element.duplicate()
        return self if element is self.element else ListSerializer(element)

    def create_instance(self) -> list[Any]:
        return []

    def snapshot_configuration(self) -> ListSerializerSnapshot:
        return ListSerializerSnapshot(self)


class ListSerializerSnapshot(
    CompositeTypeSerializerSnapshot[list[Any]],
    java_name="org.apache.flink.api.common.typeutils.base.ListSerializerSnapshot",
    # What Flink's heap list state writes: the same layout, read as a list serializer.
    java_aliases=("org.apache.flink.runtime.state.ArrayListSerializerSnapshot",),
):
    """FLIP-527 limit: a row inside a list may not evolve (the whole list is incompatible)."""

    __module__ = "reference.serializers"  # stable identity in savepoints
    NESTED_ARITY = 1
    READ_OUTER_VERSIONS = None  # any: Flink ignores a list snapshot's outer version


    def get_current_outer_snapshot_version(self) -> int:
        return 1

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return [outer_serializer.element]

    def create_outer_serializer_with_nested_serializers(self, nested: Sequence[TypeSerializer[Any]]) -> ListSerializer:
        return ListSerializer(nested[0])

    def nested_labels(self) -> list[str]:
        return ["list element"]

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[Any]) -> SchemaCompatibility[Any]:
        result = super().resolve_schema_compatibility(old_snapshot)
        if result.is_compatible_after_migration() and result.row_paths:
            return SchemaCompatibility.incompatible(
                "list element: row evolution inside a list is not supported (FLIP-527); "
                f"evolved row fields: {', '.join(result.row_paths)}"
            )
        return result

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        nested = self.nested_snapshots[0]
        migrated = [_migrate_nested(nested, prior.element, new.element, item) for item in element]
        if target is not None:
            new.serialize(migrated, target)
        return migrated


#: Why a map record whose key reads as None is refused: what serialize refuses to write, deserialize
#: refuses to read (a restore that succeeded would fail at the next checkpoint).
_NULL_MAP_KEY = ("MapSerializer: a map key reads as None; map keys are never null (the data is corrupt, or "
                 "a Flink job wrote a null key through a key serializer that takes one)")


def _none_reader(serializer: TypeSerializer[Any]) -> Callable[[DataInputView], bool] | None:
    """How a copy of a part that may not be null (a map key, a tuple field) tells that the next
    value reads as None, as ``deserialize`` refuses it, leaving the input where it was: the
    string's length alone (unless a subclass reads strings its own way), else the value read;
    None for a fixed-width primitive, which never reads as None. Copies and byte migrations
    refuse every record ``deserialize`` refuses."""
    if isinstance(serializer, _FixedWidth):
        return None
    if isinstance(serializer, StringSerializer) and type(serializer).deserialize is StringSerializer.deserialize:
        return serializer._null_ahead
    read = serializer.deserialize

    def reads_none(source: DataInputView) -> bool:
        mark = source.mark()
        try:
            return read(source) is None
        finally:
            source.reset(mark)

    return reads_none


def _gen_skip_not_null(g: Any, serializer: TypeSerializer[Any]) -> None:
    """Fragment: copy a value that may not be null (``Emitter.skip``), giving up where it reads
    as None (``_none_reader``), as the generic copy refuses it."""
    ahead = _none_reader(serializer)
    if ahead is not None:
        flag = g.var()
        g.call_read(ahead, flag)
        g.emit("if {flag}: raise Bail", flag=flag)
    g.skip(serializer)


class MapSerializer(TypeSerializer[dict[Any, Any]]):
    """``java.util.Map``: int size, then per entry key, bool value-is-null, [value]."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    def __init__(self, key: TypeSerializer[Any], value: TypeSerializer[Any]) -> None:
        _check_serializer("MapSerializer's key serializer", key)
        _check_serializer("MapSerializer's value serializer", value)
        self.key = key
        self.value = value

    def serialize(self, value: dict[Any, Any], target: DataOutputView) -> None:
        if type(value) is not dict:
            raise SerializationError(f"MapSerializer got {type(value).__name__}; it writes dicts")
        if None in value:
            raise SerializationError("MapSerializer: map keys may not be None")
        start = len(target)
        target.write_int(len(value))
        write_key, write_value = self.key.serialize, self.value.serialize
        for k, v in value.items():
            try:
                write_key(k, target)
            except SerializationError as exc:
                raise refused(target, start, f"map key {k!r:.80}", exc) from None
            if v is None:
                target.write_boolean(True)
            else:
                target.write_boolean(False)
                try:
                    write_value(v, target)
                except SerializationError as exc:
                    raise refused(target, start, f"the value of map key {k!r:.80}", exc) from None

    def deserialize(self, source: DataInputView) -> dict[Any, Any]:
        size = _read_size(source, "MapSerializer: map size")
        read_key, read_value = self.key.deserialize, self.value.deserialize
        result: dict[Any, Any] = {}
        for _ in range(size):
            k = read_key(source)
            if k is None:
                raise SerializationError(_NULL_MAP_KEY)
            result[k] = None if source.read_boolean() else read_value(source)
        return result

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        size = source.read_int()
        if size < 0 or size > source.available():
            raise SerializationError(f"MapSerializer: corrupt map size {size}")
        source.charge_elements(size, "MapSerializer: map size")
        target.write_int(size)
        read_key = _none_reader(self.key)
        for _ in range(size):
            if read_key is not None and read_key(source):
                raise SerializationError(_NULL_MAP_KEY)
            self.key.copy_serialized(source, target)
            is_null = source.read_boolean()
            target.write_boolean(is_null)
            if not is_null:
                self.value.copy_serialized(source, target)

    def byte_migration(self, new: MapSerializer, key: ByteMigration, value: ByteMigration) -> ByteMigration:
        """One record of this layout in ``new``'s: the size kept, per entry the key by ``key``,
        the null flag kept and a value migrated by ``value``."""

        # A key that reads as None is refused, as the object path refuses it when writing
        # (map keys are never null): keys whose serializer can read None are read to see.
        read_key = _none_reader(self.key)

        def run(source: DataInputView, target: DataOutputView) -> None:
            size = _read_size(source, "MapSerializer: map size")
            target.write_int(size)
            for _ in range(size):
                if read_key is not None and read_key(source):
                    raise SerializationError(_NULL_MAP_KEY)
                key(source, target)
                if source.read_boolean():
                    target.write(b"\x01")
                else:
                    target.write(b"\x00")
                    value(source, target)

        return run

    def _gen_read(self, g: Any, out: Any) -> None:
        n, key, item = _gen_size(g), g.var(), g.var()
        g.emit("{out} = {{}}", out=out)
        with g.block("for _ in range({n}):", n=n):
            g.read(self.key, key)
            g.emit("if {key} is None: raise Bail", key=key)
            g.emit("pos += 1")
            with g.block("if data[pos - 1]:"):
                g.emit("{out}[{key}] = None", out=out, key=key)
            with g.block("else:"):
                g.read(self.value, item)
                g.emit("{out}[{key}] = {item}", out=out, key=key, item=item)

    def _gen_write(self, g: Any, value: Any) -> None:
        key, item = g.var(), g.var()
        g.emit("if type({v}) is not dict or None in {v}: raise Bail", v=value)
        g.emit("buf += {pack}(len({v}))", v=value, pack=g.const(_INT.pack))
        with g.block("for {key}, {item} in {v}.items():", key=key, item=item, v=value):
            g.write(self.key, key)
            with g.block("if {item} is None:", item=item):
                g.emit("buf.append(1)")
            with g.block("else:"):
                g.emit("buf.append(0)")
                g.write(self.value, item)

    def _gen_skip(self, g: Any) -> None:
        with g.block("for _ in range({n}):", n=_gen_size(g)):
            _gen_skip_not_null(g, self.key)
            g.emit("pos += 1")
            with g.block("if not data[pos - 1]:"):
                g.skip(self.value)
            g.emit("elif data[pos - 1] != 1: raise Bail")  # the copy writes the flag as 1

    def copy(self, value: dict[Any, Any]) -> dict[Any, Any]:
        ck, cv = self.key.copy, self.value.copy
        return {ck(k): (None if v is None else cv(v)) for k, v in value.items()}

    def duplicate(self) -> MapSerializer:
        key, value = self.key.duplicate(), self.value.duplicate()
        return self if key is self.key and value is self.value else MapSerializer(key, value)

    def create_instance(self) -> dict[Any, Any]:
        return {}

    def snapshot_configuration(self) -> MapSerializerSnapshot:
        return MapSerializerSnapshot(self)


class MapSerializerSnapshot(
    CompositeTypeSerializerSnapshot[dict[Any, Any]],
    java_name="org.apache.flink.api.common.typeutils.base.MapSerializerSnapshot",
):
    __module__ = "reference.serializers"  # stable identity in savepoints
    NESTED_ARITY = 2
    READ_OUTER_VERSIONS = None  # any: Flink ignores a map snapshot's outer version

    def get_current_outer_snapshot_version(self) -> int:
        return 1

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return [outer_serializer.key, outer_serializer.value]

    def create_outer_serializer_with_nested_serializers(self, nested: Sequence[TypeSerializer[Any]]) -> MapSerializer:
        return MapSerializer(nested[0], nested[1])

    def nested_labels(self) -> list[str]:
        return ["map key", "map value"]

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        key_snap, value_snap = self.nested_snapshots
        migrated = {
            _migrate_nested(key_snap, prior.key, new.key, k): (
                None if v is None else _migrate_nested(value_snap, prior.value, new.value, v)
            )
            for k, v in element.items()
        }
        if target is not None:
            new.serialize(migrated, target)
        return migrated


def _null_tuple_field(i: int) -> str:
    """Why a tuple record whose field ``i`` reads as None is refused (read, copied or migrated)."""
    return (f"TupleSerializer: field {i} reads as None; tuple fields may not be null (the data is "
            "corrupt, or a Flink job wrote a null through a field serializer that takes one)")


class TupleSerializer(_codegen.GeneratedCodec, TypeSerializer[tuple[Any, ...]]):
    """Flink's ``TupleSerializer``: the fields back to back, no null mask (None is an error)."""

    __module__ = "reference.serializers"  # stable identity in savepoints


    def __init__(self, *fields: TypeSerializer[Any]) -> None:
        for i, field in enumerate(fields):
            _check_serializer(f"TupleSerializer field {i}", field)
        self.fields = tuple(fields)
        self._cache_prepare()

    def _cache_prepare(self) -> None:
        #: Per field: whether it may hold None (only a NullableSerializer field may).
        self._cache_takes_none = tuple(isinstance(f, NullableSerializer) for f in self.fields)
        _codegen.install(self)

    def __getstate__(self) -> dict[str, Any]:
        return {"fields": self.fields}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._cache_prepare()

    # Reads, writes and copies go through code generated for this tuple (``_codegen.GeneratedCodec``);
    # the generic methods below define them.
    def _serialize_generic(self, value: tuple[Any, ...], target: DataOutputView) -> None:
        if type(value) is not tuple or len(value) != len(self.fields):
            raise SerializationError(
                f"TupleSerializer of arity {len(self.fields)} got {type(value).__name__} "
                f"{value!r}; it writes tuples of exactly that arity"
            )
        start = len(target)
        for i, (field, item) in enumerate(zip(self.fields, value, strict=True)):
            if item is None and not self._cache_takes_none[i]:
                target.truncate(start)
                raise SerializationError(
                    f"TupleSerializer: field {i} is None; tuple fields may not be null "
                    "(wrap the field serializer in NullableSerializer)"
                )
            try:
                field.serialize(item, target)
            except SerializationError as exc:
                raise refused(target, start, f"TupleSerializer field {i}", exc) from None

    def _deserialize_generic(self, source: DataInputView) -> tuple[Any, ...]:
        items = tuple([field.deserialize(source) for field in self.fields])
        for i, item in enumerate(items):
            if item is None and not self._cache_takes_none[i]:
                raise SerializationError(_null_tuple_field(i))
        return items

    def _none_readers(self) -> list[Callable[[DataInputView], bool] | None]:
        """Per field, how a copy sees that it reads as None (``_none_reader``), where it may not."""
        return [None if takes_none else _none_reader(field)
                for field, takes_none in zip(self.fields, self._cache_takes_none, strict=True)]

    def _copy_serialized_generic(self, source: DataInputView, target: DataOutputView) -> None:
        for i, (field, null_ahead) in enumerate(zip(self.fields, self._none_readers(), strict=True)):
            if null_ahead is not None and null_ahead(source):
                raise SerializationError(_null_tuple_field(i))
            field.copy_serialized(source, target)

    def byte_migration(self, new: TupleSerializer, fields: Sequence[ByteMigration]) -> ByteMigration:
        """One record of this layout in ``new``'s: the fields back to back, each migrated by
        its own entry of ``fields``."""
        steps = tuple(fields)
        if len(steps) != len(self.fields) or len(new.fields) != len(self.fields):
            raise ValueError(f"byte_migration: {len(steps)} field migrations for {len(self.fields)} fields")
        checked = tuple(zip(steps, self._none_readers(), [_null_tuple_field(i) for i in range(len(steps))],
                            strict=True))

        def run(source: DataInputView, target: DataOutputView) -> None:
            for step, read, why in checked:
                if read is not None and read(source):
                    raise SerializationError(why)
                step(source, target)

        return run

    def _gen_read(self, g: Any, out: Any) -> None:
        items = g.names(len(self.fields))
        for field, item, takes_none in zip(self.fields, items, self._cache_takes_none, strict=True):
            g.read(field, item)
            if not takes_none:
                g.emit("if {item} is None: raise Bail", item=item)
        g.emit("{out} = {items}", out=out, items=g.tuple_of(items))

    def _gen_write(self, g: Any, value: Any) -> None:
        items = g.names(len(self.fields))
        g.emit("if type({v}) is not tuple or len({v}) != {n}: raise Bail", v=value, n=len(self.fields))
        if items:
            g.emit("{items} = {v}", items=g.tuple_of(items), v=value)
        for field, item, takes_none in zip(self.fields, items, self._cache_takes_none, strict=True):
            if not takes_none:
                g.emit("if {item} is None: raise Bail", item=item)
            g.write(field, item)

    def _gen_skip(self, g: Any) -> None:
        for field, takes_none in zip(self.fields, self._cache_takes_none, strict=True):
            if takes_none:
                g.skip(field)
            else:
                _gen_skip_not_null(g, field)

    def copy(self, value: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple([f.copy(v) for f, v in zip(self.fields, value, strict=False)])

    def duplicate(self) -> TupleSerializer:
        fields = [f.duplicate() for f in self.fields]
        return self if all(a is b for a, b in zip(fields, self.fields, strict=True)) else TupleSerializer(*fields)

    def create_instance(self) -> tuple[Any, ...]:
        return tuple(f.create_instance() for f in self.fields)

    @property
    def is_immutable_type(self) -> bool:
        return all(f.is_immutable_type for f in self.fields)

    @property
    def length(self) -> int:
        lengths = [f.length for f in self.fields]
        return -1 if any(n < 0 for n in lengths) else sum(lengths)

    def snapshot_configuration(self) -> TupleSerializerSnapshot:
        return TupleSerializerSnapshot(self)


class TupleSerializerSnapshot(
    CompositeTypeSerializerSnapshot[tuple[Any, ...]],
    java_name="org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot",
):
    """Outer version 1 (this project's): nothing. Outer version 2 (Flink's): UTF tuple class,
    ``org.apache.flink.api.java.tuple.TupleN`` unless read otherwise; a change of that class
    is incompatible."""

    __module__ = "reference.serializers"  # stable identity in savepoints
    READ_OUTER_VERSIONS = (1, 2)

    def __init__(self, serializer: TupleSerializer | None = None) -> None:
        super().__init__(serializer)
        self.tuple_class: str | None = None

    def _flink_tuple_class(self) -> str:
        return self.tuple_class or f"org.apache.flink.api.java.tuple.Tuple{len(self.nested_snapshots)}"

    def get_current_outer_snapshot_version(self) -> int:
        return 2 if snapshot_dialect() == "flink" else 1

    def write_outer_snapshot(self, target: DataOutputView) -> None:
        if snapshot_dialect() == "flink":
            target.write_utf(self._flink_tuple_class())

    def read_outer_snapshot(self, read_outer_version: int, source: DataInputView) -> None:
        if read_outer_version == 2:  # Flink's: the tuple class
            self.tuple_class = source.read_utf()

    def resolve_outer_schema_compatibility(self, old_snapshot: Any) -> OuterSchemaCompatibility:
        if old_snapshot.tuple_class and self.tuple_class and old_snapshot.tuple_class != self.tuple_class:
            return OuterSchemaCompatibility.INCOMPATIBLE
        return OuterSchemaCompatibility.COMPATIBLE_AS_IS

    def outer_incompatibility_reason(self, old_snapshot: Any) -> str:
        return f"tuple class changed from {old_snapshot.tuple_class} to {self.tuple_class}"

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return list(outer_serializer.fields)

    def create_outer_serializer_with_nested_serializers(self, nested: Sequence[TypeSerializer[Any]]) -> TupleSerializer:
        return TupleSerializer(*nested)

    def nested_labels(self) -> list[str]:
        return [f"tuple field {i}" for i in range(len(self.nested_snapshots))]

    def migrate_element(self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None) -> Any:
        migrated = tuple(
            _migrate_nested(snap, p, n, v)
            for snap, p, n, v in zip(self.nested_snapshots, prior.fields, new.fields, element, strict=True)
        )
        if target is not None:
            new.serialize(migrated, target)
        return migrated
