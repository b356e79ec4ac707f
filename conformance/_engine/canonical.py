"""Readable display and exact comparison of state values for the checks' verdicts.

Equality is ``reference.canonical`` / ``values_equal`` (one definition for the oracle, the
harness, golden files and the fresh-process restore): exact types, floats by their IEEE bits,
sequences in order, dicts and sets as collections, decimals by digits and exponent, times with
their ``tzinfo`` and meaningful ``fold``. ``stable_text`` is a rendering of ``value_tree`` (the
same rule as text); ``legacy_text`` is the text rule manifests of format 1 were written with,
kept only to read them.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import math
import reprlib
import struct
from typing import Any

from reference import TREE_FORM, canonical, class_identity, value_tree, values_equal

__all__ = ["canonical", "values_equal", "show", "first_difference", "describe_difference", "shown_apart",
           "stable_text", "value_tree", "tree_difference", "legacy_text", "TREE_FORM"]

_DOUBLE = struct.Struct(">d")


def _name(value: Any) -> str:
    return class_identity(type(value))


class _Repr(reprlib.Repr):
    """repr that keeps what matters to a serializer: float bits and exact types."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlist = self.maxtuple = self.maxdict = self.maxset = 8
        self.maxstring = 60
        self.maxother = 120
        self.maxlevel = 5

    def repr_float(self, x: float, level: int) -> str:
        if math.isnan(x):
            bits = _DOUBLE.pack(x).hex()
            return "nan" if bits == "7ff8000000000000" else f"nan(0x{bits})"
        return repr(x)

    def repr_instance(self, x: Any, level: int) -> str:
        """A dataclass field by field (each field shortened on its own, so a long one never
        hides the next; named tuples too); any other object by its repr, its head kept when it
        is too long."""
        params = getattr(type(x), "__dataclass_params__", None)
        if params is not None and params.repr and not isinstance(x, type):
            return self._fields(x, [f.name for f in dataclasses.fields(x) if f.repr], level)
        if isinstance(x, tuple) and isinstance(getattr(type(x), "_fields", None), tuple):  # a named tuple
            return self._fields(x, list(type(x)._fields), level)  # type: ignore[attr-defined]
        text = repr(x)
        return text if len(text) <= self.maxother else text[:self.maxother - 3] + "..."

    def _fields(self, x: Any, names: list[str], level: int) -> str:
        name = type(x).__qualname__
        if level <= 0:
            return f"{name}(...)"
        return f"{name}({', '.join(f'{n}={self.repr1(getattr(x, n), level - 1)}' for n in names)})"


_REPR = _Repr()


def show(value: Any) -> str:
    """A short, exact-enough display of a value for a one-sentence verdict: each element and
    field shortened on its own (long texts, long collections, deep nesting), the structure
    kept, never one cut across the whole value."""
    try:
        text = _REPR.repr(value)
    except Exception as exc:  # a user __repr__ that raises must not hide the verdict
        text = f"<{type(value).__name__} (repr raised {type(exc).__name__})>"
    return text


