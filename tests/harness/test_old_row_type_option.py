"""``--old-row-type`` as a user types it (``UID/STATE=NAME[:TYPE],...``; the MODULE:ATTR form is
covered in test_savepoint_check_cli.py), with ``conformance savepoint check`` and ``conformance
migrate`` on a real Flink 2.3 savepoint kept in tests/data/flink_savepoints (its ``row`` state is
a flink-core ``Row(String, Long, Double)``). Flink restoring what the migration writes:
tests/flink/test_flink_old_row_type.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from reference.savepoint import read_flink_savepoint

KEPT = Path(__file__).resolve().parents[1] / "data" / "flink_savepoints" / "rocksdb_inline_string"
SAVEPOINT = str(next(KEPT.glob("savepoint-*")))
EXPECTED = json.loads((KEPT / "expected.json").read_text(encoding="utf-8"))

JOB = '''
from reference import serializers as s
from reference.backends import ValueStateDescriptor

ROW = s.RowSerializer([("ratio", s.DoubleSerializer(), True), ("name", s.StringSerializer(), True),
                       ("total", s.LongSerializer(), True), ("note", s.StringSerializer(), True)])
STATES = {"keyed-states": {"row": ValueStateDescriptor("row", ROW)}}
'''


@pytest.fixture
def job(tmp_path, monkeypatch):
    (tmp_path / "reorder_job.py").write_text(JOB)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("reorder_job", None)
    return tmp_path


def test_inline_names_let_migrate_move_fields_by_name(job, capsys):
    out = job / "out"
    status = main(["migrate", SAVEPOINT, "--serializers", "reorder_job:STATES", "--out", str(out),
                   "--schema-evolution", "--old-row-type", "keyed-states/row=name,total,ratio"])
    assert status == 0, capsys.readouterr().err
    got = {json.dumps(e.key): tuple(e.value) for e in read_flink_savepoint(out).operator("keyed-states")
           .keyed_state("row").entries()}
    want = {json.dumps(e["key"]): e["value"]["fields"] for e in EXPECTED["operators"]["keyed-states"]["states"]["row"]["entries"]}
    assert set(got) == set(want) and got, f"keys {sorted(got)} vs {sorted(want)}"
    for key, (ratio, name, total, note) in got.items():
        old_name, old_total, _old_ratio = want[key]
        assert (name, total, note) == (old_name, old_total, None) and isinstance(ratio, float), f"key {key}: {got[key]}"


def test_without_the_old_names_the_reorder_cannot_migrate(job, capsys):
    status = main(["migrate", SAVEPOINT, "--serializers", "reorder_job:STATES", "--out", str(job / "out"),
                   "--schema-evolution"])
    assert status == 1, f"exit {status}: f0..fN make the reorder a removal"
    assert not (job / "out").exists()


@pytest.mark.parametrize(("spec", "says"), [
    ("keyed-states/row=name,total", "3 fields"),
    ("keyed-states/row=name:string,total:string,ratio:double", "does not read the savepoint's row as is"),
    ("keyed-states/row=name:string,total,ratio", "for every field or for none"),
    ("keyed-states/row=name:text,total:long,ratio:double", "the types are"),
    ("keyed-states=name,total,ratio", "UID/STATE=NAME"),
    ("keyed-states/count=a", "no flink-core Row|which the descriptors do not name"),
])
def test_an_unusable_old_row_type_is_a_usage_error(job, capsys, spec, says):
    for command in (["savepoint", "check", SAVEPOINT, "--serializers", "reorder_job:STATES"],
                    ["migrate", SAVEPOINT, "--serializers", "reorder_job:STATES", "--out", str(job / "o"),
                     "--schema-evolution"]):
        status = main([*command, "--old-row-type", spec])
        err = capsys.readouterr().err
        assert status == 2 and any(s in err for s in says.split("|")), f"{command[0]} with {spec!r}: exit {status}, {err!r}"
        assert "--old-row-type" in err, f"{command[0]} with {spec!r}: the message should name the option: {err!r}"
        assert not (job / "o").exists()


def test_the_migrate_command_check_suggests_repeats_its_options(job, capsys):
    """Pasted as is, the suggested command must migrate: it repeats --old-row-type (and
    --import, --operator-uid) as given to check."""
    import shlex

    status = main(["savepoint", "check", SAVEPOINT, "--serializers", "reorder_job:STATES", "--import", "json",
                   "--old-row-type", "keyed-states/row=name,total,ratio", "--json", "-"])
    report = json.loads(capsys.readouterr().out)
    assert status == 1, f"exit {status}: Flink refuses the reordered row"
    (state,) = report["states"]
    command = state["migrate"]
    assert "--old-row-type keyed-states/row=name,total,ratio" in command and "--import json" in command, command
    argv = shlex.split(command.replace("NEW_SAVEPOINT", str(job / "pasted")))
    assert argv[0] == "conformance" and main(argv[1:]) == 0, f"the suggested {command!r} failed: {capsys.readouterr()}"


@pytest.mark.parametrize("command", ["check", "migrate"])
def test_a_folder_that_holds_no_savepoint_says_to_give_the_savepoints_directory(job, capsys, command):
    """A Flink savepoint's parent folder (or an empty one) is said to be no savepoint, before the
    descriptors are judged (they are right)."""
    argv = (["savepoint", "check", str(KEPT)] if command == "check" else ["migrate", str(KEPT), "--out", str(job / "o")])
    status = main([*argv, "--serializers", "reorder_job:STATES"])
    err = capsys.readouterr().err
    assert status == 2 and "is not a savepoint" in err and "give the savepoint's directory" in err, (
        f"got exit {status}: {err}, should say the folder holds no savepoint")
