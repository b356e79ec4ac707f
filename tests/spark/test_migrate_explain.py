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


def test_explain_refuses_what_the_job_refuses_and_says_it_the_same_way(source, tmp_path, capsys):
    report = str(tmp_path / "plan.json")
    status = _cli("migrate", source, "--serializers", "spark_support:new_descriptors", "--explain", "--json", report)
    err = capsys.readouterr().err
    assert status == 1, f"got exit {status}, should be 1 (row evolution refused without the option)"
    assert "pass --schema-evolution" in err and "state.schema-evolution.enable" not in err, (
        f"got {err!r}, should name the CLI's flag, not the config option")
    data = json.loads(open(report).read())
    verdicts = {s["name"]: s["verdict"] for s in data["refused"]}
    assert data["explain"] and verdicts and set(verdicts.values()) == {"needs --schema-evolution"}, (
        f"got {data}, should list each refused state as needing --schema-evolution")


def test_migrate_without_out_or_explain_is_a_usage_error(source, capsys):
    status = _cli("migrate", source, "--serializers", "spark_support:new_descriptors")
    assert status == 2, f"got exit {status}, should be 2 (neither --out nor --explain)"
    assert "--out" in capsys.readouterr().err


def test_a_migration_refused_for_want_of_schema_evolution_says_the_flag_and_writes_its_json(source, tmp_path, capsys):
    out, report = str(tmp_path / "out"), str(tmp_path / "report.json")
    status = _cli("migrate", source, "--serializers", "spark_support:new_descriptors", "--out", out, "--json", report)
    err = capsys.readouterr().err
    assert status == 1, f"got exit {status}, should be 1 (refused): {err}"
    assert "pass --schema-evolution" in err, f"got {err!r}, should name the CLI's --schema-evolution"
    assert not os.path.exists(out), "got an output savepoint, should write none when refused"
    data = json.loads(open(report).read())
    got = {s["name"]: s["verdict"] for s in data["refused"]}
    want = dict.fromkeys(("profile", "events", "by-slot"), "needs --schema-evolution")
    assert got == want, f"got refused states {got}, should be {want} [{report}]"
    assert "pass --schema-evolution" in data["message"], f"got {data['message']!r}, should name the flag"


def test_an_incompatible_migration_writes_its_refusal_as_json(source, tmp_path, capsys):
    report = str(tmp_path / "report.json")
    status = _cli("migrate", source, "--serializers", "spark_support:broken_descriptors", "--schema-evolution",
                  "--out", str(tmp_path / "out"), "--json", report)
    assert status == 1, f"got exit {status}, should be 1 (incompatible): {capsys.readouterr().err}"
    data = json.loads(open(report).read())
    got = {s["name"]: s["verdict"] for s in data["refused"]}
    want = dict.fromkeys(("profile", "events", "by-slot"), "incompatible")
    assert got == want, f"got refused states {got}, should be {want} [{report}]"
    assert all("score" in s["message"] for s in data["refused"]), f"got {data['refused']}, should name the field"


def test_an_output_uri_missing_a_slash_is_refused(source, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status = _cli("migrate", source, "--serializers", "spark_support:new_descriptors", "--schema-evolution",
                  "--out", "s3:/bucket/x")
    err = capsys.readouterr().err
    assert status == 2, f"got exit {status}, should be 2 (unusable output): {err}"
    assert "did you mean 's3://bucket/x'" in err, f"got {err!r}, should suggest the URI"
    assert os.listdir(tmp_path) == [], f"got local entries {os.listdir(tmp_path)}, should be none"