def printable(text: str) -> str:
    """``text`` with each character that does not print (a control, a C1 control, a lone
    surrogate) as its escape, as ``show`` writes it: a terminal shows it, instead of nothing."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def first_difference(got: Any, expected: Any, path: str = "") -> str:
    """Where two values first differ, as a path like ``[2]['a']`` (empty: at the top)."""
    return _descend(got, expected, path)[0]


def _descend(got: Any, expected: Any, path: str) -> tuple[str, Any, Any]:
    """(path, got there, expected there) of the first place two values differ."""
    if type(got) is not type(expected):
        return path, got, expected
    if isinstance(got, (list, tuple)) and len(got) == len(expected):
        for i, (g, e) in enumerate(zip(got, expected, strict=False)):
            if not values_equal(g, e):
                return _descend(g, e, f"{path}[{i}]")
    if isinstance(got, dict) and set(map(canonical, got)) == set(map(canonical, expected)):
        for k in got:
            if k in expected and not values_equal(got[k], expected[k]):
                return _descend(got[k], expected[k], f"{path}[{k!r}]")
    if dataclasses.is_dataclass(got) and not isinstance(got, type):
        for f in dataclasses.fields(got):
            g, e = getattr(got, f.name), getattr(expected, f.name, None)
            if not values_equal(g, e):
                return _descend(g, e, f"{path}.{f.name}")
    return path, got, expected


#: Characters kept on each side of the first differing one when two texts are shortened.
_AROUND = 40


def _exact_text(value: Any) -> str:
    """repr of ``value`` in full, floats with their NaN bits (nothing cut)."""
    if isinstance(value, float) and math.isnan(value):
        return _REPR.repr_float(value, 0)
    try:
        return repr(value)
    except Exception as exc:  # a user __repr__ that raises must not hide the verdict
        return f"<{type(value).__name__} (repr raised {type(exc).__name__})>"


def shown_apart(got_text: str, expected_text: str) -> tuple[str, str]:
    """Two texts shortened only around their first differing character (``…`` where cut,
    the difference always kept): for messages that must show where two long values differ."""
    at = next((i for i, (g, e) in enumerate(zip(got_text, expected_text, strict=False)) if g != e),
              min(len(got_text), len(expected_text)))

    def cut(text: str) -> str:
        if len(text) <= 4 * _AROUND:
            return text
        start, end = max(0, at - _AROUND), at + _AROUND
        return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")

    return cut(got_text), cut(expected_text)


def describe_difference(got: Any, expected: Any, root: str = "value") -> str:
    """Where ``got`` first differs from ``expected`` and what each holds there: ``at
    value.trades[3].price: got 101.5, should be 101.25`` (``got X, should be Y`` when they
    differ as a whole: another type, length or key set). The path is complete; each value is
    shortened only around where the two differ (see ``shown_apart``), and values that look
    alike are told apart by their types."""
    path, g, e = _descend(got, expected, "")
    got_text, expected_text = _exact_text(g), _exact_text(e)
    if got_text == expected_text:
        got_text += f" (a {class_identity(type(g))})"
        expected_text += f" (a {class_identity(type(e))})"
    got_text, expected_text = shown_apart(got_text, expected_text)
    return (f"{f'at {root}{path}: ' if path else ''}got {got_text}, should be {expected_text}"
            f"{_shift(g, e) or _equal_yet_apart(g, e)}")


def _equal_yet_apart(got: Any, expected: Any) -> str:
    """Why two values of one type that Python's ``==`` calls equal are not the same value
    (``values_equal``), as a note; "" where ``==`` tells them apart."""
    try:
        if type(got) is not type(expected) or not bool(got == expected):
            return ""
    except Exception:  # a user __eq__ that raises: nothing to explain
        return ""
    if isinstance(got, decimal.Decimal):
        return (f" (equal by ==, but {got.as_tuple().exponent} is not {expected.as_tuple().exponent}: a "
                "Decimal's exponent, its scale, is part of its value; keep it)")
    if isinstance(got, (datetime.datetime, datetime.time)):
        if got.tzinfo is not expected.tzinfo and repr(got.tzinfo) != repr(expected.tzinfo):
            return (" (the same instant in another time zone: the tzinfo is part of the value, as a restore "
                    "must give back the zone written; keep it)")
        if got.fold != expected.fold:
            return (" (equal by ==, but of another fold, which tells a repeated wall time's two instants "
                    "apart: keep it)")
    if isinstance(got, float):
        return " (equal by ==, but not bit for bit: -0.0 and 0.0 differ; keep the sign)"
    return " (equal by ==, but not the same value: the comparison is reference.values_equal)"


def _shift(got: Any, expected: Any) -> str:
    """For two datetimes whose instants are a whole number of quarter hours apart (up to a
    day): how far, as a time zone offset or a DST change shifts them; else ""."""
    if type(got) is not datetime.datetime or type(expected) is not datetime.datetime:
        return ""
    if (got.tzinfo is None) != (expected.tzinfo is None):
        return ""
    try:
        apart = got - expected if got.tzinfo is None else (
            got.astimezone(datetime.timezone.utc) - expected.astimezone(datetime.timezone.utc))
    except (OverflowError, ValueError):
        return ""
    seconds = apart.total_seconds()
    if not seconds or seconds % 900 or abs(seconds) > 86400:
        return ""
    sign = "later" if seconds > 0 else "earlier"
    return (f" ({abs(apart)} {sign}: a time zone offset or a DST change; written or read through the "
            "process's local time, or through a naive datetime?)")


def stable_text(value: Any) -> str:
    """A text form of ``value`` that is identical across processes and runs (golden files): its
    ``value_tree`` as compact JSON (keys sorted): the rule ``values_equal`` applies, as text
    (only a value compared by ``==``, a user object, shows as its ``repr``)."""
    return json.dumps(value_tree(value), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def legacy_text(value: Any) -> str:
    """The stable text golden manifests of format 1 hold (exact types, float bits, dict and set
    entries sorted, anything else by ``repr``): frozen, only to compare what they recorded with
    the rule that wrote it. New text is ``stable_text``."""
    cls = type(value)
    if value is None:
        return "None"
    if cls is float:
        return f"float:{_DOUBLE.pack(value).hex()}"
    if cls in (bool, int, str, bytes):
        return f"{cls.__name__}:{value!r}"
    if cls is list:
        return "[" + ", ".join(legacy_text(v) for v in value) + "]"
    if cls is tuple:
        return "(" + ", ".join(legacy_text(v) for v in value) + ")"
    if isinstance(value, dict):
        items = sorted(f"{legacy_text(k)}: {legacy_text(v)}" for k, v in value.items())
        return f"{_name(value)}{{" + ", ".join(items) + "}"
    if isinstance(value, (set, frozenset)):
        return f"{_name(value)}{{" + ", ".join(sorted(legacy_text(v) for v in value)) + "}"
    if isinstance(value, enum.Enum):
        return f"{_name(value)}.{value.name}"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(f"{f.name}={legacy_text(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{_name(value)}({fields})"
    if isinstance(value, tuple):
        kind = getattr(value, "kind", None)
        return f"{_name(value)}[{getattr(kind, 'name', kind)}](" + ", ".join(legacy_text(v) for v in value) + ")"
    if isinstance(value, (bytearray, memoryview)):
        return f"{cls.__name__}:{bytes(value)!r}"
    if isinstance(value, float):
        return f"{_name(value)}:{_DOUBLE.pack(value).hex()}"
    return f"{_name(value)}:{value!r}"


def _parts(tree: Any) -> bool:
    """A part of a ``value_tree`` that holds no value of its own: a scalar, or a list of them."""
    return not isinstance(tree, list) or not any(isinstance(x, (list, dict)) for x in tree)


def tree_difference(recorded: Any, got: Any, path: str = "") -> str | None:
    """Where ``got`` (a ``value_tree``) differs from ``recorded``, or None. A dataclass is
    compared on the fields ``recorded`` has: a later release may add fields, but every field
    an earlier release wrote must read back with the same value."""
    if (isinstance(recorded, list) and isinstance(got, list) and len(recorded) == 3 and len(got) == 3
            and recorded[0] == got[0] == "dataclass" and isinstance(recorded[2], dict) and isinstance(got[2], dict)):
        if recorded[1] != got[1]:
            return f"{path or 'the value'}: class {got[1]}, should be {recorded[1]}"
        for name, field in recorded[2].items():
            if name not in got[2]:
                return f"{path}.{name}: missing, should be there"
            found = tree_difference(field, got[2][name], f"{path}.{name}")
            if found:
                return found
        return None
    if isinstance(recorded, list) and isinstance(got, list) and len(recorded) == len(got):
        tagged = bool(recorded) and isinstance(recorded[0], str)  # [type, payload...]: same path
        for i, (a, b) in enumerate(zip(recorded, got, strict=True)):
            if tagged and len(recorded) > 2 and a != b and _parts(a) and _parts(b):
                break  # a part of one value (a datetime's fields, a Decimal's exponent): shown whole below
            found = tree_difference(a, b, path if tagged else f"{path}[{i}]")
            if found:
                return found
        else:
            return None
    if recorded != got:
        got_text, recorded_text = shown_apart(json.dumps(got), json.dumps(recorded))
        return f"{path or 'the value'}: {got_text}, should be {recorded_text}"
    return None
