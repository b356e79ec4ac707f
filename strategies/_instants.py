"""Edge values of a drawn ``datetime`` or ``time`` (for ``amplified``): its zone's daylight-saving
transitions, the ``fold`` that tells a repeated wall time apart, and the instants where an
encoding of time runs out.

A user's ``st.datetimes(timezones=...)`` rarely draws a wall time that a fall-back transition
repeats (01:30 on the night New York leaves daylight time is two instants, told apart by
``fold``), yet that is where a serializer that stores the wall clock and its zone but not
``fold`` reads back the other instant. ``reference.canonical`` is the rule of what is part of
the value: ``fold`` counts on a naive value, and on an aware one where the two folds give other
UTC offsets (an ambiguous or skipped wall time); a fixed offset has no folds. These edges follow
it: a variant whose fold is not part of the value is never made.

``time_edges(value)`` gives, for one ``datetime`` or ``time``, (what was done, the changed
value), each change on its own:

- ``fold`` flipped, where ``canonical`` says it is part of the value (always on a naive value);
- for an aware ``datetime`` whose zone has transitions (the transition of each kind nearest
  the drawn year, within 40 years, else nearest 2000; found by sampling the zone's UTC offset
  week by week and bisecting to the second: any ``tzinfo`` whose ``fromutc`` is exact, such as
  ``zoneinfo.ZoneInfo``; a fixed ``datetime.timezone`` has none): the middle of the wall times
  a fall-back repeats, with fold 0 and fold 1; the last second before and the first after a
  spring-forward gap; and the middle of the gap, a wall time that does not exist (Python allows
  it, and ``canonical`` tells its folds apart: a serializer keeps it or refuses it with
  ``SerializationError``), with fold 0 and fold 1. A ``ZoneInfo`` without transitions (UTC,
  Asia/Tokyo, often what a strategy draws first) grows into one of ``STAND_IN_ZONES`` (drawn)
  instead: another key of the same ``tzinfo`` type, which a serializer keeps or refuses with
  ``SerializationError`` like any other grown value;
- ``EPOCH_EDGES`` (``RANGE`` edges): the instant at each of these epoch seconds, in the value's
  own zone (a naive value: its UTC wall clock): 0 and -1 (before 1970: negative seconds with a
  positive sub-second part), each side of the int32 second limits (1901, 2038) and the int64
  nanosecond limits (1677, 2262);
- for a ``time``: midnight and the last second of the day.

Every edge keeps the drawn value's sub-second part (a strategy of whole milliseconds stays in
them) and its ``tzinfo``. A range edge may be outside the years the serializer takes (its
user's strategy bounds them): a checker skips it on any error, as for an int set to a varint
edge; the transition and fold edges are in the drawn year's neighbourhood, refused only with
``reference.SerializationError``.
"""

from __future__ import annotations

import datetime
import functools
import zoneinfo
from typing import Any

from reference import values_equal

__all__ = ["time_edges", "EPOCH_EDGES", "RANGE", "STAND_IN_ZONES"]

_UTC = datetime.timezone.utc
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
_SECOND = datetime.timedelta(seconds=1)
_WEEK = datetime.timedelta(days=7)

#: Epoch seconds where an encoding of time runs out: 0 and -1, the int32 seconds limits and
#: one past them, the last whole seconds of an int64 of nanoseconds.
EPOCH_EDGES = (0, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 9_223_372_036, -9_223_372_037)
#: The marker ``time_edges`` gives a range edge (any refusal skips it).
RANGE = "range"
#: How many years around the drawn one are searched for a transition of each kind.
_YEARS_AROUND = 40
#: The year searched around when the drawn one has no transition near it (a zone's rules of
#: today; a strategy's simplest datetime).
_ANCHOR_YEAR = 2000
#: Zones a ``ZoneInfo`` without transitions (UTC, Asia/Tokyo) grows into, one drawn per example:
#: a one-hour shift either side of the equator, and Lord Howe's half hour.
STAND_IN_ZONES = ("America/New_York", "Australia/Lord_Howe", "Europe/Berlin")


