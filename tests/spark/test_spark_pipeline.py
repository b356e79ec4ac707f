"""The Spark pipeline against the reference backends: savepoints as datasets, migration in
both modes, rescaling, refusal before writing, atomic output, verification, the CLI."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
import spark_support as sup

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "storage"))
from storage_support import relist  # noqa: E402

from reference import StateMigrationError
from reference.backends import BytesStateBackend, ValueStateDescriptor
from reference.savepoint import file_tree, read_savepoint_metadata, state_data_files

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

KEYS = 2500


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("history") / "savepoint")
    content = sup.write_history(path, KEYS)
    return path, content


@pytest.fixture(scope="module")
def reference_results(source, tmp_path_factory):
    base = tmp_path_factory.mktemp("reference")
    return {mode: sup.backend_migrated(source[0], str(base / mode), mode) for mode in ("bytes", "heap")}


def assert_values(got, want, where):
    from conformance._engine.canonical import canonical

    for name in want:
        assert set(got[name]) == set(want[name]), (
            f"got keys {sorted(set(got[name]) ^ set(want[name]))[:5]} differing, should be none [{where}, {name}]"
        )
        for k, v in want[name].items():
            assert canonical(got[name][k]) == canonical(v), f"got {got[name][k]!r}, should be {v!r} [{where}, {name}, key {k}]"


# -- savepoints as datasets -------------------------------------------------------------------
def test_backend_savepoint_reads_as_dataframe_and_writes_back_byte_identical(spark, source, tmp_path):
    from conformance.spark import StateOutput, read_state_dataframe, write_savepoint

    path, _ = source
    meta = read_savepoint_metadata(path)
    frames = []
    for state in meta.states:
        frame = read_state_dataframe(spark, path, state)
        assert frame.columns == ["key_group", "key", "namespace", "user_key", "value"], f"got columns {frame.columns} [{state.name}]"
        # Content equality is proven below: Spark's rows, written back, give the backend's file.
        frames.append(StateOutput(state, frame))
    out = tmp_path / "copy"
    write_savepoint(str(out), frames, max_parallelism=meta.max_parallelism,
                    key_serializer_snapshot=meta.key_serializer_snapshot, parallelism=1)
    for state, written in zip(meta.states, read_savepoint_metadata(out).states, strict=True):
        src_file, = state_data_files(path, state)
        out_file, = state_data_files(out, written)
        with open(src_file, "rb") as a, open(out_file, "rb") as b:
            same = a.read() == b.read()
        assert same, f"got a data file that differs from the backend's, should be byte-identical [{state.name}]"
    assert (out / "_SUCCESS").exists(), f"got no _SUCCESS marker in {os.listdir(out)}, should be one"


def test_spark_written_savepoint_restores_on_the_backend(spark, source, tmp_path):
    from conformance.spark import StateOutput, read_state_dataframe, write_savepoint

    path, content = source
    meta = read_savepoint_metadata(path)
    out = str(tmp_path / "p4")
    write_savepoint(out, [StateOutput(s, read_state_dataframe(spark, path, s)) for s in meta.states],
                    max_parallelism=meta.max_parallelism, key_serializer_snapshot=meta.key_serializer_snapshot,
                    parallelism=4)
    backend = BytesStateBackend.restore(out, sup.KEY)
    try:
        value, listing, mapping = sup.descriptors(sup.old_row())
        for k in (0, 1, 2, KEYS // 2, KEYS - 1):
            backend.set_current_key(k)
            got = backend.get_value_state(value).value()
            assert got == content["profile"][k], f"got {got!r}, should be {content['profile'][k]!r} [key {k}]"
            got_map = dict(backend.get_map_state(mapping).items())
            assert got_map == content["by-slot"][k], f"got {got_map!r}, should be {content['by-slot'][k]!r} [key {k}]"
    finally:
        backend.close()


# -- migration ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["bytes", "heap"])
def test_migration_matches_reference_backend_and_oracle(spark, source, reference_results, tmp_path, mode):
    from conformance.spark import migrate_savepoint, verify_savepoint

    path, content = source
    out = str(tmp_path / f"migrated-{mode}")
    report = migrate_savepoint(path, sup.descriptors(sup.new_row()), out, mode=mode, config=sup.EVOLUTION, spark=spark)
    verdicts = {s.name: s.verdict for s in report.states}
    assert verdicts == dict.fromkeys(verdicts, "compatible_after_migration"), f"got {verdicts}, should all need migration"
    sup.assert_same_savepoint_content(out, reference_results[mode], f"{mode} mode vs the {mode} backend")
    sup.assert_same_savepoint_content(out, reference_results["bytes" if mode == "heap" else "heap"], f"{mode} mode vs the other backend")
    assert_values(sup.read_back(out, KEYS), sup.expected_after_migration(content), f"{mode} mode vs oracle")
    check = verify_savepoint(out, expect=reference_results[mode], spark=spark)
    assert check.ok, f"got {check.format()}, should verify clean"
    assert check.entries == report.rows, f"got {check.entries} verified entries, should be {report.rows}"


def test_rescaling_4_2_3_then_3_keeps_every_key_in_its_group(spark, source, reference_results, tmp_path):
    from conformance.spark import migrate_savepoint
    from reference.savepoint import key_group_range

    path, content = source
    previous = path
    steps = [(4, sup.descriptors(sup.new_row()), "bytes"), (2, [], "bytes"),
             (3, sup.descriptors(sup.new_row()), "heap"), (3, sup.descriptors(sup.new_row()), "bytes")]
    for step, (p, descs, mode) in enumerate(steps):
        out = str(tmp_path / f"step{step}-p{p}")
        report = migrate_savepoint(previous, descs, out, mode=mode, parallelism=p, config=sup.EVOLUTION, spark=spark)
        # The last step keeps parallelism 3: each file is migrated to its own output file.
        shuffled = [s.shuffled for s in report.states]
        should = [step < len(steps) - 1] * len(shuffled)
        assert shuffled == should, f"got shuffled={shuffled}, should be {should} [step {step}]"
        meta = read_savepoint_metadata(out)
        for state in meta.states:
            files = state_data_files(out, state)
            assert [os.path.basename(f) for f in files] == [f"part-{i:05d}.parquet" for i in range(p)], (
                f"got files {files}, should be one per subtask of {p} [{state.name}]"
            )
            for i, file in enumerate(files):
                import pyarrow.parquet as pq

                groups = set(pq.read_table(file, columns=["key_group"]).column(0).to_pylist())
                allowed = set(key_group_range(meta.max_parallelism, p, i))
                assert groups <= allowed, f"got key groups {sorted(groups - allowed)[:5]} in subtask {i}, should be in {allowed} [{state.name}]"
        sup.assert_same_savepoint_content(out, reference_results["bytes"], f"rescaled to {p}")
        previous = out
    assert_values(sup.read_back(previous, KEYS), sup.expected_after_migration(content), "after 4 -> 2 -> 3")


# -- refusals ---------------------------------------------------------------------------------------
def _siblings(directory):
    return sorted(os.listdir(directory))


def test_incompatible_state_is_refused_before_anything_is_written(spark, source, tmp_path):
    from conformance.spark import migrate_savepoint

    path, _ = source
    before = file_tree(path)
    descs = sup.descriptors(sup.new_row())
    descs[1] = type(descs[1])("events", sup.broken_row())  # one bad state among good ones
    with pytest.raises(StateMigrationError) as info:
        migrate_savepoint(path, descs, str(tmp_path / "out"), config=sup.EVOLUTION, spark=spark)
    message = str(info.value)
    for word in ("events", "must not be incompatible", "score"):
        assert word in message, f"got {message!r}, should mention {word!r}"
    assert _siblings(tmp_path) == [], f"got {_siblings(tmp_path)}, should be nothing written"
    assert file_tree(path) == before, "got a changed input savepoint, should be untouched"

    with pytest.raises(StateMigrationError) as info:
        migrate_savepoint(path, sup.descriptors(sup.new_row()), str(tmp_path / "out"), spark=spark)
    assert "state.schema-evolution.enable" in str(info.value), f"got {info.value}, should name the option"
    assert _siblings(tmp_path) == [], f"got {_siblings(tmp_path)}, should be nothing written"


def test_unpicklable_serializer_fails_with_a_clear_message(spark, source, tmp_path):
    from conformance.spark import SerializerShippingError, migrate_savepoint

    path, _ = source
    meta_path = tmp_path / "longs"
    backend = BytesStateBackend(sup.KEY)
    try:
        for k in range(100):
            backend.set_current_key(k)
            backend.get_value_state(ValueStateDescriptor("n", sup.KEY)).update(k)
        backend.savepoint(str(meta_path))
    finally:
        backend.close()
    with pytest.raises(SerializerShippingError) as info:
        migrate_savepoint(str(meta_path), [ValueStateDescriptor("n", sup.LockedSerializer())],
                          str(tmp_path / "out"), mode="heap", spark=spark)
    assert "cannot be pickled" in str(info.value) and "'n'" in str(info.value), f"got {info.value}"
    assert not (tmp_path / "out").exists(), "got an output directory, should be nothing written"


def test_serializer_bound_to_one_process_fails_with_a_clear_message(spark, source, tmp_path):
    from conformance.spark import SparkJobError, migrate_savepoint

    path, _ = source
    bound = sup.ProcessBoundRow(sup.new_row().fields)
    with pytest.raises(SparkJobError) as info:
        migrate_savepoint(path, [ValueStateDescriptor("profile", bound)], str(tmp_path / "out"),
                          mode="heap", config=sup.EVOLUTION, spark=spark)
    message = str(info.value)
    for word in ("profile", "ProcessBoundRow created in process", "executor"):
        assert word in message, f"got {message!r}, should mention {word!r}"
    assert _siblings(tmp_path) == [], f"got {_siblings(tmp_path)}, should be no output"


# -- atomic output ------------------------------------------------------------------------------------
def test_injected_task_failure_leaves_no_output_and_input_untouched(spark, source, tmp_path):
    from conformance.spark import SparkJobError, migrate_savepoint

    path, _ = source
    before = file_tree(path)

    def fail_subtask_two(subtask):
        if subtask == 2:
            raise RuntimeError("injected failure in subtask 2")

    with pytest.raises(SparkJobError) as info:
        migrate_savepoint(path, sup.descriptors(sup.new_row()), str(tmp_path / "out"), parallelism=3,
                          config=sup.EVOLUTION, spark=spark, _fault=fail_subtask_two)
    assert "injected failure in subtask 2" in str(info.value), f"got {info.value}"
    assert _siblings(tmp_path) == [], f"got {_siblings(tmp_path)}, should be no output and no temporary"
    assert file_tree(path) == before, "got a changed input savepoint, should be untouched"

    # The same on the file-to-file path (input already at the target parallelism).
    aligned = str(tmp_path / "aligned")
    migrate_savepoint(path, [], aligned, parallelism=3, spark=spark)
    before = file_tree(aligned)
    with pytest.raises(SparkJobError) as info:
        migrate_savepoint(aligned, sup.descriptors(sup.new_row()), str(tmp_path / "out"), parallelism=3,
                          config=sup.EVOLUTION, spark=spark, _fault=fail_subtask_two)
    assert "injected failure in subtask 2" in str(info.value), f"got {info.value}"
    assert _siblings(tmp_path) == ["aligned"], f"got {_siblings(tmp_path)}, should be no output and no temporary"
    assert file_tree(aligned) == before, "got a changed input savepoint, should be untouched"


def test_killed_driver_leaves_no_output_and_input_untouched(spark, source, tmp_path):
    path, _ = source
    before = file_tree(path)
    out = tmp_path / "out"
    marker = tmp_path / "writing"
    script = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import spark_support as sup
        from conformance.spark import migrate_savepoint
        from conformance.spark import get_session
        spark = get_session("local[2]")
        spark.sparkContext.addPyFile(sup.__file__)
        def hang(subtask):
            open({str(marker)!r}, "w").close()
            time.sleep(600)
        migrate_savepoint({path!r}, sup.descriptors(sup.new_row()), {str(out)!r}, parallelism=2,
                          config=sup.EVOLUTION, spark=spark, _fault=hang)
    """)
    log = open(tmp_path / "driver.log", "wb")  # noqa: SIM115 - closed below
    # The driver's own temporary folder: no other Spark session on the machine (whose start
    # removes the scratch directories of dead drivers) can take the killed driver's away.
    scratch_tmp = tmp_path / "driver-tmp"
    scratch_tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "TMPDIR": str(scratch_tmp)})
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        if not marker.exists():
            tail = (tmp_path / "driver.log").read_text(errors="replace")[-1500:]
            raise AssertionError(f"got no write in progress (exit {proc.poll()}): {tail}, should have reached the write")
        temps = [n for n in _siblings(tmp_path) if n.startswith(".out.tmp-")]
        assert temps, f"got {_siblings(tmp_path)}, should show the temporary output while writing"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the driver, its JVM and Python workers
        proc.wait(timeout=60)
        log.close()
    assert not out.exists(), f"got {out} after the driver was killed, should not exist"
    assert file_tree(path) == before, "got a changed input savepoint, should be untouched"
    # What the killed run left behind goes when the work is done again: its temporary output
    # with the rerun's commit, its Spark scratch directory with the next session's start (the
    # same removal, called here because this process's session is already running).
    from conformance.spark import SCRATCH_PARENT, migrate_savepoint
    from reference.savepoint import remove_abandoned

    migrate_savepoint(path, sup.descriptors(sup.new_row()), str(out), parallelism=2,
                      config=sup.EVOLUTION, spark=spark)
    left = [n for n in _siblings(tmp_path) if ".tmp-" in n]
    assert out.exists() and left == [], f"got {left} after the rerun, should be the output and no temporary"
    parent = os.path.join(scratch_tmp, SCRATCH_PARENT)
    killed = [n for n in os.listdir(parent) if f"-{proc.pid}-" in n]
    assert killed, f"got {os.listdir(parent)}, should hold the killed driver's scratch directory"
    remove_abandoned(parent, "")
    left = [n for n in os.listdir(parent) if f"-{proc.pid}-" in n]
    assert left == [], f"got {left}, should have removed the killed driver's scratch directory"


