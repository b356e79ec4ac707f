"""``conformance migrate`` and ``verify`` with ``--spark off``: the jobs' executor functions run
in one process, without a JVM. The first test runs in the fast tier (no Spark anywhere: it
asserts pyspark is never imported); the others, marked spark, compare each command's output
savepoint bytes and report with the same command on Spark."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import spark_support as sup

from reference.savepoint import file_tree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KEYS = 60
SPEC = "spark_support:new_descriptors"


def _run(tmp_path, script: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, HERE])}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True,
                          timeout=300, cwd=str(tmp_path), env=env)


def test_migrate_and_verify_off_run_without_spark_with_the_same_rules(tmp_path):
    """Exit statuses and refusals of both commands without Spark, and pyspark never imported."""
    (tmp_path / "failing_states.py").write_text(textwrap.dedent("""
        import spark_support as sup
        from reference import SerializationError
        from reference.serializers import RowSerializer

        class FailingRow(RowSerializer):
            def serialize(self, value, target):
                if value[2] == 70:
                    raise SerializationError("id 70 refused")
                super().serialize(value, target)

        def descriptors():
            return sup.descriptors(FailingRow(sup.new_row().fields))
    """))
    proc = _run(tmp_path, f"""
        import json, sys
        import spark_support as sup
        from conformance.cli import main
        from reference.backends import HeapStateBackend, ValueStateDescriptor
        from reference.serializers import ListSerializer, LongSerializer, PickleSerializer

        sup.write_history("sp", {KEYS})
        status = {{}}
        status["migrate"] = main(["migrate", "sp", "--serializers", "{SPEC}", "--out", "out", "--schema-evolution",
                                  "--spark", "off", "--json", "migrate.json"])
        status["refused"] = main(["migrate", "sp", "--serializers", "{SPEC}", "--out", "again", "--spark", "off"])
        status["rescaled"] = main(["migrate", "sp", "--serializers", "{SPEC}", "--out", "out3", "--schema-evolution",
                                   "--parallelism", "3", "--spark", "off"])
        status["fails"] = main(["migrate", "sp", "--serializers", "failing_states:descriptors", "--out", "failed",
                                "--schema-evolution", "--backend", "heap", "--spark", "off"])
        status["verify"] = main(["verify", "out", "--spark", "off", "--json", "verify.json"])
        status["same"] = main(["verify", "out3", "--expect", "out", "--spark", "off"])
        status["differs"] = main(["verify", "out", "--expect", "sp", "--spark", "off", "--json", "differs.json"])
        backend = HeapStateBackend(LongSerializer())
        state = backend.get_value_state(ValueStateDescriptor("blobs", ListSerializer(PickleSerializer())))
        backend.set_current_key(1)
        state.update([{{"key": 1}}])
        backend.savepoint("pickled")
        backend.close()
        status["pickle"] = main(["verify", "pickled", "--spark", "off"])
        status["pickle_allowed"] = main(["verify", "pickled", "--spark", "off", "--allow-pickle", "blobs"])
        print(json.dumps(status))
        print(json.dumps("pyspark" in sys.modules or any(m.startswith("pyspark.") for m in sys.modules)))
    """)
    assert proc.returncode == 0, f"got exit {proc.returncode}: {proc.stderr[-2000:]}, should run"
    status, imported = (json.loads(line) for line in proc.stdout.strip().splitlines()[-2:])
    want = {"migrate": 0, "refused": 1, "rescaled": 0, "fails": 1, "verify": 0, "same": 0, "differs": 1,
            "pickle": 2, "pickle_allowed": 0}
    assert status == want, f"got exit statuses {status}, should be {want}; stderr: {proc.stderr[-2000:]}"
    assert imported is False, "got pyspark imported by --spark off, should never be"
    assert "pass --schema-evolution" in proc.stderr, f"got {proc.stderr[-1000:]!r}, should name --schema-evolution"
    assert "--allow-pickle blobs" in proc.stderr, f"got {proc.stderr[-1000:]!r}, should refuse to unpickle"
    assert "id 70 refused" in proc.stderr, f"got {proc.stderr[-1000:]!r}, should show the failing value's error"
    assert not (tmp_path / "failed").exists(), "got output of a failed migration, should be none"
    migrated = json.loads((tmp_path / "migrate.json").read_text())
    content = sup.history(KEYS)
    rows = len(content["profile"]) + len(content["events"]) + sum(len(m) for m in content["by-slot"].values())
    assert migrated["rows"] == rows, f"got {migrated['rows']} rows migrated, should be {rows}"
    verified = json.loads((tmp_path / "verify.json").read_text())
    assert verified["ok"] and verified["entries"] == migrated["rows"], f"got {verified}, should decode every row"
    differs = json.loads((tmp_path / "differs.json").read_text())
    assert not differs["ok"] and all(s["mismatches"] > 0 for s in differs["states"]), (
        f"got {differs}, should find every state's entries differing from the unmigrated savepoint")
    overcounted = [(s["name"], s["mismatches"], s["entries"]) for s in differs["states"] if s["mismatches"] > s["entries"]]
    assert not overcounted, (
        f"got more mismatching entries than entries (state, mismatching, entries) {overcounted}: a differing "
        "snapshot should be a problem of its own, not one more mismatching entry")
    assert any("value serializer snapshot differs" in problem for problem in differs["problems"]), (
        f"got problems {differs['problems']}, should say that the migrated value serializer snapshot differs")
    assert sup.read_back(str(tmp_path / "out3"), KEYS) == sup.expected_after_migration(sup.history(KEYS)), (
        "the savepoint rescaled without Spark reads back other values than the oracle's")


# -- the same bytes and reports as Spark ---------------------------------------------------------------
def _cli(*argv: str) -> int:
    from conformance.cli import main

    return main(list(argv))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("small") / "savepoint")
    sup.write_history(path, KEYS)
    return path


def _neutral(data: dict, *paths: str) -> dict:
    text = json.dumps(data, sort_keys=True)
    for i, path in enumerate(paths):
        text = text.replace(path, f"<{i}>")
    return json.loads(text)


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
@pytest.mark.parametrize("mode,parallelism", [("bytes", None), ("heap", "3")])
def test_migrate_off_writes_the_same_savepoint_and_report_as_spark(spark, small, tmp_path, mode, parallelism):
    outputs = {}
    for master in ("local[2]", "off"):
        out, report = str(tmp_path / f"out-{master}"), str(tmp_path / f"{master}.json")
        extra = ["--parallelism", parallelism] if parallelism else []
        status = _cli("migrate", small, "--serializers", SPEC, "--out", out, "--schema-evolution", "--backend", mode,
                      "--spark", master, "--json", report, *extra)
        assert status == 0, f"--spark {master}: got exit {status}, should be 0"
        outputs[master] = (file_tree(out), _neutral(json.loads(open(report).read()), out))
    (spark_files, spark_report), (off_files, off_report) = outputs["local[2]"], outputs["off"]
    assert off_report == spark_report, f"got report {off_report} without Spark, should be Spark's {spark_report}"
    assert sorted(off_files) == sorted(spark_files), f"got files {sorted(off_files)}, should be {sorted(spark_files)}"
    differing = [name for name in spark_files if off_files[name] != spark_files[name]]
    assert not differing, f"got other bytes in {differing} without Spark, should be Spark's exactly"


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_verify_off_gives_spark_s_report(spark, small, tmp_path):
    migrated = str(tmp_path / "migrated")
    assert _cli("migrate", small, "--serializers", SPEC, "--out", migrated, "--schema-evolution", "--spark", "off") == 0
    for expect in (None, migrated, small):
        reports = {}
        for master in ("local[2]", "off"):
            target = str(tmp_path / f"{master}.json")
            argv = ["verify", migrated, "--spark", master, "--json", target, "--sample", "1000"]
            status = _cli(*argv, *(["--expect", expect] if expect else []))
            report = json.loads(open(target).read())
            for state in report["states"]:  # Spark's join returns the mismatches in no set order
                state["samples"] = sorted(state["samples"])
            reports[master] = (status, report)
        assert reports["off"] == reports["local[2]"], (
            f"--expect {expect}: got {reports['off']} without Spark, should be Spark's {reports['local[2]']}")


# -- Spark's start-up log lines ------------------------------------------------------------------------
#: What Spark's default log4j profile prints on every start, none of which a user can act on.
STARTUP_NOISE = ("NativeCodeLoader", "Using Spark's default log4j profile", "resolves to a loopback address",
                 "SPARK_LOCAL_IP", "Setting default log level", "sc.setLogLevel", " WARN ",
                 "Using incubator modules")


@pytest.mark.spark
@pytest.mark.xdist_group("spark")
def test_spark_start_up_warnings_are_silenced_and_real_failures_still_shown(tmp_path):
    (tmp_path / "bound_states.py").write_text(textwrap.dedent("""
        import spark_support as sup
        from reference.backends import ValueStateDescriptor

        def descriptors():
            return [ValueStateDescriptor("profile", sup.ProcessBoundRow(sup.new_row().fields))]
    """))
    proc = _run(tmp_path, f"""
        import sys
        import spark_support as sup
        from conformance.cli import main

        sup.write_history("sp", {KEYS})
        first = main(["verify", "sp", "--spark", "local[1]"])
        print(f"verify exit {{first}}", file=sys.stderr)
        second = main(["migrate", "sp", "--serializers", "bound_states:descriptors", "--out", "out",
                       "--backend", "heap", "--schema-evolution", "--spark", "local[1]"])
        print(f"migrate exit {{second}}", file=sys.stderr)
    """)
    err = proc.stderr
    assert proc.returncode == 0, f"got exit {proc.returncode}: {err[-2000:]}, should run"
    assert "verify exit 0" in err and "migrate exit 1" in err, f"got {err[-3000:]!r}, should be exit 0 then exit 1"
    noise = [line for line in err.splitlines() if any(word in line for word in STARTUP_NOISE)]
    assert not noise, f"got Spark's start-up log lines {noise} on stderr, should be silenced"
    assert "ProcessBoundRow created in process" in err and "failed in Spark" in err, (
        f"got {err[-3000:]!r}, should still show the executor's failure")
