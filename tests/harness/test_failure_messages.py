"""Failure messages show where two values differ: the full path and both values at that path,
shortened only around the difference; a golden file's record is labelled as recorded, and
damaged bytes as bytes, never as hypothesis' smallest failing example."""

from __future__ import annotations

import datetime
import zoneinfo
from dataclasses import dataclass
from decimal import Decimal

import pytest
from hypothesis import strategies as st
from test_harness_upgrade import SEED, UPGRADE, _v2_subject, recorded  # noqa: F401 (a fixture)
from zoo_base import FixedIntSerializer, FixedIntSnapshot, fixed_int_values

from conformance import RunConfig, Subject, check_serializer
from conformance._checks._support import expect_equal
from conformance._engine.registry import Violation
from conformance._engine.render import render_report
from reference.serializers import ListSerializer, LongSerializer


@dataclass
class Trade:
    symbol: str
    price: float


@dataclass
class Book:
    owner: str
    trades: list


def _book(price_of_3: float) -> Book:
    return Book("x" * 300, [Trade("SYM" * 40, 100.0 + i if i != 3 else price_of_3) for i in range(12)])


def _message(got, expected) -> str:
    try:
        expect_equal(got, expected, "reading back what serialize wrote")
    except Violation as exc:
        return exc.message
    raise AssertionError("expect_equal raised nothing for different values")


def test_the_full_path_and_both_values_at_it():
    message = _message(_book(101.5), _book(101.25))
    assert "value.trades[3].price" in message, f"got {message!r}, should name the path value.trades[3].price"
    assert "got 101.5, should be 101.25" in message, f"got {message!r}, should show both prices"


def test_a_long_text_is_shortened_around_the_difference_never_hiding_it():
    from conformance._engine.canonical import describe_difference

    expected = "a" * 1000
    got = expected[:700] + "Z" + expected[701:]
    text = describe_difference([got], [expected])
    assert text.startswith("at value[0]: got "), f"got {text!r}, should begin with the path value[0]"
    assert "aZa" in text, f"got {text!r}, should show the differing character with its neighbours"
    assert len(text) < 300, f"got {len(text)} characters, should shorten the 1000-character texts"


class _CorruptsTenth(ListSerializer):
    """Writes element 9 of a long list as 1 more than it is: a bug past what a short display shows."""

    def serialize(self, value, target):
        if len(value) > 9:
            value = value[:9] + [value[9] + 1] + value[10:]
        super().serialize(value, target)


def test_a_check_failure_names_the_element_hidden_behind_a_short_display():
    subject = Subject(_CorruptsTenth(LongSerializer()), st.lists(st.integers(0, 2**40), min_size=12, max_size=20))
    report = check_serializer(subject, examples=30, seed=3, checks=("roundtrip.bit_exact",), backends=("heap",))
    result = report["roundtrip.bit_exact"]
    assert result.failed, f"got {result}, should fail"
    assert "value[9]: got 1, should be 0" in result.message, (
        f"got {result.message!r}, should name value[9] and show both values there")


@pytest.mark.parametrize("bug, check_id", [("format_changed_without_version", "upgrade.restore"),
                                           ("migrates_by_position", "upgrade.records")])
def test_golden_records_are_labelled_recorded_not_smallest(recorded, bug, check_id):  # noqa: F811
    report = check_serializer(_v2_subject(recorded, bug), examples=10, seed=SEED, checks=UPGRADE,
                              backends=("heap",))
    result = report[check_id]
    assert result.failed and result.example is not None, f"got {result}, should fail with a record"
    data = recorded / "golden" / "1.0.0" / "data.bin"
    assert result.example.startswith(f"recorded example (golden file {data}, record "), f"got {result.example!r}"
    text = render_report(report)
    assert f"    recorded example (golden file {data}, record " in text, f"got:\n{text}"
    assert "smallest failing example" not in text, f"got:\n{text}\nshould not call a golden record the smallest example"


class UnbumpedSnapshotInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return UnbumpedSnapshot(self.width)


class UnbumpedSnapshot(FixedIntSnapshot):
    """A new layout (a field name before the width) still written as version 1, which reads the
    width first: the layout changed without a version bump."""

    def write_snapshot(self, target) -> None:
        target.write_utf("width")
        target.write_int(self.width)

    def restore_serializer(self) -> FixedIntSerializer:
        return UnbumpedSnapshotInt(self.width)


