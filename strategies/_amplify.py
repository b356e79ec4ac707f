"""``amplified(values)``: values of any strategy grown across the length boundaries of the formats,
their integers set to each varint width's edge.

A user's strategy (``st.text()``, ``st.lists(...)``) rarely draws a text of 16 KB or a list of
128 elements, yet that is where a length written as a varint takes another byte (127/128,
16,383/16,384, 2,097,151/2,097,152 units) and where a length held in one byte overflows. No
schema is needed: a drawn value is walked, and each part that has a length is a *site*: a
``str`` (its UTF-16 units) or ``bytes`` (its bytes), and a ``list``, ``dict``, ``set`` or
``frozenset`` (its element count). Tuples, ``reference.serializers.Row``, named tuples,
dataclass instances, lists, dicts (keys and values) and sets are walked into; their arity is
their type's and never changes. Anything else is left as it is.

``Amplified.variants()`` gives, for one drawn value, (the kind of site, what was done, the value):
the value with one text or bytes site
grown (or cut) to each size of ``TEXT_SIZES`` and one container site to each size of
``COUNT_SIZES``; with ``huge=True`` the text or bytes site is grown to each of
``HUGE_TEXT_SIZES`` (the ends of a length in an unsigned byte, a signed and an unsigned short:
255/256, 32,767/32,768, 65,535/65,536, then 2 million units; ASCII, so every reader takes its
units in one step and a UTF-8 length is on the same boundary) and the container to
each of ``HUGE_COUNTS``. Which site grows is drawn, so each example grows another part;
``richest_values`` picks, of values drawn before, those with the most sites, for a pass of few
examples (the huge one) to grow an optional part that some draw had. Text
keeps the characters it had (repeated, then padded with ``a``); now and then (drawn) it is made
ASCII so that its UTF-8 bytes are on the boundary too. A list grows by repeating its elements
(an empty one cannot), a dict or set by new keys made from its own (text, bytes or int keys
only: another kind of key has no successor to make). An ``int`` (not a bool) is a site too: one
drawn int part is set to each of ``INT_EDGES`` (``varint_edges``: every varint width of the value
and of its zig-zag form, the int32 and int64 limits), outside the huge examples. A ``datetime``
or ``time`` is a site too (outside the huge examples): one drawn time part is set to each of its
edges (``strategies._instants``: its ``fold`` flipped where ``reference.canonical`` counts it,
the wall times its zone repeats or skips at a daylight-saving transition, with fold 0 and 1,
the seconds around a spring-forward gap, and the instants where an encoding of time runs out,
``EPOCH_EDGES``; the kind of such a range edge is ``range``).

A grown value may be outside what the serializer takes (a code of 3 letters grown to 128): a
checker skips a variant that ``serialize`` refuses with ``reference.SerializationError`` (an
int set to an edge and a time set to a ``range`` edge on any error: the user's strategy bounds
them, so an overflow says the same).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st

from reference import values_equal

from ._instants import RANGE, time_edges
from ._values import BOUNDARY_UNITS, HUGE_UNITS, SHORT_LENGTH_UNITS, _as_utf16, _text_of_units, varint_edges

__all__ = ["amplified", "Amplified", "richest_values", "growth_sites", "grown", "GROWTH_KINDS", "INT_EDGES", "TEXT_SIZES", "HUGE_TEXT_SIZES", "COUNT_SIZES",
           "HUGE_COUNTS", "ANY_REFUSAL_KINDS"]

#: Text and bytes lengths every example tries: empty, and each side of the 2- and 3-byte varint.
TEXT_SIZES = (0, *BOUNDARY_UNITS)
#: Text and bytes sizes the few huge examples try: the ends of hand-written length prefixes (an
#: unsigned byte, a signed and an unsigned short) and 2 million units.
HUGE_TEXT_SIZES = (*SHORT_LENGTH_UNITS, *HUGE_UNITS)
#: Element counts every example tries (a count of 16,384 elements costs more: ``HUGE_COUNTS``).
COUNT_SIZES = (0, 127, 128)
#: Element counts the few huge examples try.
HUGE_COUNTS = (16_383, 16_384)

_TEXT_KINDS = ("text", "bytes")
_COUNT_KINDS = ("list", "dict", "set")
_TIME_KINDS = ("datetime", "time")
#: Every kind of site.
GROWTH_KINDS = (*_TEXT_KINDS, *_COUNT_KINDS, "int", *_TIME_KINDS)
#: Kinds of variant a serializer may refuse with any error (its user's strategy bounds them).
ANY_REFUSAL_KINDS = ("int", RANGE)
#: What an int site is set to: each varint width's edge, up to the int64 limits.
INT_EDGES = varint_edges()


def _kind(value: Any) -> str | None:
    kind = type(value)
    if kind is int:
        return "int"
    if kind is str:
        return "text"
    if kind is bytes:
        return "bytes"
    if kind is datetime.datetime:
        return "datetime"
    if kind is datetime.time:
        return "time"
    if kind is list:
        return "list"
    if kind is dict:
        return "dict" if _successors(list(value)) is not None else None
    if kind in (set, frozenset):
        return "set" if _successors(list(value)) is not None else None
    return None


def _successors(keys: list[Any]) -> Callable[[Any, int], Any] | None:
    """How to make new distinct keys like ``keys`` (all text, all bytes or all ints), or None."""
    if not keys:
        return None
    kinds = {type(k) for k in keys}
    if kinds == {str}:
        return lambda k, i: f"{k}{i}"
    if kinds == {bytes}:
        return lambda k, i: k + i.to_bytes(4, "big")
    if kinds == {int}:
        return lambda k, i: k + i
    return None


def _children(value: Any) -> list[tuple[str, Any]] | None:
    """(label, part) of a value walked into, or None for a value that is not."""
    kind = type(value)
    if kind in (list, set, frozenset):
        items = value if kind is list else sorted(value, key=repr)
        return [(f"[{i}]", v) for i, v in enumerate(items)]
    if kind is dict:
        return [part for i, (k, v) in enumerate(value.items()) for part in ((f" key {i}", k), (f"[{k!r}]", v))]
    if isinstance(value, tuple):
        fields = getattr(value, "_fields", None)
        return [(f".{fields[i]}" if fields else f"[{i}]", v) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f".{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value) if f.init]
    return None


def _rebuilt(value: Any, parts: list[Any]) -> Any:
    """``value`` with its children (in ``_children`` order) replaced by ``parts``."""
    kind = type(value)
    if kind is list:
        return parts
    if kind in (set, frozenset):
        return kind(parts)
    if kind is dict:
        return dict(zip(parts[::2], parts[1::2], strict=True))
    if isinstance(value, tuple):
        if kind is tuple:
            return tuple(parts)
        if hasattr(value, "_make"):
            return kind._make(parts)
        row_kind = getattr(value, "kind", None)
        return kind(parts, row_kind) if row_kind is not None else kind(parts)
    return dataclasses.replace(value, **{f.name: p for f, p in zip(
        [f for f in dataclasses.fields(value) if f.init], parts, strict=True)})


def growth_sites(value: Any) -> list[tuple[str, str]]:
    """Every part of ``value`` that can grow, in walking order: (kind, where) with kind one of
    ``GROWTH_KINDS`` and where a path such as ``value.tags[2]``."""
    return [(kind, where) for kind, where, _ in _sites(value)]


def _sites(value: Any) -> list[tuple[str, str, bool]]:
    """``growth_sites`` with, per site, whether it is a dict's key."""
    found: list[tuple[str, str, bool]] = []

    def walk(part: Any, where: str, is_key: bool) -> None:
        kind = _kind(part)
        if kind is not None:
            found.append((kind, where, is_key))
        children = _children(part)
        keys = type(part) is dict
        for i, (label, child) in enumerate(children or ()):
            walk(child, where + label, keys and i % 2 == 0)

    walk(value, "value", False)
    return found