# -- verify -------------------------------------------------------------------------------------------
def test_verify_reports_undecodable_values_misplaced_keys_and_mismatches(spark, source, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from conformance.spark import verify_savepoint

    path, _ = source
    clean = verify_savepoint(path, spark=spark)
    assert clean.ok and clean.entries == sum(s.rows for s in read_savepoint_metadata(path).states), (
        f"got {clean.format()}, should be clean with every row counted"
    )
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(path, broken)
    meta = read_savepoint_metadata(broken)
    state = meta.state("profile")
    file, = state_data_files(broken, state)
    table = pq.read_table(file)
    values = table.column("value").to_pylist()
    values[10] = values[10] + b"\x00"  # one byte left over
    groups = table.column("key_group").to_pylist()
    groups[20] = (groups[20] + 1) % meta.max_parallelism  # a key outside its key group
    table = table.set_column(4, "value", pa.array(values, pa.binary()))
    table = table.set_column(0, table.schema.field("key_group"), pa.array(groups, pa.int32()))
    pq.write_table(table, file)
    relist(broken)
    report = verify_savepoint(str(broken), expect=path, spark=spark)
    profile = next(s for s in report.states if s.name == "profile")
    assert not report.ok and profile.bad_entries == 2, f"got {report.format()}, should find 2 bad entries"
    text = "\n".join(profile.samples)
    assert "left" in text and "key group" in text, f"got samples {profile.samples}, should say what is wrong"
    assert profile.mismatches == 3, f"got {profile.mismatches} mismatches, should be 3 (a value and a key moved)"
    others = [s for s in report.states if s.name != "profile"]
    assert all(s.ok for s in others), f"got {report.format()}, should flag only 'profile'"


def test_verify_judges_every_decoded_entry_in_the_same_pass(spark, source):
    from conformance.spark import verify_savepoint

    path, content = source

    def judges(state, serializer):
        if state.name != "profile":
            return None
        return lambda key, namespace, user_key, value: None if key % 7 else f"key {key} rejected"

    report = verify_savepoint(path, spark=spark, judges=judges, sample=2)
    profile = next(s for s in report.states if s.name == "profile")
    want = sum(1 for key in content["profile"] if key % 7 == 0)
    assert (profile.rejected, profile.bad_entries) == (want, 0), f"got {report.format()}, should reject {want} entries"
    assert len(profile.rejected_samples) == 2 and all("rejected" in x for x in profile.rejected_samples), (
        f"got samples {profile.rejected_samples}, should keep 2 of the judge's messages")
    assert not report.ok, "got ok, should not be ok when the judge rejected entries"
    others = [s for s in report.states if s.name != "profile"]
    assert others and all(s.ok for s in others), f"got {report.format()}, should judge only 'profile'"


def test_compare_savepoints_counts_what_differs_and_identical_savepoints_what_is_the_same(spark, source, tmp_path):
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from conformance.spark import compare_savepoints, identical_savepoints

    path, _ = source
    names = [s.name for s in read_savepoint_metadata(path).states]
    same = compare_savepoints(path, path, spark=spark)
    assert same.ok and [s.name for s in same.states] == names, f"got {same.format()}, should be the same"
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    assert identical_savepoints(path, copy), "got a copy that is not identical, should be byte for byte the same"
    file, = state_data_files(copy, read_savepoint_metadata(copy).state("profile"))
    table = pq.read_table(file)
    values = table.column("value").to_pylist()
    i = next(i for i in range(1, len(values)) if values[i] != values[0])
    values[0], values[i] = values[i], values[0]  # two keys' values swapped: the same multiset of values
    pq.write_table(table.set_column(4, "value", pa.array(values, pa.binary())), file)
    relist(copy)
    assert not identical_savepoints(path, copy), "got identical, should differ after the swap"
    report = compare_savepoints(str(copy), path, sample=1, spark=spark)
    profile = next(s for s in report.states if s.name == "profile")
    assert not report.ok and profile.mismatches == 2, f"got {report.format()}, should find the 2 swapped entries"
    assert len(profile.samples) == 1 and "should be" in profile.samples[0], f"got {profile.samples}, should show 1"
    assert all(s.mismatches == 0 for s in report.states if s.name != "profile"), f"got {report.format()}"


def test_verify_counts_every_entry_that_holds_an_undecodable_value(spark, source, tmp_path):
    # Equal value bytes of a batch are decoded once: each entry holding them still counts.
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from conformance.spark import verify_savepoint

    path, _ = source
    broken = tmp_path / "broken"
    shutil.copytree(path, broken)
    state = read_savepoint_metadata(broken).state("profile")
    file, = state_data_files(broken, state)
    table = pq.read_table(file)
    values = table.column("value").to_pylist()
    corrupt = values[10] + b"\x00"
    for i in (10, 11, 15):
        values[i] = corrupt
    pq.write_table(table.set_column(4, "value", pa.array(values, pa.binary())), file)
    relist(broken)
    report = verify_savepoint(str(broken), spark=spark)
    profile = next(s for s in report.states if s.name == "profile")
    assert profile.bad_entries == 3, f"got {report.format()}, should count the 3 entries holding the bytes"
    assert profile.entries == len(values), f"got {profile.entries} entries, should be {len(values)}"


def test_verify_accepts_the_same_rows_in_differently_written_files(spark, source, tmp_path):
    # Other Parquet settings give other file bytes for the same rows: not byte-identical
    # files, but identical content, so no mismatch (the digest pass decides, no join).
    import shutil

    import pyarrow.parquet as pq

    from conformance.spark import verify_savepoint

    path, _ = source
    rewritten = tmp_path / "rewritten"
    shutil.copytree(path, rewritten)
    file, = state_data_files(rewritten, read_savepoint_metadata(rewritten).state("profile"))
    before = open(file, "rb").read()
    pq.write_table(pq.read_table(file), file, compression="snappy", row_group_size=7)
    assert open(file, "rb").read() != before, "the rewrite should change the file's bytes"
    relist(rewritten)
    report = verify_savepoint(str(rewritten), expect=path, spark=spark)
    assert report.ok, f"got {report.format()}, should find the same content"


def test_verify_finds_values_swapped_between_keys(spark, source, tmp_path):
    # Both savepoints hold the same multiset of values, and every row decodes: only the
    # pairing of keys with values differs. The digest pass must still see the state differ.
    import shutil

    import pyarrow as pa
    import pyarrow.parquet as pq

    from conformance.spark import verify_savepoint

    path, _ = source
    swapped = tmp_path / "swapped"
    shutil.copytree(path, swapped)
    file, = state_data_files(swapped, read_savepoint_metadata(swapped).state("profile"))
    table = pq.read_table(file)
    values = table.column("value").to_pylist()
    i, j = next((i, j) for i in range(len(values)) for j in range(i + 1, len(values)) if values[i] != values[j])
    values[i], values[j] = values[j], values[i]
    pq.write_table(table.set_column(4, "value", pa.array(values, pa.binary())), file)
    relist(swapped)
    report = verify_savepoint(str(swapped), expect=path, spark=spark)
    profile = next(s for s in report.states if s.name == "profile")
    assert profile.bad_entries == 0, f"got {report.format()}, should decode every entry"
    assert profile.mismatches == 2, f"got {report.format()}, should find 2 mismatching entries (a swap)"
    assert all(s.ok for s in report.states if s.name != "profile"), f"got {report.format()}, should flag only 'profile'"


# -- CLI -------------------------------------------------------------------------------------------------
def _cli(*argv):
    from conformance.cli import main

    return main(list(argv))


def test_cli_migrate_and_verify_exit_statuses(spark, source, reference_results, tmp_path, capsys):
    path, _ = source
    out = str(tmp_path / "cli-out")
    spec = "spark_support:new_descriptors"
    status = _cli("migrate", path, "--serializers", spec, "--out", out, "--schema-evolution", "--spark", "local[2]")
    assert status == 0, f"got exit {status}, should be 0: {capsys.readouterr().err}"
    status = _cli("verify", out, "--expect", reference_results["bytes"], "--spark", "local[2]")
    assert status == 0, f"got exit {status}, should be 0: {capsys.readouterr()}"
    status = _cli("verify", out, "--expect", path, "--spark", "local[2]")
    assert status == 1, f"got exit {status}, should be 1 (content differs from the unmigrated savepoint)"
    status = _cli("migrate", path, "--serializers", spec, "--out", str(tmp_path / "again"), "--spark", "local[2]")
    assert status == 1, f"got exit {status}, should be 1 (row evolution refused without the option)"
    err = capsys.readouterr().err
    assert "pass --schema-evolution" in err, f"got {err!r}, should name the CLI's option"
    status = _cli("migrate", path, "--serializers", "no_such_module:X", "--out", str(tmp_path / "x"))
    assert status == 2, f"got exit {status}, should be 2 (unusable --serializers)"
    status = _cli("verify", str(tmp_path / "missing"))
    assert status == 2, f"got exit {status}, should be 2 (not a savepoint)"
    status = _cli("migrate", path, "--serializers", spec, "--out", out, "--schema-evolution")
    assert status == 2, f"got exit {status}, should be 2 (the output exists)"
    assert not os.path.exists(tmp_path / "x"), "got output for an unusable command, should be none"


def test_session_is_reused_and_a_second_master_refused(spark):
    from conformance.spark import SparkSessionError, get_session

    assert get_session() is spark, "got a new session, should reuse the running one"
    with pytest.raises(SparkSessionError) as info:
        get_session("local[3]")
    assert "local[2]" in str(info.value) and "local[3]" in str(info.value), f"got {info.value}"
    conf = spark.sparkContext.getConf()
    assert conf.get("spark.pyspark.python") == sys.executable, f"got {conf.get('spark.pyspark.python')}, should be {sys.executable}"
    assert conf.get("spark.ui.enabled") == "false", f"got UI {conf.get('spark.ui.enabled')}, should be off"


def test_missing_and_wrong_java_are_named(tmp_path, monkeypatch):
    from conformance.spark import JavaNotFoundError, JavaVersionError, java_version
    from reference import StateError

    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nojdk"))
    with pytest.raises(JavaNotFoundError) as info:
        java_version()
    assert isinstance(info.value, StateError) and "Java not found" in str(info.value) and "nojdk" in str(info.value), f"got {info.value}"
    fake = tmp_path / "jdk11" / "bin"
    fake.mkdir(parents=True)
    (fake / "java").write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    (fake / "java").chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jdk11"))
    with pytest.raises(JavaVersionError) as info:
        java_version()
    assert "Java 11" in str(info.value) and "17" in str(info.value), f"got {info.value}"


def test_importing_the_pipeline_and_the_cli_does_not_import_pyspark():
    code = (
        "import sys, reference, reference.backends, conformance, conformance.cli, conformance.spark, "
        "conformance.cli._spark, conformance._checks.spark, conformance.spark.migrate, conformance.spark.verify, "
        "conformance.spark.compare\n"
        "print('pyspark' in sys.modules or any(m.startswith('pyspark.') for m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"got exit {proc.returncode}: {proc.stderr[-500:]}, should import cleanly"
    assert proc.stdout.strip() == "False", f"got pyspark imported ({proc.stdout.strip()}), should be imported lazily"
