"""``conformance migrate --explain``: each state's verdict and migration plan, without Spark."""

from __future__ import annotations

import json
import os

import pytest
import spark_support as sup


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("history") / "savepoint")
    sup.write_history(path, 40)
    return path


def _cli(*argv):
    from conformance.cli import main

    return main(list(argv))


def test_explain_shows_each_states_plan_and_runs_nothing(source, tmp_path, capsys):
    out = str(tmp_path / "never")
    report = str(tmp_path / "plan.json")
    status = _cli("migrate", source, "--serializers", "spark_support:new_descriptors", "--explain",
                  "--schema-evolution", "--out", out, "--json", report)
    text = capsys.readouterr().out
    assert status == 0, f"got exit {status}, should be 0: {text}"
    assert not os.path.exists(out), "got an output savepoint, should run nothing with --explain"
    for state, kind in (("profile", "value"), ("events", "list"), ("by-slot", "map")):
        assert f"state {state!r} ({kind}): compatible_after_migration" in text, f"got {text}, should show {state}"
    # the row plan: kept fields copied as bytes (the nested list too), the added one null
    for line in ("'extra': added, null", "'tags' (field 3 before): copy bytes (ListSerializer",
                 "'score' (field 2 before): copy bytes (DoubleSerializer()", "reordered",
                 "per element of Flink's delimited list layout", "null values stay null"):
        assert line in text, f"got {text}, should contain {line!r}"
    data = json.loads(open(report).read())
    got = sorted(s["name"] for s in data["states"])
    assert got == ["by-slot", "events", "profile"], f"got {got}, should list every state"


def test_explain_refuses_what_the_job_refuses(source, capsys):
    status = _cli("migrate", source, "--serializers", "spark_support:new_descriptors", "--explain")
    assert status == 1, f"got exit {status}, should be 1 (row evolution refused without the option)"
    assert "state.schema-evolution.enable" in capsys.readouterr().err


def test_migrate_without_out_or_explain_is_a_usage_error(source, capsys):
    status = _cli("migrate", source, "--serializers", "spark_support:new_descriptors")
    assert status == 2, f"got exit {status}, should be 2 (neither --out nor --explain)"
    assert "--out" in capsys.readouterr().err
