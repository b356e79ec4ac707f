"""What the checks assert with, in one place: writing and reading one record, comparing values
canonically with a "got X, should be Y" sentence, showing bytes."""

from __future__ import annotations

from typing import Any

from reference import DataInputView, DataOutputView

from .._engine.canonical import describe_difference, first_difference, values_equal
from .._engine.property import guarded
from .._engine.registry import Violation

__all__ = ["write", "read_one", "expect_equal", "hexdump", "stopped_at", "guarded", "SNAPSHOT_VERSION_HINT"]

#: What to do when a snapshot class cannot read bytes it (or an earlier release) wrote: the
#: usual cause is a layout change without a version bump.
SNAPSHOT_VERSION_HINT = ("read_snapshot(read_version, source) must read every version the class ever wrote: "
                         "branch on read_version, and bump get_current_version() when the layout changes")


def write(serializer: Any, value: Any) -> bytes:
    out = DataOutputView()
    guarded("serialize", serializer.serialize, value, out)
    return out.getvalue()


def read_one(serializer: Any, data: bytes, what: str = "deserialize") -> Any:
    source = DataInputView(data)
    try:
        value = serializer.deserialize(source)
    except Violation:
        raise
    except Exception as exc:
        raise Violation(f"{what} raised {type(exc).__name__}: {exc}; {stopped_at(data, source.position)}") from exc
    left = source.available()
    if left:
        raise Violation(
            f"{what} left {left} of {len(data)} bytes unread, should consume exactly what "
            "serialize wrote"
        )
    return value


def expect_equal(got: Any, expected: Any, what: str) -> None:
    """A Violation unless equal, saying what was compared and where it first differs: the full
    path and both values there, never cut away (``describe_difference``)."""
    if not values_equal(got, expected):
        differs = " differs" if first_difference(got, expected) else ""  # "differs at value.x: got ..."
        raise Violation(f"{what}{differs} {describe_difference(got, expected)}")


def hexdump(data: bytes, limit: int = 40) -> str:
    text = data[:limit].hex(" ")
    return text + (" ..." if len(data) > limit else "")


def stopped_at(data: bytes, at: int, before: int = 16, after: int = 24) -> str:
    """Where reading ``data`` stopped: the offset and the bytes around it (bounded), ``|``
    marking the offset."""
    start, end = max(0, at - before), min(len(data), at + after)
    text = ("... " if start else "") + " ".join(
        part for part in (data[start:at].hex(" "), "|", data[at:end].hex(" ")) if part)
    text += " ..." if end < len(data) else ""
    return f"reading stopped at byte {at} of the {len(data)} bytes serialize wrote: {text}"
