"""The harness's spark family on real subjects: a correct serializer with evolutions passes,
serializers that cannot travel to executors are caught with a clear message."""

from __future__ import annotations

import pytest
import spark_support as sup
from hypothesis import strategies as st

from conformance import Evolution, Subject, check_serializer

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
    report = check_serializer(subject, spark="local[2]", checks=["spark"], examples=20, seed=7)
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
    assert set(results) == {"spark.history", "spark.migration", "spark.incompatible"}, f"got {sorted(results)}"
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
    for word in ("executors", "unknown in process"):
        assert word in text, f"got {text!r}, should mention {word!r}"


def test_heap_mode_output_is_read_back_unless_identical_to_the_verified_one(spark, entries, monkeypatch):
    # spark.migration reads the heap mode's output back only when its bytes differ from the
    # bytes mode's verified output: a heap-only difference must still be caught there.
    import pyarrow as pa
    import pyarrow.parquet as pq

    from conformance._spark import jobs
    from reference.backends import read_savepoint_metadata, state_data_files

    real = jobs.migrate_savepoint

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

    monkeypatch.setattr(jobs, "migrate_savepoint", heap_swaps_two_values)
    subject = Subject(sup.old_row(), values=rows(), evolutions=[
        Evolution(to=sup.new_row(), expect="compatible_after_migration", migrate=sup.migrate_oracle)])
    result = spark_results(subject)["spark.migration"]
    assert result.status == "failed" and "heap mode" in result.message, (
        f"got {result.status}: {result.message}, should fail in heap mode"
    )
