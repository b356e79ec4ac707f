"""Subject validation, the check registry's order and skipping, results and their JSON shape."""

from __future__ import annotations

import dataclasses
import threading

import pytest
from hypothesis import strategies as st
from zoo_base import FixedIntSerializer, FixedIntSnapshot, fixed_int_values

from conformance import (
    CheckResult,
    Evolution,
    Report,
    RunConfig,
    Subject,
    SubjectError,
    UnknownCheckError,
    check_serializer,
)
from conformance._engine.registry import LAYERS, all_checks, load_families
from reference import types as t
from reference.serializers import (
    DoubleSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    PojoSerializer,
    StringSerializer,
)

LONGS = st.integers(-(2**63), 2**63 - 1)


@dataclasses.dataclass
class PlainPoint:
    """A dataclass of the user's own: no schema of the strategies describes its fields."""

    x: int = 0


POINTS = st.builds(PlainPoint, st.integers(-5, 5))


class NeedsArguments(LongSerializer):
    def __init__(self, width: int) -> None:
        self.width = width


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda: Subject(None, LONGS), "zero-argument factory"),
        (lambda: Subject(42, LONGS), "TypeSerializer instance"),
        (lambda: Subject(NeedsArguments, LONGS), "lambda: MySerializer(config)"),
        (lambda: Subject(lambda: "nope", LONGS), "returned str"),
        (lambda: Subject(LongSerializer()), "values=...) is missing"),
        (lambda: Subject(LongSerializer(), [1, 2]), "st.sampled_from"),
        (lambda: Subject(LongSerializer(), LONGS, evolutions=[IntSerializer()]), "wrap it"),
        (lambda: Subject(LongSerializer(), LONGS, key="yes"), "True or False"),
        (lambda: Subject(LongSerializer(), LONGS, release="1.0"), "golden="),
        (lambda: Subject(PojoSerializer(PlainPoint), POINTS, schema=t.PojoType(PlainPoint)), "strategies.pojo_type"),
        (lambda: Subject(ListSerializer(PojoSerializer(PlainPoint)), st.lists(POINTS),
                         schema=t.ListType(t.PojoType(PlainPoint))), "PojoType('PlainPoint')"),
        (lambda: Evolution(IntSerializer(), "after_migration"), "did you mean 'compatible_after_migration'"),
        (lambda: Evolution(IntSerializer(), "compatible_after_migration"), "needs migrate="),
        (lambda: Evolution(IntSerializer(), "incompatible", migrate=int), "contradicts itself"),
        (lambda: Evolution(IntSerializer(), "compatible_as_is", reason_contains="x"), "only applies"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_bad_subjects_are_refused_with_a_fix(make, words):
    with pytest.raises(SubjectError) as info:
        make()
    assert words in str(info.value), f"got {info.value!s}, should mention {words!r}"


def test_a_factory_gives_a_fresh_serializer_each_time():
    subject = Subject(LongSerializer, LONGS)
    first, second = subject.make_serializer(), subject.make_serializer()
    assert first == second and first is not second, f"got {first!r} and {second!r}, should be equal distinct instances"


def test_checks_run_in_layers():
    load_families()
    layers = [c.layer for c in all_checks()]
    assert layers == sorted(layers), f"got layer order {layers}, should be non-decreasing"
    prefixes = {c.id.split(".")[0] for c in all_checks()}
    assert {"roundtrip", "snapshot", "migration", "versioning", "backends"} <= prefixes, (
        f"got families {prefixes}, should include every built-in family"
    )
    astray = [(c.id, c.family) for c in all_checks() if c.id.split(".")[0] != c.family]
    assert not astray, f"got checks whose id prefix is not their family {astray}, should be <family>.<name>"
    assert list(LAYERS)[:4] == ["api", "roundtrip", "snapshot", "versioning"], f"got {list(LAYERS)}"


def test_correct_serializers_certify_and_json_has_the_documented_shape():
    report = check_serializer(Subject(ListSerializer(DoubleSerializer()), st.lists(st.floats())),
                              RunConfig(examples=20, seed=3, checks=("roundtrip", "snapshot")))
    assert isinstance(report, Report)
    assert report.certified, f"got failures {report.failures}, should certify"
    data = report.to_json()
    assert {"subject", "certified", "checks", "seed", "profile", "examples", "options", "versions"} <= set(data), \
        f"got keys {set(data)}"
    for item in data["checks"]:
        assert {"id", "family", "status", "message", "example", "seconds"} == set(item), f"got {set(item)}"
        assert item["status"] in ("passed", "failed", "skipped"), f"got {item['status']}"
        assert item["family"] in ("roundtrip", "snapshot"), f"got family {item['family']}"
        assert item["seconds"] >= 0, f"got {item['seconds']} seconds for {item['id']}"
    assert data["seed"] == 3 and "hypothesis" in data["versions"], f"got certificate {data}"
    assert data["options"]["backends"] == ["heap", "bytes"], f"got options {data['options']}"


class DropsLastCharacter(StringSerializer):
    """Writes one character too few: the round trip differs for every non-empty string."""

    def serialize(self, value, target):
        super().serialize(value[:-1] if value else value, target)


def test_dependants_of_a_failed_check_are_skipped_with_the_reason():
    report = check_serializer(Subject(DropsLastCharacter(), st.text()),
                              RunConfig(examples=20, seed=1, checks=("roundtrip",)))
    bit = report["roundtrip.bit_exact"]
    assert bit.status == "failed", f"got {bit}, should fail"
    assert bit.example == "'0'", f"got example {bit.example!r}, should be the shrunk '0'"
    assert "got ''" in bit.message and "should be '0'" in bit.message, f"got {bit.message!r}"
    seq = report["roundtrip.sequence"]
    assert seq.status == "skipped" and "roundtrip.bit_exact" in seq.message, f"got {seq}"
    assert not report.certified


def test_expected_failures_are_xfailed_and_do_not_block_certification():
    report = check_serializer(Subject(DropsLastCharacter(), st.text()),
                              RunConfig(examples=10, seed=1, checks=("roundtrip",),
                                        expected_failures={"roundtrip.bit_exact": "known"}))
    result = report["roundtrip.bit_exact"]
    assert result.status == "xfailed" and result.expected_failure == "known", f"got {result}"
    assert report.to_json()["checks"][[c.id for c in report].index("roundtrip.bit_exact")]["status"] == "xfailed"
    assert report.certified, f"got failures {report.failures}, should certify (failure expected)"


@pytest.mark.parametrize("kwargs, words", [
    ({"expected_failures": {"roundtrip.no_such_check": "typo"}}, ["roundtrip.no_such_check"]),
    ({"checks": ("roundtrip.bitexact",)}, ["roundtrip.bitexact", "did you mean 'roundtrip.bit_exact'"]),
    ({"checks": ("spark.history",)}, ["spark family", "Spark master"]),
    ({"checks": ("table.sequential",)}, ["does not apply to a serializer subject"]),
])
def test_unknown_check_ids_are_refused_before_anything_runs(kwargs, words):
    with pytest.raises(UnknownCheckError) as caught:
        check_serializer(Subject(DropsLastCharacter(), st.text()), RunConfig(examples=10, seed=1, **kwargs))
    assert all(w in str(caught.value) for w in words), f"got {caught.value!r}, should mention {words}"


def test_check_result_renders_id_status_and_example():
    text = str(CheckResult("roundtrip.bit_exact", "roundtrip", "failed", "got 1, should be 2", "1"))
    assert text.startswith("roundtrip.bit_exact [roundtrip] failed: got 1") and "example: 1" in text, f"got {text!r}"


@pytest.mark.parametrize("name", ["row", "pojo", "enum"])
def test_builtin_subjects_migrate_declared_and_generated_evolutions(name):
    from conformance._builtins.subjects import builtin_subject

    subject = builtin_subject(name)
    assert subject.evolutions, f"got no declared evolutions for builtin:{name}, should draw some"
    report = check_serializer(subject, RunConfig(examples=15, seed=4, checks=("migration",)))
    assert report.certified, f"got failures {[str(r) for r in report.failures]}, should certify"
    generated = report["migration.generated"]
    assert generated.status == "passed", f"got {generated}, should run generated evolutions and pass"


def test_preloaded_prerequisite_failure_skips_dependants_without_running_them():
    # The two-lane CLI hands one lane's results to the other: a failure there must skip the
    # dependants here, and a preloaded result is never run again.
    from conformance._engine.report import CheckResult
    from conformance._engine.runner import Runner
    from reference.serializers import LongSerializer

    runner = Runner(Subject(LongSerializer(), st.integers(-(2**63), 2**63 - 1)),
                    RunConfig(examples=5, seed=1))
    try:
        failed = CheckResult("roundtrip.bit_exact", "roundtrip", "failed", "planted")
        runner.preload([failed])
        got = runner.result("roundtrip.sequence")
        assert runner.result("roundtrip.bit_exact") is failed, "should keep the preloaded result, not rerun it"
    finally:
        runner.close()
    assert got.status == "skipped" and "roundtrip.bit_exact" in got.message, (
        f"got {got.status}: {got.message}, should skip for the preloaded failure"
    )


def test_a_runners_scratch_directory_is_removed_by_close_collection_or_the_next_runner(tmp_path, monkeypatch):
    import gc
    import os
    import tempfile

    from conformance._engine.runner import WORK_PREFIX, Runner
    from reference.savepoint import owned_temp_name
    from reference.serializers import LongSerializer

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def runner():
        return Runner(Subject(LongSerializer(), st.integers(-(2**63), 2**63 - 1)), RunConfig(examples=5, seed=1))

    closed = runner()
    made = closed.work_dir()
    assert os.path.dirname(made) == str(tmp_path) and os.path.basename(made).startswith(WORK_PREFIX), (
        f"got {made}, should be {WORK_PREFIX}<owner> in the temporary directory {tmp_path}")
    assert os.path.isdir(made) and closed.work_dir() == made, f"got {made} missing or remade, should be made once"
    closed.close()
    assert not os.path.exists(made), f"got {made} after close(), should be removed"

    forgotten = runner()
    made = forgotten.work_dir()
    del forgotten
    gc.collect()
    assert not os.path.exists(made), f"got {made} after its runner was collected unclosed, should be removed"

    # A process killed mid-run: a dead pid (larger than any pid the kernel hands out) owns it.
    dead = tmp_path / owned_temp_name(WORK_PREFIX).replace(f"-{os.getpid()}-", "-4194305-")
    (dead / "savepoint-1").mkdir(parents=True)
    kept = tmp_path / "conformance-of-something-else"
    kept.mkdir()
    later = runner()
    try:
        later.work_dir()
    finally:
        later.close()
    assert not dead.exists(), f"got {dead.name} after the next runner made its directory, should be removed"
    assert kept.exists(), f"got {kept.name} removed, should be kept (not a runner's)"


def test_the_warm_up_leaves_nothing_and_removes_a_killed_ones_directory(tmp_path, monkeypatch):
    import os
    import tempfile

    from conformance._engine import warmup
    from reference.savepoint import owned_temp_name

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / owned_temp_name(warmup.WARMUP_PREFIX).replace(f"-{os.getpid()}-", "-4194305-")
    dead.mkdir()
    warmup._warm_up()
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [], f"got {left} after a warm-up, should be nothing (its own directory removed, and the dead one's)"


def test_background_warm_up_leaves_no_half_imported_numpy_for_hypothesis():
    # Hypothesis reads numpy from sys.modules while drawing: the warm-up thread (which imports
    # pyarrow, hence numpy) must find numpy fully imported by the caller, never start it.
    import subprocess
    import sys

    code = ("import sys\n"
            "from conformance._engine.warmup import warm_up_in_background\n"
            "warm_up_in_background()\n"
            "numpy = sys.modules.get('numpy')\n"
            "assert numpy is not None and hasattr(numpy, 'ndarray'), 'numpy not imported before the thread'\n"
            "import threading\n"
            "for thread in threading.enumerate():\n"
            "    if thread.name == 'conformance-warmup':\n"
            "        thread.join()\n")
    env = {k: v for k, v in __import__("os").environ.items() if k != "CONFORMANCE_NO_WARMUP"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"got exit {proc.returncode}: {proc.stderr[-800:]}, should import numpy first"


def test_a_pickle_subjects_incompatible_evolution_is_refused_as_incompatible_not_as_untrusted():
    # The harness restores savepoints it wrote itself from the subject's values (allow_pickle).
    from reference.serializers import PickleSerializer

    subject = Subject(PickleSerializer(), st.integers(-5, 5),
                      evolutions=[Evolution(LongSerializer(), "incompatible")])
    report = check_serializer(subject, RunConfig(examples=5, seed=2, checks=("backends.incompatible",)))
    result = report["backends.incompatible"]
    assert result.status == "passed", f"got {result}, should refuse with StateMigrationError"


def test_the_user_shaped_builtins_take_the_paths_they_exist_for():
    import dataclasses

    from conformance._builtins.subjects import builtin_subject
    from reference import TypeSerializerSnapshot, migrate_element_form

    pojo = builtin_subject("annotated_pojo").schema.cls
    explicit = [f.name for f in dataclasses.fields(pojo) if "serializer" in f.metadata]
    assert not explicit, f"got explicit serializers for {explicit}, should be inferred from the annotations"
    row = builtin_subject("row_of_user_type").make_serializer()
    field = row.fields[1][1]
    assert field.duplicate() is not field, "got duplicate() is the field serializer itself, should be a new one"
    snapshot = type(field.snapshot_configuration())
    assert snapshot.resolve_schema_compatibility is TypeSerializerSnapshot.resolve_schema_compatibility, \
        f"got {snapshot.__name__} implementing the 1.19+ direction, should implement only the pre-1.19 one"
    assert migrate_element_form(snapshot) == "writing", \
        f"got {snapshot.__name__}.migrate_element in the {migrate_element_form(snapshot)} form, should write"
    verdicts = sorted(e.expect.value for e in builtin_subject("row_of_user_type").evolutions)
    assert verdicts == ["compatible_after_migration", "compatible_as_is", "incompatible"], f"got {verdicts}"
    # A POJO reconfigured for a newly registered subclass keeps the one it had, which reads as
    # is, at its tag and with its serializer (the branch a reconfigured POJO takes for it).
    from conformance._user_serializers import Circle, Square
    from reference import resolve_compatibility

    shapes = builtin_subject("pojo_with_subclasses")
    square = next(e for e in shapes.evolutions if e.name.startswith("Square registered")).serializer()
    result = resolve_compatibility(square, shapes.make_serializer().snapshot_configuration())
    assert result.is_compatible_with_reconfigured_serializer(), f"got {result}, should be reconfigured"
    registered = [(cls, type(s).__name__) for cls, s in result.get_reconfigured_serializer().registered]
    assert registered == [(Circle, "PojoSerializer"), (Square, "PojoSerializer")], (
        f"got {registered}, should be Circle at its old tag 0 with its serializer, then Square")


class LockedInt(FixedIntSerializer):
    """Equality over its attributes (the base class's), one of which is a lock: no two
    instances are equal, whatever their configuration."""

    def __init__(self, width: int = 4) -> None:
        super().__init__(width)
        self._lock = threading.Lock()

    def snapshot_configuration(self) -> LockedIntSnapshot:
        return LockedIntSnapshot(self.width)


class LockedIntSnapshot(FixedIntSnapshot):
    def restore_serializer(self) -> LockedInt:
        return LockedInt(self.width)


def test_a_serializer_equal_only_to_itself_is_told_its_eq_not_its_snapshot_is_wrong():
    report = check_serializer(Subject(LockedInt(), fixed_int_values(4)),
                              RunConfig(checks=["snapshot.restore"], examples=5, seed=3))
    result = report["snapshot.restore"]
    assert result.status == "failed", f"got {result.status}: {result.message}, should fail"
    assert "__eq__ compares something other than configuration" in result.message and "forgot" not in result.message, (
        f"got {result.message!r}, should blame __eq__, not the snapshot")


def test_each_family_is_one_module_whose_docstring_lists_its_checks():
    import importlib

    load_families(spark=True, table=True)
    checks = all_checks()
    astray = [(c.id, c.func.__module__) for c in checks if c.func.__module__ != f"conformance._checks.{c.family}"]
    assert not astray, f"got checks registered outside their family's module {astray}, should be in _checks/<family>.py"
    for family in ("roundtrip", "snapshot", "versioning", "migration", "backends"):
        doc = importlib.import_module(f"conformance._checks.{family}").__doc__ or ""
        unlisted = [c.id for c in checks if c.family == family and f"``{c.id}``" not in doc]
        assert not unlisted, f"got {unlisted} missing from conformance/_checks/{family}.py's docstring, should list each"


def test_scratch_goes_to_memory_only_where_the_temporary_directory_is_the_default(monkeypatch, tmp_path):
    """A runner's scratch directory is made in the memory-backed directory when the temporary
    directory is the system's default and that directory has room; TMPDIR's choice otherwise."""
    import tempfile

    from conformance._engine import scratch

    memory = tmp_path / "memory"
    memory.mkdir()
    default = str(tmp_path / "default")
    monkeypatch.setattr(scratch, "MEMORY_SCRATCH", str(memory))
    monkeypatch.setattr(scratch, "_SYSTEM_TEMP", default)
    monkeypatch.setattr(scratch, "MEMORY_SCRATCH_FREE", 1)
    monkeypatch.setattr(tempfile, "tempdir", default)
    got = scratch.scratch_parent()
    assert got == str(memory), f"got {got}, should be the memory directory {memory} (default temporary directory)"

    monkeypatch.setattr(scratch, "MEMORY_SCRATCH_FREE", 1 << 62)
    got = scratch.scratch_parent()
    assert got == default, f"got {got}, should be the temporary directory {default} (no room in memory)"

    monkeypatch.setattr(scratch, "MEMORY_SCRATCH_FREE", 1)
    monkeypatch.setattr(scratch, "MEMORY_SCRATCH", str(tmp_path / "missing"))
    got = scratch.scratch_parent()
    assert got == default, f"got {got}, should be the temporary directory {default} (no memory directory)"

    monkeypatch.setattr(scratch, "MEMORY_SCRATCH", str(memory))
    chosen = str(tmp_path / "chosen")
    monkeypatch.setattr(tempfile, "tempdir", chosen)
    got = scratch.scratch_parent()
    assert got == chosen, f"got {got}, should be the temporary directory chosen by the user {chosen}"
