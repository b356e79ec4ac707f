"""The identity of a state value: what "equal" means for a migrated or restored value.

``==`` is too lenient for serializer checks (``0.0 == -0.0``, ``1 == True``, NaN never equals
itself, ``{1: 2, 3: 4} == {3: 4, 1: 2}``), so values are compared through ``canonical(value)``:
a nested tuple that records each part's exact type, floats by their IEEE bits, sequences in
order. Dicts and sets compare as collections: like Java's ``Map``, their iteration order is not
part of the value, so a correct serializer may write map entries in any order (e.g. sorted).

Values whose ``==`` ignores part of their meaning compare by that meaning (``canonical`` lists
the rule type by type): a ``Decimal`` keeps its scale (``Decimal('21.00') != Decimal('21')``),
an aware ``datetime`` or ``time`` keeps its ``tzinfo`` (the same instant in another zone is
another value), and ``fold`` counts wherever it can change what the time means. This is the one
rule: the checks compare with ``values_equal``, golden files record ``value_tree`` (and its text),
the fresh-process restore compares value trees.

``TREE_FORM`` numbers the rule's tree form; ``value_tree(value, form=2)`` gives the form of
releases before the exact time and decimal rule (those values as ``["object", class, repr]``),
so golden manifests written then are compared with the rule that wrote them.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import struct
from typing import Any

from ._classes import class_identity

__all__ = ["canonical", "values_equal", "value_tree", "TREE_FORM"]

#: The form ``value_tree`` writes: 2 compared decimals, times, dates and durations by ``==`` (and
#: wrote their ``repr``); 3 compares them exactly (``canonical``).
TREE_FORM = 3

_DOUBLE = struct.Struct(">d")


def _type_name(value: Any) -> str:
    return class_identity(type(value))


def canonical(value: Any) -> Any:
    """A hashable, ``==``-comparable form of ``value`` that is exact where ``==`` is not.

    =========================  ======================================================================
    type                       compared by
    =========================  ======================================================================
    None, bool, int, str,      exact type and ``==`` (bool, int and float never mix)
    bytes
    float                      its IEEE-754 bits (NaN payloads, -0.0); a float subclass keeps its type
    list, tuple                exact type, items in order
    dict, set, frozenset       exact type, entries as a collection (iteration order is not the value)
    enum member                class and member name
    dataclass                  class and each field by name
    tuple subclass (row)       class, ``kind`` and items (an INSERT row is the plain tuple)
    bytearray, memoryview      exact type and bytes
    decimal.Decimal            sign, digits and exponent (``Decimal('21.00') != Decimal('21')``);
                               NaN, sNaN and Infinity by kind, sign and NaN payload
    datetime.datetime          fields to the microsecond, ``tzinfo`` and ``fold`` (below)
    datetime.time              fields to the microsecond, ``tzinfo`` and ``fold`` (below)
    datetime.date              year, month, day
    datetime.timedelta         days, seconds, microseconds
    anything else              exact type and ``==`` (e.g. a user object in a Pickle value)
    =========================  ======================================================================

    A ``tzinfo`` compares by the identity of its meaning: a fixed ``datetime.timezone`` by offset
    and name, a ``zoneinfo.ZoneInfo`` by key, any other by class and ``repr``. ``fold`` counts
    where it can change what a time means: always on a naive value (which wall-clock moment it
    is depends on the reading process's local zone), and on an aware one when the two folds give
    different UTC offsets (an ambiguous or skipped time of a zone with transitions). A fixed
    offset has no folds: there, and at any unambiguous time, ``fold`` is not part of the value
    (a serializer that stores the instant rightly reads it back as 0). Subclasses of these types
    (e.g. ``pandas.Timestamp``) compare by exact type and ``==``.
    """
    return _form(value, True)


def _form(value: Any, exact: bool) -> Any:
    """``canonical`` (``exact``) or the tree form 2 rule (decimals and times by ``==``)."""
    cls = type(value)
    if value is None:
        return ("None",)
    if cls is float:
        return ("float", _DOUBLE.pack(value))
    if cls is bool or cls is int or cls is str or cls is bytes:
        return (cls.__name__, value)
    if cls is list:
        return ("list", tuple(_form(v, exact) for v in value))
    if cls is tuple:
        return ("tuple", tuple(_form(v, exact) for v in value))
    if cls is dict:
        return ("dict", frozenset((_form(k, exact), _form(v, exact)) for k, v in value.items()))
    if cls is set or cls is frozenset:
        return (cls.__name__, frozenset(_form(v, exact) for v in value))
    if exact and cls in _EXACT:
        return _EXACT[cls](value)
    if isinstance(value, enum.Enum):
        return ("enum", _type_name(value), value.name)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (
            "dataclass",
            _type_name(value),
            tuple((f.name, _form(getattr(value, f.name), exact)) for f in dataclasses.fields(value)),
        )
    if isinstance(value, tuple):
        kind = getattr(value, "kind", None)
        kind_name = getattr(kind, "name", kind)
        if kind_name == "INSERT":
            # reference.serializers.Row: an INSERT row *is* the plain tuple of its values.
            return ("tuple", tuple(_form(v, exact) for v in value))
        return (_type_name(value), repr(kind_name), tuple(_form(v, exact) for v in value))
    if isinstance(value, (bytearray, memoryview)):
        return (cls.__name__, bytes(value))
    if isinstance(value, float):  # a float subclass: keep its type
        return (_type_name(value), _DOUBLE.pack(value))
    if isinstance(value, (list, set, frozenset, dict)):
        raise TypeError(f"canonical: unsupported container subclass {_type_name(value)}")
    # Anything else (e.g. a user object inside a Pickle value) compares by type and ==.
    return ("object", _type_name(value), value)


def _decimal(value: decimal.Decimal) -> Any:
    sign, digits, exponent = value.as_tuple()
    # exponent: an int, or "n" (NaN), "N" (sNaN), "F" (Infinity); digits: a NaN's payload too.
    return ("decimal:Decimal", sign, "".join(map(str, digits)), exponent)


def _tz(tzinfo: Any) -> Any:
    if tzinfo is None:
        return None
    if type(tzinfo) is datetime.timezone:
        offset = tzinfo.utcoffset(None)
        return ("timezone", offset.days, offset.seconds, offset.microseconds, tzinfo.tzname(None))
    key = getattr(tzinfo, "key", None)
    if class_identity(type(tzinfo)) == "zoneinfo:ZoneInfo" and isinstance(key, str):
        return ("zoneinfo:ZoneInfo", key)
    return (class_identity(type(tzinfo)), repr(tzinfo))


def _fold(value: Any) -> int:
    """``value.fold`` where it can change the value's meaning, else 0 (see ``canonical``)."""
    if not value.fold or value.tzinfo is None:
        return value.fold
    if type(value.tzinfo) is datetime.timezone:
        return 0
    try:
        differs = value.utcoffset() != value.replace(fold=0).utcoffset()
    except Exception:  # a tzinfo that cannot say: keep fold, as for a naive value
        return value.fold
    return value.fold if differs else 0


def _datetime(value: datetime.datetime) -> Any:
    return ("datetime:datetime", (value.year, value.month, value.day, value.hour, value.minute,
                                  value.second, value.microsecond), _fold(value), _tz(value.tzinfo))


def _time(value: datetime.time) -> Any:
    return ("datetime:time", (value.hour, value.minute, value.second, value.microsecond),
            _fold(value), _tz(value.tzinfo))


_EXACT: dict[type, Any] = {
    decimal.Decimal: _decimal,
    datetime.datetime: _datetime,
    datetime.time: _time,
    datetime.date: lambda v: ("datetime:date", (v.year, v.month, v.day)),
    datetime.timedelta: lambda v: ("datetime:timedelta", (v.days, v.seconds, v.microseconds)),
}


def values_equal(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are the same value in the exact sense of ``canonical``:
    ``canonical(a) == canonical(b)``, false where ``canonical`` refuses either."""
    try:
        if _same(a, b):
            return True
    except Exception:
        pass
    # Unequal, or a part whose form could not be made: the forms decide, as they always do
    # (the walk stops at the first difference, so it may not meet a part the forms refuse).
    try:
        return bool(canonical(a) == canonical(b))
    except TypeError:
        return False


def _same(a: Any, b: Any) -> bool:
    """``_form(a, True) == _form(b, True)``, walked in step where both have one of the types
    whose form is their parts in order (sequences, dataclasses) or a leaf compared by ``==``: a
    check compares most values this way, and most of them are equal. Any other pair, and a pair
    of two types, compares by its forms (e.g. an INSERT row and the plain tuple are one value)."""
    cls = type(a)
    if cls is type(b):
        if cls is int or cls is str or cls is bytes or cls is bool or a is None:
            return bool(a == b)
        if cls is float:
            return _DOUBLE.pack(a) == _DOUBLE.pack(b)
        if cls is list or cls is tuple:
            return len(a) == len(b) and all(map(_same, a, b))
        if _plain_dataclass(cls):
            return all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    return bool(_form(a, True) == _form(b, True))


def _plain_dataclass(cls: type) -> bool:
    """Whether ``_form`` takes an instance of ``cls`` as a dataclass (not an exact-rule type or
    an enum member, which come first)."""
    return dataclasses.is_dataclass(cls) and cls not in _EXACT and not issubclass(cls, enum.Enum)


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


def value_tree(value: Any, form: int = TREE_FORM) -> Any:
    """A JSON-able form of ``value`` that keeps exactly what ``canonical`` compares (exact
    types, float bits, order of sequences, dataclass fields by name): golden files record it,
    so a later release can compare what it reads field by field. ``form`` 2 is the form of
    earlier releases (decimals, dates, times and durations as ``["object", class, repr]``), for
    reading what they recorded; 3 is ``canonical``'s."""
    if form not in (2, TREE_FORM):
        raise ValueError(f"value_tree: form {form!r} is not one this release writes or reads; use 2 or {TREE_FORM}")
    return _tree(_form(value, form == TREE_FORM))
