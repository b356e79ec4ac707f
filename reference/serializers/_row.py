"""Row (Flink's ``RowSerializer``) with FLIP-527 schema evolution by field name.

Values are tuples in field order (``None`` for a null field). A plain tuple is an INSERT row;
other change kinds use :class:`Row`, a tuple that also carries a :class:`RowKind`.

Byte format (Flink 2.x): a null mask of ``2 + arity`` bits, most significant bit first, packed
into ``ceil(bits / 8)`` bytes with the unused low bits zero. The first two bits hold the row
kind (bit 0 = kind & 1, bit 1 = kind & 2, so UPDATE_BEFORE → 0x80, UPDATE_AFTER → 0x40,
DELETE → 0xC0); bit ``2 + i`` set means field ``i`` is null. Only non-null fields follow.
Without row-kind support (``supports_row_kind=False``, Flink's legacy mode) the mask has just
``arity`` bits.

Evolution (FLIP-527; the NEW snapshot judges the OLD one; fields are matched by name):
adding nullable fields anywhere, reordering fields, and evolving nested rows by the same rules
need migration (``compatible_after_migration`` whose ``row_paths`` name the evolved fields, e.g.
``"address.zip"``); removing or renaming a field, changing a field's type, adding a NOT NULL
field and turning a nullable field NOT NULL are incompatible. Relaxing a NOT NULL field to
nullable changes nothing in the bytes and is compatible as is.

Migration on bytes (``RowSerializer.byte_migration``, what a migration plan runs): the same
result as ``migrate_element`` on the objects, without them: kept fields' bytes copied, the mask
rebuilt for the new field order with the row kind carried over, added fields null.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .._compat import OuterSchemaCompatibility, SchemaCompatibility, reconfigured_or_as_is
from .._errors import SerializationError, SnapshotFormatError, StateError, StateMigrationError
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import (
    CompositeTypeSerializerSnapshot,
    TypeSerializerSnapshot,
    migrated_element,
    resolve_compatibility,
    snapshot_dialect,
)
from . import _codegen
from ._composites import refused

__all__ = ["RowKind", "Row", "RowSerializer", "RowSerializerSnapshot"]



class RowKind(enum.IntEnum):
    """The change a row describes (Flink's ``RowKind``; the value is its byte value)."""

    __module__ = "reference.serializers"  # stable identity in savepoints

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    @property
    def short_string(self) -> str:
        return ("+I", "-U", "+U", "-D")[self.value]


class Row(tuple):  # type: ignore[type-arg]
    """A tuple of field values that also carries a :class:`RowKind`.

    ``Row((1, "a"), RowKind.DELETE)`` (like ``tuple(iterable)``) or ``Row.of(1, "a",
    kind=RowKind.DELETE)``. Equality and hashing include the kind; an INSERT ``Row`` equals the
    plain tuple of its values (a plain tuple *is* an INSERT row).
    """

    __module__ = "reference.serializers"  # stable identity in savepoints

    kind: RowKind

    def __new__(cls, values: Iterable[Any] = (), kind: RowKind | int = RowKind.INSERT) -> Row:
        self = super().__new__(cls, values)
        self.kind = RowKind(kind)
        return self

    @classmethod
    def of(cls, *values: Any, kind: RowKind | int = RowKind.INSERT) -> Row:
        return cls(values, kind)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, tuple):
            return NotImplemented
        return getattr(other, "kind", RowKind.INSERT) == self.kind and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        plain = tuple.__hash__(self)
        return plain if self.kind is RowKind.INSERT else hash((plain, int(self.kind)))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Row, (tuple(self), int(self.kind)))

    def __repr__(self) -> str:
        return f"Row({tuple.__repr__(self)}, RowKind.{self.kind.name})"


def _kind_of(value: tuple[Any, ...]) -> RowKind:
    return value.kind if type(value) is Row else RowKind.INSERT


def _make_row(values: Sequence[Any], kind: RowKind) -> tuple[Any, ...]:
    return tuple(values) if kind is RowKind.INSERT else Row(values, kind)


