"""The identity of a state value: what "equal" means for a migrated or restored value.

``==`` is too lenient for serializer checks (``0.0 == -0.0``, ``1 == True``, NaN never equals
itself, ``{1: 2, 3: 4} == {3: 4, 1: 2}``), so values are compared through ``canonical(value)``:
a nested tuple that records each part's exact type, floats by their IEEE bits, sequences in
order. Dicts and sets compare as collections: like Java's ``Map``, their iteration order is not
part of the value, so a correct serializer may write map entries in any order (e.g. sorted).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import struct
from typing import Any

from ._classes import class_identity

__all__ = ["canonical", "values_equal", "value_tree"]

_DOUBLE = struct.Struct(">d")


def _type_name(value: Any) -> str:
    return class_identity(type(value))


def canonical(value: Any) -> Any:
    """A hashable, ``==``-comparable form of ``value`` that is exact where ``==`` is not.

    Floats compare by bits (NaN payloads, -0.0), bool/int/float never mix, lists and tuples
    compare in order, dicts and sets as collections, dataclasses by class name and fields, enum
    members by class name and member name, tuple subclasses (row kinds) by their class and
    ``kind`` (an INSERT row equals the plain tuple, as in ``reference``).
    """
    cls = type(value)
    if value is None:
        return ("None",)
    if cls is float:
        return ("float", _DOUBLE.pack(value))
    if cls is bool or cls is int or cls is str or cls is bytes:
        return (cls.__name__, value)
    if cls is list:
        return ("list", tuple(canonical(v) for v in value))
    if cls is tuple:
        return ("tuple", tuple(canonical(v) for v in value))
    if cls is dict:
        return ("dict", frozenset((canonical(k), canonical(v)) for k, v in value.items()))
    if cls is set or cls is frozenset:
        return (cls.__name__, frozenset(canonical(v) for v in value))
    if isinstance(value, enum.Enum):
        return ("enum", _type_name(value), value.name)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            "dataclass",
            _type_name(value),
            tuple((f.name, canonical(getattr(value, f.name))) for f in dataclasses.fields(value)),
        )
    if isinstance(value, tuple):
        kind = getattr(value, "kind", None)
        kind_name = getattr(kind, "name", kind)
        if kind_name == "INSERT":
            # reference.serializers.Row: an INSERT row *is* the plain tuple of its values.
            return ("tuple", tuple(canonical(v) for v in value))
        return (_type_name(value), repr(kind_name), tuple(canonical(v) for v in value))
    if isinstance(value, (bytearray, memoryview)):
        return (cls.__name__, bytes(value))
    if isinstance(value, float):  # a float subclass: keep its type
        return (_type_name(value), _DOUBLE.pack(value))
    if isinstance(value, (list, set, frozenset, dict)):
        raise TypeError(f"canonical: unsupported container subclass {_type_name(value)}")
    # Anything else (e.g. a user object inside a Pickle value) compares by type and ==.
    return ("object", _type_name(value), value)


def values_equal(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are the same value in the exact sense of ``canonical``."""
    try:
        return bool(canonical(a) == canonical(b))
    except TypeError:
        return False


def _tree(form: Any) -> Any:
    """JSON form of ``canonical``'s output (the same rule, written so a file can keep it)."""
    if isinstance(form, bytes):
        return {"bytes": form.hex()}
    if isinstance(form, frozenset):
        return sorted((_tree(v) for v in form), key=lambda t: json.dumps(t, sort_keys=True))
    if isinstance(form, tuple):
        if form and form[0] == "dataclass" and len(form) == 3:
            return ["dataclass", form[1], {name: _tree(v) for name, v in form[2]}]
        return [_tree(v) for v in form]
    if form is None or isinstance(form, (bool, int, str)):
        return form
    return repr(form)


def value_tree(value: Any) -> Any:
    """A JSON-able form of ``value`` that keeps exactly what ``canonical`` compares (exact
    types, float bits, order of sequences, dataclass fields by name): golden files record it,
    so a later release can compare what it reads field by field."""
    return _tree(canonical(value))
