"""Values whose ``==`` ignores part of their meaning (decimals, dates, times, durations) compare by
that meaning, in every form the rule takes: ``values_equal``, ``value_tree`` and golden text."""

from __future__ import annotations

import datetime
import decimal
import json
import os

import pytest

from conformance._engine.canonical import legacy_text, stable_text
from conformance._engine.golden import GoldenRelease
from reference import value_tree, values_equal

D = decimal.Decimal
UTC = datetime.timezone.utc
PLUS_ONE = datetime.timezone(datetime.timedelta(hours=1))
NAMED_PLUS_ONE = datetime.timezone(datetime.timedelta(hours=1), "CET")


def _zone(key: str):
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        return zoneinfo.ZoneInfo(key)
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip(f"no time zone data for {key}")


class FixedTz(datetime.tzinfo):
    """A user tzinfo: compared by class and repr."""

    def __init__(self, hours: int) -> None:
        self.hours = hours

    def utcoffset(self, dt):
        return datetime.timedelta(hours=self.hours)

    def __repr__(self) -> str:
        return f"FixedTz({self.hours})"


_NOON = datetime.datetime(2020, 6, 1, 12, tzinfo=UTC)

#: Values ``==`` takes for equal that are not the same value.
DIFFERENT = {
    "decimal scale": (D("21.00"), D("21")),
    "decimal sign of zero": (D("0"), D("-0")),
    "decimal exponent of zero": (D("0"), D("0E+2")),
    "decimal NaN payload": (D("NaN"), D("NaN1")),
    "decimal NaN sign": (D("NaN"), D("-NaN")),
    "decimal NaN kind": (D("NaN"), D("sNaN")),
    "decimal infinity sign": (D("Infinity"), D("-Infinity")),
    "decimal and int": (D("1"), 1),
    "same instant, other fixed offset": (_NOON, _NOON.astimezone(PLUS_ONE)),
    "same offset, other name": (_NOON.astimezone(PLUS_ONE), _NOON.astimezone(NAMED_PLUS_ONE)),
    "user tzinfo and fixed timezone at the same offset": (
        datetime.datetime(2020, 1, 1, tzinfo=FixedTz(1)), datetime.datetime(2020, 1, 1, tzinfo=PLUS_ONE)),
    "user tzinfo with another repr": (
        datetime.datetime(2020, 1, 1, tzinfo=FixedTz(1)), datetime.datetime(2020, 1, 1, 1, tzinfo=FixedTz(2))),
    "naive fold": (datetime.datetime(2020, 1, 1), datetime.datetime(2020, 1, 1, fold=1)),
    "naive time fold": (datetime.time(1, 30), datetime.time(1, 30, fold=1)),
    "time with other tzinfo": (datetime.time(1, tzinfo=UTC), datetime.time(1, tzinfo=PLUS_ONE)),
    "date and datetime": (datetime.date(2020, 1, 1), datetime.datetime(2020, 1, 1)),
    "timedelta and its seconds": (datetime.timedelta(seconds=1), 1),
    "timedelta": (datetime.timedelta(seconds=1), datetime.timedelta(seconds=1, microseconds=1)),
    "date": (datetime.date(2020, 1, 1), datetime.date(2020, 1, 2)),
    "decimals in a list": ([D("1.0")], [D("1")]),
    "datetimes as dict values": ({1: _NOON}, {1: _NOON.astimezone(PLUS_ONE)}),
}

#: Values that are the same though their objects differ in what carries no meaning.
EQUAL = {
    "decimal": (D("21.00"), D("21.00")),
    "decimal NaN": (D("NaN"), D("NaN")),
    "fold on a fixed offset": (_NOON, _NOON.replace(fold=1)),
    "fold on a named fixed offset": (_NOON.astimezone(NAMED_PLUS_ONE), _NOON.astimezone(NAMED_PLUS_ONE).replace(fold=1)),
    "fold on a fixed-offset time": (datetime.time(1, tzinfo=UTC), datetime.time(1, tzinfo=UTC, fold=1)),
    "utc and a zero offset": (_NOON, _NOON.replace(tzinfo=datetime.timezone(datetime.timedelta(0)))),
    "fixed offset, name given as the default": (
        _NOON.astimezone(PLUS_ONE), _NOON.astimezone(datetime.timezone(datetime.timedelta(hours=1), "UTC+01:00"))),
    "user tzinfo, same repr": (datetime.datetime(2020, 1, 1, tzinfo=FixedTz(1)),
                               datetime.datetime(2020, 1, 1, tzinfo=FixedTz(1))),
    "timedelta built two ways": (datetime.timedelta(hours=1), datetime.timedelta(seconds=3600)),
    "date": (datetime.date(2020, 1, 1), datetime.date(2020, 1, 1)),
}


@pytest.mark.parametrize("name", sorted(DIFFERENT))
def test_values_equal_tells_apart_what_eq_does_not(name):
    a, b = DIFFERENT[name]
    assert not values_equal(a, b), f"got {a!r} and {b!r} equal, should differ ({name})"
    assert value_tree(a) != value_tree(b), f"got one value tree for {a!r} and {b!r}, should differ ({name})"
    assert stable_text(a) != stable_text(b), f"got one stable text for {a!r} and {b!r}, should differ ({name})"


