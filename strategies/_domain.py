"""``out_of_domain(schema)``: values a serializer of ``schema`` must refuse.

Each example is an ``OutOfDomain``: a value of ``schema`` in which exactly one part is outside
its type's domain (a wrong Python type, a number out of range, a missing or extra field, None
where the type is not nullable, an unpicklable object, an instance of another dataclass where a
POJO's class belongs), the ``field`` the refusal must name (the
innermost row or pojo field, or tuple field, on the way to the bad part; None when the bad part
is not inside a named field) and ``what`` was done, in words. The parts around the bad one are
ordinary values (``values``), so a serializer has written some bytes before it meets the bad
part: a refusal must undo them.

The contract these values test: ``serialize`` raises ``reference.SerializationError`` naming
the field, and leaves the target as it found it. The simplest example is the top-level value
replaced by a value of the wrong type; shrinking goes there first (the first alternative of
every labelled choice is "refuse the value here").
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from reference import types as t

from . import _pojo
from ._values import _INT_RANGES, _draw_value

__all__ = ["OutOfDomain", "out_of_domain"]


@dataclass(frozen=True)
class OutOfDomain:
    value: Any
    field: str | None
    what: str

    def __repr__(self) -> str:
        at = f" in field {self.field!r}" if self.field is not None else ""
        return f"<{self.what}{at}: {self.value!r:.200}>"


class _Unpicklable:
    """No pickle can hold it (it refuses); stands for any value a pickling serializer cannot
    write."""

    def __reduce__(self) -> Any:
        raise TypeError("_Unpicklable refuses to be pickled")

    def __repr__(self) -> str:
        return "<unpicklable>"


def out_of_domain(schema: Any) -> st.SearchStrategy[OutOfDomain]:
    """Values of ``schema`` with one part outside its domain (see the module docstring)."""
    return _out_of_domain(schema)


@functools.lru_cache(maxsize=1024)
def _out_of_domain(schema: Any) -> st.SearchStrategy[OutOfDomain]:
    return _strategy(schema)


@st.composite
def _strategy(draw: Any, schema: Any) -> OutOfDomain:
    value, field, what = _bad(draw, schema, hashable=False)
    return OutOfDomain(value, field, what)


def _choose(draw: Any, n: int, label: str) -> int:
    return 0 if n == 1 else draw(st.integers(0, n - 1), label=label)


# -- leaves: (what, value) pairs, the simplest first ------------------------------------------

_NOT_A_NUMBER = ("a str", "1")


def _leaf_options(schema: Any) -> list[tuple[str, Any]]:
    kind = type(schema)
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        return [_NOT_A_NUMBER, ("None", None), ("a float", 1.5), ("a bool", True),
                (f"{high + 1} (above the range)", high + 1), (f"{low - 1} (below the range)", low - 1)]
    if kind is t.BooleanType:
        return [("an int", 1), ("None", None), ("a str", "true")]
    if kind is t.FloatType:
        return [_NOT_A_NUMBER, ("None", None), ("an int", 1), ("1e39 (beyond binary32)", 1e39)]
    if kind is t.DoubleType:
        return [_NOT_A_NUMBER, ("None", None), ("an int", 1)]
    if kind is t.StringType:
        return [("bytes", b"x"), ("an int", 1)]
    if kind is t.BytesType:
        return [("a str", "x"), ("None", None), ("a bytearray", bytearray(b"x"))]
    if kind is t.EnumType:
        members = list(schema.cls)
        return [("the member's name", members[0].name), ("None", None), ("an int", 0)]
    if kind is t.PickleType:
        return [("an unpicklable object", _Unpicklable())]
    if kind is t.AvroType:
        return [("an object", object())]
    return []


def _bad(draw: Any, schema: Any, hashable: bool) -> tuple[Any, str | None, str]:
    """(value with one bad part, the field to name, what is wrong)."""
    leaf = _leaf_options(schema)
    if leaf:
        options = [(w, v) for w, v in leaf if not hashable or _hashable(v)]
        what, value = options[_choose(draw, len(options), "bad leaf")]
        return value, None, what
    return _COMPOSITES[type(schema)](draw, schema, hashable)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _good(draw: Any, schema: Any, allow_none: bool = True) -> Any:
    return _draw_value(draw, schema, allow_none)


def _nullable(draw: Any, schema: t.NullableType, hashable: bool) -> tuple[Any, str | None, str]:
    # None is in a Nullable's domain: only its inner value can be bad (and not None).
    value, field, what = _bad(draw, schema.inner, hashable)
    if value is None:
        return "1" if type(schema.inner) is not t.StringType else 1, field, "a wrong type"
    return value, field, what


def _list(draw: Any, schema: t.ListType, hashable: bool) -> tuple[Any, str | None, str]:
    choice = _choose(draw, 3, "bad list")
    if choice == 0:
        return "abc", None, "a str instead of a list"
    if choice == 1:
        return tuple(_good(draw, schema.element) for _ in range(draw(st.integers(0, 2)))), None, "a tuple instead of a list"
    bad, field, what = _bad(draw, schema.element, False)
    before = [_good(draw, schema.element) for _ in range(draw(st.integers(0, 2)))]
    return [*before, bad], field, f"element {len(before)}: {what}"


def _map(draw: Any, schema: t.MapType, hashable: bool) -> tuple[Any, str | None, str]:
    choice = _choose(draw, 4, "bad map")
    if choice == 0:
        return [], None, "a list instead of a dict"
    before = {}
    for _ in range(draw(st.integers(0, 2))):
        before[_good(draw, schema.key, False)] = _good(draw, schema.value)
    if choice == 1:
        return {**before, None: _good(draw, schema.value)}, None, "a None key"
    if choice == 2:
        key, field, what = _bad(draw, schema.key, True)
        if key is None:
            return {**before, None: _good(draw, schema.value)}, None, "a None key"
        return {**before, key: _good(draw, schema.value)}, field, f"a bad key: {what}"
    value, field, what = _bad(draw, schema.value, False)
    if value is None:  # values may be null
        value, what = _Unpicklable(), "an unsupported object"
    key = _good(draw, schema.key, False)
    before.pop(key, None)
    return {**before, key: value}, field, f"a bad value: {what}"


def _tuple(draw: Any, schema: t.TupleType, hashable: bool) -> tuple[Any, str | None, str]:
    arity = len(schema.fields)
    good = [_good(draw, f, False) for f in schema.fields]
    if not arity:
        return ((0,), None, "a tuple of 1 value") if not draw(st.booleans()) else ([], None, "a list")
    not_null = [i for i, f in enumerate(schema.fields) if type(f) is not t.NullableType]
    choice = _choose(draw, 4 if not_null else 3, "bad tuple")
    if choice == 0:
        return tuple(good[:-1]), None, f"a tuple of {arity - 1} values (field {arity - 1} missing)"
    if choice == 1:
        return (*good, good[0]), None, f"a tuple of {arity + 1} values"
    if choice == 3:  # a tuple field is never null, even of a type whose values may be (a str)
        i = not_null[draw(st.integers(0, len(not_null) - 1), label="null tuple field")]
        good[i] = None
        return tuple(good), f"field {i}", f"None in field {i} (tuple fields are never null)"
    i = draw(st.integers(0, arity - 1), label="bad tuple field")
    value, _, what = _bad(draw, schema.fields[i], hashable)
    good[i] = value
    return tuple(good), f"field {i}", what


def _row(draw: Any, schema: t.RowType, hashable: bool) -> tuple[Any, str | None, str]:
    fields = schema.fields
    good = [None if f.nullable and not draw(st.booleans()) else _good(draw, f.type, False) for f in fields]
    not_null = [i for i, f in enumerate(fields) if not f.nullable]
    n_choices = 2 + (1 if fields else 0) + (1 if not_null else 0)
    choice = _choose(draw, n_choices, "bad row")
    if choice == 0:
        if not fields:
            return (None,), None, "a row of 1 value (it has none)"
        return tuple(good[:-1]), fields[-1].name, f"field {fields[-1].name!r} missing"
    if choice == 1:
        return (*good, None), None, f"a row of {len(fields) + 1} values"
    if choice == 2 and not_null:
        i = not_null[draw(st.integers(0, len(not_null) - 1), label="null field")]
        good[i] = None
        return tuple(good), fields[i].name, f"None in NOT NULL field {fields[i].name!r}"
    i = draw(st.integers(0, len(fields) - 1), label="bad row field")
    value, _, what = _bad(draw, fields[i].type, hashable)
    if value is None:
        if fields[i].nullable:
            value = _Unpicklable()
            what = "an unsupported object"
    good[i] = value
    return tuple(good), fields[i].name, what


@dataclass(frozen=True)
class _Stranger:
    """A dataclass no schema names: an instance of it is no POJO of any other class (nor of a
    subclass of one)."""

    value: int = 0


def _pojo_value(draw: Any, schema: t.PojoType, hashable: bool) -> tuple[Any, str | None, str]:
    fields = _pojo.pojo_fields(schema)
    choice = _choose(draw, 3 if fields else 2, "bad pojo")
    if choice == 0:
        return (), None, "a tuple instead of the class"
    if choice == 1:
        return _Stranger(), None, "an instance of another dataclass (no subclass of the class)"
    kwargs = {f.name: _good(draw, f.type, False) for f in fields}
    i = draw(st.integers(0, len(fields) - 1), label="bad pojo field")
    value, _, what = _bad(draw, fields[i].type, False)
    if value is None:  # pojo fields are nullable
        value, what = _Unpicklable(), "an unsupported object"
    kwargs[fields[i].name] = value
    return schema.cls(**kwargs), fields[i].name, what


_COMPOSITES: dict[type, Callable[[Any, Any, bool], tuple[Any, str | None, str]]] = {
    t.NullableType: _nullable, t.ListType: _list, t.MapType: _map, t.TupleType: _tuple,
    t.RowType: _row, t.PojoType: _pojo_value,
}
