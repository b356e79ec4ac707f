"""The harness's spark family on real subjects: a correct serializer with evolutions passes,
serializers that cannot travel to executors are caught with a clear message."""

from __future__ import annotations

import pytest
import spark_support as sup
from hypothesis import strategies as st

from conformance import Evolution, RunConfig, Subject, check_serializer

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

ENTRIES = 8_000


def rows():
    return st.tuples(
        st.integers(-(2**63), 2**63 - 1),
        st.none() | st.text(max_size=8),
        st.none() | st.floats(allow_nan=True),
        st.none() | st.lists(st.text(max_size=4), max_size=3),
    )


@pytest.fixture
def entries(monkeypatch):
    monkeypatch.setenv("CONFORMANCE_SPARK_ENTRIES", str(ENTRIES))
    return ENTRIES


def spark_results(subject):
    report = check_serializer(subject, RunConfig(spark="local[2]", checks=["spark"], examples=20, seed=7))
    return {r.id: r for r in report if r.family == "spark"}


def test_row_with_evolutions_passes_the_spark_family(spark, entries):
    subject = Subject(
        sup.old_row(), values=rows(),
        evolutions=[
            Evolution(to=sup.new_row(), expect="compatible_after_migration", migrate=sup.migrate_oracle),
            Evolution(to=sup.broken_row(), expect="incompatible", reason_contains="score"),
        ],
    )
    results = spark_results(subject)
    assert set(results) == {"spark.history", "spark.migration", "spark.incompatible", "spark.releases"}, (
        f"got {sorted(results)}")
    assert results.pop("spark.releases").status == "skipped", "got spark.releases run, should skip: no golden files"
    for r in results.values():
        assert r.status == "passed", f"got {r.id} {r.status}: {r.message} ({r.example}), should pass"


def test_wrong_oracle_is_caught_by_the_spark_migration(spark, entries):
    def wrong(value):  # forgets that the new field order puts score first
        ident, name, score, tags = value
        return (None, None, ident, tags, name)

    subject = Subject(sup.old_row(), values=rows(),
                      evolutions=[Evolution(to=sup.new_row(), expect="compatible_after_migration", migrate=wrong)])
    result = spark_results(subject)["spark.migration"]
    assert result.status == "failed" and "should equal the oracle" in result.message, (
        f"got {result.status}: {result.message}, should fail against the oracle"
    )


def test_serializer_that_works_in_one_process_only_fails_with_a_clear_message(spark, entries):
    subject = Subject(sup.InternedStringSerializer(), values=st.text(max_size=6))
    result = spark_results(subject)["spark.history"]
    assert result.status == "failed", f"got {result.status}: {result.message}, should fail"
    text = f"{result.message} {result.example}"
    for word in ("executors", "unknown in process", "kept only in the writing process"):
        assert word in text, f"got {text!r}, should mention {word!r}"


def test_heap_mode_output_is_read_back_unless_identical_to_the_verified_one(spark, entries, monkeypatch):
    # spark.migration reads the heap mode's output back only when its bytes differ from the
    # bytes mode's verified output: a heap-only difference must still be caught there.
    import pyarrow as pa
    import pyarrow.parquet as pq

    import conformance.spark as engine
    from reference.savepoint import read_savepoint_metadata, state_data_files

    real = engine.migrate_savepoint

    def heap_swaps_two_values(savepoint, serializers, out, *, mode="bytes", **kwargs):
        report = real(savepoint, serializers, out, mode=mode, **kwargs)
        if mode == "heap":
            meta = read_savepoint_metadata(out)
            file = state_data_files(out, next(s for s in meta.states if s.kind == "value"))[0]
            table = pq.read_table(file)
            values = table.column("value").to_pylist()
            i = next(i for i in range(1, len(values)) if values[i] != values[0])
            values[0], values[i] = values[i], values[0]
            pq.write_table(table.set_column(4, "value", pa.array(values, pa.binary())), file)
        return report

    monkeypatch.setattr(engine, "migrate_savepoint", heap_swaps_two_values)
    subject = Subject(sup.old_row(), values=rows(), evolutions=[
        Evolution(to=sup.new_row(), expect="compatible_after_migration", migrate=sup.migrate_oracle)])
    result = spark_results(subject)["spark.migration"]
    assert result.status == "failed" and "heap mode" in result.message, (
        f"got {result.status}: {result.message}, should fail in heap mode"
    )


