"""The built-ins in Flink's dialect: ``flink_row``'s and ``flink_row_1_10``'s snapshots are,
byte for byte, the ``serializer-snapshot`` of Flink's own ``RowSerializerUpgradeTest`` (since
1.15, and of 1.10; read in place from ``../shared/flink_golden`` beside the repository; skipped
when that folder is absent), and the rows stay positional; ``pojo_with_subclasses``'s registered subclass evolves on its own, its next release
current only while that evolution runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance._builtins.subjects import (
    builtin_subject,
    flink_1_10_row_snapshot,
    flink_1_11_row_snapshot,
    flink_row_snapshot,
)
from reference import snapshot_from_bytes

GOLDEN = Path(__file__).resolve().parents[2].parent / "shared" / "flink_golden"
ROWS = GOLDEN / "flink-core" / "src" / "test" / "resources"
#: The releases whose row snapshot is in the form Flink writes today (outer version 4).
CURRENT = ("1.15", "1.16", "1.17", "1.18", "1.19", "1.20")


@pytest.mark.parametrize("version", CURRENT)
def test_flink_row_restores_the_snapshot_flink_writes(version):
    folder = ROWS / f"row-serializer-{version}"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (Flink's upgrade-test files are read in place, never copied)")
    flink = (folder / "serializer-snapshot").read_bytes()
    ours = flink_row_snapshot()
    assert ours == flink, f"got {ours.hex()}, should be Flink's {flink.hex()} [row-serializer-{version}]"


@pytest.mark.parametrize(("version", "written"), [("1.10", flink_1_10_row_snapshot), ("1.11", flink_1_11_row_snapshot)])
def test_flink_row_1_10_and_its_1_11_evolution_restore_the_snapshots_flink_wrote(version, written):
    # flink_row_1_10 is restored from 1.10's snapshot; its migrating evolution from 1.11's.
    folder = ROWS / f"row-serializer-{version}"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (Flink's upgrade-test files are read in place, never copied)")
    flink = (folder / "serializer-snapshot").read_bytes()
    ours = written()
    assert ours == flink, f"got {ours.hex()}, should be Flink's {flink.hex()} [row-serializer-{version}]"


def test_flink_row_1_10_is_positional_without_a_row_kind():
    serializer = builtin_subject("flink_row_1_10").make_serializer()
    assert serializer.positional, "got a row matched by name, should be positional (restored from Flink's form)"
    assert not serializer.supports_row_kind, "got a row with a kind, should have none (Flink 1.10's layout)"
    assert serializer.to_bytes(("a", 1, None, "b"))[0] == 0b0010_0000, "got another null mask, should be f2's bit alone"


def test_flink_row_is_positional_and_stays_so_through_its_own_snapshot():
    serializer = builtin_subject("flink_row").make_serializer()
    assert serializer.positional, "got a row matched by name, should be positional (restored from Flink's form)"
    from reference import snapshot_to_bytes

    again = snapshot_from_bytes(snapshot_to_bytes(serializer.snapshot_configuration())).restore_serializer()
    assert again.positional, "got a row matched by name after its own snapshot, should stay positional"
    assert again.field_names == ["f0", "f1", "f2", "f3"], f"got {again.field_names}, should be Flink's f0..f3"


def test_an_evolving_registered_subclass_is_current_only_while_its_evolution_runs():
    from conformance import RunConfig, check_serializer
    from conformance._user_serializers import Circle, CircleWithColour
    from reference import lookup_type

    subject = builtin_subject("pojo_with_subclasses")
    evolutions = [e for e in subject.evolutions if e.classes is not None]
    assert len(evolutions) == 2, f"got {[e.name for e in evolutions]}, should be the two next releases' Circles"
    for evolution in evolutions:
        evolution.serializer()  # building it registers the next release's Circle, then the current one again
        assert lookup_type("conformance._user_serializers:Circle") is Circle, (
            f"got the next release's Circle after building {evolution.name!r}, should be Circle")
    report = check_serializer(subject, RunConfig(examples=10, seed=3, checks=("migration",)))
    assert report.certified, f"got {report.failures}, should migrate the circles to {CircleWithColour.__name__}"
    assert lookup_type("conformance._user_serializers:Circle") is Circle, "got the next release's Circle after the run"


def test_a_next_release_class_of_the_same_name_travels_with_the_serializer_to_another_process():
    """``CircleWithColour`` is the next release's ``Circle`` (same module and qualified name) in
    this process: by name, another process would find the current ``Circle``, so the class goes
    along (cloudpickle, as Spark ships tasks); the current class still pickles by name, also in a
    process whose registry holds the next release's class."""
    cloudpickle = pytest.importorskip("pyspark.cloudpickle")
    from conformance._user_serializers import Circle, CircleWithColour, Shape
    from reference.serializers import PojoSerializer

    new = PojoSerializer(Shape, registered_subclasses=[CircleWithColour])
    old = PojoSerializer(Shape, registered_subclasses=[Circle])  # Circle is current again
    payload = cloudpickle.dumps(new) + cloudpickle.dumps(old)
    code = (
        "import io, pickle, sys\n"
        "stream = io.BytesIO(sys.stdin.buffer.read())\n"
        "for s in (pickle.load(stream), pickle.load(stream)):\n"
        "    sub = s.registered[0][1].dataclass_type  # what the subclass's records are read as\n"
        "    print(sub.__qualname__, ','.join(f.name for f in __import__('dataclasses').fields(sub)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True, timeout=60)
    assert done.stdout.decode().split() == ["Circle", "name,radius,colour", "Circle", "name,radius"], (
        f"got {done.stdout!r} {done.stderr[-400:]!r}, should be the next release's Circle (with colour), "
        "then the current one"
    )


def test_each_built_in_declares_the_flink_snapshot_of_flink_snapshots_json():
    """Every entry of flink_snapshots.json (Flink 2.3's bytes, compared with Flink in
    tests/flink/test_flink_crosscheck.py) is a built-in's Subject(flink_snapshot=...), and a
    built-in without an entry declares none."""
    import json

    from conformance._builtins.subjects import BUILTIN_NAMES

    path = Path(__file__).resolve().parents[2] / "conformance" / "_builtins" / "flink_snapshots.json"
    entries = json.loads(path.read_text())["snapshots"]
    unknown = sorted(set(entries) - set(BUILTIN_NAMES))
    assert not unknown, f"got entries {unknown} naming no built-in, should name built-ins only"
    for name in BUILTIN_NAMES:
        got = builtin_subject(name).flink_snapshot
        should = bytes.fromhex(entries[name]) if name in entries else None
        assert got == should, f"got {got and got.hex()}, should be {should and should.hex()} [builtin:{name}]"
    assert len(entries) == 17, f"got {len(entries)} entries, should be 17 (the built-ins Flink has a serializer for)"
