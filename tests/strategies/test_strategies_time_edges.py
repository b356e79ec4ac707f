"""strategies.amplified at datetime and time parts: a zone's daylight-saving transitions (the
repeated wall times with fold 0 and 1, the seconds around and inside a spring-forward gap), fold
flipped where the value rule counts it, and the epoch's edges. Expected wall times and offsets
are New York's and Lord Howe's published rules, written out here."""

from __future__ import annotations

import dataclasses
import datetime
import zoneinfo

from reference import values_equal
from strategies._amplify import Amplified
from strategies._instants import RANGE, STAND_IN_ZONES, time_edges

NEW_YORK = zoneinfo.ZoneInfo("America/New_York")
UTC = datetime.timezone.utc
HOUR = datetime.timedelta(hours=1)


@dataclasses.dataclass
class Trade:
    id: int
    ts: datetime.datetime


def _by_value(edges):
    return {(v.replace(tzinfo=None), v.fold): (kind, what, v) for kind, what, v in edges}


def test_a_fall_back_gives_the_repeated_wall_time_with_both_folds():
    # New York leaves daylight time on 2026-11-01 at 02:00 EDT: 01:00-02:00 happens twice.
    edges = _by_value(time_edges(datetime.datetime(2026, 6, 1, 12, 0, 0, 250_000, tzinfo=NEW_YORK)))
    first = edges.get((datetime.datetime(2026, 11, 1, 1, 30, 0, 250_000), 0))
    second = edges.get((datetime.datetime(2026, 11, 1, 1, 30, 0, 250_000), 1))
    assert first and second, f"got {sorted(edges)}, should hold 2026-11-01 01:30:00.25 with fold 0 and fold 1"
    assert first[2].utcoffset() == -4 * HOUR and second[2].utcoffset() == -5 * HOUR, (
        f"got offsets {first[2].utcoffset()} and {second[2].utcoffset()}, should be EDT then EST")
    assert "the ambiguous 2026-11-01 01:30:00.250000 America/New_York, fold=1" in second[1], f"got {second[1]!r}"
    assert first[0] == second[0] == "", f"got kinds {first[0]!r}, {second[0]!r}, should be the site's own"


def test_a_spring_forward_gives_the_seconds_around_the_gap_and_a_wall_time_inside_it():
    # New York enters daylight time on 2026-03-08 at 02:00 EST: 02:00-03:00 does not exist.
    edges = _by_value(time_edges(datetime.datetime(2026, 6, 1, 12, tzinfo=NEW_YORK)))
    before = edges.get((datetime.datetime(2026, 3, 8, 1, 59, 59), 0))
    after = edges.get((datetime.datetime(2026, 3, 8, 3, 0), 0))
    assert before and after, f"got {sorted(edges)}, should hold 01:59:59 and 03:00 of 2026-03-08"
    assert before[2].utcoffset() == -5 * HOUR and after[2].utcoffset() == -4 * HOUR, "got the wrong sides of the gap"
    inside = [edges.get((datetime.datetime(2026, 3, 8, 2, 30), fold)) for fold in (0, 1)]
    assert all(inside), f"got {sorted(edges)}, should hold the nonexistent 02:30 with fold 0 and fold 1"
    assert not values_equal(inside[0][2], inside[1][2]), "got equal folds in the gap, should be two values"
    assert "nonexistent" in inside[1][1], f"got {inside[1][1]!r}"


def test_a_half_hour_shift_is_found_to_the_second():
    # Lord Howe Island: +11 in summer, +10:30 in winter; it falls back on 2026-04-05 at 02:00.
    zone = zoneinfo.ZoneInfo("Australia/Lord_Howe")
    edges = _by_value(time_edges(datetime.datetime(2026, 1, 10, tzinfo=zone)))
    folds = [edges.get((datetime.datetime(2026, 4, 5, 1, 45), fold)) for fold in (0, 1)]
    assert all(folds), f"got {sorted(edges)}, should hold the repeated 01:45 of 2026-04-05 with both folds"


def test_a_zone_without_transitions_grows_into_a_stand_in_and_says_so():
    drawn = datetime.datetime(2000, 1, 1, tzinfo=zoneinfo.ZoneInfo("UTC"))
    edges = time_edges(drawn, 0)
    zones = {v.tzinfo.key for kind, _, v in edges if kind != RANGE}
    assert zones == {STAND_IN_ZONES[0]}, f"got zones {zones}, should be the stand-in {STAND_IN_ZONES[0]}"
    assert any(v.fold == 1 and v.tzinfo.key == "America/New_York" for _, _, v in edges), "got no fold=1 variant"
    assert all("in place of the drawn zone UTC" in what for kind, what, _ in edges if kind != RANGE), (
        f"got {[w for _, w, _ in edges]}, should name the drawn zone each stand-in replaces")
    assert {v.tzinfo.key for kind, _, v in edges if kind == RANGE} == {"UTC"}, "got range edges out of the drawn zone"


