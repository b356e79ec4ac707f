"""``conformance certify``: targets, options, exit codes 0/1/2, the JSON shape, golden files."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import pytest

from conformance import RunConfig
from conformance._engine.runner import Runner
from conformance.cli import load_target, main

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
    assert {"subject", "certified", "checks"} <= set(data) and data["certified"] is True, f"got {data}"
    assert data["subject"] == "cli_targets:GOOD", f"got subject {data['subject']!r}"
    ids = [c["id"] for c in data["checks"]]
    assert "roundtrip.bit_exact" in ids and "migration.verdict" in ids, f"got ids {ids}"
    assert all(set(c) == {"id", "family", "status", "message", "example", "seconds"} for c in data["checks"]), data
    text = capsys.readouterr().out
    assert "cli_targets:GOOD: CERTIFIED" in text and "seed 7" in text, f"got:\n{text}"


def test_the_certificate_records_seed_versions_and_subject(targets):
    out = targets / "certificate.json"
    assert main(["certify", "cli_targets:GOOD", *FAST, "--check", "roundtrip.api_valid", "--json", str(out)]) == 0
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
    assert main(["certify", "cli_targets:SERIALIZER", *FAST, "--check", "roundtrip.api_valid"]) == 2
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
                           "--check", "roundtrip.api_valid"], capture_output=True, text=True, cwd=targets)
    assert proc.returncode == 0, f"got exit {proc.returncode}: {proc.stderr}"
    assert "cli_targets:GOOD: CERTIFIED" in proc.stdout, f"got {proc.stdout!r}"


def test_output_closed_early_stops_quietly_with_the_sigpipe_status():
    """``conformance certify --builtins | head -1``: no traceback when head goes away."""
    proc = subprocess.Popen([sys.executable, "-m", "conformance", "certify", "--builtins", "--examples", "5",
                             "--seed", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    error = proc.stderr.read()
    status = proc.wait(timeout=300)
    assert "CERTIFIED" in first, f"got the first line {first!r}, should be a subject's verdict"
    assert (status, "Traceback" in error) == (141, False), (
        f"got exit {status} and stderr {error[-800:]!r}, should be 141 (as SIGPIPE) and no traceback")


@pytest.mark.slow
def test_builtins_certify(tmp_path):
    out = tmp_path / "builtins.json"
    proc = subprocess.run([sys.executable, "-m", "conformance", "certify", "--builtins", "--examples", "20",
                           "--seed", "1", "--json", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, f"got exit {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
    data = json.loads(out.read_text())
    assert set(data) == {"format", "certified", "subjects"} and data["certified"] is True
    names = {s["subject"] for s in data["subjects"]}
    assert {"builtin:long", "builtin:row", "builtin:pojo", "builtin:enum", "builtin:map"} <= names, names


def test_list_checks_names_every_check_with_its_family(capsys):
    from conformance._engine.registry import all_checks

    assert main(["certify", "--list-checks"]) == 0
    lines = capsys.readouterr().out.splitlines()
    listed = {line.split()[0]: line.split()[1] for line in lines}
    expected = {c.id: c.family for c in all_checks() if c.family != "table"}
    assert listed == expected, f"got {listed}, should list {expected}"
    spark = [line for line in lines if line.split()[1] == "spark"]
    assert spark and all(line.endswith("(runs with --spark MASTER)") for line in spark), (
        f"got {spark}, should list the spark family and say it runs with --spark")

    renamed = {line.split()[0]: re.search(r"\(formerly (\S+), accepted until the next release\)", line)
               for line in lines}
    formerly = {new: found.group(1) for new, found in renamed.items() if found}
    assert formerly == {"roundtrip.api_valid": "api.valid", "roundtrip.create_instance": "api.create_instance",
                        "roundtrip.domain_refused": "domain.refused",
                        "backends.state_untouched": "domain.state_untouched",
                        "versioning.upgrade_snapshot": "upgrade.snapshot",
                        "versioning.upgrade_restore": "upgrade.restore",
                        "versioning.upgrade_verdict": "upgrade.verdict",
                        "versioning.upgrade_records": "upgrade.records",
                        "versioning.upgrade_backends": "upgrade.backends"}, (
        f"got {formerly}, should say which old id each renamed check replaces")


def test_old_check_ids_run_with_one_line_on_stderr_each(targets, capsys):
    out = targets / "certificate.json"
    status = main(["certify", "cli_targets:GOOD", *FAST, "--check", "api", "--check", "upgrade.restore",
                   "--expect-failure", "domain.refused=not really", "--json", str(out)])
    captured = capsys.readouterr()
    assert status == 0, f"got exit {status}, should be 0:\n{captured.out}{captured.err}"
    told = [line for line in captured.err.splitlines() if line.startswith("check id")]
    assert told == [
        "check id prefix 'api' is now 'roundtrip.api_valid', 'roundtrip.create_instance'; the old prefix is "
        "accepted until the next release",
        "check id 'upgrade.restore' is now 'versioning.upgrade_restore'; the old id is accepted until the next "
        "release",
        "check id 'domain.refused' is now 'roundtrip.domain_refused'; the old id is accepted until the next release",
    ], f"got {told}"
    ids = [c["id"] for c in json.loads(out.read_text())["checks"]]
    assert ids[:2] == ["roundtrip.api_valid", "roundtrip.create_instance"] and "versioning.upgrade_restore" in ids, (
        f"got {ids}, should carry the new ids")


def test_spark_entries_option_reaches_the_spark_family(targets, monkeypatch):
    from conformance._checks.spark import DEFAULT_ENTRIES, history_entries
    from conformance._engine.runner import CheckContext
    from conformance.cli import build_parser
    from conformance.cli._certify import run_config

    monkeypatch.delenv("CONFORMANCE_SPARK_ENTRIES", raising=False)
    for argv, expected in ((["--spark-entries", "1234"], 1234), ([], DEFAULT_ENTRIES)):
        args = build_parser().parse_args(["certify", "cli_targets:GOOD", "--spark", "local[1]", *argv])
        runner = Runner(load_target("cli_targets:GOOD"), run_config(args))
        got = history_entries(CheckContext(runner))
        assert got == expected, f"got {got} entries for {argv}, should be {expected}"


@pytest.mark.parametrize("select, expected", [(None, True), (["roundtrip", "snapshot"], False), (["spark"], True),
                                              (["spark.history"], True), (["migration.verdict"], False)])
def test_a_spark_run_selects_spark_checks_only_when_asked(targets, select, expected):
    # With --spark but no spark check selected, nothing needs the JVM: no second lane, no Spark.
    runner = Runner(load_target("cli_targets:GOOD"), RunConfig(spark="local[1]"))
    got = any(c.family == "spark" for c in runner.checks(select))
    assert got is expected, f"got {got} for --check {select}, should be {expected}"


# ---- one CLI: the same error cases, options and exit statuses for every subcommand ------------
TABLE_TARGET = textwrap.dedent('''
    from hypothesis import strategies as st
    from conformance import TableSubject
    from reference.table import RemoteTable

    TABLE = TableSubject(lambda read, write: RemoteTable(read, write), st.integers(0, 3), st.integers(0, 5),
                         st.integers(-2, 2), lambda value, update: value + update)
''')


@pytest.fixture
def table_target(targets):
    (targets / "cli_tables.py").write_text(TABLE_TARGET)
    sys.modules.pop("cli_tables", None)
    yield targets
    sys.modules.pop("cli_tables", None)


SUBCOMMAND_ERRORS = [
    # (argv, words the one-sentence error must contain)
    (["certify", "no_such_module_xyz:X"], "cannot import 'no_such_module_xyz'"),
    (["certify", "cli_targets:GOOD", "--check", "roundtrip.bitexact"], "did you mean 'roundtrip.bit_exact'"),
    (["certify", "cli_targets:GOOD", "--check", "roundtrip", "--expect-failure", "roundtrip.bit_exakt=x"],
     "did you mean 'roundtrip.bit_exact'"),
    (["certify", "cli_targets:GOOD", "--json", "missing/x.json"], "does not exist"),
    (["certify", "cli_targets:GOOD", "--import", "no_such_module_xyz"], "cannot import 'no_such_module_xyz'"),
    (["certify-table", "no_such_module_xyz:X"], "cannot import 'no_such_module_xyz'"),
    (["certify-table", "cli_tables:TABLE", "--check", "table.sequentail"], "did you mean 'table.sequential'"),
    (["certify-table", "cli_tables:TABLE", "--json", "missing/x.json"], "does not exist"),
    (["migrate", "sp", "--serializers", "no_such_module_xyz:X", "--out", "o"], "cannot import 'no_such_module_xyz'"),
    (["migrate", "sp", "--serializers", "cli_targets:GOOD", "--out", "o", "--json", "missing/x.json"],
     "does not exist"),
    (["migrate", "sp", "--serializers", "x:y", "--out", "o", "--import", "no_such_module_xyz"],
     "cannot import 'no_such_module_xyz'"),
    (["verify", "sp", "--import", "no_such_module_xyz"], "cannot import 'no_such_module_xyz'"),
    (["verify", "sp", "--json", "missing/x.json"], "does not exist"),
    (["verify", "no_such_savepoint"], "SAVEPOINT no_such_savepoint"),
    # a target of the wrong kind says which command or form it needs
    (["certify", "cli_tables:TABLE"], "`conformance certify-table cli_tables:TABLE`"),
    (["certify", "cli_targets:FACTORY"], "the serializer class LongSerializer, not an instance"),
    (["certify", "cli_targets:FACTORY"], "Subject(LongSerializer(), values=...)"),
    (["certify", "cli_targets.py:GOOD"], "should be a dotted module path"),
    (["certify", "sub/cli_targets.py:GOOD"], "(e.g. 'sub.cli_targets')"),
    (["certify-table", "cli_tables:TABLE", "--check", "table.sequentail"], "`conformance certify-table --list-checks`"),
]


@pytest.mark.parametrize(("argv", "words"), SUBCOMMAND_ERRORS, ids=[" ".join(a) for a, _ in SUBCOMMAND_ERRORS])
def test_every_subcommand_refuses_unusable_input_with_exit_2_and_one_sentence(table_target, capsys, argv, words):
    status = main(argv)
    captured = capsys.readouterr()
    assert status == 2, f"got exit {status}, should be 2; stderr:\n{captured.err}"
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"conformance {argv[0]}: error: "), (
        f"got stderr {captured.err!r}, should be one line 'conformance {argv[0]}: error: ...'")
    assert words in lines[0], f"got {lines[0]!r}, should mention {words!r}"
    assert "Traceback" not in captured.err + captured.out, "got a traceback, should be one sentence"


def test_a_module_whose_own_import_fails_shows_where_not_the_directory_hint(targets, capsys):
    (targets / "cli_broken.py").write_text("from hypothesis import strategies as st\n"
                                            "import no_such_dependency_xyz\n")
    (targets / "cli_raising.py").write_text("X = 1\nY = 1 / 0\n")
    for module, error in (("cli_broken", "ModuleNotFoundError: No module named 'no_such_dependency_xyz'"),
                          ("cli_raising", "ZeroDivisionError")):
        sys.modules.pop(module, None)
        status = main(["certify", f"{module}:SUBJECT"])
        err = capsys.readouterr().err
        assert status == 2, f"got exit {status}, should be 2; stderr {err!r}"
        where = f"{targets / module}.py:2"
        for words in (error, where):
            assert words in err, f"got stderr {err!r}, should say {words!r}"
        assert "run from the directory" not in err, (
            f"got stderr {err!r}, should not say to run from another directory: the module was found")


def test_version_prints_the_package_python_and_library_versions_in_one_line(capsys):
    import platform

    from hypothesis import __version__ as hypothesis_version

    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    lines = out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("conformance "), f"got {out!r}, should be one line"
    for words in (f"Python {platform.python_version()}", f"hypothesis {hypothesis_version}"):
        assert words in lines[0], f"got {lines[0]!r}, should say {words!r}"


def test_json_dash_writes_the_certificate_to_stdout_and_the_verdict_to_stderr(targets, capsys):
    assert main(["certify", "cli_targets:GOOD", *FAST, "--check", "roundtrip.api_valid", "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["subject"] == "cli_targets:GOOD" and data["certified"] is True, f"got {data}"
    assert "cli_targets:GOOD: CERTIFIED" in captured.err, f"got stderr {captured.err!r}"
    assert not (targets / "-").exists(), "got a file named '-', should write to standard output"


def test_the_terminal_shows_each_skip_reason_and_with_verbose_each_skip(targets, capsys):
    assert main(["certify", "cli_targets:GOOD", *FAST, "--check", "roundtrip"]) == 0
    out = capsys.readouterr().out
    assert "skipped 1: not a key serializer" in out, f"got:\n{out}"
    assert main(["certify", "cli_targets:GOOD", *FAST, "--check", "roundtrip", "--verbose"]) == 0
    out = capsys.readouterr().out
    assert "skipped roundtrip.key_determinism: not a key serializer" in out, f"got:\n{out}"


def test_strict_fails_a_subject_whose_declared_evolutions_were_never_checked(targets, capsys):
    # GOOD declares an (incompatible) evolution; migrate_element has nothing to check for it.
    argv = ["certify", "cli_targets:GOOD", *FAST, "--check", "roundtrip.api_valid", "--check",
            "migration.migrate_element"]
    assert main(argv) == 0, "without --strict a skipped family is reported, not a failure"
    capsys.readouterr()
    assert main([*argv, "--strict"]) == 1, "with --strict it should fail the subject"
    out = capsys.readouterr().out
    assert "FAILED --strict: the subject declares 1 evolution(s)" in out and "every migration check was skipped" in out, out


def test_a_declared_golden_directory_that_is_empty_fails(targets, capsys):
    assert main(["certify", "cli_targets:GOLDEN", *FAST, "--check", "versioning"]) == 1
    out = capsys.readouterr().out
    assert "FAILED versioning.golden" in out and "no recorded release at" in out and "--update-golden" in out, out


def test_a_serializer_target_with_values_restores_in_a_fresh_process(targets, capsys):
    status = main(["certify", "cli_targets:FACTORY", "--values", "cli_targets:LONG_VALUES", *FAST,
                   "--check", "backends.fresh_process"])
    out = capsys.readouterr().out
    assert status == 0, f"got exit {status}, should certify; output:\n{out}"
    assert "skipped backends.fresh_process" not in out, f"got:\n{out}\nshould run the fresh process"


def test_certify_table_takes_seed_json_and_expected_failures_like_certify(table_target, capsys):
    out = table_target / "table.json"
    argv = ["certify-table", "cli_tables:TABLE", "--examples", "3", "--steps", "5", "--seed", "11",
            "--check", "table.subject", "--check", "table.sequential", "--json", str(out)]
    assert main(argv) == 0, capsys.readouterr()
    data = json.loads(out.read_text())
    assert data["kind"] == "table" and data["seed"] == 11 and data["options"]["steps"] == 5, f"got {data}"
    assert [c["id"] for c in data["checks"]] == ["table.subject", "table.sequential"], f"got {data['checks']}"
    assert data["subject"] == "cli_tables:TABLE", f"got subject {data['subject']!r}"


def _schema_validator():
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "certificate.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_real_certificates_follow_the_documented_json_schema(table_target):
    from conformance import certify
    from conformance._engine.report import reports_to_json

    validator = _schema_validator()
    load = __import__("cli_targets")
    tables = __import__("cli_tables")
    reports = certify([load.GOOD, load.BROKEN],
                      RunConfig(examples=5, seed=3, backends=("heap",),
                                checks=("roundtrip", "migration"),
                                expected_failures={"roundtrip.sequence": "known"}, jobs=1))
    table = certify([tables.TABLE], RunConfig(examples=2, seed=3, steps=4))
    documents = [reports_to_json(reports), reports[0].to_json(), reports[1].to_json(), table[0].to_json()]
    for doc in documents:
        errors = [e.message for e in validator.iter_errors(doc)]
        assert not errors, f"got schema violations {errors[:3]} in {json.dumps(doc)[:300]}"
    statuses = {c["status"] for c in reports[1].to_json()["checks"]}
    assert {"failed", "skipped"} <= statuses, f"got statuses {statuses}, should exercise failures and skips"
    broken = json.loads(json.dumps(documents[1]))
    broken["checks"][0]["status"] = "bogus"
    assert list(validator.iter_errors(broken)), "got a certificate with status 'bogus' accepted, should be refused"


def test_a_failure_raised_in_user_code_shows_the_users_frames(targets, capsys):
    (targets / "typo_target.py").write_text(textwrap.dedent('''
        from hypothesis import strategies as st
        from conformance import Subject
        from reference.serializers import LongSerializer


        class Typo(LongSerializer):
            def serialize(self, value, target):
                target.write_long(value.real + value.imag_part)  # an attribute that is not there


        SUBJECT = Subject(Typo(), st.integers(0, 9))
    '''))
    sys.modules.pop("typo_target", None)
    assert main(["certify", "typo_target:SUBJECT", *FAST, "--check", "roundtrip.bit_exact"]) == 1
    out = capsys.readouterr().out
    assert "AttributeError" in out and f"at {targets / 'typo_target.py'}:9 in serialize" in out, f"got:\n{out}"


def test_values_that_look_alike_are_told_apart_by_their_types():
    import dataclasses

    from conformance import Violation
    from conformance._checks._support import expect_equal

    Old = dataclasses.make_dataclass("Order", [("id", int)])
    New = dataclasses.make_dataclass("Order", [("id", int)])
    # set afterwards: Python 3.12+ make_dataclass takes the caller's module over the namespace's
    Old.__module__, New.__module__ = "shop.v1", "shop.v2"
    with pytest.raises(Violation) as caught:
        expect_equal(Old(1), New(1), "reading back")
    text = caught.value.message
    assert "(a shop.v1:Order)" in text and "(a shop.v2:Order)" in text, f"got {text!r}, should name both types"


UNPICKLED: list[str] = []


class _Canary:
    """Unpickling it records that it happened."""

    def __reduce__(self):
        return (UNPICKLED.append, ("unpickled",))


def test_verify_refuses_a_pickled_state_before_anything_is_unpickled(tmp_path, capsys):
    from reference.backends import HeapStateBackend, ValueStateDescriptor
    from reference.serializers import LongSerializer, PickleSerializer

    backend = HeapStateBackend(LongSerializer())
    state = backend.get_value_state(ValueStateDescriptor("blobs", PickleSerializer()))
    backend.set_current_key(1)
    state.update(_Canary())
    savepoint = backend.savepoint(str(tmp_path / "sp"))
    backend.close()
    UNPICKLED.clear()
    status = main(["verify", savepoint])
    err = capsys.readouterr().err
    assert status == 2, f"got exit {status}, should be 2 (refused before Spark starts)"
    assert "state 'blobs'" in err and "--allow-pickle blobs" in err, f"got {err!r}"
    assert UNPICKLED == [], f"got {UNPICKLED}, should unpickle nothing"
    from conformance.spark import refuse_unpickling

    refuse_unpickling(savepoint, {"blobs"})  # named: allowed
    refuse_unpickling(savepoint, True)
    assert UNPICKLED == [], f"got {UNPICKLED}, the check itself should unpickle nothing"


@pytest.mark.parametrize("jobs", [1, 2])
def test_exitfirst_stops_at_the_first_failed_check_and_runs_no_further_subject(targets, jobs):
    from conformance import certify

    load = __import__("cli_targets")
    subjects = [load.BROKEN, load.GOOD, load.GOOD, load.GOOD]
    full = certify(subjects[:1], RunConfig(examples=5, seed=3, backends=("heap",), jobs=1))[0]
    reports = certify(subjects, RunConfig(examples=5, seed=3, backends=("heap",), jobs=jobs, exitfirst=True))
    assert reports and not reports[-1].certified, f"got {[r.certified for r in reports]}, should end NOT CERTIFIED"
    assert len(reports) < len(subjects), f"got {len(reports)} reports of {len(subjects)}, should stop early"
    first = reports[-1]
    statuses = [r.status for r in first]
    assert statuses.count("failed") == 1 and statuses[-1] == "failed", \
        f"got statuses {statuses}, should end at its one failed check"
    assert len(first.results) < len(full.results), \
        f"got {len(first.results)} results, should be fewer than the {len(full.results)} of a full run"


def test_exitfirst_on_the_command_line_exits_1_at_the_first_failure(targets, capsys):
    status = main(["certify", "cli_targets:BROKEN", *FAST, "-x"])
    text = capsys.readouterr().out
    assert status == 1, f"got exit {status}, should be 1; output:\n{text}"
    assert text.count("FAILED") == 1 and "NOT CERTIFIED" in text, f"got:\n{text}"


def test_a_factory_raising_type_error_is_named_with_the_users_line(tmp_path, monkeypatch, capsys):
    """A zero-argument factory whose own code raises TypeError is told so (not to pass an
    instance), at the line of the user's module that built the Subject."""
    (tmp_path / "typed_factory.py").write_text(
        "from hypothesis import strategies as st\n"
        "from conformance import Subject\n"
        "from reference.serializers import LongSerializer\n"
        "\n"
        "def make():\n"
        "    return LongSerializer(3)\n"
        "\n"
        "SUBJECT = Subject(make, st.integers(0, 5))\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("typed_factory", None)
    status = main(["certify", "typed_factory:SUBJECT"])
    err = capsys.readouterr().err
    sys.modules.pop("typed_factory", None)
    assert status == 2, f"got exit {status}, should be 2 (an unusable target); stderr:\n{err}"
    assert "the factory 'make' raised TypeError" in err and "pass an instance" not in err, f"got:\n{err}"
    assert "typed_factory.py:8" in err, f"got:\n{err}\nshould point at typed_factory.py:8, where the Subject is built"