def _wall(value: datetime.datetime | datetime.time) -> str:
    """``2026-11-01 01:30`` (seconds and microseconds only when there are some)."""
    if isinstance(value, datetime.datetime):
        text = f"{value.year:04}-{value.month:02}-{value.day:02} {value.hour:02}:{value.minute:02}"
    else:
        text = f"{value.hour:02}:{value.minute:02}"
    if value.second or value.microsecond:
        text += f":{value.second:02}"
    if value.microsecond:
        text += f".{value.microsecond:06}"
    return text


def _zone(value: datetime.datetime | datetime.time) -> str:
    tz = value.tzinfo
    if tz is None:
        return "(naive)"
    key = getattr(tz, "key", None)
    return key if isinstance(key, str) else str(tz.tzname(None) if type(tz) is datetime.timezone else tz)


def _offset(tz: datetime.tzinfo, instant: datetime.datetime) -> datetime.timedelta | None:
    return instant.astimezone(tz).utcoffset()


@functools.lru_cache(maxsize=4096)
def _transitions_in(tz: datetime.tzinfo, year: int) -> tuple[tuple[datetime.datetime, datetime.timedelta,
                                                                    datetime.timedelta], ...]:
    """(the first instant of the new offset (UTC), offset before, offset after) of each change of
    ``tz``'s UTC offset in ``year`` (sampled weekly, bisected to the second)."""
    found = []
    start = datetime.datetime(year, 1, 1, tzinfo=_UTC)
    end = datetime.datetime(year + 1, 1, 1, tzinfo=_UTC)
    before = _offset(tz, start)
    at = start
    while at < end:
        step = min(at + _WEEK, end)
        after = _offset(tz, step)
        if after != before and before is not None and after is not None:
            low, high = at, step  # offset `before` at low, another at high
            while high - low > _SECOND:
                middle = low + (high - low) // 2
                middle -= datetime.timedelta(microseconds=middle.microsecond)
                if middle <= low:
                    break
                if _offset(tz, middle) == before:
                    low = middle
                else:
                    high = middle
            found.append((high, before, _offset(tz, high)))
        before, at = after, step
    return tuple(t for t in found if t[2] is not None and t[1] != t[2])  # type: ignore[misc]


def _nearest(tz: datetime.tzinfo, year: int, fall_back: bool) -> tuple[Any, ...] | None:
    """The transition of ``tz`` of the kind asked (a fall back: the offset decreases) nearest
    to ``year`` (within ``_YEARS_AROUND``), or None."""
    for distance in range(_YEARS_AROUND + 1):
        for y in sorted({year - distance, year + distance}):
            if not 1 < y < 9999:
                continue
            for transition in _transitions_in(tz, y):
                if (transition[2] < transition[1]) == fall_back:
                    return transition
    return None


def _aware(wall: datetime.datetime, tz: datetime.tzinfo, fold: int) -> datetime.datetime:
    return wall.replace(tzinfo=tz, fold=fold)


def _both_folds(wall: datetime.datetime, tz: datetime.tzinfo, what: str,
                meanings: tuple[str, str]) -> list[tuple[str, Any]]:
    """``wall`` in ``tz`` with fold 0 and 1 (``meanings``: what each fold means), when the rule
    tells them apart."""
    zero, one = _aware(wall, tz, 0), _aware(wall, tz, 1)
    if values_equal(zero, one):
        return []
    return [(f"the {what} {_wall(wall)} {_zone(zero)}, fold={fold} ({meaning})", value)
            for fold, value, meaning in ((0, zero, meanings[0]), (1, one, meanings[1]))]


def _middle(start: datetime.datetime, size: datetime.timedelta, keep: datetime.datetime) -> datetime.datetime:
    """A wall time in [start, start + size): the minute of the middle with ``keep``'s microseconds
    when that stays inside, else the middle to the second."""
    middle = start + size // 2
    kept = middle.replace(second=0, microsecond=keep.microsecond)
    if start <= kept < start + size:
        return kept
    return middle.replace(microsecond=0) if start <= middle.replace(microsecond=0) else start


