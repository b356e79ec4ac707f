"""Dataclasses (Pojo schemas) and enums (Enum schemas) created on the fly.

A generated class is defined by its *spec*: a qualified name plus its fields (or members).
A field names its serializer explicitly (``dataclasses.field(metadata={"serializer": ...})``),
unless it is ``annotated``: then it is declared the way users write dataclasses, with a plain
annotation (``int``, ``dict[str, int]``, ``Optional[str]``, ``list[Other]``, ...) from which
``PojoSerializer`` infers the serializer. A type no annotation maps to (``IntType``, a padded
Nullable, ...) keeps the explicit serializer even in an annotated field.
The same spec always gives the same class object in a process, and a generated class pickles
as its spec (a ``copyreg`` reducer on the classes' metaclass), so unpickling it in another
process (a Spark worker) rebuilds an equivalent class and registers it. Evolutions keep a
class's qualified name while changing its fields, exactly as a new release of a user's class
would; ``activate`` makes a given version the one that ``reference.lookup_type`` returns.
"""

from __future__ import annotations

import copy
import copyreg
import dataclasses
import enum
import functools
import hashlib
import sys
import threading
from typing import Any

from reference import canonical, register_type
from reference import types as t

from . import _generated

__all__ = [
    "PojoField", "NO_DEFAULT", "pojo_class", "enum_class", "pojo_type", "enum_type",
    "pojo_fields", "enum_members", "activate", "derived_name", "schema_nodes",
]

MODULE = _generated.__name__


class _NoDefault:
    """Marker: a Pojo field without a default (a singleton that pickles by reference)."""

    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> Any:
        return (_NoDefault, ())


NO_DEFAULT = _NoDefault()


@dataclasses.dataclass(frozen=True)
class PojoField:
    """One field of a generated dataclass: its name, logical type, default (if any), and
    whether it is declared by its annotation alone (see the module's docstring)."""

    name: str
    type: Any
    default: Any = NO_DEFAULT
    annotated: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT


class _GeneratedPojoMeta(type):
    """Metaclass of generated dataclasses; only there to give them a pickle reducer."""


class _GeneratedEnumMeta(enum.EnumMeta):
    """Metaclass of generated enums; only there to give them a pickle reducer."""


class GeneratedPojo(metaclass=_GeneratedPojoMeta):
    """Base class of every generated dataclass."""

    __pojo_fields__: tuple[PojoField, ...] = ()


class GeneratedEnum(enum.Enum, metaclass=_GeneratedEnumMeta):
    """Base class of every generated enum."""


_LOCK = threading.RLock()
_POJOS: dict[tuple[str, tuple[Any, ...]], type] = {}
_ENUMS: dict[tuple[str, tuple[str, ...]], type] = {}


def derived_name(prefix: str, *parts: Any) -> str:
    """A stable identifier from ``parts``: the same parts give the same name in any process."""
    digest = hashlib.blake2b(repr(parts).encode("utf-8"), digest_size=6).hexdigest()
    return f"{prefix}_{digest}"


def _publish(cls: type) -> None:
    setattr(_generated, cls.__qualname__, cls)
    register_type(cls)


def _default_factory(value: Any) -> Any:
    return functools.partial(copy.deepcopy, value)


_ANNOTATIONS: dict[type, type] = {
    t.BooleanType: bool, t.LongType: int, t.DoubleType: float, t.StringType: str, t.BytesType: bytes,
}


def annotation_for(logical_type: Any) -> Any:
    """The plain annotation from which ``PojoSerializer`` infers ``serializer_for(logical_type)``,
    or None when no annotation maps to that serializer."""
    import typing

    found = _ANNOTATIONS.get(type(logical_type))
    if found is not None:
        return found
    if isinstance(logical_type, t.PickleType):
        return typing.Any  # any annotation the mapping does not know is pickled
    if isinstance(logical_type, t.NullableType) and not logical_type.padded:
        if isinstance(logical_type.inner, t.NullableType):
            return None  # Optional[Optional[X]] is Optional[X]: one Nullable, not two
        inner = annotation_for(logical_type.inner)
        return None if inner is None else typing.Optional[inner]  # noqa: UP045 (what users write)
    if isinstance(logical_type, t.ListType):
        element = annotation_for(logical_type.element)
        return None if element is None else list[element]  # type: ignore[valid-type]
    if isinstance(logical_type, t.MapType):
        key, value = annotation_for(logical_type.key), annotation_for(logical_type.value)
        return None if key is None or value is None else dict[key, value]  # type: ignore[valid-type]
    if isinstance(logical_type, t.TupleType) and logical_type.fields:
        parts = [annotation_for(f) for f in logical_type.fields]
        return None if any(p is None for p in parts) else tuple[tuple(parts)]  # type: ignore[misc]
    if isinstance(logical_type, (t.PojoType, t.EnumType)):
        return logical_type.cls
    return None


