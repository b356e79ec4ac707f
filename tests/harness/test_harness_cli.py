"""``conformance certify``: targets, options, exit codes 0/1/2, the JSON shape, golden files."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from conformance.cli import main

TARGETS = textwrap.dedent('''
    from hypothesis import strategies as st
    from conformance import Subject, Evolution
    from reference.serializers import IntSerializer, LongSerializer, StringSerializer

    LONG_VALUES = st.integers(-2**63, 2**63 - 1)
    GOOD = Subject(LongSerializer(), LONG_VALUES, evolutions=[Evolution(IntSerializer(), "incompatible")])
    SERIALIZER = LongSerializer()
    FACTORY = LongSerializer


    class DropsLast(StringSerializer):
        def serialize(self, value, target):
            super().serialize(value[:-1] if value else value, target)


    BROKEN = Subject(DropsLast(), st.text())
    GOLDEN = Subject(LongSerializer(), LONG_VALUES, golden="golden/long", release="1.0")
    NOT_A_SUBJECT = 42
''')

FAST = ["--examples", "10", "--seed", "7", "--backend", "heap"]


@pytest.fixture
def targets(tmp_path, monkeypatch):
    (tmp_path / "cli_targets.py").write_text(TARGETS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("cli_targets", None)
    yield tmp_path
    sys.modules.pop("cli_targets", None)


def test_a_good_subject_certifies_with_exit_0_and_documented_json(targets, capsys):
    out = targets / "result.json"
    status = main(["certify", "cli_targets:GOOD", *FAST, "--json", str(out), "--check", "roundtrip",
                   "--check", "snapshot", "--check", "migration"])
    assert status == 0, f"got exit {status}, should be 0; output:\n{capsys.readouterr().out}"
    data = json.loads(out.read_text())
    assert set(data) == {"subject", "certified", "checks"} and data["certified"] is True, f"got {data}"
    assert data["subject"] == "cli_targets:GOOD", f"got subject {data['subject']!r}"
    ids = [c["id"] for c in data["checks"]]
    assert "roundtrip.bit_exact" in ids and "migration.verdict" in ids, f"got ids {ids}"
    assert all(set(c) == {"id", "family", "status", "message", "example"} for c in data["checks"]), data
    text = capsys.readouterr().out
    assert "cli_targets:GOOD: CERTIFIED" in text and "seed 7" in text, f"got:\n{text}"


def test_the_certificate_records_seed_versions_and_subject(targets):
    out = targets / "certificate.json"
    assert main(["certify", "cli_targets:GOOD", *FAST, "--check", "api", "--certificate", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["seed"] == 7 and data["subject"] == "cli_targets:GOOD", f"got {data}"
    assert {"python", "hypothesis", "state-conformance"} <= set(data["versions"]), f"got {data['versions']}"
    assert data["profile"] in ("dev", "ci", "certify") and data["examples"] == 10, f"got {data}"


def test_a_violation_exits_1_naming_check_example_and_sentence(targets, capsys):
    status = main(["certify", "cli_targets:BROKEN", *FAST, "--check", "roundtrip"])
    text = capsys.readouterr().out
    assert status == 1, f"got exit {status}, should be 1; output:\n{text}"
    assert "FAILED roundtrip.bit_exact [roundtrip]: reading back what serialize wrote got '', should be '0'" in text, text
    assert "smallest failing example: '0'" in text, text


def test_a_serializer_target_needs_values(targets, capsys):
    assert main(["certify", "cli_targets:SERIALIZER", *FAST, "--check", "api"]) == 2
    assert "--values" in capsys.readouterr().err
    status = main(["certify", "cli_targets:FACTORY", "--values", "cli_targets:LONG_VALUES", *FAST, "--check", "roundtrip"])
    assert status == 0, f"got exit {status}, should certify a factory with --values"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["certify"], "give a TARGET"),
        (["certify", "cli_targets:GOOD", "--builtins"], "not both"),
        (["certify", "no_such_module:X"], "cannot import"),
        (["certify", "cli_targets:MISSING"], "has no attribute"),
        (["certify", "cli_targets"], "module:attribute"),
        (["certify", "cli_targets:NOT_A_SUBJECT", "--values", "cli_targets:LONG_VALUES"], "zero-argument factory"),
    ],
)
def test_unusable_targets_exit_2_with_a_reason(targets, capsys, argv, words):
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2, f"got exit {status}, should be 2"
    assert words in err, f"got stderr {err!r}, should mention {words!r}"


def test_bad_options_exit_2(targets, capsys):
    assert main(["certify", "cli_targets:GOOD", "--backend", "disk"]) == 2
    assert main(["certify", "cli_targets:GOOD", "--examples", "0"]) == 2
    assert main(["frobnicate"]) == 2


def test_update_golden_records_then_reads_back(targets):
    argv = ["certify", "cli_targets:GOLDEN", *FAST, "--check", "versioning"]
    assert main([*argv, "--update-golden"]) == 0
    manifest = json.loads((targets / "golden" / "long" / "1.0" / "manifest.json").read_text())
    assert manifest["release"] == "1.0" and manifest["records"] == len(manifest["values"]) > 0, manifest
    out = targets / "again.json"
    assert main([*argv, "--json", str(out)]) == 0
    status = {c["id"]: c["status"] for c in json.loads(out.read_text())["checks"]}
    assert status["versioning.golden"] == "passed", f"got {status}"


def test_python_dash_m_runs_the_same_command(targets):
    proc = subprocess.run([sys.executable, "-m", "conformance", "certify", "cli_targets:GOOD", *FAST,
                           "--check", "api"], capture_output=True, text=True, cwd=targets)
    assert proc.returncode == 0, f"got exit {proc.returncode}: {proc.stderr}"
    assert "cli_targets:GOOD: CERTIFIED" in proc.stdout, f"got {proc.stdout!r}"


@pytest.mark.slow
def test_builtins_certify(tmp_path):
    out = tmp_path / "builtins.json"
    proc = subprocess.run([sys.executable, "-m", "conformance", "certify", "--builtins", "--examples", "20",
                           "--seed", "1", "--json", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, f"got exit {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    data = json.loads(out.read_text())
    assert set(data) == {"certified", "subjects"} and data["certified"] is True
    names = {s["subject"] for s in data["subjects"]}
    assert {"builtin:long", "builtin:row", "builtin:pojo", "builtin:enum", "builtin:map"} <= names, names


def test_list_checks_names_every_check_with_its_family(capsys):
    from conformance._registry import all_checks

    assert main(["certify", "--list-checks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = {line.split()[0]: line.split()[1] for line in lines}
    expected = {c.id: c.family for c in all_checks() if c.family not in ("spark", "table")}
    assert listed == expected, f"got {listed}, should list {expected}"


def test_spark_entries_option_reaches_the_spark_family(monkeypatch):
    from types import SimpleNamespace

    from conformance._output import _options
    from conformance._spark.checks import DEFAULT_ENTRIES, history_entries
    from conformance.cli import build_parser

    monkeypatch.delenv("CONFORMANCE_SPARK_ENTRIES", raising=False)
    args = build_parser().parse_args(["certify", "--builtins", "--spark-entries", "1234"])
    options = _options(args, [])
    got = history_entries(SimpleNamespace(options=options))
    assert got == 1234, f"got {got} entries, should be the 1234 given by --spark-entries"
    plain = _options(build_parser().parse_args(["certify", "--builtins"]), [])
    got = history_entries(SimpleNamespace(options=plain))
    assert got == DEFAULT_ENTRIES, f"got {got} entries, should default to {DEFAULT_ENTRIES}"


@pytest.mark.parametrize("select, expected", [(None, True), (["roundtrip", "api"], False), (["spark"], True),
                                              (["spark.history"], True), (["migration.verdict"], False)])
def test_certify_splits_into_two_lanes_only_when_a_spark_check_is_selected(select, expected):
    # With --spark but no spark check selected, nothing needs the JVM: no second lane, no Spark.
    from conformance._output import _selects_spark

    got = _selects_spark(select)
    assert got is expected, f"got {got} for --check {select}, should be {expected}"