def _near(tz: datetime.tzinfo, year: int) -> tuple[Any, Any]:
    """The fall back and the spring forward of ``tz`` nearest ``year``, else nearest
    ``_ANCHOR_YEAR`` (each None when there is none)."""
    found = []
    for fall_back in (True, False):
        transition = _nearest(tz, year, fall_back)
        if transition is None and abs(year - _ANCHOR_YEAR) > _YEARS_AROUND:
            transition = _nearest(tz, _ANCHOR_YEAR, fall_back)
        found.append(transition)
    return found[0], found[1]


def _zone_edges(value: datetime.datetime, pick: int) -> list[tuple[str, Any]]:
    tz = value.tzinfo
    assert tz is not None
    edges: list[tuple[str, Any]] = []
    if type(tz) is datetime.timezone:
        return edges  # a fixed offset: no transitions
    note = ""
    try:
        back, forward = _near(tz, value.year)
        if back is None and forward is None and isinstance(tz, zoneinfo.ZoneInfo):
            note = f"in place of the drawn zone {_zone(value)}, which has no transition"
            tz = zoneinfo.ZoneInfo(STAND_IN_ZONES[pick % len(STAND_IN_ZONES)])
            back, forward = _near(tz, value.year)
    except Exception:  # a user tzinfo that cannot convert (or hash), no time zone database
        return edges
    naive = value.replace(tzinfo=None, fold=0)
    if back is not None:
        at, before, after = back
        start = (at + after).replace(tzinfo=None)  # the first repeated wall time
        edges += _both_folds(_middle(start, before - after, naive), tz, "ambiguous",
                             ("the earlier of its two instants", "the later of its two instants"))
    if forward is not None:
        at, before, after = forward
        sub = datetime.timedelta(microseconds=value.microsecond)
        for instant, where in ((at - _SECOND + sub, "just before"), (at + sub, "just after")):
            try:
                local = instant.astimezone(tz)
            except Exception:  # out of datetime's years
                continue
            edges.append((f"{_wall(local)} {_zone(local)}, {where} a spring-forward gap", local))
        start = (at + before).replace(tzinfo=None)  # the first wall time that does not exist
        edges += _both_folds(_middle(start, after - before, naive), tz, "nonexistent",
                             ("in a spring-forward gap, read with the offset before it; keep this wall time "
                              "and fold, or refuse it with reference.SerializationError",
                              "in a spring-forward gap, read with the offset after it; keep this wall time "
                              "and fold, or refuse it with reference.SerializationError"))
    if note:
        edges = [(f"{what[:-1]}; {note})" if what.endswith(")") else f"{what} ({note})", v) for what, v in edges]
    return edges


def _range_edges(value: datetime.datetime) -> list[tuple[str, Any]]:
    edges: list[tuple[str, Any]] = []
    sub = datetime.timedelta(microseconds=value.microsecond)
    for second in EPOCH_EDGES:
        try:
            instant = _EPOCH + datetime.timedelta(seconds=second) + sub
            moved = instant.replace(tzinfo=None) if value.tzinfo is None else instant.astimezone(value.tzinfo)
        except Exception:  # out of datetime's years, a user tzinfo that cannot convert
            continue
        edges.append((f"epoch second {second:,} ({_wall(moved)} {_zone(moved)})", moved))
    return edges


def time_edges(value: datetime.datetime | datetime.time, pick: int = 0) -> list[tuple[str, str, Any]]:
    """(``RANGE`` or ``""``, what was done, the changed value) for each edge of ``value`` (see the
    module docstring); ``pick`` chooses the stand-in zone of a ``ZoneInfo`` without transitions."""
    edges: list[tuple[str, str, Any]] = []
    flipped = value.replace(fold=1 - value.fold)
    if not values_equal(flipped, value):
        edges.append(("", f"fold set to {flipped.fold} ({_wall(value)} {_zone(value)})", flipped))
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            edges += [("", f"grown to {what}", v) for what, v in _zone_edges(value, pick)]
        edges += [(RANGE, f"set to {what}", v) for what, v in _range_edges(value)]
    else:
        for wall, what in ((datetime.time(0), "midnight"), (datetime.time(23, 59, 59), "the last second of the day")):
            moved = value.replace(hour=wall.hour, minute=wall.minute, second=wall.second)
            edges.append((RANGE, f"set to {what} ({_wall(moved)} {_zone(moved)})", moved))
    return edges