def test_cli_runs_the_spark_family_in_a_second_lane(tmp_path):
    # `certify --spark` forks a process for the other families and the large history before
    # the JVM starts; every family's results must come back, in order, for the subject.
    import json
    import os
    import subprocess
    import sys

    here = os.path.dirname(__file__)
    (tmp_path / "lane_targets.py").write_text(
        "import spark_support as sup\n"
        "from conformance import Evolution, Subject\n"
        "from test_spark_checks import rows\n"
        "ROW = Subject(sup.old_row(), values=rows(), evolutions=[\n"
        "    Evolution(to=sup.new_row(), expect='compatible_after_migration', migrate=sup.migrate_oracle)])\n"
    )
    out = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here, str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [sys.executable, "-m", "conformance", "certify", "lane_targets:ROW", "--spark", "local[2]",
         "--spark-entries", "3000", "--examples", "10", "--seed", "7", "--backend", "heap", "--json", str(out)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600,
    )
    assert proc.returncode == 0, f"got exit {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    checks = json.loads(out.read_text())["checks"]
    families = [c["family"] for c in checks]
    assert families == sorted(families, key=["roundtrip", "snapshot", "versioning", "migration", "backends",
                                             "spark"].index), f"got families in order {families}"
    spark = {c["id"]: c["status"] for c in checks if c["family"] == "spark"}
    assert spark == {"spark.history": "passed", "spark.migration": "passed", "spark.incompatible": "skipped",
                     "spark.releases": "skipped"}, (
        f"got {spark}, should run the spark family after the others"
    )


def test_history_written_ahead_is_used_only_for_the_same_values(spark, entries, tmp_path):
    from conformance._checks.spark import HISTORY, take_history_ahead, write_history_ahead
    from conformance._engine.runner import CheckContext, Runner

    subject = Subject(sup.old_row(), values=rows())
    ahead_runner = Runner(subject, RunConfig(examples=10, seed=3, spark="local[2]"))
    try:
        ahead = write_history_ahead(CheckContext(ahead_runner), str(tmp_path / "ahead"))
    finally:
        ahead_runner.close()
    assert ahead is not None and ahead["pickled"] is not None, f"got {ahead}, should write the history"

    def history_of(seed, offered):
        runner = Runner(subject, RunConfig(examples=10, seed=seed, spark="local[2]"))
        try:
            if offered:
                take_history_ahead(runner, ahead)
            result = runner.result("spark.history")
            assert result.status == "passed", f"got {result.status}: {result.message}"
            return CheckContext(runner).get(HISTORY)[0]
        finally:
            runner.close()

    assert history_of(3, True) == ahead["savepoint"], "should read the history written ahead"
    ahead["pickled"] = None  # values that do not travel: seed 4 draws others, so it must write its own
    assert history_of(4, True) != ahead["savepoint"], "should write its own history for other values"


def test_release_upgrade_that_needs_the_driver_s_process_is_caught_by_spark_releases(spark, entries, tmp_path,
                                                                                     monkeypatch):
    # Release 1.0 of CounterSerializer wrote 4-byte little-endian ints; 2.0 reads them through a
    # reader registered in a process-global table when the 1.0 snapshot is read. Every upgrade
    # check in one process passes; migrated in Spark's executors, the restored serializer has no
    # reader there.
    values = st.integers(-(2**31), 2**31 - 1)
    golden = str(tmp_path / "golden")
    monkeypatch.setattr(sup.CounterSerializer, "RELEASE", 1)
    recorded = check_serializer(Subject(sup.CounterSerializer(), values, golden=golden, release="1.0"),
                                RunConfig(checks=["versioning"], examples=20, seed=7, update_golden=True))
    assert recorded.certified, f"got {recorded.failures}, should record release 1.0"
    monkeypatch.setattr(sup.CounterSerializer, "RELEASE", 2)
    subject = Subject(sup.CounterSerializer(), values, golden=golden, release="2.0",
                      releases={"1.0": Evolution(expect="compatible_after_migration", migrate=lambda old: old)})
    report = check_serializer(subject, RunConfig(spark="local[2]", checks=["versioning", "spark"], examples=20,
                                                 seed=7, backends=("heap", "bytes")))
    before = [r for r in report.results if r.failed and r.family != "spark"]
    assert not before, f"got {[(r.id, r.message) for r in before]}, should pass every single-process check"
    result = report["spark.releases"]
    assert result.status == "failed", f"got spark.releases {result.status}: {result.message}, should fail"
    assert "no reader of format 'le32'" in result.message and "release 1.0" in result.message, (
        f"got {result.message!r}, should name the release and the executor's error")
    others = {r.id: r.status for r in report.results if r.family == "spark" and r.id != "spark.releases"}
    assert others == {"spark.history": "passed", "spark.migration": "skipped", "spark.incompatible": "skipped"}, (
        f"got {others}, should catch the bug in spark.releases only")


def test_recorded_releases_upgrade_on_spark(spark, entries, tmp_path):
    # The builtin row subject's golden release 0.1.0 upgrades on Spark as in one process.
    from conformance._builtins.subjects import builtin_subjects

    (row,) = builtin_subjects(["row"])
    report = check_serializer(row, RunConfig(spark="local[2]", checks=["versioning", "spark"], examples=20,
                                               seed=7, backends=("heap", "bytes")))
    result = report["spark.releases"]
    assert result.status == "passed", f"got spark.releases {result.status}: {result.message} ({result.example})"
