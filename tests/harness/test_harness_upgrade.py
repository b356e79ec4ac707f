"""The release-upgrade path: release 1.0.0 of a user's Order serializer is recorded as golden
files; release 2.0.0 (a new field, snapshot version 2) must read them with its own classes.
The correct release certifies; each realistic upgrade mistake is caught first by the check
meant for it (and no check of an earlier layer fails)."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st
from test_harness_zoo import assert_caught

from conformance import Evolution, RunConfig, Subject, check_serializer

HERE = Path(__file__).resolve().parent / "upgrade"
SEED = 4321
UPGRADE = ("roundtrip", "snapshot", "versioning", "backends.history")


def load_release(tmp_path: Path, source: str, bug: str = "none", module: str = "orders"):
    """``upgrade/<source>`` as the module ``module`` (a release of the user's file, as its
    import name stays across releases), with ``BUG`` set to ``bug``."""
    text = (HERE / source).read_text().replace('BUG = "none"', f"BUG = {bug!r}")
    (tmp_path / f"{module}.py").write_text(text)
    sys.modules.pop(module, None)
    if str(tmp_path) not in sys.path:
        sys.path.insert(0, str(tmp_path))
    return importlib.import_module(module)


def _load(tmp_path: Path, source: str, bug: str = "none"):
    return load_release(tmp_path, source, bug)


@pytest.fixture
def recorded(tmp_path):
    """Release 1.0.0 recorded in tmp_path/golden; yields the directory."""
    v1 = _load(tmp_path, "orders_v1.py")
    values = st.builds(v1.Order, st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1))
    report = check_serializer(Subject(v1.OrderSerializer(), values, golden=tmp_path / "golden", release="1.0.0"),
                              RunConfig(examples=10, seed=SEED, checks=("versioning",), update_golden=True,
                                        backends=("heap",)))
    assert report.certified, f"got {[str(r) for r in report.failures]}, should record release 1.0.0"
    assert "recorded release 1.0.0" in report["versioning.golden"].message, report["versioning.golden"]
    yield tmp_path
    sys.modules.pop("orders", None)
    shutil.rmtree(tmp_path / "golden", ignore_errors=True)


def _v2_subject(tmp_path: Path, bug: str, declared: bool = True) -> Subject:
    v2 = _load(tmp_path, "orders_v2.py", bug)
    values = st.builds(v2.Order, st.integers(-2**63, 2**63 - 1), st.integers(-2**63, 2**63 - 1),
                       st.none() | st.text(max_size=5))
    releases = {"1.0.0": Evolution(expect="compatible_after_migration", migrate=lambda old: old)} if declared else {}
    return Subject(v2.OrderSerializer(), values, golden=tmp_path / "golden", releases=releases)


def test_the_correct_release_2_certifies_against_release_1(recorded):
    report = check_serializer(_v2_subject(recorded, "none"),
                              RunConfig(examples=15, seed=SEED, checks=UPGRADE))
    assert report.certified, f"got {[str(r) for r in report.failures]}, should certify"
    statuses = {r.id: r.status for r in report if r.id.startswith("versioning.upgrade_")}
    assert statuses.pop("versioning.upgrade_keys") == "skipped", f"got {statuses}: an Order is no key"
    assert set(statuses.values()) == {"passed"} and len(statuses) == 5, f"got {statuses}"


def test_an_undeclared_format_change_is_a_verdict_failure_with_the_fix(recorded):
    report = check_serializer(_v2_subject(recorded, "none", declared=False),
                              RunConfig(examples=10, seed=SEED, checks=UPGRADE))
    result = report["versioning.upgrade_verdict"]
    assert result.status == "failed", f"got {result}"
    assert "release 1.0.0" in result.message and "compatible_after_migration" in result.message, result.message
    assert "releases={'1.0.0': Evolution(expect='compatible_after_migration'" in result.message, result.message


MISTAKES = {
    "read_snapshot_ignores_version": ("versioning.upgrade_snapshot", "branch on read_version"),
    "snapshot_needs_argument": ("snapshot.zero_arg_constructor", "zero-argument constructor"),
    "restore_ignores_config": ("versioning.upgrade_restore", "RECORDED configuration"),
    "format_changed_without_version": ("versioning.upgrade_restore", "read by restore_serializer() differs at .amount"),
    "verdict_by_class_only": ("versioning.upgrade_verdict", "judged the recorded one compatible_as_is"),
    "migrates_by_position": ("versioning.upgrade_records", "after migrate_state"),
    "restored_snapshot_forgets_config": ("versioning.upgrade_backends", "restoring with release 1.0.0"),
}


@pytest.mark.parametrize("bug", sorted(MISTAKES))
def test_each_upgrade_mistake_is_caught_first_by_its_own_check(recorded, bug):
    check_id, words = MISTAKES[bug]
    report = check_serializer(_v2_subject(recorded, bug),
                              RunConfig(examples=10, seed=SEED, checks=UPGRADE, backends=("heap", "bytes")))
    assert_caught(report, check_id)
    message = report[check_id].message
    assert words in message, f"got {message!r}, should say {words!r}"
    if check_id.startswith("versioning.upgrade_"):
        assert "release 1.0.0" in message, f"got {message!r}, should name the release"
    upgrade = [r.id for r in report if r.id.startswith("versioning.upgrade_") and r.failed]
    expected = [check_id] if check_id.startswith("versioning.upgrade_") else []
    assert upgrade == expected, f"got upgrade failures {upgrade}, should be {expected} [{bug}]"


def test_a_missing_golden_directory_fails_instead_of_skipping(tmp_path):
    v1 = _load(tmp_path, "orders_v1.py")
    values = st.builds(v1.Order, st.integers(0, 9), st.integers(0, 9))
    report = check_serializer(Subject(v1.OrderSerializer(), values, golden=tmp_path / "nothing-here"),
                              RunConfig(examples=5, seed=SEED, checks=("versioning.golden",)))
    result = report["versioning.golden"]
    assert result.status == "failed" and "no recorded release at" in result.message, f"got {result}"
    assert "--update-golden" in result.message, result.message
    sys.modules.pop("orders", None)


@pytest.mark.parametrize("update_golden", [False, True])
def test_a_fresh_clone_without_the_golden_directory_is_told_to_restore_it(tmp_path, update_golden):
    """Release 2.0.0 names release 1.0.0 in releases=, but the golden directory is absent (not
    checked out): --update-golden cannot recreate 1.0.0 (it records only the current release)."""
    report = check_serializer(_v2_subject(tmp_path, "none"),
                              RunConfig(examples=5, seed=SEED, checks=("versioning.golden",),
                                        update_golden=update_golden, backends=("heap",)))
    result = report["versioning.golden"]
    assert result.status == "failed", f"got {result}, should fail: release 1.0.0 is missing"
    for words in ("['1.0.0']", "restore", "from version control", "records only the current release"):
        assert words in result.message, f"got {result.message!r}, should say {words!r}"
    assert "run with --update-golden" not in result.message and "record them" not in result.message, (
        f"got {result.message!r}, should not advise recording: a past release cannot be recorded again"
    )
    sys.modules.pop("orders", None)


def test_a_relative_golden_path_is_taken_from_the_defining_modules_folder(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "subjects.py").write_text(
        "from hypothesis import strategies as st\n"
        "from conformance import Subject\n"
        "from reference.serializers import LongSerializer\n"
        "SUBJECT = Subject(LongSerializer(), st.integers(0, 9), golden='golden/long')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "pkg"))
    monkeypatch.chdir(tmp_path)  # elsewhere than the module's folder
    sys.modules.pop("subjects", None)
    import subjects

    expected = str(tmp_path / "pkg" / "golden" / "long")
    assert subjects.SUBJECT.golden == expected, f"got {subjects.SUBJECT.golden}, should be {expected}"
    sys.modules.pop("subjects", None)


def test_values_whose_text_holds_what_eq_ignores_are_recorded_as_read_back(tmp_path):
    """A UTC datetime of fold=1 is written as a long of epoch milliseconds and read back with
    fold=0 (the same value: a fixed offset has no folds). The golden files record what the
    release reads back, so the next release reading the same bytes certifies."""
    import datetime

    from conformance._user_serializers import EpochMillisSerializer

    at = datetime.datetime(2001, 2, 3, 4, 5, 6, 7000, tzinfo=datetime.timezone.utc, fold=1)
    subject = Subject(EpochMillisSerializer(), st.just(at), golden=tmp_path / "golden", release="1.0.0")
    recorded = check_serializer(subject,
                                RunConfig(examples=3, seed=SEED, checks=("versioning",), update_golden=True,
                                          backends=("heap",)))
    assert recorded.certified, f"got {[str(r) for r in recorded.failures]}, should record release 1.0.0"
    import json

    from conformance._engine.canonical import stable_text

    manifest = json.loads((tmp_path / "golden" / "1.0.0" / "manifest.json").read_text())
    read_back = EpochMillisSerializer().from_bytes(EpochMillisSerializer().to_bytes(at))
    assert manifest["values"] and set(manifest["values"]) == {stable_text(read_back)}, (
        f"got {manifest['values']}, should record the value as read back ({stable_text(read_back)})")
    later = Subject(EpochMillisSerializer(), st.just(at), golden=tmp_path / "golden", release="2.0.0")
    report = check_serializer(later, RunConfig(examples=3, seed=SEED, checks=UPGRADE, backends=("heap",)))
    assert report.certified, f"got {[str(r) for r in report.failures]}, should certify against 1.0.0"


def test_a_record_read_wrong_before_a_later_one_fails_is_reported_where_reading_went_wrong():
    from conformance._checks.versioning import _records
    from conformance._engine.canonical import stable_text, value_tree
    from conformance._engine.golden import GoldenRelease
    from conformance._engine.registry import Violation
    from reference.serializers import IntSerializer, LongSerializer

    recorded = [1, 2, 3]
    data = b"".join(IntSerializer().to_bytes(v) for v in recorded)
    for trees in (None, [value_tree(v) for v in recorded]):  # manifests of format 1 and 2
        manifest = {"records": 3, "values": [stable_text(v) for v in recorded]}
        if trees is not None:
            manifest["trees"] = trees
        rel = GoldenRelease("1.0.0", "/golden/1.0.0", b"", data, manifest)
        # 8-byte longs over 4-byte ints: record 0 reads the first two ints as one long, then
        # record 1 finds only 4 bytes left.
        with pytest.raises(Violation) as caught:
            _records(rel, LongSerializer(), "reading", "restore_serializer()")
        message = str(caught.value)
        assert "record 0 read by restore_serializer()" in message and "record 1 then failed to read" in message, (
            f"got {message!r}, should report record 0, where the reading went wrong [trees: {trees is not None}]")
        shown = f"recorded example (golden file /golden/1.0.0/data.bin, record 0): {stable_text(1)}"
        assert caught.value.example == shown, f"got example {caught.value.example!r}, should be {shown!r}"