class RowSerializer(_codegen.GeneratedCodec, TypeSerializer[tuple[Any, ...]]):
    """Rows of named fields: ``RowSerializer([(name, serializer, nullable), ...])``.

    A value is a plain tuple of the field values, in field order (an INSERT row), or a
    :class:`Row` (``Row(values, RowKind.UPDATE_AFTER)``) for another row kind; a row is read
    back as a tuple when its kind is INSERT. ``nullable=False`` (NOT NULL) fields refuse
    ``None``. With ``supports_row_kind=False`` the row kind is not written (Flink's legacy mode)
    and only INSERT rows can be written.
    """

    __module__ = "reference.serializers"  # stable identity in savepoints

    #: Restored from a snapshot in Flink's form (no field names): fields match by position in
    #: migration. Not configuration (equality ignores it).
    _cache_positional = False

    def __init__(
        self,
        fields: Iterable[tuple[str, TypeSerializer[Any], bool] | Sequence[Any]],
        supports_row_kind: bool = True,
    ) -> None:
        normalized: list[tuple[str, TypeSerializer[Any], bool]] = []
        seen: set[str] = set()
        for i, entry in enumerate(fields):
            try:
                name, serializer, nullable = entry
            except (TypeError, ValueError):
                raise TypeError(
                    f"RowSerializer field {i} is {entry!r}; give each field as (name, serializer, "
                    "nullable)"
                ) from None
            if type(name) is not str or not name:
                raise TypeError(f"RowSerializer field {i}: the name must be a non-empty str, got {name!r}")
            if name in seen:
                raise ValueError(f"RowSerializer: field name {name!r} appears twice; names must be unique")
            if not isinstance(serializer, TypeSerializer):
                raise TypeError(
                    f"RowSerializer field {name!r}: {type(serializer).__name__} is not a TypeSerializer"
                )
            if type(nullable) is not bool:
                raise TypeError(f"RowSerializer field {name!r}: nullable must be a bool, got {nullable!r}")
            seen.add(name)
            normalized.append((name, serializer, nullable))
        self.fields: tuple[tuple[str, TypeSerializer[Any], bool], ...] = tuple(normalized)
        self.supports_row_kind = bool(supports_row_kind)
        self._cache_prepare()

    def _cache_prepare(self) -> None:
        self._cache_arity = len(self.fields)
        self._cache_offset = 2 if self.supports_row_kind else 0
        self._cache_mask_len = (self._cache_arity + self._cache_offset + 7) // 8
        self._cache_serializers = tuple(f[1] for f in self.fields)
        self._cache_nullable = tuple(f[2] for f in self.fields)
        self._cache_zero_mask = bytes(self._cache_mask_len)
        self._cache_no_nulls = (False,) * self._cache_arity
        self._cache_lengths = tuple(s.length for s in self._cache_serializers)
        # The mask as numbers: the bit of each field's null flag, the kind bits of each row
        # kind this serializer writes (INSERT only without row-kind support), and the kind of
        # each value of the top two bits.
        width = self._cache_mask_len * 8
        self._cache_field_bits = tuple(
            1 << (width - self._cache_offset - 1 - i) for i in range(self._cache_arity)
        )
        self._cache_not_null_bits = sum(
            bit for bit, nullable in zip(self._cache_field_bits, self._cache_nullable, strict=True)
            if not nullable
        )
        self._cache_kind_shift = width - 2 if self._cache_offset else 0
        kinds = list(RowKind) if self._cache_offset else [RowKind.INSERT]
        self._cache_kind_bits = {
            kind: ((kind & 1) << 1 | (kind >> 1)) << self._cache_kind_shift for kind in kinds
        }
        self._cache_kinds = tuple(RowKind((top >> 1) | ((top & 1) << 1)) for top in range(4))
        _codegen.install(self)

    def __setstate__(self, state: dict[str, Any]) -> None:
        positional = state.pop("positional", False)
        self.__dict__.update(state)
        self._cache_prepare()
        if positional:
            self._cache_positional = True

    def __getstate__(self) -> dict[str, Any]:
        state = {"fields": self.fields, "supports_row_kind": self.supports_row_kind}
        if self._cache_positional:  # restored from Flink's form: it stays so in other processes
            state["positional"] = True
        return state

    # -- names and shape -------------------------------------------------------------------
    @property
    def field_names(self) -> list[str]:
        return [f[0] for f in self.fields]

    @property
    def arity(self) -> int:
        return self._cache_arity

    @property
    def positional(self) -> bool:
        """Restored from a snapshot in Flink's form (no field names): its fields match by
        position in migration."""
        return self._cache_positional

    # -- mask --------------------------------------------------------------------------------
    def _write_mask(self, kind: RowKind, values: Sequence[Any], target: DataOutputView) -> None:
        bits = self._cache_kind_bits[kind]
        for value, bit in zip(values, self._cache_field_bits, strict=True):
            if value is None:
                bits |= bit
        target.write(bits.to_bytes(self._cache_mask_len, "big"))

    def _read_mask(self, source: DataInputView) -> tuple[RowKind, list[bool]]:
        raw = int.from_bytes(source.read_fully(self._cache_mask_len), "big")
        nulls = [bool(raw & bit) for bit in self._cache_field_bits]
        kind = RowKind.INSERT
        if self._cache_offset:
            kind = self._cache_kinds[raw >> self._cache_kind_shift]
        if raw & self._cache_not_null_bits:
            self._refuse_null_mark(nulls)
        return kind, nulls

    def _refuse_null_mark(self, nulls: Sequence[bool]) -> None:
        for i, is_null in enumerate(nulls):
            if is_null and not self._cache_nullable[i]:
                raise SerializationError(
                    f"RowSerializer: NOT NULL field {self.fields[i][0]!r} is marked null in the "
                    "data; the bytes are corrupt or were written by a serializer where the field "
                    "was nullable"
                )

    # -- TypeSerializer ----------------------------------------------------------------------
    def _check_value(self, value: Any) -> RowKind:
        if (type(value) is not tuple and type(value) is not Row) or len(value) != self._cache_arity:
            raise SerializationError(
                f"RowSerializer of fields {self.field_names} got {type(value).__name__} {value!r}; "
                f"it writes tuples (or reference.serializers.Row) of exactly {self._cache_arity} values"
            )
        kind = _kind_of(value)
        if kind is not RowKind.INSERT and not self._cache_offset:
            raise SerializationError(
                f"RowSerializer without row-kind support cannot write a row of kind {kind.name}; use "
                "supports_row_kind=True or write INSERT rows (plain tuples)"
            )
        for i, item in enumerate(value):
            if item is None and not self._cache_nullable[i]:
                raise SerializationError(
                    f"RowSerializer: NOT NULL field {self.fields[i][0]!r} is None; give it a value "
                    "or declare the field nullable"
                )
        return kind

    # Reads, writes and copies go through code generated for this row (``_codegen.GeneratedCodec``);
    # the generic methods below define them.
    def _serialize_generic(self, value: tuple[Any, ...], target: DataOutputView) -> None:
        if type(value) is tuple and len(value) == self._cache_arity and None not in value:
            # Fast path, the common case: an INSERT row without nulls has an all-zero mask.
            # (``in`` checks identity first, so no None slips through a custom __eq__.)
            start = len(target)
            target.write(self._cache_zero_mask)
            try:
                for serializer, item in zip(self._cache_serializers, value, strict=True):
                    serializer.serialize(item, target)
            except SerializationError as exc:
                raise self._refused(target, start, value, exc) from None
            return
        kind = self._check_value(value)
        start = len(target)
        self._write_mask(kind, value, target)
        try:
            for serializer, item in zip(self._cache_serializers, value, strict=False):
                if item is not None:
                    serializer.serialize(item, target)
        except SerializationError as exc:
            raise self._refused(target, start, value, exc) from None

    def _refused(self, target: DataOutputView, start: int, value: Any, exc: SerializationError) -> SerializationError:
        """The field that refused its part (the first one a lone serialize refuses)."""
        for (name, serializer, _), item in zip(self.fields, value, strict=False):
            if item is None:
                continue
            try:
                serializer.serialize(item, DataOutputView())
            except SerializationError:
                return refused(target, start, f"RowSerializer field {name!r}", exc)
        return refused(target, start, None, exc)

    def _deserialize_generic(self, source: DataInputView) -> tuple[Any, ...]:
        mask = source.peek(self._cache_mask_len)
        if mask == self._cache_zero_mask:
            source.skip_bytes(self._cache_mask_len)
            return tuple([serializer.deserialize(source) for serializer in self._cache_serializers])
        kind, nulls = self._read_mask(source)
        values = [
            None if is_null else serializer.deserialize(source)
            for serializer, is_null in zip(self._cache_serializers, nulls, strict=False)
        ]
        return _make_row(values, kind)

    def _copy_serialized_generic(self, source: DataInputView, target: DataOutputView) -> None:
        start = source.position
        _, nulls = self._read_mask(source)
        target.write(source.slice_from(start))
        for serializer, is_null in zip(self._cache_serializers, nulls, strict=False):
            if not is_null:
                serializer.copy_serialized(source, target)

    # -- generated-code fragments (reference.serializers._codegen) ---------------------------
    # The top-level row also gets the fast path of the generic methods (an all-zero mask:
    # an INSERT row without nulls); a nested row takes the general path only.
    def _gen_mask(self, g: Any, mask: Any) -> Any:
        """Read the mask at ``pos`` into the int ``bits`` (refusing NOT NULL fields marked
        null); returns ``bits``."""
        bits = g.var()
        g.emit("if len({m}) != {n}: raise Bail", m=mask, n=self._cache_mask_len)
        g.emit("pos += {n}", n=self._cache_mask_len)
        g.emit("{b} = int.from_bytes({m}, 'big')", b=bits, m=mask)
        if self._cache_not_null_bits:
            g.emit("if {b} & {nn}: raise Bail", b=bits, nn=self._cache_not_null_bits)
        return bits

    def _gen_mask_at_pos(self, g: Any) -> Any:
        """Read the mask at ``pos`` into the int ``bits`` (one byte by indexing, longer masks
        through ``_gen_mask``); returns ``bits``."""
        if self._cache_mask_len != 1:
            mask = g.var()
            g.emit("{m} = data[pos:pos + {n}]", m=mask, n=self._cache_mask_len)
            return self._gen_mask(g, mask)
        bits = g.var()
        g.emit("{b} = data[pos]", b=bits)
        g.emit("pos += 1")
        if self._cache_not_null_bits:
            g.emit("if {b} & {nn}: raise Bail", b=bits, nn=self._cache_not_null_bits)
        return bits

    def _gen_read(self, g: Any, out: Any) -> None:
        items = g.names(self._cache_arity)
        row = g.tuple_of(items)
        if g.depth == 1:  # the top level: an INSERT row without nulls first
            mask = g.var()
            g.emit("{m} = data[pos:pos + {n}]", m=mask, n=self._cache_mask_len)
            with g.block("if {m} == {zero}:", m=mask, zero=g.const(self._cache_zero_mask)):
                g.emit("pos += {n}", n=self._cache_mask_len)
                for serializer, item in zip(self._cache_serializers, items, strict=True):
                    g.read(serializer, item)
                g.emit("{out} = {row}", out=out, row=row)
            with g.block("else:"):
                self._gen_read_fields(g, out, row, items, self._gen_mask(g, mask))
        else:
            self._gen_read_fields(g, out, row, items, self._gen_mask_at_pos(g))

    def _gen_read_fields(self, g: Any, out: Any, row: Any, items: Any, bits: Any) -> None:
        """The fields after a mask read into ``bits``, and the row (with its kind) into ``out``."""
        for serializer, item, bit, nullable in zip(
            self._cache_serializers, items, self._cache_field_bits, self._cache_nullable, strict=True
        ):
            if nullable:
                with g.block("if {b} & {bit}:", b=bits, bit=bit):
                    g.emit("{item} = None", item=item)
                with g.block("else:"):
                    g.read(serializer, item)
            else:
                g.read(serializer, item)
        if self._cache_offset:
            kind = g.var()
            g.emit("{kind} = {kinds}[{b} >> {shift}]", kind=kind, kinds=g.const(self._cache_kinds),
                   b=bits, shift=self._cache_kind_shift)
            g.emit("{out} = {row} if {kind} is {insert} else {make}({row}, {kind})", out=out, row=row,
                   kind=kind, insert=g.const(RowKind.INSERT), make=g.const(Row))
        else:
            g.emit("{out} = {row}", out=out, row=row)

    def _gen_write(self, g: Any, value: Any) -> None:
        items = g.names(self._cache_arity)
        row = g.tuple_of(items)
        if g.depth == 1:
            with g.block("if type({v}) is tuple and len({v}) == {n} and None not in {v}:", v=value,
                         n=self._cache_arity):
                g.emit("buf += {zero}", zero=g.const(self._cache_zero_mask))
                if items:
                    g.emit("{row} = {v}", row=row, v=value)
                for serializer, item in zip(self._cache_serializers, items, strict=True):
                    g.write(serializer, item)
            general = g.block("else:")
        else:
            general = g.block("if True:")
        with general:
            bits = g.var()
            with g.block("if type({v}) is tuple:", v=value):
                g.emit("{b} = 0", b=bits)
            with g.block("elif type({v}) is {row_type}:", v=value, row_type=g.const(Row)):
                g.emit("{b} = {kind_bits}[{v}.kind]", b=bits, v=value, kind_bits=g.const(self._cache_kind_bits))
            g.emit("else: raise Bail")
            g.emit("if len({v}) != {n}: raise Bail", v=value, n=self._cache_arity)
            if items:
                g.emit("{row} = {v}", row=row, v=value)
            for item, bit, nullable in zip(items, self._cache_field_bits, self._cache_nullable, strict=True):
                if nullable:
                    g.emit("if {item} is None: {b} |= {bit}", item=item, b=bits, bit=bit)
                else:
                    g.emit("if {item} is None: raise Bail", item=item)
            g.emit("buf += {b}.to_bytes({n}, 'big')", b=bits, n=self._cache_mask_len)
            for serializer, item, nullable in zip(self._cache_serializers, items, self._cache_nullable, strict=True):
                if nullable:
                    with g.block("if {item} is not None:", item=item):
                        g.write(serializer, item)
                else:
                    g.write(serializer, item)

    def _gen_skip(self, g: Any) -> None:
        bits = self._gen_mask_at_pos(g)
        for serializer, bit, nullable in zip(
            self._cache_serializers, self._cache_field_bits, self._cache_nullable, strict=True
        ):
            if nullable:
                with g.block("if not {b} & {bit}:", b=bits, bit=bit):
                    g.skip(serializer)
            else:
                g.skip(serializer)

    # -- byte-level migration (reference.backends.migration_plan) ---------------------------
    def byte_migration(
        self,
        new: RowSerializer,
        order: Sequence[int],
        migrated: Mapping[int, Callable[[DataInputView], bytes]],
    ) -> Callable[[DataInputView], bytes]:
        """``part(source)``: one record of this row rebuilt in ``new``'s layout, as bytes.

        New field ``k`` is this row's field ``order[k]`` (-1: added, written null). A field
        ``i`` in ``migrated`` becomes ``migrated[i](source)`` (its migrated bytes); every
        other field's bytes are kept as they are (found by its serializer's copy); the null
        mask and the row kind are rebuilt for ``new``. What ``migrate_element`` does to objects,
        done to bytes: ``part`` raises (any exception) on a record it does not take on itself
        (corrupt, a NOT NULL field marked null, a row kind ``new`` cannot hold), which its
        caller then redoes on the object path for the result or the reference's error.

        Generated from this class's fragments and its fields' ``_gen_skip`` (the copy of the
        generated codecs), unless generated codecs are off; the generic form is built from
        ``_read_mask``, ``_write_mask`` and the fields' ``copy_serialized``."""
        order = tuple(order)
        if not isinstance(new, RowSerializer) or len(order) != new.arity:
            raise ValueError(f"byte_migration: {len(order)} field sources for {new!r}")
        if any(not -1 <= j < self._cache_arity for j in order) or any(
            not 0 <= i < self._cache_arity for i in migrated
        ):
            raise ValueError(f"byte_migration: field indices {order} / {sorted(migrated)} outside {self!r}")
        if _codegen.generated_codecs_enabled():
            try:
                return self._byte_migration_generated(new, order, migrated)
            except _codegen.PAST_COMPILE_LIMITS as exc:
                _codegen.raise_generator_bug(exc)  # else a schema beyond what compiles: the generic form
        return self._byte_migration_generic(new, order, migrated)

    def _byte_migration_generic(
        self, new: RowSerializer, order: tuple[int, ...], migrated: Mapping[int, Callable[[DataInputView], bytes]]
    ) -> Callable[[DataInputView], bytes]:
        readers = tuple(migrated.get(i) for i in range(self._cache_arity))
        fields = tuple(zip(self._cache_serializers, readers, strict=True))
        sink = DataOutputView()  # the copies only find each field's end; the bytes are the input's

        def part(source: DataInputView) -> bytes:
            kind, nulls = self._read_mask(source)
            if kind not in new._cache_kind_bits:
                raise StateMigrationError(f"a {kind.name} row cannot lose its row kind")
            parts: list[bytes | None] = []
            for (serializer, reader), is_null in zip(fields, nulls, strict=True):
                if is_null:
                    parts.append(None)
                elif reader is not None:
                    parts.append(reader(source))
                else:
                    start = source.position
                    sink.clear()
                    serializer.copy_serialized(source, sink)
                    parts.append(source.slice_from(start))
            values = [None if j < 0 else parts[j] for j in order]
            for (name, _, nullable), value in zip(new.fields, values, strict=True):
                if value is None and not nullable:
                    raise SerializationError(f"RowSerializer: NOT NULL field {name!r} would be null")
            target = DataOutputView()
            new._write_mask(kind, values, target)
            for value in values:
                if value is not None:
                    target.write(value)
            return target.getvalue()

        return part

    def _byte_migration_generated(
        self, new: RowSerializer, order: tuple[int, ...], migrated: Mapping[int, Callable[[DataInputView], bytes]]
    ) -> Callable[[DataInputView], bytes]:
        g = _codegen.Emitter("copy", indent=1)
        parts = g.names(self._cache_arity)
        mask, result = g.var(), g.var()
        # Bits of the new mask: those of added fields (always null), per kept field its own.
        added = 0
        for k, j in enumerate(order):
            if j < 0:
                if not new._cache_nullable[k]:
                    g.emit("raise Bail")  # an added NOT NULL field: never compatible
                added |= new._cache_field_bits[k]
        kept = [parts[j] for j in order if j >= 0]

        def fields(nulls: Any) -> None:
            for i, (serializer, part) in enumerate(zip(self._cache_serializers, parts, strict=True)):
                if nulls is not None and self._cache_nullable[i]:
                    with g.block("if {b} & {bit}:", b=nulls, bit=self._cache_field_bits[i]):
                        g.emit("{p} = b''", p=part)
                    branch = g.block("else:")
                else:
                    branch = g.block("if True:")
                with branch:
                    if i in migrated:
                        g.emit("source._pos = pos")
                        g.emit("{p} = {f}(source)", p=part, f=g.const(migrated[i]))
                        g.emit("pos = source._pos")
                    else:
                        start = g.var()
                        g.emit("{s} = seg = pos", s=start)
                        g.skip(serializer)
                        g.emit("{p} = data[{s}:pos]", p=part, s=start)

        g.emit("{m} = data[pos:pos + {n}]", m=mask, n=self._cache_mask_len)
        with g.block("if {m} == {zero}:", m=mask, zero=g.const(self._cache_zero_mask)):
            # An INSERT row without nulls: the new mask has the added fields' bits only.
            g.emit("pos += {n}", n=self._cache_mask_len)
            fields(None)
            head = (new._cache_kind_bits[RowKind.INSERT] | added).to_bytes(new._cache_mask_len, "big")
            g.emit("{r} = {join}({parts})", r=result, join=g.const(b"".join),
                   parts=g.tuple_of([g.const(head), *kept]))
        with g.block("else:"):
            bits, out = self._gen_mask(g, mask), g.var()
            if self._cache_offset:
                g.emit("{o} = {table}.get({kinds}[{b} >> {shift}])", o=out, table=g.const(new._cache_kind_bits),
                       kinds=g.const(self._cache_kinds), b=bits, shift=self._cache_kind_shift)
                g.emit("if {o} is None: raise Bail", o=out)  # the object path refuses to drop the kind
            else:
                g.emit("{o} = {insert}", o=out, insert=new._cache_kind_bits[RowKind.INSERT])
            fields(bits)
            if added:
                g.emit("{o} |= {added}", o=out, added=added)
            for k, j in enumerate(order):
                if j >= 0 and self._cache_nullable[j]:
                    with g.block("if {b} & {bit}:", b=bits, bit=self._cache_field_bits[j]):
                        if new._cache_nullable[k]:
                            g.emit("{o} |= {bit}", o=out, bit=new._cache_field_bits[k])
                        else:
                            g.emit("raise Bail")
            g.emit("{o} = {o}.to_bytes({n}, 'big')", o=out, n=new._cache_mask_len)
            g.emit("{r} = {join}({parts})", r=result, join=g.const(b"".join), parts=g.tuple_of([out, *kept]))
        head_lines = [
            f"if type(source) is not {g.const(DataInputView)} or type(source._data) is not bytes:",
            "    raise Bail",
            "data = source._data",
            "pos = seg = source._pos",
            "end = source._end",
        ]
        if g.copies:  # a field copied by a call writes to a sink (its bytes are the input's)
            head_lines += [f"target = {g.const(DataOutputView())}", "buf = target._buf", "del buf[:]"]
        function = g.function("part", "source", head_lines, ["source._pos = pos", f"return {result}"])
        return function  # type: ignore[no-any-return]

    def copy(self, value: tuple[Any, ...]) -> tuple[Any, ...]:
        values = [
            None if item is None else serializer.copy(item)
            for serializer, item in zip(self._cache_serializers, value, strict=False)
        ]
        # A copy keeps the exact type (an INSERT ``Row`` stays a ``Row``), unlike a read.
        return Row(values, value.kind) if type(value) is Row else tuple(values)

    def duplicate(self) -> RowSerializer:
        duplicates = [s.duplicate() for s in self._cache_serializers]
        if all(d is s for d, s in zip(duplicates, self._cache_serializers, strict=False)):
            return self
        duplicate = RowSerializer(
            [(name, d, nullable) for (name, _, nullable), d in zip(self.fields, duplicates, strict=False)],
            self.supports_row_kind,
        )
        duplicate._cache_positional = self._cache_positional
        return duplicate

    def create_instance(self) -> tuple[Any, ...]:
        return tuple(None if nullable else s.create_instance() for _, s, nullable in self.fields)

    @property
    def is_immutable_type(self) -> bool:
        return all(s.is_immutable_type for s in self._cache_serializers)

    def snapshot_configuration(self) -> RowSerializerSnapshot:
        return RowSerializerSnapshot(self)

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, tuple(self.field_names)))

    def __repr__(self) -> str:
        fields = ", ".join(
            f"({name!r}, {s!r}, {nullable})" for name, s, nullable in self.fields
        )
        extra = "" if self.supports_row_kind else ", supports_row_kind=False"
        return f"RowSerializer([{fields}]{extra})"


