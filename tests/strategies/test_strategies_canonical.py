"""The canonical comparison is exact where ``==`` is lenient, and agrees where it should."""

from __future__ import annotations

import copy
import dataclasses
import enum
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.serializers import Row, RowKind
from strategies import canonical, schemas, values, values_equal


def _f64(bits: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", bits))[0]


class Color(enum.Enum):
    RED = 1


@dataclasses.dataclass
class Point:
    x: int
    y: float


DIFFERENT = [
    (0.0, -0.0),
    (_f64(0x7FF8000000000000), _f64(0x7FF8000000000001)),
    (1, True),
    (1, 1.0),
    (0, False),
    ([1, 2], (1, 2)),
    ([1, 2], [2, 1]),
    ({1: "a", 2: "b"}, {1: "a", 2: "c"}),
    ({1: 0.0}, {1: -0.0}),
    ("a", b"a"),
    ((1, None), Row((1, None), RowKind.DELETE)),
    (Row((1,), RowKind.UPDATE_BEFORE), Row((1,), RowKind.UPDATE_AFTER)),
    (Point(1, 0.0), Point(1, -0.0)),
    (Color.RED, 1),
    (None, ()),
]

EQUAL = [
    (_f64(0x7FF8000000000001), _f64(0x7FF8000000000001)),
    (math.inf, math.inf),
    ({1: [0.0], 2: None}, {1: [0.0], 2: None}),
    # Like Java's Map, a dict's entry order is not part of the value: a correct serializer may
    # write entries sorted.
    ({1: "a", 2: "b"}, {2: "b", 1: "a"}),
    (Point(1, 2.5), Point(1, 2.5)),
    ((1, "x"), Row((1, "x"), RowKind.INSERT)),
    (Color.RED, Color.RED),
]


@pytest.mark.parametrize(("a", "b"), DIFFERENT, ids=[repr(p) for p in DIFFERENT])
def test_strategies_canonical_tells_apart(a: object, b: object) -> None:
    assert not values_equal(a, b), f"got equal for {a!r} and {b!r}, should differ"
    assert not values_equal(b, a), f"got equal for {b!r} and {a!r}, should differ"


@pytest.mark.parametrize(("a", "b"), EQUAL, ids=[repr(p) for p in EQUAL])
def test_strategies_canonical_equal_values(a: object, b: object) -> None:
    assert values_equal(a, b), f"got different for {a!r} and {b!r}, should be equal"
    assert hash(canonical(a)) == hash(canonical(b)), (
        f"got different hashes for {a!r} and {b!r}, should be equal (canonical forms are keys)"
    )


def _signed_twin(value: object) -> object:
    """``value`` rebuilt with each float zero's sign flipped and each NaN's payload changed: the
    same value by ``==`` wherever it holds no such float, another one by ``canonical``."""
    if type(value) is float:
        if value == 0.0:
            return -value
        if math.isnan(value):
            return _f64(struct.unpack(">Q", struct.pack(">d", value))[0] ^ 1)
        return value
    if type(value) in (list, tuple):
        return type(value)(_signed_twin(v) for v in value)
    if type(value) is dict:
        return {k: _signed_twin(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _signed_twin(getattr(value, f.name))
                                             for f in dataclasses.fields(value) if f.init})
    return copy.deepcopy(value)


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_values_equal_is_comparing_canonical_forms(data) -> None:
    # values_equal walks sequences and dataclasses in step instead of building both forms: it
    # must answer what comparing the forms answers, on equal pairs (a value and its copy) and
    # unequal ones (two values of one schema, often differing in one deep part).
    schema = data.draw(schemas(), label="schema")
    a = data.draw(values(schema), label="a")
    for b in (data.draw(values(schema), label="b"), copy.deepcopy(a), _signed_twin(a)):
        walked, formed = values_equal(a, b), canonical(a) == canonical(b)
        assert walked == formed, f"got values_equal {walked}, should be {formed} [{a!r} and {b!r}]"
        assert values_equal(b, a) == formed, f"got values_equal {not formed} one way only [{b!r} and {a!r}]"


@dataclasses.dataclass
class _Unset:
    x: int
    late: int = dataclasses.field(init=False, repr=False)  # never set: its form cannot be made


class _ListSubclass(list):
    pass


def _by_forms(a: object, b: object) -> object:
    try:
        return canonical(a) == canonical(b)
    except TypeError:
        return False
    except Exception as exc:  # noqa: BLE001 - the outcome compared is the error's class
        return type(exc)


@pytest.mark.parametrize(("a", "b"), [
    ([1, _Unset(1)], [2, _Unset(1)]),       # differs first, then a part without a form
    ([1, _ListSubclass()], [_Unset(1), 2]),  # a refused part in one, a part without a form in the other
    ([1, _ListSubclass()], [2, _ListSubclass()]),
    ((0.0, [1]), (0.0, [1])),
], ids=["unset-after-difference", "refused-and-unset", "refused-subclass", "equal"])
def test_values_equal_answers_what_the_forms_answer_where_a_part_has_none(a: object, b: object) -> None:
    want = _by_forms(a, b)
    try:
        got: object = values_equal(a, b)
    except Exception as exc:  # noqa: BLE001
        got = type(exc)
    assert got == want, f"got {got!r}, should be {want!r} as comparing the forms gives [{a!r} and {b!r}]"
