"""What the checks assert with, in one place: writing and reading one record, comparing values
canonically with a "got X, should be Y" sentence, showing bytes."""

from __future__ import annotations

from typing import Any

from reference import DataInputView, DataOutputView, class_identity

from .._engine.canonical import first_difference, show, values_equal
from .._engine.property import guarded
from .._engine.registry import Violation

__all__ = ["write", "read_one", "expect_equal", "hexdump", "guarded"]


def write(serializer: Any, value: Any) -> bytes:
    out = DataOutputView()
    guarded("serialize", serializer.serialize, value, out)
    return out.getvalue()


def read_one(serializer: Any, data: bytes, what: str = "deserialize") -> Any:
    source = DataInputView(data)
    value = guarded(what, serializer.deserialize, source)
    left = source.available()
    if left:
        raise Violation(
            f"{what} left {left} of {len(data)} bytes unread, should consume exactly what "
            "serialize wrote"
        )
    return value


def expect_equal(got: Any, expected: Any, what: str) -> None:
    if not values_equal(got, expected):
        where = first_difference(got, expected)
        at = f" (first difference at {where})" if where else ""
        shown_got, shown_expected = show(got), show(expected)
        if shown_got == shown_expected:  # alike on screen: the types tell them apart
            shown_got += f" (a {class_identity(type(got))})"
            shown_expected += f" (a {class_identity(type(expected))})"
        raise Violation(f"{what} got {shown_got}, should be {shown_expected}{at}")


def hexdump(data: bytes, limit: int = 40) -> str:
    text = data[:limit].hex(" ")
    return text + (" ..." if len(data) > limit else "")
