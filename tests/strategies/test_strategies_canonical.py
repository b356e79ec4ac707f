"""The canonical comparison is exact where ``==`` is lenient, and agrees where it should."""

from __future__ import annotations

import dataclasses
import enum
import math
import struct

import pytest

from reference.serializers import Row, RowKind
from strategies import canonical, values_equal


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