def test_a_snapshot_that_cannot_read_its_own_layout_is_told_to_bump_the_version():
    report = check_serializer(Subject(UnbumpedSnapshotInt(4), fixed_int_values(4)), examples=5, seed=3,
                              checks=("snapshot.exact_read",), backends=("heap",))
    result = report["snapshot.exact_read"]
    assert result.failed, f"got {result}, should fail: read_snapshot cannot read what write_snapshot wrote"
    for words in ("SnapshotFormatError", "get_current_version() 1", "branch on read_version",
                  "bump get_current_version() when the layout changes"):
        assert words in result.message, f"got {result.message!r}, should say {words!r}"


class LabelledInt(FixedIntSerializer):
    def snapshot_configuration(self) -> FixedIntSnapshot:
        return LabelledSnapshot(self.width)


class LabelledSnapshot(FixedIntSnapshot):
    """A label written with write_utf (Java's modified UTF-8) and read back with Python's UTF-8
    codec: a character outside the BMP does not decode."""

    LABEL = "meter \U0001d11e"

    def write_snapshot(self, target) -> None:
        target.write_utf(self.LABEL)
        target.write_int(self.width)

    def read_snapshot(self, read_version: int, source) -> None:
        source.read_fully(source.read_unsigned_short()).decode("utf-8")
        self.width = source.read_int()

    def restore_serializer(self) -> FixedIntSerializer:
        return LabelledInt(self.width)


def test_a_snapshot_reading_text_with_another_codec_is_told_to_use_read_utf():
    report = check_serializer(Subject(LabelledInt(4), fixed_int_values(4)), RunConfig(
        examples=5, seed=3, checks=("snapshot.exact_read",), backends=("heap",)))
    result = report["snapshot.exact_read"]
    assert result.failed, f"got {result}, should fail: read_snapshot cannot decode what write_utf wrote"
    for words in ("UnicodeDecodeError", "read text with read_utf where write_snapshot writes it with write_utf"):
        assert words in result.message, f"got {result.message!r}, should say {words!r}"
    assert "bump get_current_version()" not in result.message, f"got {result.message!r}, should not blame the version"

@dataclass
class Stamped:
    note: str
    ts: object
    venue: str


def test_an_example_is_shortened_field_by_field_keeping_every_field():
    import datetime

    from conformance._engine.canonical import show

    value = Stamped("n" * 200, datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc), "XNYS")
    text = show(value)
    for part in ("Stamped(note=", "ts=datetime.datetime(2000, 1, 1, 0, 0, tzinfo=datetime.timezone.utc)",
                 "venue='XNYS')"):
        assert part in text, f"got {text!r}, should show {part!r}: a long field must not hide the next ones"
    assert len(text) < 200, f"got {len(text)} characters, should shorten the 200-character note"
    from collections import namedtuple

    Row = namedtuple("Row", "note venue")
    text = show(Row("n" * 200, "XNYS"))
    assert text.startswith("Row(note=") and text.endswith("venue='XNYS')"), (
        f"got {text!r}, should show a named tuple field by field, its last field too")


class _ShortReadList(ListSerializer):
    """Reads the element count as a long (8 bytes) where an int (4) was written."""

    def deserialize(self, source):
        count = source.read_long()
        return [self.element.deserialize(source) for _ in range(count)]


def test_a_failing_deserialize_shows_the_written_bytes_and_where_reading_stopped():
    subject = Subject(_ShortReadList(LongSerializer()), st.lists(st.integers(0, 9), min_size=1, max_size=3))
    report = check_serializer(subject, examples=10, seed=3, checks=("roundtrip.bit_exact",), backends=("heap",))
    result = report["roundtrip.bit_exact"]
    assert result.failed, f"got {result}, should fail"
    assert "deserialize raised" in result.message, f"got {result.message!r}"
    # [0] as ListSerializer writes it: int count 1, then the long 0 (12 bytes); the count read
    # as a long takes 8 of them, and the first element finds 4 left.
    assert "reading stopped at byte " in result.message and "of the 12 bytes serialize wrote" in result.message, (
        f"got {result.message!r}, should say where reading stopped in the bytes written")
    assert "00 00 00 01 00 00 00 00 00 00 00 00" in result.message.replace(" | ", " "), (
        f"got {result.message!r}, should show the 12 bytes written")