def pojo_class(qualname: str, fields: tuple[PojoField, ...]) -> type:
    """The dataclass ``strategies._generated.<qualname>`` with ``fields`` (keyword-only)."""
    from reference.types import serializer_for

    # Defaults by exact value: 0.0 and -0.0 (or 0 and False) must not share a class.
    key = (qualname, tuple((f.name, f.type, canonical(f.default), f.annotated) for f in fields))
    with _LOCK:
        found = _POJOS.get(key)
        if found is not None:
            return found
        spec = []
        for f in fields:
            annotation = annotation_for(f.type) if f.annotated else None
            kwargs: dict[str, Any] = {"metadata": {"logical_type": f.type}}
            if annotation is None:
                kwargs["metadata"]["serializer"] = serializer_for(f.type)
            if f.has_default:
                if isinstance(f.default, (list, dict)) or dataclasses.is_dataclass(f.default):
                    kwargs["default_factory"] = _default_factory(f.default)
                else:
                    kwargs["default"] = f.default
            spec.append((f.name, Any if annotation is None else annotation, dataclasses.field(**kwargs)))
        cls = dataclasses.make_dataclass(
            qualname, spec, bases=(GeneratedPojo,), kw_only=True,
            namespace={"__pojo_fields__": tuple(fields), "__module__": MODULE},
        )
        cls.__module__ = MODULE
        cls.__qualname__ = qualname
        _POJOS[key] = cls
        _publish(cls)
        return cls


def enum_class(qualname: str, members: tuple[str, ...]) -> type:
    """The enum ``strategies._generated.<qualname>`` with ``members`` (values = names)."""
    key = (qualname, tuple(members))
    with _LOCK:
        found = _ENUMS.get(key)
        if found is not None:
            return found
        functional_api: Any = GeneratedEnum  # Enum's functional API (typeshed types only its class form)
        cls: type = functional_api(qualname, [(m, m) for m in members], module=MODULE, qualname=qualname)
        _ENUMS[key] = cls
        _publish(cls)
        return cls


def pojo_type(fields: tuple[PojoField, ...], qualname: str | None = None) -> t.PojoType:
    """A Pojo schema; without ``qualname`` the name is derived from the field list."""
    fields = tuple(fields)
    name = qualname or derived_name("Pojo", [(f.name, f.type) for f in fields])
    return t.PojoType(pojo_class(name, fields))


def enum_type(members: tuple[str, ...], qualname: str | None = None) -> t.EnumType:
    """An Enum schema; without ``qualname`` the name is derived from the members."""
    members = tuple(members)
    return t.EnumType(enum_class(qualname or derived_name("Enum", members), members))


def check_schema(schema: Any) -> None:
    """Raise ``TypeError`` saying what to do when the strategies cannot draw from ``schema``: a
    ``PojoType`` of a class they did not generate (``pojo_type``), whose fields' types they do
    not know."""
    for node in schema_nodes(schema):
        if isinstance(node, t.PojoType) and not isinstance(node.cls, _GeneratedPojoMeta):
            raise TypeError(
                f"PojoType({getattr(node.cls, '__qualname__', node.cls)!r}) names a dataclass the strategies "
                "did not generate, so they cannot tell its fields' types: values, out-of-domain values "
                "and zeros are drawn only for classes made by strategies.pojo_type(fields). Describe the "
                "class with pojo_type, or give no schema and draw values= yourself"
            )


def pojo_fields(schema: t.PojoType) -> tuple[PojoField, ...]:
    fields = getattr(schema.cls, "__pojo_fields__", None)
    if fields is None:
        check_schema(schema)
        raise TypeError(f"{schema.cls!r} is not a generated dataclass")
    return fields


def enum_members(schema: t.EnumType) -> tuple[str, ...]:
    return tuple(m.name for m in schema.cls)


def activate(schema: Any) -> None:
    """Make the generated classes inside ``schema`` the current ones for their names.

    Evolutions keep a class's qualified name, so several versions of one name coexist in a
    process; ``reference.lookup_type`` (used when a snapshot is restored) returns the one
    activated last. Call it with the NEW schema before restoring old snapshots to migrate.
    """
    for node in schema_nodes(schema):
        if isinstance(node, (t.PojoType, t.EnumType)) and isinstance(
            node.cls, (_GeneratedPojoMeta, _GeneratedEnumMeta)
        ):
            _publish(node.cls)


def schema_nodes(schema: Any) -> Any:
    """Every node of a schema, depth first from the root (generated POJOs' fields included)."""
    yield schema
    if isinstance(schema, t.NullableType):
        yield from schema_nodes(schema.inner)
    elif isinstance(schema, t.ListType):
        yield from schema_nodes(schema.element)
    elif isinstance(schema, t.MapType):
        yield from schema_nodes(schema.key)
        yield from schema_nodes(schema.value)
    elif isinstance(schema, t.TupleType):
        for f in schema.fields:
            yield from schema_nodes(f)
    elif isinstance(schema, t.RowType):
        for rf in schema.fields:
            yield from schema_nodes(rf.type)
    elif isinstance(schema, t.PojoType) and isinstance(schema.cls, _GeneratedPojoMeta):
        for pf in pojo_fields(schema):
            yield from schema_nodes(pf.type)


# -- pickling: a generated class travels as its spec -----------------------------------------
def _rebuild_pojo(qualname: str, fields: tuple[PojoField, ...]) -> type:
    return pojo_class(qualname, fields)


def _rebuild_enum(qualname: str, members: tuple[str, ...]) -> type:
    return enum_class(qualname, members)


def _reduce_pojo_class(cls: type) -> Any:
    if cls is GeneratedPojo:
        return "GeneratedPojo"
    return (_rebuild_pojo, (cls.__qualname__, cls.__pojo_fields__))  # type: ignore[attr-defined]


def _reduce_enum_class(cls: type) -> Any:
    if cls is GeneratedEnum:
        return "GeneratedEnum"
    return (_rebuild_enum, (cls.__qualname__, tuple(m.name for m in cls)))  # type: ignore[attr-defined]


copyreg.pickle(_GeneratedPojoMeta, _reduce_pojo_class)
copyreg.pickle(_GeneratedEnumMeta, _reduce_enum_class)
assert sys.modules[MODULE] is _generated
