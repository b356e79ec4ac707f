"""Pojo: Python dataclasses in Flink's ``PojoSerializer`` format and with its evolution rules.

Field serializers come, in order of precedence, from ``dataclasses.field(metadata={"serializer":
<TypeSerializer>})``, then from the annotation (``bool`` → Boolean, ``int`` → Long, ``float`` →
Double, ``str`` → String, ``bytes`` → Bytes, ``Optional[X]`` → Nullable(X), ``list[X]`` → List,
``dict[K, V]`` → Map, ``tuple[X, Y]`` → Tuple, a dataclass → Pojo, an Enum → Enum, anything else
→ Pickle). Annotations are resolved with ``typing.get_type_hints``, so ``from __future__ import
annotations`` works for classes whose names are reachable from their module.

Byte format (Flink's): a flags byte, then
- 1: null, nothing follows;
- 2: exactly the serializer's class: per field in name-sorted order a bool is-null and, if not
  null, the value;
- 8: a registered subclass (``PojoSerializer(base, registered_subclasses=[...])``): a tag byte,
  its index in registration order, then the record as that subclass's PojoSerializer writes it;
- 4: any other dataclass subclass: UTF class name (its Java name if registered with one, else
  ``module:qualname``), then the record as that subclass's PojoSerializer writes it. Reading it
  resolves the name through ``reference.lookup_type`` only (nothing is imported).

Evolution (the NEW snapshot judges the OLD one): a different qualified class name or a field
whose type changed incompatibly → incompatible; fields added or removed → after migration (old
records read through ``restore_serializer()`` become instances of the current class: added
fields take the dataclass default or default_factory, else 0 / 0.0 / False for numeric and bool
fields and None for every other type; removed fields are read and dropped).

Pickling: a ``PojoSerializer`` pickles its class *by name* (``module:qualname``) plus its field
serializers. Unpickling resolves the name to the class it imports as in an already-imported
module, else with ``reference.lookup_type`` (the registry), and only if both fail imports the
module and tries again (unpickling is trusted input, unlike a snapshot). A dataclass created at runtime survives the trip when the
receiving process registers it under the same name (``reference.register_type``), e.g. because
importing the module named in its ``__module__`` re-creates and registers it; otherwise
unpickling raises a ``StateError`` naming the class. Two kinds of class travel with the
serializer instead (by value under cloudpickle, as Spark ships tasks): a class whose metaclass has
a pickle reducer, and a class that is not what its name imports as (the next release's class,
registered beside the current one of the same name): by name, another process would find the
current one.
"""

from __future__ import annotations

import copyreg
import dataclasses
import enum
import importlib
import operator
import sys
import threading
import types
import typing
from collections.abc import Sequence
from typing import Any, ClassVar

from .._classes import class_key, lookup_type, not_known_hint, qualified_name, register_type
from .._compat import SchemaCompatibility, reconfigured_or_as_is
from .._errors import (
    ClassNotAllowedError,
    SerializationError,
    SnapshotFormatError,
    StateError,
    StateMigrationError,
)
from .._io import DataInputView, DataOutputView
from .._serializer import TypeSerializer
from .._snapshot import (
    CompositeTypeSerializerSnapshot,
    TypeSerializerSnapshot,
    migrated_element,
    read_versioned_snapshot,
    resolve_compatibility,
    snapshot_dialect,
    write_versioned_snapshot,
)
from . import _codegen
from ._composites import refused

__all__ = ["PojoSerializer", "PojoSerializerSnapshot", "field_serializer_for_annotation"]

FLAG_NULL = 0x01
FLAG_NO_SUBCLASS = 0x02
FLAG_SUBCLASS = 0x04
FLAG_TAGGED_SUBCLASS = 0x08

_BUILDING = threading.local()