@pytest.mark.parametrize("name", sorted(EQUAL))
def test_values_equal_keeps_equal_what_means_the_same(name):
    a, b = EQUAL[name]
    assert values_equal(a, b), f"got {a!r} and {b!r} different, should be equal ({name})"
    assert value_tree(a) == value_tree(b), f"got {value_tree(a)} and {value_tree(b)}, should be one tree ({name})"
    assert stable_text(a) == stable_text(b), f"got {stable_text(a)} and {stable_text(b)}, should be one text ({name})"


def test_zone_fold_counts_only_where_it_changes_the_offset():
    berlin = _zone("Europe/Berlin")
    ambiguous = datetime.datetime(2021, 10, 31, 2, 30, tzinfo=berlin)  # clocks go back at 3:00
    assert ambiguous.utcoffset() != ambiguous.replace(fold=1).utcoffset(), "tz data: should be ambiguous"
    assert not values_equal(ambiguous, ambiguous.replace(fold=1)), (
        "got the two 2:30s of Berlin's October change equal, should differ (an hour apart)")
    skipped = datetime.datetime(2021, 3, 28, 2, 30, tzinfo=berlin)  # clocks skip 2:00-3:00
    assert not values_equal(skipped, skipped.replace(fold=1)), (
        "got the two readings of a skipped 2:30 equal, should differ (their offsets differ)")
    plain = datetime.datetime(2021, 7, 1, 2, 30, tzinfo=berlin)
    assert values_equal(plain, plain.replace(fold=1)), (
        "got an unambiguous Berlin time differing by fold alone, should be equal (fold changes nothing there)")
    assert value_tree(plain.replace(fold=1)) == value_tree(plain), "got fold in the tree of an unambiguous time"


def test_zoneinfo_by_key_not_by_instant():
    berlin, paris = _zone("Europe/Berlin"), _zone("Europe/Paris")
    at = datetime.datetime(2021, 7, 1, 12, tzinfo=berlin)
    assert at == at.astimezone(paris), "== should take the same instant for equal"
    assert not values_equal(at, at.astimezone(paris)), "got Berlin and Paris equal, should differ by zone key"
    assert not values_equal(at, at.astimezone(datetime.timezone(datetime.timedelta(hours=2)))), (
        "got a zone and a fixed offset equal, should differ")
    assert values_equal(at, datetime.datetime(2021, 7, 1, 12, tzinfo=_zone("Europe/Berlin"))), (
        "got two Berlin times of one key different, should be equal")


def test_trees_of_form_2_are_the_repr_of_earlier_releases():
    """Golden manifests of format 2 hold times as ``["object", class, repr]``: ``value_tree(v, 2)``
    must give exactly that, and the text rule of format 1 the repr-based text."""
    at = datetime.datetime(2000, 1, 1, tzinfo=UTC)
    assert value_tree((at, None), 2) == [
        "tuple", [["object", "datetime:datetime", "datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)"],
                  ["None"]]], f"got {value_tree((at, None), 2)}"
    assert legacy_text((at, None)) == (
        "(datetime:datetime:datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), None)")
    assert value_tree(D("2.50"), 2) == ["object", "decimal:Decimal", "Decimal('2.50')"]
    with pytest.raises(ValueError, match="form 1"):
        value_tree(1, 1)


def test_stable_text_is_the_value_tree_rendered():
    for value in (D("21.00"), _NOON, {"a": [1.5, None]}, datetime.time(3, fold=1)):
        assert json.loads(stable_text(value)) == value_tree(value), f"got {stable_text(value)} for {value!r}"


def test_manifests_are_read_with_the_rule_that_wrote_them():
    """Format 1 and 2 manifests: repr text and repr trees; format 3: the exact rule."""
    at = datetime.datetime(2000, 1, 1, tzinfo=UTC, fold=1)
    for fmt, text, tree_form in ((None, legacy_text(at), 2), (1, legacy_text(at), 2), (2, legacy_text(at), 2),
                                 (3, stable_text(at), 3)):
        manifest = {"records": 1} if fmt is None else {"format": fmt, "records": 1}
        rel = GoldenRelease("1.0.0", "/golden", b"", b"", manifest)
        assert rel.tree_form == tree_form, f"got tree form {rel.tree_form} for format {fmt}, should be {tree_form}"
        assert rel.text(at) == text, f"got {rel.text(at)} for format {fmt}, should be {text}"
    assert "fold=1" in legacy_text(at), "the old text rule kept fold in the repr"
    assert stable_text(at) == stable_text(at.replace(fold=0)), "got fold in the new text of a UTC time"


def test_builtin_golden_files_hold_times_in_the_old_tree_form():
    """The built-ins' recorded 0.1.0 (format 2) holds datetimes as repr trees: what
    ``tree_form`` 2 reads them with (versioning.* certifies them in the built-ins' run)."""
    path = os.path.join(os.path.dirname(__file__), "..", "..", "conformance", "_builtins", "golden",
                        "legacy_row", "0.1.0", "manifest.json")
    with open(path, encoding="utf-8") as fh:
        manifest = json.load(fh)
    assert manifest["format"] == 2, f"got format {manifest['format']}, should be the recorded 2"
    first = manifest["trees"][0][1][0]
    assert first[0] == "object" and first[1] == "datetime:datetime", f"got {first}, should be a repr tree"
    recorded_at = eval(first[2], {"datetime": datetime})  # the repr of a stdlib datetime
    assert value_tree(recorded_at, 2) == first, f"got {value_tree(recorded_at, 2)}, should be {first}"
    assert value_tree(recorded_at) != first, "format 3 trees should differ (that is why the format changed)"