def test_datetimes_a_zone_offset_apart_are_said_to_be_so():
    import datetime
    import zoneinfo

    chicago = zoneinfo.ZoneInfo("America/Chicago")
    expected = datetime.datetime(2024, 7, 1, 10, 30, tzinfo=chicago)
    message = _message({"ts": expected - datetime.timedelta(hours=1)}, {"ts": expected})
    assert "1:00:00 earlier: a time zone offset or a DST change" in message and "local time" in message, (
        f"got {message!r}, should say the values are an offset apart and suggest local time")
    naive = datetime.datetime(2024, 7, 1, 10, 30)
    message = _message(naive + datetime.timedelta(hours=5, minutes=30), naive)
    assert "5:30:00 later" in message, f"got {message!r}, should say 5:30:00 later"
    for other in (expected + datetime.timedelta(minutes=7), expected.astimezone(datetime.timezone.utc)):
        message = _message(other, expected)
        assert "time zone offset" not in message, f"got {message!r}, should not suggest an offset"


def test_a_recorded_example_shows_characters_that_do_not_print_as_escapes():
    """A golden file's record holding a C1 control (U+009D) or a NUL is shown escaped, as the
    failure's sentence shows it, not as nothing on a terminal."""
    import types

    from conformance._engine.golden import recorded_example

    rel = types.SimpleNamespace(data_path="golden/t/1.0/data.bin", values=["Tally(name='\x9d\x00', count=1)"])
    line = recorded_example(rel, 0)
    assert line.endswith("Tally(name='\\x9d\\x00', count=1)"), f"got {line!r}, should escape U+009D and NUL"
    rel.values = ["Tally(name='é', count=1)"]
    assert recorded_example(rel, 0).endswith("Tally(name='é', count=1)"), "got a printable é escaped, should keep it"


def test_damaged_bytes_are_labelled_as_bytes_not_smallest():
    from zoo import WriteCheckedPercent
    from zoo_base import PERCENTS

    report = check_serializer(Subject(WriteCheckedPercent(), PERCENTS),
                              RunConfig(examples=10, seed=SEED, checks=("roundtrip.corrupted",)))
    result = report["roundtrip.corrupted"]
    assert result.failed and result.example is not None, f"got {result}, should fail with the damaged record"
    assert result.example.startswith("failing bytes (1 byte, not shrunk): "), f"got {result.example!r}"
    text = render_report(report)
    assert "    failing bytes (1 byte, not shrunk): " in text, f"got:\n{text}"
    assert "smallest failing example" not in text, f"got:\n{text}\nshould not call damaged bytes the smallest example"


def _list_to_text_verdict(where: tuple[str, ...]) -> object:
    from conformance import Evolution
    from reference.serializers import StringSerializer

    evolution = Evolution(to=ListSerializer(StringSerializer()), expect="incompatible", reason_where=where)
    report = check_serializer(Subject(ListSerializer(LongSerializer()), st.lists(st.integers(-5, 5)),
                                      evolutions=[evolution]),
                              RunConfig(examples=5, seed=3, checks=("migration.verdict",), backends=("heap",)))
    return report["migration.verdict"]


def test_an_incompatibility_reason_must_say_where_in_order():
    """Evolution(reason_where=...): the reason ("list element: LongSerializerSnapshot cannot
    become StringSerializerSnapshot") must name each word, in order; a word it lacks, or one
    it names only before the one that must come first, fails and says which."""
    assert _list_to_text_verdict(("element",)).passed, "the reason names the list element"
    for where, missing in ((("element", "map key"), "map key"), (("Long", "element"), "element")):
        result = _list_to_text_verdict(where)
        assert result.failed, f"got {result}, should fail: the reason lacks {missing!r} in order {where}"
        for words in ("does not say where", f"got no {missing!r}", "in order"):
            assert words in result.message, f"got {result.message!r}, should say {words!r}"