def field_serializer_for_annotation(annotation: Any, where: str = "annotation") -> TypeSerializer[Any]:
    """The serializer the mapping in this module's docstring gives for a type annotation."""
    from . import _composites as c
    from . import _primitives as p

    if annotation is bool:
        return p.BooleanSerializer()
    if annotation is int:
        return p.LongSerializer()
    if annotation is float:
        return p.DoubleSerializer()
    if annotation is str:
        return p.StringSerializer()
    if annotation is bytes:
        return p.BytesSerializer()
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        others = [a for a in args if a is not type(None)]
        if len(others) == 1 and len(args) == 2:
            return c.NullableSerializer(field_serializer_for_annotation(others[0], where))
        return _pickle()
    if origin is list and len(args) == 1:
        return c.ListSerializer(field_serializer_for_annotation(args[0], where))
    if origin is dict and len(args) == 2:
        return c.MapSerializer(
            field_serializer_for_annotation(args[0], where),
            field_serializer_for_annotation(args[1], where),
        )
    if origin is tuple and args and Ellipsis not in args and args != ((),):
        return c.TupleSerializer(*[field_serializer_for_annotation(a, where) for a in args])
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return PojoSerializer(annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        from ._enum import EnumSerializer

        return EnumSerializer(annotation)
    return _pickle()


def _pickle() -> TypeSerializer[Any]:
    from ._pickle import PickleSerializer

    return PickleSerializer()


def _derive_fields(cls: type) -> list[tuple[str, TypeSerializer[Any]]]:
    declared = dataclasses.fields(cls)
    hints: dict[str, Any] | None = None
    result: list[tuple[str, TypeSerializer[Any]]] = []
    for f in declared:
        explicit = f.metadata.get("serializer") if f.metadata else None
        if explicit is not None:
            if not isinstance(explicit, TypeSerializer):
                raise TypeError(
                    f"{qualified_name(cls)}.{f.name}: metadata 'serializer' is a "
                    f"{type(explicit).__name__}, not a TypeSerializer"
                )
            result.append((f.name, explicit))
            continue
        if hints is None:
            hints = _field_hints(cls)
        hint = hints.get(f.name, Any)
        if isinstance(hint, Exception):  # NameError for an unresolvable string annotation, etc.
            raise TypeError(
                f"cannot resolve the annotation of {qualified_name(cls)}.{f.name} ({type(hint).__name__}: "
                f"{hint}); define the names it uses at module level or give the field "
                "dataclasses.field(metadata={'serializer': ...})"
            )
        result.append((f.name, field_serializer_for_annotation(hint, f.name)))
    return sorted(result, key=lambda item: item[0])


def _field_hints(cls: type) -> dict[str, Any]:
    """Each annotated name of ``cls`` and its bases -> its resolved type, or the exception
    resolving it raised: one annotation that names a class defined in a function fails alone
    (a field with its own serializer needs none)."""
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - resolved one by one below, each failure kept
        pass
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        namespace = getattr(sys.modules.get(klass.__module__), "__dict__", {})
        for name, annotation in vars(klass).get("__annotations__", {}).items():
            try:
                hints[name] = typing.get_type_hints(
                    types.SimpleNamespace(__annotations__={name: annotation}), namespace, dict(vars(klass)))[name]
            except Exception as exc:  # noqa: BLE001 - kept for the field that needs it
                hints[name] = exc
    return hints


def _current_class(cls: type) -> bool:
    """Whether ``cls`` is the class its name resolves to now (or its name resolves to none):
    not an earlier version of a class whose new version is registered under the same name."""
    try:
        found = lookup_type(qualified_name(cls))
    except StateError:
        return True
    return found is None or found is cls


def _zero_for(serializer: TypeSerializer[Any]) -> Any:
    """What a new field gets when the dataclass gives no default: numeric and bool fields
    their zero (like Java primitives), every other field None (like Java references)."""
    from . import _primitives as p

    if isinstance(
        serializer,
        (p.BooleanSerializer, p.ByteSerializer, p.ShortSerializer, p.IntSerializer,
         p.LongSerializer, p.FloatSerializer, p.DoubleSerializer),
    ):
        return serializer.create_instance()
    return None


class PojoSerializer(_codegen.GeneratedCodec, TypeSerializer[Any]):
    """Instances of one dataclass (``PojoSerializer(MyDataclass)``); any field may be None.

    Registers the dataclass with ``reference.register_type`` so that snapshots can resolve it.
    Equality is by class and field serializers.
    """

    __module__ = "reference.serializers"  # stable identity in savepoints

    def __init__(self, dataclass_type: type, registered_subclasses: Sequence[type] = ()) -> None:
        if not isinstance(dataclass_type, type) or not dataclasses.is_dataclass(dataclass_type):
            raise TypeError(
                f"PojoSerializer needs a dataclass type, got {dataclass_type!r}; decorate the "
                "class with @dataclasses.dataclass"
            )
        building: set[type] = getattr(_BUILDING, "classes", None) or set()
        _BUILDING.classes = building
        if dataclass_type in building:
            raise TypeError(
                f"{qualified_name(dataclass_type)} refers to itself through its field types; give "
                "the recursive field an explicit serializer via "
                "dataclasses.field(metadata={'serializer': ...}) (e.g. PickleSerializer())"
            )
        building.add(dataclass_type)
        try:
            fields = _derive_fields(dataclass_type)
        finally:
            building.discard(dataclass_type)
        register_type(dataclass_type)
        self.dataclass_type = dataclass_type
        self.fields: tuple[tuple[str, TypeSerializer[Any]], ...] = tuple(fields)
        subclasses: list[tuple[type, TypeSerializer[Any]]] = []
        for sub in registered_subclasses:
            if not (isinstance(sub, type) and issubclass(sub, dataclass_type) and sub is not dataclass_type
                    and dataclasses.is_dataclass(sub)):
                raise TypeError(
                    f"PojoSerializer({qualified_name(dataclass_type)}): registered subclass {sub!r} "
                    "is not a dataclass subclass of it"
                )
            if sub in dict(subclasses):
                raise ValueError(f"PojoSerializer: subclass {qualified_name(sub)} is registered twice")
            subclasses.append((sub, PojoSerializer(sub)))
        self._set_subclasses(subclasses, {})
        self._cache_prepare()

    def _set_subclasses(
        self,
        registered: Sequence[tuple[type, TypeSerializer[Any]]],
        non_registered: dict[type, TypeSerializer[Any]],
    ) -> None:
        if len(registered) > 128:
            raise ValueError(f"PojoSerializer: {len(registered)} registered subclasses, at most 128 (Flink "
                             "reads the tag as a signed byte: 0 to 127); register fewer subclasses")
        #: (subclass, its serializer) in registration order: the tag is the index.
        self.registered: tuple[tuple[type, TypeSerializer[Any]], ...] = tuple(registered)
        self._cache_tags = {sub: i for i, (sub, _) in enumerate(self.registered)}
        #: serializers of the non-registered subclasses met so far (Flink's subclass cache).
        self.non_registered: dict[type, TypeSerializer[Any]] = dict(non_registered)

    @property
    def registered_subclasses(self) -> tuple[type, ...]:
        return tuple(sub for sub, _ in self.registered)

    def _subclass_serializer(self, cls: type) -> TypeSerializer[Any]:
        found = self.non_registered.get(cls)
        if found is None:
            found = PojoSerializer(cls)
            self.non_registered[cls] = found
        return found

    @classmethod
    def _with_fields(
        cls,
        dataclass_type: type,
        fields: Sequence[tuple[str, TypeSerializer[Any]]],
        registered: Sequence[tuple[type, TypeSerializer[Any]]] = (),
        non_registered: dict[type, TypeSerializer[Any]] | None = None,
    ) -> PojoSerializer:
        """A serializer of ``dataclass_type`` that reads and writes exactly ``fields`` (sorted
        by name): the restored form of an older snapshot, or a reconfigured one."""
        self = cls.__new__(cls)
        register_type(dataclass_type)
        self.dataclass_type = dataclass_type
        self.fields = tuple(sorted(fields, key=lambda item: item[0]))
        self._set_subclasses(registered, non_registered or {})
        self._cache_prepare()
        return self

    def _cache_prepare(self) -> None:
        cls = self.dataclass_type
        current = {f.name: f for f in dataclasses.fields(cls)}
        names = {name for name, _ in self.fields}
        self._cache_names = tuple(name for name, _ in self.fields)
        self._cache_serializers = tuple(s for _, s in self.fields)
        # Fields of the current class that this serializer does not read (added since the
        # snapshot): they get the dataclass default, else the zero of their current type.
        missing = [f for name, f in current.items() if name not in names]
        self._cache_missing: tuple[dataclasses.Field[Any], ...] = tuple(missing)
        self._cache_missing_zero: dict[str, Any] = {}
        if missing:
            derived = dict(_derive_fields(cls)) if any(
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                for f in missing
            ) else {}
            for f in missing:
                if f.name in derived:
                    self._cache_missing_zero[f.name] = _zero_for(derived[f.name])
        # Fields read from the data that the current class no longer has are dropped.
        self._cache_keep = tuple(name in current for name in self._cache_names)
        _codegen.install(self)

    def __getstate__(self) -> dict[str, Any]:
        return {"dataclass_type": self.dataclass_type, "fields": self.fields, "registered": self.registered}

    def __reduce__(self) -> tuple[Any, ...]:
        cls = self.dataclass_type
        # A class whose metaclass has a pickle reducer (runtime-created classes, e.g. the
        # strategies' generated ones) travels with the serializer to other processes (Spark
        # executors), where it is not known by name.
        # So does a class that is not what its name imports as: the next release's class of a
        # name, side by side with the current one in this process (``register_type``); by name,
        # another process would find the current one.
        portable = cls if type(cls) in copyreg.dispatch_table or _imports_as_another(cls) else None
        return (_unpickle_pojo_serializer, (qualified_name(cls), self.fields, portable, self.registered))

    # -- instances -------------------------------------------------------------------------
    def _new_instance(self, values: dict[str, Any]) -> Any:
        """An instance of the current class holding ``values`` exactly (``__init__`` and
        ``__post_init__`` are not run: a restored record is the record that was stored)."""
        cls = self.dataclass_type
        obj = cls.__new__(cls)
        setter = object.__setattr__
        for f in self._cache_missing:
            if f.default is not dataclasses.MISSING:
                value = f.default
            elif f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            else:
                value = self._cache_missing_zero.get(f.name)
            setter(obj, f.name, value)
        for name, value in values.items():
            setter(obj, name, value)
        return obj

    def _instance_from_object(self, obj: Any) -> Any:
        """An instance of the current class with ``obj``'s values by field name; fields ``obj``
        lacks take the dataclass default, else their zero / None."""
        serializers = dict(self.fields)
        values: dict[str, Any] = {}
        for f in dataclasses.fields(self.dataclass_type):
            if hasattr(obj, f.name):
                values[f.name] = getattr(obj, f.name)
            elif f.default is not dataclasses.MISSING:
                values[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                values[f.name] = f.default_factory()
            elif f.name in serializers:
                values[f.name] = _zero_for(serializers[f.name])
            else:
                values[f.name] = self._cache_missing_zero.get(f.name)
        return self._new_instance(values)

    # -- TypeSerializer ----------------------------------------------------------------------
    # Reads, writes and copies go through code generated for this class (``_codegen.GeneratedCodec``);
    # the generic methods below define them.
    def _serialize_generic(self, value: Any, target: DataOutputView) -> None:
        if value is None:
            target.write_byte(FLAG_NULL)
            return
        actual = type(value)
        if actual is not self.dataclass_type:
            if isinstance(value, self.dataclass_type) and dataclasses.is_dataclass(actual):
                tag = self._cache_tags.get(actual)
                if tag is not None:
                    target.write_byte(FLAG_TAGGED_SUBCLASS)
                    target.write_byte(tag)
                    self.registered[tag][1].serialize(value, target)
                else:
                    target.write_byte(FLAG_SUBCLASS)
                    target.write_utf(class_key(qualified_name(actual)))
                    self._subclass_serializer(actual).serialize(value, target)
                return
            raise SerializationError(
                f"PojoSerializer({qualified_name(self.dataclass_type)}) got "
                f"{type(value).__name__} {value!r}; it writes instances of that dataclass (or None)"
            )
        start = len(target)
        target.write_byte(FLAG_NO_SUBCLASS)
        for name, serializer in self.fields:
            item = getattr(value, name, None)
            if item is None:
                target.write_boolean(True)
            else:
                target.write_boolean(False)
                try:
                    serializer.serialize(item, target)
                except SerializationError as exc:
                    where = f"field {name!r} of {qualified_name(self.dataclass_type)}"
                    raise refused(target, start, where, exc) from None

    def _read_flags(self, source: DataInputView) -> Any:
        """True for null, False for an instance of the class itself, else the serializer of
        the subclass the record holds (its tag or class name already read)."""
        flags = source.read_unsigned_byte()
        if flags == FLAG_NULL:
            return True
        if flags == FLAG_NO_SUBCLASS:
            return False
        if flags == FLAG_TAGGED_SUBCLASS:
            tag = source.read_byte()
            if not 0 <= tag < len(self.registered):
                raise SerializationError(
                    f"PojoSerializer({qualified_name(self.dataclass_type)}): subclass tag {tag} with "
                    f"{len(self.registered)} registered subclasses; the data is corrupt or was "
                    "written with other registrations"
                )
            return self.registered[tag][1]
        if flags == FLAG_SUBCLASS:
            name = source.read_utf()
            try:
                cls = lookup_type(name)
            except ClassNotAllowedError as exc:
                raise SerializationError(f"PojoSerializer({qualified_name(self.dataclass_type)}): {exc}") from None
            if cls is None or not (dataclasses.is_dataclass(cls) and issubclass(cls, self.dataclass_type)):
                raise SerializationError(
                    f"PojoSerializer({qualified_name(self.dataclass_type)}): the data holds an "
                    f"instance of {name!r}, which is not a known dataclass subclass; import or "
                    "register it (reference.register_type) before reading"
                )
            return self._subclass_serializer(cls)
        raise SerializationError(
            f"PojoSerializer({qualified_name(self.dataclass_type)}): invalid flags byte "
            f"{flags:#04x} (1 = null, 2 = instance, 4 = subclass, 8 = registered subclass); "
            "the data is corrupt"
        )

    def _deserialize_generic(self, source: DataInputView) -> Any:
        kind = self._read_flags(source)
        if kind is True:
            return None
        if kind is not False:
            return kind.deserialize(source)
        values: dict[str, Any] = {}
        for name, serializer, keep in zip(self._cache_names, self._cache_serializers, self._cache_keep, strict=False):
            value = None if source.read_boolean() else serializer.deserialize(source)
            if keep:
                values[name] = value
        return self._new_instance(values)

    def _copy_serialized_generic(self, source: DataInputView, target: DataOutputView) -> None:
        kind = self._read_flags(source)
        if kind is True:
            target.write_byte(FLAG_NULL)
            return
        if kind is not False:
            self.serialize(kind.deserialize(source), target)
            return
        target.write_byte(FLAG_NO_SUBCLASS)
        for serializer in self._cache_serializers:
            is_null = source.read_boolean()
            target.write_boolean(is_null)
            if not is_null:
                serializer.copy_serialized(source, target)

    # -- generated-code fragments (reference.serializers._codegen) ---------------------------
    # Inlined: records of exactly this class. Null records, subclasses and anything unusual
    # take the generic methods.
    def _gen_read(self, g: Any, out: Any) -> None:
        flags, items = g.var(), g.names(len(self._cache_names))
        g.emit("pos += 1")
        g.emit("{f} = data[pos - 1]", f=flags)
        with g.block("if {f} == {instance}:", f=flags, instance=FLAG_NO_SUBCLASS):
            for serializer, item in zip(self._cache_serializers, items, strict=True):
                g.emit("pos += 1")
                with g.block("if data[pos - 1]:"):
                    g.emit("{item} = None", item=item)
                with g.block("else:"):
                    g.read(serializer, item)
            kept = [(g.const(name), item) for name, item, keep in
                    zip(self._cache_names, items, self._cache_keep, strict=True) if keep]
            g.emit("{out} = {new}({values})", out=out, new=g.const(self._new_instance), values=g.dict_of(kept))
        with g.block("elif {f} == {null}:", f=flags, null=FLAG_NULL):
            g.emit("{out} = None", out=out)
        with g.block("else:"):
            g.emit("pos -= 1")
            g.call_read(self._deserialize_generic, out)

    def _gen_write(self, g: Any, value: Any) -> None:
        items = g.names(len(self._cache_names))
        with g.block("if type({v}) is {cls}:", v=value, cls=g.const(self.dataclass_type)):
            g.emit("buf.append({instance})", instance=FLAG_NO_SUBCLASS)
            if len(items) == 1:
                g.emit("{item} = {get}({v})", item=items[0], v=value, get=g.const(operator.attrgetter(*self._cache_names)))
            elif items:
                g.emit("{items} = {get}({v})", items=g.tuple_of(items), v=value,
                       get=g.const(operator.attrgetter(*self._cache_names)))
            for serializer, item in zip(self._cache_serializers, items, strict=True):
                with g.block("if {item} is None:", item=item):
                    g.emit("buf.append(1)")
                with g.block("else:"):
                    g.emit("buf.append(0)")
                    g.write(serializer, item)
        with g.block("else:"):
            g.emit("{f}({v}, target)", f=g.const(self._serialize_generic), v=value)

    def _gen_skip(self, g: Any) -> None:
        flags = g.var()
        g.emit("pos += 1")
        g.emit("{f} = data[pos - 1]", f=flags)
        with g.block("if {f} == {instance}:", f=flags, instance=FLAG_NO_SUBCLASS):
            for serializer in self._cache_serializers:
                g.emit("pos += 1")
                with g.block("if not data[pos - 1]:"):
                    g.skip(serializer)
                g.emit("elif data[pos - 1] != 1: raise Bail")  # the copy writes the flag as 1
        with g.block("elif {f} != {null}:", f=flags, null=FLAG_NULL):
            g.emit("pos -= 1")
            g.call_copy(self._copy_serialized_generic)

    def copy(self, value: Any) -> Any:
        if value is None:
            return None
        if type(value) is not self.dataclass_type and isinstance(value, self.dataclass_type):
            tag = self._cache_tags.get(type(value))
            sub = self.registered[tag][1] if tag is not None else self._subclass_serializer(type(value))
            return sub.copy(value)
        values = {}
        for name, serializer, keep in zip(self._cache_names, self._cache_serializers, self._cache_keep, strict=False):
            if keep:
                item = getattr(value, name, None)
                values[name] = None if item is None else serializer.copy(item)
        return self._new_instance(values)

    def duplicate(self) -> PojoSerializer:
        duplicates = [s.duplicate() for s in self._cache_serializers]
        if all(d is s for d, s in zip(duplicates, self._cache_serializers, strict=False)):
            return self
        return PojoSerializer._with_fields(
            self.dataclass_type, list(zip(self._cache_names, duplicates, strict=False)),
            self.registered, self.non_registered,
        )

    def create_instance(self) -> Any:
        values = {}
        for f in dataclasses.fields(self.dataclass_type):
            if f.name in self._cache_names:
                if f.default is not dataclasses.MISSING:
                    values[f.name] = f.default
                elif f.default_factory is not dataclasses.MISSING:
                    values[f.name] = f.default_factory()
                else:
                    values[f.name] = _zero_for(dict(self.fields)[f.name])
        return self._new_instance(values)

    def snapshot_configuration(self) -> PojoSerializerSnapshot:
        return PojoSerializerSnapshot(self)

    def __eq__(self, other: object) -> bool:
        return self is other or (
            type(other) is type(self)
            and other.dataclass_type is self.dataclass_type  # type: ignore[attr-defined]
            and other.fields == self.fields  # type: ignore[attr-defined]
            and other.registered == self.registered  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, qualified_name(self.dataclass_type)))

    def __repr__(self) -> str:
        return f"PojoSerializer({qualified_name(self.dataclass_type)})"


def _unpickle_pojo_serializer(
    name: str,
    fields: Sequence[tuple[str, TypeSerializer[Any]]],
    portable: type | None = None,
    registered: Sequence[tuple[type, TypeSerializer[Any]]] = (),
) -> PojoSerializer:
    if portable is not None:
        return PojoSerializer._with_fields(portable, fields, registered)
    # A class pickled by name is the one its name imports as, when there is one (a class that
    # is not was sent along, above): that, before the registry, which may hold a next release's
    # class of the name that an earlier unpickling in this process registered.
    module, _, qualname = name.partition(":")
    cls = _imported_class(module, qualname) or _known_type(name)
    if cls is None:
        try:
            importlib.import_module(module)
        except ImportError:
            pass
        cls = _imported_class(module, qualname) or _known_type(name)
    if cls is None or not dataclasses.is_dataclass(cls):
        raise StateError(
            f"cannot unpickle PojoSerializer: dataclass {name} is not known in this process: "
            f"{not_known_hint(name, 'unpickling')}"
        )
    return PojoSerializer._with_fields(cls, fields, registered)


def _imported_class(module: str, qualname: str) -> type | None:
    """The class at attribute path ``qualname`` of ``module`` if that module is already imported
    (nothing is imported), else None."""
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    return found if isinstance(found, type) else None


def _imports_as_another(cls: type) -> bool:
    """Whether ``cls``'s module and ``__qualname__`` name another class than ``cls``."""
    found = _imported_class(cls.__module__, cls.__qualname__)
    return found is not None and found is not cls


def _known_type(name: str) -> type | None:
    """``lookup_type(name)``, None for a class a snapshot may not name as for an unknown one."""
    try:
        return lookup_type(name)
    except ClassNotAllowedError:
        return None


FLINK_POJO_VERSION = 2
#: This project's outer version with the subclass registries (UTF name + versioned snapshot).
SUBCLASSES_OUTER_VERSION = 2
_OPTIONAL_MAP_HEADER = 0x4F2C69A3D70


def _write_optional_map(
    target: DataOutputView, entries: Sequence[tuple[str, bytes, TypeSerializerSnapshot[Any]]]
) -> None:
    """Flink's ``LinkedOptionalMapSerializer.writeOptionalMap`` with every key and value present."""
    target.write_long(_OPTIONAL_MAP_HEADER)
    target.write_int(len(entries))
    for name, key, snapshot in entries:
        target.write_utf(name)
        target.write_boolean(True)
        target.write_int(len(key))
        target.write(key)
        frame = DataOutputView()
        write_versioned_snapshot(frame, snapshot)
        target.write_boolean(True)
        target.write_int(len(frame.getvalue()))
        target.write(frame.getvalue())


def _read_frame(source: DataInputView, where: str) -> bytes:
    size = source.read_int()
    if size < 0 or size > source.available():
        raise SnapshotFormatError(
            f"{where}: frame of {size} bytes with {source.available()} left; the snapshot is "
            "corrupt or truncated"
        )
    return source.read_fully(size)


def _read_map_header(source: DataInputView, where: str) -> None:
    """Read the header of an optional map (Flink's ``LinkedOptionalMapSerializer``), refusing
    another: the bytes are damaged."""
    header = source.read_long()
    if header != _OPTIONAL_MAP_HEADER:
        raise SnapshotFormatError(f"{where}: header {header:#x} instead of {_OPTIONAL_MAP_HEADER:#x}; the snapshot is corrupt")


def _read_optional_map(
    source: DataInputView, class_name: str, what: str
) -> list[tuple[str, bytes | None, TypeSerializerSnapshot[Any] | None]]:
    """Entries of one optional map: (name, key bytes or None, value snapshot or None)."""
    where = f"PojoSerializerSnapshot of {class_name}, {what} map"
    _read_map_header(source, where)
    count = source.read_int()
    # Each entry takes at least 4 bytes (empty UTF name, two absent flags).
    if count < 0 or count * 4 > source.available():
        raise SnapshotFormatError(f"{where}: {count} entries do not fit the {source.available()} bytes left")
    entries: list[tuple[str, bytes | None, TypeSerializerSnapshot[Any] | None]] = []
    for _ in range(count):
        name = source.read_utf()
        key = _read_frame(source, where) if source.read_boolean() else None
        snapshot = None
        if source.read_boolean():
            frame = DataInputView(_read_frame(source, where))
            snapshot = read_versioned_snapshot(frame)
            if frame.available():
                raise SnapshotFormatError(f"{where}: {frame.available()} bytes left after the snapshot of {name!r}")
        entries.append((name, key, snapshot))
    return entries


def _present(
    entries: list[tuple[str, bytes | None, TypeSerializerSnapshot[Any] | None]], class_name: str
) -> list[tuple[str, TypeSerializerSnapshot[Any]]]:
    """(name, snapshot) of subclass map entries; an entry Flink wrote without its snapshot (it
    could not read it) makes the snapshot unrestorable, as in Flink."""
    present = []
    for name, _, snapshot in entries:
        if snapshot is None:
            raise SnapshotFormatError(
                f"PojoSerializerSnapshot of {class_name}: the subclass {name} has no serializer "
                "snapshot (Flink wrote one it could not resolve); such a snapshot cannot be restored"
            )
        present.append((name, snapshot))
    return present


def _is_identity_migration(snapshot: TypeSerializerSnapshot[Any]) -> bool:
    return type(snapshot).migrate_element is TypeSerializerSnapshot.migrate_element


class PojoSerializerSnapshot(
    CompositeTypeSerializerSnapshot[Any],
    java_name="org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot",
):
    """Outer version 1: UTF class identity ``module:qualname``, int n, n × UTF field name
    (sorted); nested snapshots are the field serializers' in the same order.

    Flink's form (snapshot version 2, written in the Flink dialect): UTF class name, then three
    optional maps (long header 0x4f2c69a3d70, int n, per entry UTF name, bool + int-framed key,
    bool + int-framed value): fields (key: UTF declaring class, UTF field name; value: the
    field serializer's versioned snapshot), registered subclasses and non-registered subclasses
    (no key bytes; value: the subclass serializer's versioned snapshot)."""

    __module__ = "reference.serializers"  # stable identity in savepoints

    OUTER_VERSION = 1
    READ_OUTER_VERSIONS = (OUTER_VERSION, SUBCLASSES_OUTER_VERSION)
    #: The long that starts each optional map of Flink's form; another there is refused.
    OPTIONAL_MAP_HEADER: ClassVar[int] = _OPTIONAL_MAP_HEADER

    def __init__(self, serializer: PojoSerializer | None = None) -> None:
        super().__init__(serializer)
        self.class_name = ""
        self.field_names: list[str] = []
        #: Flink's form only: the Java class declaring each field, as read.
        self.field_classes: list[str] | None = None
        #: (class name, snapshot) of the registered subclasses, in registration order, and of
        #: the non-registered subclasses seen so far.
        self.registered_subclasses: list[tuple[str, TypeSerializerSnapshot[Any]]] = []
        self.non_registered_subclasses: list[tuple[str, TypeSerializerSnapshot[Any]]] = []
        self._cache_plans: dict[tuple[int, int, bool], Any] = {}
        self._cache_readers: dict[int, tuple[Any, Any]] = {}
        if serializer is not None:
            self.class_name = qualified_name(serializer.dataclass_type)
            self.field_names = [name for name, _ in serializer.fields]
            self.registered_subclasses = [
                (class_key(qualified_name(sub)), ser.snapshot_configuration())
                for sub, ser in serializer.registered
            ]
            self.non_registered_subclasses = [
                (class_key(qualified_name(sub)), ser.snapshot_configuration())
                for sub, ser in serializer.non_registered.items()
            ]

    def get_current_outer_snapshot_version(self) -> int:
        # Version 2 adds the subclass registries; without subclasses version 1 stays the form.
        if self.registered_subclasses or self.non_registered_subclasses:
            return SUBCLASSES_OUTER_VERSION
        return self.OUTER_VERSION

    # -- Flink's own form (snapshot version 2) ------------------------------------------
    def get_current_version(self) -> int:
        return FLINK_POJO_VERSION if snapshot_dialect() == "flink" else super().get_current_version()

    def write_snapshot(self, target: DataOutputView) -> None:
        if snapshot_dialect() != "flink":
            super().write_snapshot(target)
            return
        java_class = class_key(self.class_name)
        target.write_utf(java_class)
        declaring = getattr(self, "field_classes", None) or [java_class] * len(self.field_names)
        fields = []
        for name, owner, nested in zip(self.field_names, declaring, self.nested_snapshots, strict=True):
            key = DataOutputView()
            key.write_utf(owner)
            key.write_utf(name)
            fields.append((name, key.getvalue(), nested))
        _write_optional_map(target, fields)
        _write_optional_map(target, [(n, b"", snap) for n, snap in self.registered_subclasses])
        _write_optional_map(target, [(n, b"", snap) for n, snap in self.non_registered_subclasses])

    def _read_flink_form(self, source: DataInputView) -> None:
        class_name = source.read_utf()
        names: list[str] = []
        owners: list[str] = []
        nested: list[TypeSerializerSnapshot[Any]] = []
        for name, key, snapshot in _read_optional_map(source, class_name, "field"):
            if key is None or snapshot is None:
                raise SnapshotFormatError(
                    f"PojoSerializerSnapshot of {class_name}: field {name!r} has no "
                    f"{'field' if key is None else 'serializer snapshot'} (Flink wrote a field it "
                    "could not resolve); such a snapshot cannot be restored"
                )
            key_source = DataInputView(key)
            owners.append(key_source.read_utf())
            if key_source.read_utf() != name:
                raise SnapshotFormatError(
                    f"PojoSerializerSnapshot of {class_name}: field entry {name!r} names another "
                    "field; the snapshot is corrupt"
                )
            names.append(name)
            nested.append(snapshot)
        registered = _read_optional_map(source, class_name, "registered subclass")
        non_registered = _read_optional_map(source, class_name, "non-registered subclass")
        self.class_name, self.field_names, self.field_classes = class_name, names, owners
        self.nested_snapshots = nested
        self.registered_subclasses = _present(registered, class_name)
        self.non_registered_subclasses = _present(non_registered, class_name)
        self._serializer = None

    def get_nested_serializers(self, outer_serializer: Any) -> Sequence[TypeSerializer[Any]]:
        return [s for _, s in outer_serializer.fields]

    def _current_class(self) -> type:
        if self._serializer is not None:
            return self._serializer.dataclass_type  # type: ignore[attr-defined, no-any-return]
        cls = lookup_type(self.class_name)
        if cls is None:
            raise StateError(
                f"the snapshot's dataclass {self.class_name} is not known in this process: "
                f"{not_known_hint(self.class_name)} (building its PojoSerializer there registers it too)"
            )
        if not dataclasses.is_dataclass(cls):
            raise StateError(f"the snapshot's class {self.class_name} is {cls!r}, not a dataclass")
        return cls

    def create_outer_serializer_with_nested_serializers(
        self, nested: Sequence[TypeSerializer[Any]]
    ) -> PojoSerializer:
        if len(nested) != len(self.field_names):
            raise SnapshotFormatError(
                f"PojoSerializerSnapshot of {self.class_name}: {len(nested)} field serializers "
                f"for the fields {self.field_names}; the snapshot is corrupt"
            )
        return PojoSerializer._with_fields(
            self._current_class(),
            list(zip(self.field_names, nested, strict=False)),
            [(self._subclass(name), snap.restore_serializer()) for name, snap in self.registered_subclasses],
            {self._subclass(name): snap.restore_serializer() for name, snap in self.non_registered_subclasses},
        )

    def _subclass(self, name: str) -> type:
        cls = lookup_type(name)
        if cls is None:
            raise StateError(
                f"the snapshot of {self.class_name} names the subclass {name}, which is not known in "
                f"this process: {not_known_hint(name)}"
            )
        if not dataclasses.is_dataclass(cls):
            raise StateError(f"the snapshot of {self.class_name} names the subclass {name}, which is {cls!r}, "
                             "not a dataclass")
        return cls

    def write_outer_snapshot(self, target: DataOutputView) -> None:
        target.write_utf(self.class_name)
        target.write_int(len(self.field_names))
        for name in self.field_names:
            target.write_utf(name)
        if self.get_current_outer_snapshot_version() == SUBCLASSES_OUTER_VERSION:
            for registry in (self.registered_subclasses, self.non_registered_subclasses):
                target.write_int(len(registry))
                for name, snapshot in registry:
                    target.write_utf(name)
                    write_versioned_snapshot(target, snapshot)

    def read_outer_snapshot(self, read_outer_version: int, source: DataInputView) -> None:
        class_name = source.read_utf()
        count = source.read_int()
        if count < 0 or count * 2 > source.available():
            raise SnapshotFormatError(
                f"PojoSerializerSnapshot of {class_name}: field count {count} does not fit the "
                f"{source.available()} remaining bytes; the snapshot is corrupt"
            )
        names = [source.read_utf() for _ in range(count)]
        if names != sorted(set(names)) or ":" not in class_name:
            raise SnapshotFormatError(
                f"PojoSerializerSnapshot of {class_name!r}: field names {names} are not sorted and "
                "unique, or the class identity is not module:qualname; the snapshot is corrupt"
            )
        self.class_name = class_name
        self.field_names = names
        registries: list[list[tuple[str, TypeSerializerSnapshot[Any]]]] = [[], []]
        if read_outer_version == SUBCLASSES_OUTER_VERSION:
            for registry in registries:
                count = source.read_int()
                if count < 0 or count * 8 > source.available():
                    raise SnapshotFormatError(
                        f"PojoSerializerSnapshot of {class_name}: subclass count {count} does not "
                        f"fit the {source.available()} remaining bytes; the snapshot is corrupt"
                    )
                registry.extend((source.read_utf(), read_versioned_snapshot(source)) for _ in range(count))
        self.registered_subclasses, self.non_registered_subclasses = registries

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        if read_version == FLINK_POJO_VERSION:
            self._read_flink_form(source)
            return
        super().read_snapshot(read_version, source)
        if len(self.nested_snapshots) != len(self.field_names):
            raise SnapshotFormatError(
                f"PojoSerializerSnapshot of {self.class_name}: {len(self.nested_snapshots)} nested "
                f"snapshots for the fields {self.field_names}; the snapshot is corrupt"
            )

    def nested_labels(self) -> list[str]:
        return [f"field {name!r}" for name in self.field_names]

    def resolve_schema_compatibility(
        self, old_snapshot: TypeSerializerSnapshot[Any]
    ) -> SchemaCompatibility[Any]:
        if not isinstance(old_snapshot, PojoSerializerSnapshot):
            return SchemaCompatibility.incompatible(
                f"a {type(old_snapshot).__name__} cannot become a dataclass of {self.class_name} "
                "(PojoSerializerSnapshot); a state's type may not change"
            )
        if class_key(old_snapshot.class_name) != class_key(self.class_name):
            return SchemaCompatibility.incompatible(
                f"the dataclass changed from {old_snapshot.class_name} to {self.class_name}; a "
                "POJO state's class (module and qualified name) may not change"
            )
        unknown = [
            name
            for name, _ in old_snapshot.registered_subclasses + old_snapshot.non_registered_subclasses
            if _known_type(name) is None
        ]
        if unknown:
            return SchemaCompatibility.incompatible(
                f"the snapshot of {self.class_name} names subclasses this process does not know: "
                f"{', '.join(unknown)}; register them (reference.register_type) before restoring"
            )
        old_nested = dict(zip(old_snapshot.field_names, old_snapshot.nested_snapshots, strict=False))
        nested: dict[str, SchemaCompatibility[Any]] = {}
        problems = []
        for name, snapshot in zip(self.field_names, self.nested_snapshots, strict=False):
            if name in old_nested:
                result = resolve_compatibility(snapshot, old_nested[name])
                if result.is_incompatible():
                    problems.append(
                        f"field {name!r} of {self.class_name} changed its type incompatibly: "
                        f"{result.reason}"
                    )
                nested[name] = result
        # Subclasses registered before and now: their serializers are judged like fields.
        new_registered = {class_key(name): snap for name, snap in self.registered_subclasses}
        kept: dict[str, SchemaCompatibility[Any]] = {}
        for name, old_sub in old_snapshot.registered_subclasses:
            new_sub = new_registered.get(class_key(name))
            if new_sub is not None:
                result = resolve_compatibility(new_sub, old_sub)
                if result.is_incompatible():
                    problems.append(f"registered subclass {name} of {self.class_name}: {result.reason}")
                kept[class_key(name)] = result
        if problems:
            return SchemaCompatibility.incompatible("; ".join(problems))
        fields_changed = old_snapshot.field_names != self.field_names
        if (
            fields_changed
            or any(r.is_compatible_after_migration() for r in nested.values())
            or any(r.is_compatible_after_migration() for r in kept.values())
        ):
            paths = [f"{name}.{p}" for name, r in nested.items() for p in r.row_paths]
            return SchemaCompatibility.compatible_after_migration(row_paths=paths)
        old_order = [class_key(name) for name, _ in old_snapshot.registered_subclasses]
        if (
            old_order != list(new_registered)[: len(old_order)]
            or old_snapshot.non_registered_subclasses
            or any(r.is_compatible_with_reconfigured_serializer() for r in kept.values())
        ):
            return SchemaCompatibility.compatible_with_reconfigured_serializer(
                self._reconfigured(old_snapshot, nested, kept)
            )
        # Same fields, nothing to migrate: the field sets are equal, so every field has a result.
        return reconfigured_or_as_is(
            [nested[name] for name in self.field_names],
            self._new_nested_serializers(),
            self.create_outer_serializer_with_nested_serializers,
        )

    def _reconfigured(
        self,
        old_snapshot: PojoSerializerSnapshot,
        nested: dict[str, SchemaCompatibility[Any]],
        kept: dict[str, SchemaCompatibility[Any]],
    ) -> PojoSerializer:
        """Flink's reconfigured PojoSerializer: the previous registrations keep their tags (in
        their order, with the new or reconfigured serializers), new ones follow; the previous
        non-registered subclass serializers are kept."""
        fields = [
            (name, r.get_reconfigured_serializer() if r.is_compatible_with_reconfigured_serializer() else s)
            for (name, r), s in zip(
                [(n, nested[n]) for n in self.field_names], self._new_nested_serializers(), strict=True
            )
        ]
        new_registered = {
            class_key(name): (self._subclass(name), snap.restore_serializer())
            for name, snap in self.registered_subclasses
        }
        registry: dict[str, tuple[type, Any]] = {}
        for name, old_sub in old_snapshot.registered_subclasses:
            key = class_key(name)
            if key in kept:
                result = kept[key]
                serializer = (
                    result.get_reconfigured_serializer()
                    if result.is_compatible_with_reconfigured_serializer()
                    else new_registered[key][1]
                )
                registry[key] = (new_registered[key][0], serializer)
            else:
                registry[key] = (old_snapshot._subclass(name), old_sub.restore_serializer())
        for key, entry in new_registered.items():
            registry.setdefault(key, entry)
        return PojoSerializer._with_fields(
            self._current_class(),
            fields,
            list(registry.values()),
            {old_snapshot._subclass(n): snap.restore_serializer() for n, snap in old_snapshot.non_registered_subclasses},
        )

    def _plan(self, prior: PojoSerializer, new: PojoSerializer, every: bool = False) -> list[tuple[str, Any, Any, Any]]:
        """(name, nested snapshot, prior field serializer, new field serializer) for each field
        kept from the prior version whose nested migration is not the identity. ``every``: also
        for each field that reads as is whose snapshot is the reference's own, whose migration
        of such a value only rebuilds objects of an earlier class version (a user's
        snapshot migrates only what needs migration: its migrate_element must not run there)."""
        key = (id(prior), id(new), every)
        cached = self._cache_plans.get(key)
        if cached is not None and cached[0] is prior and cached[1] is new:
            return cached[2]  # type: ignore[no-any-return]
        snapshots = dict(zip(self.field_names, self.nested_snapshots, strict=False))
        if set(snapshots) != set(new._cache_names):
            snapshots = dict(zip(new._cache_names, new.snapshot_configuration().nested_snapshots, strict=False))
        prior_fields = dict(prior.fields)
        plan = []
        for name, new_field in new.fields:
            snap = snapshots[name]
            if name not in prior_fields or _is_identity_migration(snap):
                continue
            try:
                as_is = resolve_compatibility(
                    snap, prior_fields[name].snapshot_configuration()
                ).is_compatible_as_is()
            except Exception:  # a user snapshot failing here: migrate the field normally
                as_is = False
            if not as_is or (every and type(snap).__module__.split(".")[0] == "reference"):
                plan.append((name, snap, prior_fields[name], new_field))
        if len(self._cache_plans) > 16:
            self._cache_plans.clear()
        self._cache_plans[key] = (prior, new, plan)
        return plan

    def _as_current(self, prior: PojoSerializer, new: PojoSerializer, element: Any) -> tuple[Any, bool]:
        """``element``, an object of an earlier version of its class, as an object of the
        classes now registered under the same names.

        When ``prior`` made it (its class is ``prior``'s or one of its registered subclasses:
        ``prior`` is the old release's serializer), it is read as a restore reads its bytes,
        with the serializer restored from ``prior``'s snapshot (whose class names resolve now),
        nested values and subclasses included. Otherwise (``prior`` was restored after the new
        release's classes were registered, and the object was read before) it is rebuilt by
        field name as an instance of the class of that name that ``new`` writes (its own class
        or a registered subclass), fields it lacks taking their default, else zero / None; True
        with it when so (its field values are then the earlier objects still)."""
        cls = type(element)
        if cls is prior.dataclass_type or cls in prior._cache_tags:
            cached = self._cache_readers.get(id(prior))
            if cached is None or cached[0] is not prior:
                snapshot = DataOutputView()
                write_versioned_snapshot(snapshot, prior.snapshot_configuration())
                # Written here from ``prior`` itself, as is the record below: nothing untrusted is read.
                restored = read_versioned_snapshot(DataInputView(snapshot.getvalue()), allow_pickle=True)
                cached = (prior, restored.restore_serializer())
                self._cache_readers.clear()
                self._cache_readers[id(prior)] = cached
            out = DataOutputView()
            prior.serialize(element, out)
            return cached[1].deserialize(DataInputView(out.getvalue())), False
        name = qualified_name(cls)
        writers = {qualified_name(new.dataclass_type): new}
        writers.update((qualified_name(sub), serializer) for sub, serializer in new.registered)
        writer = writers.get(name)
        if not isinstance(writer, PojoSerializer):
            raise StateMigrationError(
                f"PojoSerializerSnapshot.migrate_element got a {name} of an earlier version of its "
                f"class, which {new!r} neither writes nor registers as a subclass; migrate objects "
                "the prior serializer read"
            )
        return writer._instance_from_object(element), True

    def migrate_element(
        self, prior: Any, new: Any, element: Any, target: DataOutputView | None = None
    ) -> Any:
        """The restored serializer already reads instances of the current class; only field
        values whose own serializer needs migration (e.g. an evolved row) are migrated."""
        if not isinstance(prior, PojoSerializer) or not isinstance(new, PojoSerializer):
            raise StateMigrationError(
                f"PojoSerializerSnapshot.migrate_element needs PojoSerializers, got "
                f"{type(prior).__name__} and {type(new).__name__}"
            )
        rebuilt = False
        if element is not None and not _current_class(type(element)):
            # An object of an earlier version of its class (read before the new release's
            # classes were registered under the same names).
            element, rebuilt = self._as_current(prior, new, element)
        migrated = element
        if element is not None:
            changes = {}
            # Rebuilt by name, its field values are still the earlier objects: each is migrated
            # by its own snapshot (a nested object of an earlier class version is rebuilt too).
            for name, snap, prior_field, new_field in self._plan(prior, new, every=rebuilt):
                value = getattr(element, name, None)
                if value is not None:
                    changes[name] = migrated_element(snap, prior_field, new_field, value)
            if type(element) is not new.dataclass_type:
                pass  # a subclass instance: its own serializer already read it current-shaped
            elif changes:
                values = {name: getattr(element, name, None) for name in new._cache_names}
                values.update(changes)
                migrated = new._new_instance(values)
        if target is not None:
            new.serialize(migrated, target)
        return migrated