def _resized(part: Any, size: int, ascii_only: bool) -> Any:
    kind = type(part)
    if kind is int:
        return size
    if kind is str:
        seed = "".join(c for c in part if c < "\x80") if ascii_only else part
        text = _text_of_units(seed, size)
        return text if ascii_only else _as_utf16(text)
    if kind is bytes:
        return (part or b"\x01") * (size // max(1, len(part)) + 1) if size else b""
    if kind is list:
        return [part[i % len(part)] for i in range(size)] if part else []
    items = list(part)
    make = _successors(items)
    assert make is not None  # a site only when it has successors
    chosen: list[Any] = []
    seen: set[Any] = set()
    i = 0
    while len(chosen) < size:
        base = items[i % len(items)]
        candidate = base if i < len(items) else make(base, i)
        if candidate not in seen:
            seen.add(candidate)
            chosen.append(candidate)
        i += 1
    if kind is dict:
        values = list(part.values())
        return {k: values[j % len(values)] for j, k in enumerate(chosen)}
    return kind(chosen)


def grown(value: Any, site: int, size: int, *, ascii_only: bool = False) -> Any:
    """``value`` with its ``site``-th part (``growth_sites`` order) resized to ``size`` units or
    elements; bytes are cut to exactly ``size``."""
    def resize(part: Any) -> Any:
        resized = _resized(part, size, ascii_only)
        return resized[:size] if type(resized) is bytes else resized

    return _changed(value, site, resize)


def _site_part(value: Any, site: int) -> Any:
    """The ``site``-th part of ``value`` (``growth_sites`` order)."""
    found: list[Any] = []

    def keep(part: Any) -> Any:
        found.append(part)
        return part

    _changed(value, site, keep)
    return found[0]


def _changed(value: Any, site: int, change: Callable[[Any], Any]) -> Any:
    """``value`` with its ``site``-th part (``growth_sites`` order) replaced by ``change(part)``."""
    counter = [0]

    def walk(part: Any) -> Any:
        mine = counter[0] if _kind(part) is not None else -1
        if mine >= 0:
            counter[0] += 1
            if mine == site:
                return change(part)
        children = _children(part)
        if not children:
            return part
        parts = [walk(child) for _, child in children]
        if all(p is c for p, (_, c) in zip(parts, children, strict=True)):
            return part
        try:
            return _rebuilt(part, parts)
        except Exception:  # a type that cannot be rebuilt from its parts keeps them
            return part

    return walk(value)


def _constant(part: Any) -> Callable[[Any], Any]:
    return lambda _: part


class Amplified:
    """One drawn value and the sites chosen to grow; ``variants()`` yields (kind, what, value)."""

    def __init__(self, base: Any, text_pick: int, count_pick: int, ascii_only: bool, huge: bool,
                 kinds: tuple[str, ...] = GROWTH_KINDS) -> None:
        self.base = base
        sites = _sites(base)
        self.sites = [(kind, where) for kind, where, _ in sites]
        #: Sites that are a dict's keys: grown, they rename a record's fields when the dict is one.
        self.key_sites = {i for i, (_, _, is_key) in enumerate(sites) if is_key}
        grows = _grown_kinds(kinds, huge)
        texts = [i for i, (kind, _) in enumerate(self.sites) if kind in _TEXT_KINDS and kind in grows]
        counts = [i for i, (kind, _) in enumerate(self.sites) if kind in _COUNT_KINDS and kind in grows]
        ints = [i for i, (kind, _) in enumerate(self.sites) if kind == "int" and kind in grows]
        times = [i for i, (kind, _) in enumerate(self.sites) if kind in _TIME_KINDS and kind in grows]
        self.text_site = texts[text_pick % len(texts)] if texts else None
        self.count_site = counts[count_pick % len(counts)] if counts else None
        self.int_site = ints[text_pick % len(ints)] if ints else None
        self.time_site = times[count_pick % len(times)] if times else None
        self.time_pick = text_pick
        self.ascii_only = ascii_only or huge
        self.huge = huge

    def variants(self) -> Iterator[tuple[str, str, Any]]:
        """(the kind of site changed, what was done to it, the value) for each plan; the kind of
        a dict's key is ``key`` (whatever its type)."""
        plans = []
        if self.text_site is not None:
            plans += [(self.text_site, n) for n in (HUGE_TEXT_SIZES if self.huge else TEXT_SIZES)]
        if self.count_site is not None:
            plans += [(self.count_site, n) for n in (HUGE_COUNTS if self.huge else COUNT_SIZES)]
        if self.int_site is not None:
            plans += [(self.int_site, n) for n in INT_EDGES]
        for site, size in plans:
            kind, where = self.sites[site]
            shown_kind = "key" if site in self.key_sites else kind
            if kind == "int":
                yield shown_kind, f"{where} (int) set to {size}", grown(self.base, site, size)
                continue
            unit = {"text": "UTF-16 units", "bytes": "bytes"}.get(kind, "elements")
            ascii_note = " (ASCII)" if kind == "text" and self.ascii_only else ""
            yield (shown_kind, f"{where} ({kind}) grown to {size:,} {unit}{ascii_note}",
                   grown(self.base, site, size, ascii_only=self.ascii_only))
        if self.time_site is not None:
            kind, where = self.sites[self.time_site]
            shown_kind = "key" if self.time_site in self.key_sites else kind
            for edge, what, part in time_edges(_site_part(self.base, self.time_site), self.time_pick):
                yield edge or shown_kind, f"{where} ({kind}) {what}", _changed(self.base, self.time_site, _constant(part))

    def __repr__(self) -> str:
        return f"Amplified({self.base!r}, sites={[w for _, w in self.sites]})"


def amplified(values: st.SearchStrategy[Any], *, huge: bool = False,
              kinds: tuple[str, ...] = GROWTH_KINDS) -> st.SearchStrategy[Amplified]:
    """Values of ``values`` with the sites to grow drawn (see the module docstring), of
    ``kinds`` only (text, bytes, list, dict, set, int, datetime, time)."""
    return st.builds(Amplified, values, st.integers(0, 2**16), st.integers(0, 2**16), st.booleans(), st.just(huge),
                     st.just(kinds))


def _grown_kinds(kinds: tuple[str, ...], huge: bool) -> set[str]:
    """The kinds of site an example of ``amplified(..., huge=huge, kinds=kinds)`` grows: the
    huge examples leave ints and times as they are."""
    return {kind for kind in kinds if not (huge and kind in ("int", *_TIME_KINDS))}


def _site_count(value: Any, huge: bool, kinds: tuple[str, ...]) -> int:
    """How many sites of ``value`` ``amplified(..., huge=huge, kinds=kinds)`` may grow."""
    grows = _grown_kinds(kinds, huge)
    return sum(kind in grows for kind, _, _ in _sites(value))


def richest_values(values: list[Any], *, huge: bool = False, kinds: tuple[str, ...] = GROWTH_KINDS,
                   at_most: int = 2) -> list[Any]:
    """Of ``values`` (drawn before), the ``at_most`` with the most sites ``amplified(...,
    huge=huge, kinds=kinds)`` grows, most first (the first drawn among equals; equal values once);
    empty when none has such a site. A pass of few examples grows these, not fresh draws that may
    lack the part (an optional field absent) an earlier draw had."""
    ranked = sorted(((-_site_count(value, huge, kinds), i) for i, value in enumerate(values)))
    found: list[Any] = []
    for count, i in ranked:
        if not count or len(found) >= at_most:
            break
        if not any(values_equal(values[i], other) for other in found):
            found.append(values[i])
    return found