def test_a_fixed_offset_has_no_folds_and_no_transitions():
    drawn = datetime.datetime(2000, 1, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=9)))
    edges = time_edges(drawn)
    assert edges and all(kind == RANGE for kind, _, _ in edges), f"got {[(k, w) for k, w, _ in edges]}, should be range edges only"
    assert all(v.tzinfo is drawn.tzinfo and v.fold == 0 for _, _, v in edges), "got another zone or a fold"


def test_a_naive_value_gets_fold_flipped_and_the_epoch_edges_as_its_utc_wall_clock():
    drawn = datetime.datetime(2000, 1, 1, 0, 0, 0, 1000)
    edges = time_edges(drawn)
    flipped = [v for kind, _, v in edges if kind != RANGE]
    assert flipped == [drawn.replace(fold=1)] and flipped[0].fold == 1, f"got {flipped}, should be the drawn value, fold=1"
    walls = {v for kind, _, v in edges if kind == RANGE}
    expected = {datetime.datetime(1970, 1, 1, 0, 0, 0, 1000), datetime.datetime(1969, 12, 31, 23, 59, 59, 1000),
                datetime.datetime(2038, 1, 19, 3, 14, 7, 1000), datetime.datetime(2038, 1, 19, 3, 14, 8, 1000),
                datetime.datetime(1901, 12, 13, 20, 45, 52, 1000), datetime.datetime(2262, 4, 11, 23, 47, 16, 1000),
                datetime.datetime(1677, 9, 21, 0, 12, 43, 1000)}
    assert expected <= walls, f"got {sorted(walls)}, should hold {sorted(expected - walls)}"


def test_an_aware_value_keeps_its_zone_at_the_epoch_edges():
    drawn = datetime.datetime(2000, 7, 1, tzinfo=NEW_YORK)
    epoch = [v for kind, what, v in time_edges(drawn) if kind == RANGE and what.startswith("set to epoch second 0 ")]
    assert epoch and epoch[0].tzinfo is NEW_YORK, f"got {epoch}, should be epoch 0 in New York"
    assert epoch[0] == datetime.datetime(1970, 1, 1, tzinfo=UTC), f"got {epoch[0]}, should be the instant 0"
    assert epoch[0].replace(tzinfo=None) == datetime.datetime(1969, 12, 31, 19), f"got {epoch[0]}, should be 19:00 EST"


def test_times_get_fold_only_where_the_rule_counts_it():
    naive = [(k, v) for k, _, v in time_edges(datetime.time(3, 4, 5, 6))]
    assert ("", datetime.time(3, 4, 5, 6, fold=1)) in naive, f"got {naive}, should flip a naive time's fold"
    assert (RANGE, datetime.time(0, 0, 0, 6)) in naive and (RANGE, datetime.time(23, 59, 59, 6)) in naive, f"got {naive}"
    aware = time_edges(datetime.time(3, 4, tzinfo=NEW_YORK))
    assert all(v.fold == 0 for _, _, v in aware), f"got {aware}, should not flip fold where it has no meaning"


def test_amplified_grows_one_time_part_and_names_it():
    drawn = Amplified([Trade(7, datetime.datetime(2026, 6, 1, tzinfo=NEW_YORK))], 0, 0, False, False)
    grown = [(kind, what, v) for kind, what, v in drawn.variants() if kind in ("datetime", RANGE)]
    assert grown, f"got {list(drawn.variants())[:3]}, should grow value[0].ts"
    assert all(what.startswith("value[0].ts (datetime) ") for _, what, _ in grown), f"got {[w for _, w, _ in grown]}"
    assert all(type(v) is list and type(v[0]) is Trade and v[0].id == 7 for _, _, v in grown), "got the value's shape changed"
    folds = [v[0].ts for kind, what, v in grown if "ambiguous" in what]
    assert [t.fold for t in folds] == [0, 1], f"got {folds}, should be the repeated wall time with fold 0 then 1"
    huge = Amplified([Trade(7, datetime.datetime(2026, 6, 1, tzinfo=NEW_YORK))], 0, 0, False, True)
    assert not [k for k, _, _ in huge.variants() if k in ("datetime", RANGE)], "got time edges in a huge example"
