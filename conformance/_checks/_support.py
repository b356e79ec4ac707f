"""What the checks assert with, in one place: writing and reading one record, comparing values
canonically with a "got X, should be Y" sentence, showing bytes, and finding what a serializer
holds (``held``)."""

from __future__ import annotations

import random
from typing import Any

from reference import DataInputView, DataOutputView, EndOfDataError, TypeSerializer

from .._engine.canonical import describe_difference, first_difference, show, values_equal
from .._engine.golden import BYTES_EXAMPLE
from .._engine.property import guarded
from .._engine.registry import Violation

__all__ = ["CORRUPTIONS", "NULL_MARK", "corrupted_bytes", "write", "read_one", "expect_equal", "bytes_example", "hexdump", "bytes_difference", "stopped_at", "guarded", "held", "nested_serializers", "reference_built", "serializers_in",
           "SNAPSHOT_VERSION_HINT", "IntReads", "int_extremes", "fixed_draw", "spread_positions"]

#: What to do when a snapshot class cannot read bytes it (or an earlier release) wrote: the
#: usual cause is a layout change without a version bump.
SNAPSHOT_VERSION_HINT = ("read_snapshot(read_version, source) must read every version the class ever wrote: "
                         "branch on read_version, and bump get_current_version() when the layout changes")


#: How a byte of a record or snapshot is corrupted: every bit, the sign bit (a size or count
#: becomes negative, a varint's continuation flips), the lowest bit (a null or kind mask, a
#: boolean's presence flag).
CORRUPTIONS = (0xFF, 0x80, 0x01)
#: A byte of a record is also set to this where no flip of ``CORRUPTIONS`` gives it: a set
#: boolean, which is Flink's null mark (a Nullable's flag; a POJO's flag byte, whose "no
#: subclass" 0x02 no flip turns into it), read where that part may not be null.
NULL_MARK = 0x01


def corrupted_bytes(byte: int) -> list[tuple[int, str]]:
    """What ``byte`` of a record is corrupted into, each with how: every flip of
    ``CORRUPTIONS``, and ``NULL_MARK`` where no flip gives it."""
    found = [(byte ^ flip, f"flipped by {flip:#04x}") for flip in CORRUPTIONS]
    if byte != NULL_MARK and all(new != NULL_MARK for new, _ in found):
        found.append((NULL_MARK, "set to a null mark"))
    return found

#: Width in bytes -> the extremes a number of that width read from a record is set to,
#: with their names: every bit (-1), the sign bit alone (the least value), all but the sign bit
#: (the greatest). A count or length becomes negative or past any record; a value stays a value.
_EXTREMES: dict[int, tuple[tuple[str, bytes], ...]] = {
    width: (("-1", b"\xff" * width), ("the least", b"\x80" + bytes(width - 1)),
            ("the greatest", b"\x7f" + b"\xff" * (width - 1)))
    for width in (2, 4, 8)
}


