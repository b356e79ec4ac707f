"""How families are scheduled: a family declares its lane and the work done ahead for it
(``registry.declare_family``); the scheduler and the registry know no family's checks or
module by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance._engine import registry

ROOT = Path(__file__).resolve().parents[2]


def test_the_spark_family_declares_its_lane_and_its_work_ahead():
    registry.load_families(spark=True)
    declared = registry.family_declaration("spark")
    assert declared.lane == "spark", f"got lane {declared.lane!r}, should be 'spark'"
    assert callable(declared.prepare_ahead) and callable(declared.take_ahead), (
        f"got {declared}, should write the large history ahead and take it in the Spark lane")
    for family in ("roundtrip", "backends", "table"):
        got = registry.family_declaration(family)
        assert got.lane is None and got.prepare_ahead is None, f"got {got}, should run in the first lane"


def test_checks_of_the_spark_lane_are_selected_only_with_a_master():
    registry.load_families(spark=True)
    without = {c.family for c in registry.checks_for("serializer")}
    with_master = {c.family for c in registry.checks_for("serializer", spark=True)}
    assert "spark" not in without and "spark" in with_master, (
        f"got families {sorted(without)} without a master and {sorted(with_master)} with one, "
        "should add the spark family only with a master")


@pytest.mark.parametrize("kwargs, says", [
    ({"lane": "gpu"}, "lane 'gpu' is not one of"),
    ({"prepare_ahead": lambda ctx, directory: None}, "both prepare_ahead and take_ahead"),
])
def test_a_malformed_declaration_is_refused(kwargs, says):
    with pytest.raises(ValueError) as info:
        registry.declare_family("spark", **kwargs)
    assert says in str(info.value), f"got {info.value}, should say {says!r}"
    assert registry.family_declaration("spark").lane in (None, "spark"), "a refused declaration should change nothing"


def test_an_unknown_family_cannot_be_declared():
    with pytest.raises(ValueError) as info:
        registry.declare_family("sparks", lane="spark")
    assert "'sparks' is not one of" in str(info.value), f"got {info.value}"


def test_the_scheduler_and_the_registry_name_no_family_check_or_module():
    for name in ("schedule.py", "registry.py"):
        text = (ROOT / "conformance" / "_engine" / name).read_text(encoding="utf-8")
        for word in ("spark.history", "_checks.spark", "_checks.table", "history_ahead"):
            assert word not in text, f"got {word!r} in _engine/{name}, should come from the family's declaration"