@pytest.mark.parametrize(("where", "expect", "words"), [
    ("element", "incompatible", "sequence of words"),
    (("element", ""), "incompatible", "sequence of words"),
    (5, "incompatible", "sequence of words"),
    ((w for w in ("element", 5)), "incompatible", "sequence of words"),
    (("element",), "compatible_as_is", "only applies to expect='incompatible'"),
])
def test_reason_where_is_refused_when_it_cannot_apply(where, expect, words):
    from conformance import Evolution, SubjectError

    with pytest.raises(SubjectError) as caught:
        Evolution(to=LongSerializer(), expect=expect, reason_where=where)
    assert words in str(caught.value), f"got {caught.value}, should say {words!r}"


@pytest.mark.parametrize(("got", "expected", "says"), [
    (Decimal("21"), Decimal("21.00"), "a Decimal's exponent, its scale, is part of its value"),
    (datetime.datetime(2000, 1, 1, tzinfo=zoneinfo.ZoneInfo("UTC")),
     datetime.datetime(2000, 1, 1, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin")), "the same instant in another time zone"),
    (datetime.datetime(2000, 1, 1), datetime.datetime(2000, 1, 1, fold=1), "of another fold"),
    (-0.0, 0.0, "not bit for bit"),
], ids=["decimal scale", "time zone", "fold", "signed zero"])
def test_values_equal_by_python_yet_not_the_same_say_why(got, expected, says):
    from conformance._engine.canonical import describe_difference

    assert got == expected, f"the case {got!r} should be == {expected!r} (that is what it is about)"
    text = describe_difference(got, expected)
    assert says in text, f"got {text!r}, should say {says!r}"


def test_values_python_tells_apart_get_no_note():
    from conformance._engine.canonical import describe_difference

    text = describe_difference(101.5, 101.25)
    assert text == "got 101.5, should be 101.25", f"got {text!r}, should be the two values alone"


def test_a_recorded_datetime_that_differs_is_shown_whole_not_by_its_year():
    from conformance._engine.canonical import tree_difference, value_tree

    text = tree_difference(value_tree([datetime.datetime(2000, 1, 1)]),
                           value_tree([datetime.datetime(1999, 12, 31, 20, 30)]), "its value state")
    assert text == ('its value state[0]: ["datetime:datetime", [1999, 12, 31, 20, 30, 0, 0], 0, null], should be '
                    '["datetime:datetime", [2000, 1, 1, 0, 0, 0, 0], 0, null]'), f"got {text!r}"
    assert tree_difference(value_tree([5]), value_tree([6])) == "[0]: 6, should be 5", "a number stays itself"


class _FlagReadBackwards(LongSerializer):
    """A nullable long whose presence flag is read the wrong way round: the zero it creates
    (0) reads back as None, its 8 bytes left unread."""

    def serialize(self, value, target):
        target.write_boolean(value is not None)
        if value is not None:
            target.write_long(value)

    def deserialize(self, source):
        absent = source.read_boolean()
        return None if absent else source.read_long()


def test_a_zero_that_does_not_read_back_is_named_with_its_value():
    subject = Subject(_FlagReadBackwards(), st.none() | st.integers(-(2**63), 2**63 - 1))
    report = check_serializer(subject, examples=5, seed=3, checks=("roundtrip.create_instance",), backends=("heap",))
    (result,) = [r for r in report.results if r.id == "roundtrip.create_instance"]
    for part in ("create_instance()'s value 0", "left 8 of 9 bytes unread", "it read None",
                 "reading stopped at byte 1 of the 9 bytes", "compare each read with its write"):
        assert part in result.message, f"got {result.message!r}, should say {part!r}"


class _NarrowWrite(LongSerializer):
    """A long written in 4 bytes and read in 8: each record reads past what was written."""

    def serialize(self, value, target):
        target.write_int(value)


def test_a_read_past_what_was_written_says_to_compare_reads_with_writes():
    subject = Subject(_NarrowWrite(), st.integers(-(2**31), 2**31 - 1))
    report = check_serializer(subject, examples=5, seed=3, checks=("roundtrip.bit_exact",), backends=("heap",))
    (result,) = [r for r in report.results if r.id == "roundtrip.bit_exact"]
    for part in ("EndOfDataError", "reads past what serialize wrote", "read_long for write_long, not for write_int"):
        assert part in result.message, f"got {result.message!r}, should say {part!r}"