class IntReads(DataInputView):
    """A ``DataInputView`` that notes where a short, int or long is read (``at``: (offset,
    width) in reading order), so a check can set exactly the bytes a reader took as one
    number. The generated codecs read their buffer directly: trace with them off."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.at: list[tuple[int, int]] = []

    def read_short(self) -> int:
        self.at.append((self.position, 2))
        return super().read_short()

    def read_unsigned_short(self) -> int:
        self.at.append((self.position, 2))
        return super().read_unsigned_short()

    def read_int(self) -> int:
        self.at.append((self.position, 4))
        return super().read_int()

    def read_long(self) -> int:
        self.at.append((self.position, 8))
        return super().read_long()


def int_extremes(data: bytes, at: list[tuple[int, int]], limit: int) -> list[tuple[str, bytes]]:
    """``data`` with one number read from it (``IntReads.at``) set to an extreme of its width
    (``_EXTREMES``): as (what was done, the corrupted bytes), at most ``limit``, spread over
    the numbers read, none equal to ``data``."""
    found: list[tuple[str, bytes]] = []
    for offset, width in dict.fromkeys(at):
        if offset + width > len(data):
            continue
        for name, extreme in _EXTREMES[width]:
            if data[offset:offset + width] != extreme:
                broken = data[:offset] + extreme + data[offset + width:]
                found.append((f"the {width}-byte number at byte {offset} set to {name} "
                              f"({data[offset:offset + width].hex(' ')} -> {extreme.hex(' ')})", broken))
    # A fixed draw (the same for the same record), in reading order: a regular stride would
    # give every number read the same extreme whenever it is a multiple of their count.
    return fixed_draw(found, limit, len(data))


def fixed_draw(items: list[Any], limit: int, seed: int) -> list[Any]:
    """At most ``limit`` of ``items``, in their order: all of them when they fit, else a draw
    fixed by ``seed`` (the same damage for the same bytes, run after run)."""
    if len(items) <= limit:
        return items
    return [items[i] for i in sorted(random.Random(seed).sample(range(len(items)), limit))]


def write(serializer: Any, value: Any) -> bytes:
    out = DataOutputView()
    guarded("serialize", serializer.serialize, value, out)
    return out.getvalue()


#: What a serializer's author compares when deserialize reads more or fewer bytes than
#: serialize wrote.
_READS_AND_WRITES = ("compare each read with its write: the same widths (read_long for write_long, "
                     "not for write_int), each length or count read back as written, in the same order")


def read_one(serializer: Any, data: bytes, what: str = "deserialize") -> Any:
    source = DataInputView(data)
    try:
        value = serializer.deserialize(source)
    except Violation:
        raise
    except Exception as exc:
        hint = f"; deserialize reads past what serialize wrote: {_READS_AND_WRITES}" if isinstance(
            exc, EndOfDataError) and data else ""
        raise Violation(f"{what} raised {type(exc).__name__}: {exc}; {stopped_at(data, source.position)}{hint}") from exc
    left = source.available()
    if left:
        raise Violation(
            f"{what} left {left} of {len(data)} bytes unread, should consume exactly what "
            f"serialize wrote; it read {show(value)}, {stopped_at(data, source.position)}; {_READS_AND_WRITES}"
        )
    return value


def expect_equal(got: Any, expected: Any, what: str) -> None:
    """A Violation unless equal, saying what was compared and where it first differs: the full
    path and both values there, never cut away (``describe_difference``)."""
    if not values_equal(got, expected):
        differs = " differs" if first_difference(got, expected) else ""  # "differs at value.x: got ..."
        raise Violation(f"{what}{differs} {describe_difference(got, expected)}")


def spread_positions(size: int, every_up_to: int, head: int, tail: int, between: int) -> list[int]:
    """Where the checks cut or damage ``size`` bytes: every position of up to ``every_up_to``;
    past that, every position of the first ``head`` and last ``tail`` bytes, and ``between``
    positions spread over the rest (reading a cut at position n costs up to n)."""
    if size <= every_up_to:
        return list(range(size))
    step = max(1, (size - head - tail) // between)
    return sorted({*range(head), *range(head, size - tail, step), *range(size - tail, size)})


def bytes_example(data: bytes, limit: int = 40) -> str:
    """A failure's example that is bytes (a damaged record or snapshot), labelled so
    (``BYTES_EXAMPLE``): they were not drawn and shrunk. ``limit`` as ``hexdump``'s."""
    size = "1 byte" if len(data) == 1 else f"{len(data)} bytes"
    return f"{BYTES_EXAMPLE} ({size}, not shrunk): {hexdump(data, limit)}"


def hexdump(data: bytes, limit: int = 40) -> str:
    text = data[:limit].hex(" ")
    return text + (" ..." if len(data) > limit else "")


def bytes_difference(got: bytes, should: bytes) -> str:
    """Where two byte strings first differ, as "(N bytes, should be M), first at byte K: got ...,
    should be ... (from byte J)": a window around the first difference of each."""
    at = next((i for i, (a, b) in enumerate(zip(got, should, strict=False)) if a != b), min(len(got), len(should)))
    window = slice(max(0, at - 8), at + 24)
    size = f"the same {len(should)}" if len(got) == len(should) else str(len(should))
    return (f"({len(got)} bytes, should be {size}), first at byte {at}: got {hexdump(got[window])}, "
            f"should be {hexdump(should[window])} (from byte {window.start})")