def _reads_as_is(new_snapshot: TypeSerializerSnapshot[Any], prior: TypeSerializer[Any]) -> bool:
    """Whether the field needs no migration at all: its new snapshot judges the prior field
    serializer's snapshot compatible as is (so old bytes and objects are already new-shaped)."""
    try:
        return resolve_compatibility(new_snapshot, prior.snapshot_configuration()).is_compatible_as_is()
    except Exception:  # a user snapshot failing here just means: migrate the field normally
        return False


class RowSerializerSnapshot(
    CompositeTypeSerializerSnapshot[tuple[Any, ...]],
    java_name="org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot",
):
    """Outer version 5: bool supports-row-kind, int n, n × (UTF name, bool nullable); the
    nested snapshots are the field serializers' in field order.

    The names and nullability are this project's FLIP-527 addition, so they get their own outer
    version. Flink 2.3's form is outer version 4 (the flag only); it is read with Flink's default
    field names ``f0..fn-1``, all nullable, and positional. A positional snapshot (of a row
    restored from Flink's form) is written in Flink's form in either dialect, so that it stays
    positional through this project's savepoints too: its names are placeholders."""

    __module__ = "reference.serializers"  # stable identity in savepoints

    OUTER_VERSION = 5
    FLINK_OUTER_VERSION = 4
    #: Flink's 2 (before 1.11: no row kind), 3 (always a kind) and 4 (a flag says), and this
    #: project's own form with names.
    READ_OUTER_VERSIONS = (2, 3, FLINK_OUTER_VERSION, OUTER_VERSION)
    #: The outer version Flink's form is written at (``in_flink_outer_version``).
    _written_outer_version = FLINK_OUTER_VERSION

    def __init__(self, serializer: RowSerializer | None = None) -> None:
        super().__init__(serializer)
        self.supports_row_kind = True
        self.field_names: list[str] = []
        self.nullables: list[bool] = []
        #: Read from Flink's form (outer version 2-4): the names are Flink's positional f0..fn-1.
        self.positional = False
        if serializer is not None:
            self.supports_row_kind = serializer.supports_row_kind
            self.field_names = serializer.field_names
            self.nullables = [f[2] for f in serializer.fields]
            self.positional = serializer._cache_positional
        self._cache_plans: dict[tuple[int, int], Any] = {}

    # -- composite hooks -----------------------------------------------------------------
    def _flink_form(self) -> bool:
        """Written in Flink's form: in Flink's dialect, and for a row restored from Flink's form
        (its names are Flink's placeholders, not the user's: it stays positional)."""
        return snapshot_dialect() == "flink" or self.positional

    def get_current_outer_snapshot_version(self) -> int:
        return self._written_outer_version if self._flink_form() else self.OUTER_VERSION

    def in_flink_outer_version(self, version: int) -> RowSerializerSnapshot:
        """A copy of this snapshot that writes Flink's form at an older release's outer
        ``version``, as that release wrote it (in either dialect): 2 (Flink 1.10 and before: rows
        without a kind, no flag), 3 (Flink 1.11 to 1.14: rows with a kind, no flag) or 4
        (``FLINK_OUTER_VERSION``, since Flink 1.15). Read back, it restores the row serializer
        this one does (matched by position; written again, it takes the current form)."""
        layouts = {2: False, 3: True, self.FLINK_OUTER_VERSION: None}
        if version not in layouts:
            raise StateError(f"RowSerializerSnapshot.in_flink_outer_version: got {version!r}, should be one of "
                             f"{sorted(layouts)} (Flink's outer versions of a row snapshot)")
        kinds = layouts[version]
        if kinds is not None and kinds != self.supports_row_kind:
            raise StateError(
                f"RowSerializerSnapshot.in_flink_outer_version({version}): that version holds rows "
                f"{'with' if kinds else 'without'} a kind, this snapshot's rows "
                f"{'have one' if self.supports_row_kind else 'have none'}; take the snapshot of a "
                f"RowSerializer(..., supports_row_kind={kinds})")
        copied = copy.copy(self)
        copied._cache_plans = {}
        copied._written_outer_version = version
        copied.positional = True
        return copied

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return [f[1] for f in outer_serializer.fields]

    def create_outer_serializer_with_nested_serializers(
        self, nested: Sequence[TypeSerializer[Any]]
    ) -> RowSerializer:
        if len(nested) != len(self.field_names):
            raise SnapshotFormatError(
                f"RowSerializerSnapshot: {len(nested)} field serializers for the "
                f"{len(self.field_names)} fields {self.field_names}; the snapshot is corrupt"
            )
        restored = RowSerializer(
            list(zip(self.field_names, nested, self.nullables, strict=False)), self.supports_row_kind
        )
        restored._cache_positional = self.positional
        return restored

    def write_outer_snapshot(self, target: DataOutputView) -> None:
        if self.get_current_outer_snapshot_version() < self.FLINK_OUTER_VERSION:
            return  # Flink's versions 2 and 3: the version says whether rows have a kind
        target.write_boolean(self.supports_row_kind)
        if self._flink_form():
            return  # Flink's version 4: the flag only (its rows have no names)
        target.write_int(len(self.field_names))
        for name, nullable in zip(self.field_names, self.nullables, strict=False):
            target.write_utf(name)
            target.write_boolean(nullable)

    def read_outer_snapshot(self, read_outer_version: int, source: DataInputView) -> None:
        # Flink's versions: 2 (before 1.11) has no row kind, 3 always has it, 4 records it.
        if read_outer_version < self.FLINK_OUTER_VERSION:
            self.supports_row_kind = read_outer_version == 3
        else:
            self.supports_row_kind = source.read_boolean()
        if read_outer_version <= self.FLINK_OUTER_VERSION:
            # Flink's own form has no names (its rows match by position); read_snapshot names
            # the fields f0..fn-1 once the nested block says how many there are.
            self.field_names, self.nullables = [], []
            self._cache_flink_form = True
            self.positional = True
            return
        self._cache_flink_form = False
        self.positional = False
        count = source.read_int()
        # Each field takes at least 3 bytes (empty UTF, bool): bound the count by the input.
        if count < 0 or count * 3 > source.available():
            raise SnapshotFormatError(
                f"RowSerializerSnapshot: field count {count} does not fit the "
                f"{source.available()} remaining bytes; the snapshot is corrupt"
            )
        names: list[str] = []
        nullables: list[bool] = []
        for _ in range(count):
            names.append(source.read_utf())
            nullables.append(source.read_boolean())
        if len(set(names)) != len(names) or "" in names:
            raise SnapshotFormatError(
                f"RowSerializerSnapshot: field names {names} are empty or repeated; the snapshot "
                "is corrupt"
            )
        self.field_names = names
        self.nullables = nullables

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        super().read_snapshot(read_version, source)
        if getattr(self, "_cache_flink_form", False):
            self.field_names = [f"f{i}" for i in range(len(self.nested_snapshots))]
            self.nullables = [True] * len(self.nested_snapshots)
        if len(self.nested_snapshots) != len(self.field_names):
            raise SnapshotFormatError(
                f"RowSerializerSnapshot: {len(self.nested_snapshots)} nested snapshots for the "
                f"{len(self.field_names)} fields {self.field_names}; the snapshot is corrupt"
            )
        self._cache_plans = {}

    def nested_labels(self) -> list[str]:
        return [f"row field {name!r}" for name in self.field_names]

    def resolve_outer_schema_compatibility(self, old_snapshot: Any) -> OuterSchemaCompatibility:
        if old_snapshot.supports_row_kind != self.supports_row_kind:
            return OuterSchemaCompatibility.COMPATIBLE_AFTER_MIGRATION
        return OuterSchemaCompatibility.COMPATIBLE_AS_IS

    # -- FLIP-527 resolution ---------------------------------------------------------------
    def resolve_schema_compatibility(
        self, old_snapshot: TypeSerializerSnapshot[Any]
    ) -> SchemaCompatibility[Any]:
        if not isinstance(old_snapshot, RowSerializerSnapshot):
            return SchemaCompatibility.incompatible(
                f"a {type(old_snapshot).__name__} cannot become a row (RowSerializerSnapshot); "
                "a state's type may not change"
            )
        if self.positional or old_snapshot.positional:
            # A snapshot in Flink's form has no field names: fields match by position, as in
            # Flink 2.3 (an arity change is incompatible; there is no by-name migration).
            if len(old_snapshot.nested_snapshots) != len(self.nested_snapshots):
                return SchemaCompatibility.incompatible(
                    f"the row has {len(self.nested_snapshots)} fields, {len(old_snapshot.nested_snapshots)} "
                    "before, and one of the snapshots is in Flink's form (no field names): Flink 2.3 "
                    "matches row fields by position, so the arity may not change"
                )
            return CompositeTypeSerializerSnapshot.resolve_schema_compatibility(self, old_snapshot)
        old_index = {name: i for i, name in enumerate(old_snapshot.field_names)}
        new_index = {name: i for i, name in enumerate(self.field_names)}
        problems: list[str] = []
        removed = [n for n in old_snapshot.field_names if n not in new_index]
        added = [n for n in self.field_names if n not in old_index]
        for name in removed:
            problems.append(
                f"row field {name!r} was removed or renamed (FLIP-527 allows only adding nullable "
                "fields, reordering, and evolving nested rows; keep the field)"
            )
        for name in added:
            if not self.nullables[new_index[name]]:
                problems.append(
                    f"row field {name!r} was added as NOT NULL; old rows have no value for it "
                    "(declare it nullable)"
                )
        nested: dict[str, SchemaCompatibility[Any]] = {}
        for name, i in new_index.items():
            if name not in old_index:
                continue
            j = old_index[name]
            if old_snapshot.nullables[j] and not self.nullables[i]:
                problems.append(
                    f"row field {name!r} changed from nullable to NOT NULL; old rows may hold "
                    "null there (keep it nullable)"
                )
            result = resolve_compatibility(self.nested_snapshots[i], old_snapshot.nested_snapshots[j])
            if result.is_incompatible():
                problems.append(f"row field {name!r} changed its type incompatibly: {result.reason}")
            nested[name] = result
        if problems:
            return SchemaCompatibility.incompatible("; ".join(problems))

        paths: list[str] = list(added)
        old_order = [n for n in old_snapshot.field_names if n in new_index]
        new_order = [n for n in self.field_names if n in old_index]
        paths += [a for a, b in zip(new_order, old_order, strict=False) if a != b]
        migrate = bool(paths) or old_snapshot.supports_row_kind != self.supports_row_kind
        for name, result in nested.items():
            if result.is_compatible_after_migration():
                migrate = True
                paths += [f"{name}.{p}" for p in result.row_paths]
        if migrate:
            order = {name: k for k, name in enumerate(self.field_names)}
            paths.sort(key=lambda p: (order.get(p.split(".", 1)[0], 0), p))
            return SchemaCompatibility.compatible_after_migration(row_paths=paths)
        # Same fields, nothing to migrate: the field sets are equal, so every field has a result.
        return reconfigured_or_as_is(
            [nested[name] for name in self.field_names],
            self._new_nested_serializers(),
            self.create_outer_serializer_with_nested_serializers,
        )

    # -- migration ---------------------------------------------------------------------------
    def _plan(self, prior: RowSerializer, new: RowSerializer) -> list[tuple[int, Any, Any, Any]]:
        """Per new field: (index in the prior row or -1, nested snapshot or None when the nested
        migration is the identity, prior field serializer, new field serializer)."""
        key = (id(prior), id(new))
        cached = self._cache_plans.get(key)
        if cached is not None and cached[0] is prior and cached[1] is new:
            return cached[2]  # type: ignore[no-any-return]
        if not isinstance(prior, RowSerializer) or not isinstance(new, RowSerializer):
            raise StateMigrationError(
                f"RowSerializerSnapshot.migrate_element needs row serializers, got "
                f"{type(prior).__name__} and {type(new).__name__}"
            )
        prior_index = {name: i for i, name in enumerate(prior.field_names)}
        if prior._cache_positional or new._cache_positional:  # Flink's form: fields match by position
            prior_index = {name: i for i, name in enumerate(new.field_names) if i < len(prior.fields)}
        snapshots = dict(zip(self.field_names, self.nested_snapshots, strict=False))
        if set(snapshots) != set(new.field_names):
            snapshots = dict(zip(new.field_names, new.snapshot_configuration().nested_snapshots, strict=False))
        plan = []
        for name, serializer, _ in new.fields:
            j = prior_index.get(name, -1)
            snap: TypeSerializerSnapshot[Any] | None = snapshots[name]
            prior_field = prior.fields[j][1] if j >= 0 else None
            # Only an as-is field keeps its bytes: a field whose snapshot migrates objects as
            # the identity may still be reconfigured (an enum with reordered symbols), and then
            # its old bytes mean something else to the new serializer.
            if snap is not None and prior_field is not None and _reads_as_is(snap, prior_field):
                snap = None  # the field's bytes and objects stay as they are
            plan.append((j, snap, prior_field, serializer))
        if len(self._cache_plans) > 16:
            self._cache_plans.clear()
        self._cache_plans[key] = (prior, new, plan)
        return plan

    def migrate_element(
        self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None
    ) -> Any:
        """Map an old row (in the prior serializer's field order) to the new field order by
        name: added fields are null, nested fields are migrated by their own snapshots, and
        the row kind is kept."""
        plan = self._plan(prior, new)
        kind = _kind_of(element)
        if kind is not RowKind.INSERT and not new.supports_row_kind:
            raise StateMigrationError(
                f"a {kind.name} row cannot be migrated to a RowSerializer without row-kind "
                "support: the kind would be lost (keep supports_row_kind=True)"
            )
        values: list[Any] = []
        for j, snap, prior_field, new_field in plan:
            if j < 0:
                values.append(None)
                continue
            value = element[j]
            if value is not None and snap is not None:
                value = migrated_element(snap, prior_field, new_field, value)
            values.append(value)
        migrated = _make_row(values, kind)
        if target is not None:
            new.serialize(migrated, target)
        return migrated
