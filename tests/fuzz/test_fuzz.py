"""The fuzzing suite: hypothesis draws mutations of valid records, snapshots and savepoints of
every configuration in ``fuzzing.CONFIGS`` (and of the real Flink savepoints in
tests/data/flink_savepoints) and runs each against its entry points under the
canary (no import, no unpickling without opt-in) and the limits (``TIME_LIMIT`` per input,
``MEMORY_LIMIT`` of peak growth). A fixed small budget runs in the fast suite; the ``slow``
variants run many more examples; ``campaign.py`` runs hundreds of thousands."""

from __future__ import annotations

import random

import fuzzing
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FAST = {"records": 150, "snapshots": 100, "savepoints": 25, "flink": 60}
SLOW = {"records": 20000, "snapshots": 10000, "savepoints": 1500, "flink": 5000}
_SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fuzz-bases")
    made = fuzzing.make_bases(str(directory))
    fuzzing.warm_up(made)
    fuzzing.canary()
    return made


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return str(tmp_path_factory.mktemp("fuzz-scratch"))


def _check(outcome: fuzzing.Outcome) -> None:
    assert outcome.problem is None, (
        f"got {fuzzing.describe(outcome)}, should be a value or a StateError within "
        f"{fuzzing.TIME_LIMIT} s, importing and unpickling nothing"
    )


def _records(bases, data):
    _check(fuzzing.run_guarded(*fuzzing.record_input(fuzzing.HypothesisSource(data))))


def _snapshots(bases, data):
    _check(fuzzing.run_guarded(*fuzzing.snapshot_input(fuzzing.HypothesisSource(data))))


def _savepoints(bases, scratch, data):
    _check(fuzzing.run_guarded(*fuzzing.savepoint_input(fuzzing.HypothesisSource(data), bases, scratch)))


def _flink(scratch, data):
    _check(fuzzing.run_guarded(*fuzzing.flink_input(fuzzing.HypothesisSource(data), scratch)))


@settings(max_examples=FAST["flink"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_flink_savepoints(bases, scratch, data):
    _flink(scratch, data)


@pytest.mark.slow
@settings(max_examples=SLOW["flink"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_flink_savepoints_long(bases, scratch, data):
    _flink(scratch, data)


@settings(max_examples=FAST["records"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_records(bases, data):
    _records(bases, data)


@settings(max_examples=FAST["snapshots"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_snapshots(bases, data):
    _snapshots(bases, data)


@settings(max_examples=FAST["savepoints"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_savepoints(bases, scratch, data):
    _savepoints(bases, scratch, data)


@pytest.mark.slow
@settings(max_examples=SLOW["records"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_records_long(bases, data):
    _records(bases, data)


@pytest.mark.slow
@settings(max_examples=SLOW["snapshots"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_snapshots_long(bases, data):
    _snapshots(bases, data)


@pytest.mark.slow
@settings(max_examples=SLOW["savepoints"], **_SETTINGS)
@given(data=st.data())
def test_fuzz_savepoints_long(bases, scratch, data):
    _savepoints(bases, scratch, data)


@pytest.mark.parametrize("field", ["data", "file"])
@pytest.mark.parametrize("backend", ["heap", "bytes"])
def test_hostile_listed_paths(bases, scratch, field, backend):
    """Every hostile path of the campaign's listing mutation, as a data directory and as a data
    file name, is refused with a StateError by every savepoint reader (a path under a file and
    an over-long name raised NotADirectoryError and OSError)."""
    config = next(c for c in fuzzing.CONFIGS if c.name == "long")
    found = [fuzzing.describe(outcome) for hostile in fuzzing.HOSTILE_PATHS
             if (outcome := fuzzing.run_guarded(*fuzzing.listed_path_input(
                 config, bases, scratch, field, hostile, backend))).problem is not None]
    assert found == [], f"got {found}, should refuse every hostile path with a StateError"


def test_the_canary_sees_imports_unpicklings_and_hangs(bases):
    """The canary must be able to fail: an import, an unpickling without opt-in, a hang and a
    non-StateError exception are each reported."""
    import pickle
    import sys

    config = next(c for c in fuzzing.CONFIGS if not c.pickles)

    def import_something():
        sys.modules.pop("colorsys", None)
        import colorsys  # noqa: F401

    def hang():
        while True:
            pass

    seen = {
        "import": fuzzing.run_guarded(config, "t", b"", import_something).problem,
        "unpickle": fuzzing.run_guarded(config, "t", b"", lambda: pickle.loads(pickle.dumps(1))).problem,
        "hang": fuzzing.run_guarded(config, "t", b"", hang).problem,
        "escape": fuzzing.run_guarded(config, "t", b"", lambda: [][1]).problem,
    }
    assert seen == {k: k for k in seen}, f"got {seen}, should report each problem as its kind"
    pickling = next(c for c in fuzzing.CONFIGS if c.pickles)
    opted = fuzzing.run_guarded(pickling, "t", b"", lambda: pickle.loads(pickle.dumps(1))).problem
    assert opted is None, f"got {opted}, should allow unpickling for a configuration that chose pickle"
    for entry in fuzzing.SNAPSHOT_ENTRIES:
        seen_here = fuzzing.run_guarded(pickling, entry, b"", lambda: pickle.loads(pickle.dumps(1))).problem
        assert seen_here == "unpickle", (
            f"got {seen_here} for {entry}, should report unpickling through a serializer restored from "
            "snapshot bytes even for a configuration that chose pickle"
        )


def test_a_hang_is_cpu_time_or_a_blocked_wait_not_a_busy_machine(bases, monkeypatch):
    """Time spent waiting for the CPU (another process running) is no hang; CPU time past
    TIME_LIMIT is, and so is a wait past WALL_LIMIT (a read that blocks)."""
    import time

    config = next(c for c in fuzzing.CONFIGS if not c.pickles)
    monkeypatch.setattr(fuzzing, "TIME_LIMIT", 0.2)
    monkeypatch.setattr(fuzzing, "WALL_LIMIT", 3.0)

    def spin():
        end = time.process_time() + 1.0
        while time.process_time() < end:
            pass

    seen = {
        "idle 0.5 s": fuzzing.run_guarded(config, "t", b"", lambda: time.sleep(0.5)).problem,
        "busy 1 s": fuzzing.run_guarded(config, "t", b"", spin).problem,
        "blocked 5 s": fuzzing.run_guarded(config, "t", b"", lambda: time.sleep(5)).problem,
    }
    assert seen == {"idle 0.5 s": None, "busy 1 s": "hang", "blocked 5 s": "hang"}, (
        f"got {seen}, should be no hang for an idle wait under WALL_LIMIT and a hang for CPU time past "
        "TIME_LIMIT or a wait past WALL_LIMIT")


@pytest.mark.parametrize("config", [c for c in fuzzing.CONFIGS if c.pickles], ids=lambda c: c.name)
def test_the_snapshot_api_unpickles_nothing(bases, config):
    """snapshot_from_bytes -> restore_serializer -> deserialize of the configuration's own
    snapshot and records (and of mutated records) unpickles nothing: the snapshot's bytes are
    no opt-in (it unpickled every record before)."""
    records = [fuzzing.mutate_bytes(r, fuzzing.RandomSource(random.Random(i))) for i, r in enumerate(config.records)]
    outcome = fuzzing.run_guarded(config, "restore_serializer", config.snapshot, fuzzing._snapshot_call(
        config, "restore_serializer", config.snapshot, records))
    assert outcome.problem is None, f"got {fuzzing.describe(outcome)}, should refuse to unpickle"