def stopped_at(data: bytes, at: int, before: int = 16, after: int = 24, wrote: str = "serialize") -> str:
    """Where reading ``data`` (which ``wrote`` wrote) stopped: the offset and the bytes around
    it (bounded), ``|`` marking the offset."""
    start, end = max(0, at - before), min(len(data), at + after)
    text = ("... " if start else "") + " ".join(
        part for part in (data[start:at].hex(" "), "|", data[at:end].hex(" ")) if part)
    text += " ..." if end < len(data) else ""
    return f"reading stopped at byte {at} of the {len(data)} bytes {wrote} wrote: {text}"


#: ``held`` reports at most this many objects, and looks this many containers deep.
HELD_LIMIT = 500
_CONTAINER_DEPTH = 3


def _attributes(obj: Any) -> list[tuple[str, Any]]:
    """``obj``'s attributes: its ``__dict__`` (when it has one) and its slots (a class may have
    both, when a base declares no ``__slots__``)."""
    attributes = dict(getattr(obj, "__dict__", {}))
    for cls in type(obj).__mro__:
        slots = getattr(cls, "__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if name not in attributes and name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                attributes[name] = getattr(obj, name)
    return list(attributes.items())


def held(root: Any, through: tuple[type, ...]) -> list[tuple[str, Any]]:
    """What ``root`` holds, with where (``"fields[1][0].inner"``), each object once and ``root``
    left out: every instance of ``through`` and every class found in the attributes
    (``__dict__`` or ``__slots__``) of ``root`` and, in turn, of each such instance, directly or
    in the lists, tuples, sets and dict values there (up to 3 containers deep). At most
    ``HELD_LIMIT`` objects; other objects (values, caches) are neither reported nor entered.

    The one walk of a serializer's graph: the serializers a duplicate shares
    (``through=(TypeSerializer,)``) and the modules a fresh process imports (through serializers
    and snapshots, for their classes and those they hold) are both found by it."""
    found: list[tuple[str, Any]] = []
    seen = {id(root)}
    stack: list[tuple[str, Any]] = [("", root)]

    def note(value: Any, path: str, depth: int = 0) -> None:
        if isinstance(value, type) or isinstance(value, through):
            if id(value) not in seen:
                seen.add(id(value))
                found.append((path, value))
                if not isinstance(value, type):
                    stack.append((path, value))
        elif depth < _CONTAINER_DEPTH and isinstance(value, (list, tuple, set, frozenset)):
            for i, item in enumerate(value):
                note(item, f"{path}[{i}]", depth + 1)
        elif depth < _CONTAINER_DEPTH and isinstance(value, dict):
            for key, item in value.items():
                note(item, f"{path}[{key!r}]", depth + 1)

    while stack and len(found) < HELD_LIMIT:
        path, obj = stack.pop()
        for name, value in _attributes(obj):
            note(value, f"{path}.{name}" if path else name)
    return found[:HELD_LIMIT]


def reference_built(root: Any) -> bool:
    """Whether ``root`` and every serializer it holds are classes of the reference, which are
    held to the reference's own promises where a user's class is not: a ``StateError`` for
    corrupt bytes (a user's class may raise any exception), and an object of an earlier
    version of a class migrated as a restore would read it."""
    return all(type(s).__module__.split(".")[0] == "reference" for s in serializers_in(root))


def nested_serializers(root: Any) -> list[tuple[str, Any]]:
    """The serializers ``root`` holds, through nested serializers, with where (``held``)."""
    return [(path, s) for path, s in held(root, (TypeSerializer,)) if isinstance(s, TypeSerializer)]


def serializers_in(root: Any) -> list[Any]:
    """``root`` and every serializer it holds (``nested_serializers``)."""
    return [root, *(s for _, s in nested_serializers(root))]
