"""A key serializer's release: release 1.0.0 of a user's AccountKey serializer (the key of a
keyed stream) is recorded as golden files; release 2.0.0 must restore it as a key and write
every recorded key to the bytes release 1.0.0 wrote (a state backend finds a key's state by
them). The correct release certifies; a release that reads the old format but writes keys
differently, and one whose key needs migration (which Flink refuses), are each caught first
by ``versioning.upgrade_keys``."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import strategies as st
from test_harness_upgrade import load_release
from test_harness_zoo import assert_caught

from conformance import Evolution, RunConfig, Subject, check_serializer

SEED = 4321
UPGRADE = ("roundtrip", "snapshot", "versioning", "backends.history", "backends.keyed")
REGIONS = st.text(max_size=8)
NUMBERS = st.integers(-2**63, 2**63 - 1)


def _load(tmp_path: Path, source: str, bug: str = "none"):
    return load_release(tmp_path, source, bug, module="accounts")


@pytest.fixture
def recorded(tmp_path):
    """Release 1.0.0 recorded in tmp_path/golden; yields the directory."""
    v1 = _load(tmp_path, "accounts_v1.py")
    subject = Subject(v1.AccountKeySerializer(), st.builds(v1.AccountKey, REGIONS, NUMBERS), key=True,
                      golden=tmp_path / "golden", release="1.0.0")
    report = check_serializer(subject, RunConfig(examples=10, seed=SEED, checks=("versioning",),
                                                 update_golden=True, backends=("heap",)))
    assert report.certified, f"got {[str(r) for r in report.failures]}, should record release 1.0.0"
    yield tmp_path
    sys.modules.pop("accounts", None)
    shutil.rmtree(tmp_path / "golden", ignore_errors=True)


def _v2_subject(tmp_path: Path, bug: str) -> Subject:
    v2 = _load(tmp_path, "accounts_v2.py", bug)
    releases = ({"1.0.0": Evolution(expect="compatible_after_migration", migrate=lambda old: old)}
                if bug == "number_became_text" else {})
    return Subject(v2.AccountKeySerializer(), st.builds(v2.AccountKey, REGIONS, NUMBERS), key=True,
                   golden=tmp_path / "golden", releases=releases)


def test_the_correct_key_release_certifies_and_keeps_every_key_s_bytes(recorded):
    report = check_serializer(_v2_subject(recorded, "none"),
                              RunConfig(examples=15, seed=SEED, checks=UPGRADE, backends=("heap", "bytes")))
    assert report.certified, f"got {[str(r) for r in report.failures]}, should certify"
    result = report["versioning.upgrade_keys"]
    assert result.status == "passed", f"got {result}, should pass: release 2.0.0 writes keys as 1.0.0 did"


#: A key release's mistake -> (the check that catches it first, words its message must hold).
KEY_MISTAKES = {
    "compact_numbers": ("versioning.upgrade_keys", ("release 1.0.0", "was recorded as 00 ", "writes it as ff 00 ",
                                                    "finds nothing", "Write every key exactly as the release did")),
    "number_became_text": ("versioning.upgrade_keys", ("release 1.0.0", "compatible_after_migration",
                                                       "The new key serializer must be compatible.")),
}


@pytest.mark.parametrize("bug", sorted(KEY_MISTAKES))
def test_each_key_release_mistake_is_caught_first_by_upgrade_keys(recorded, bug):
    check_id, words = KEY_MISTAKES[bug]
    report = check_serializer(_v2_subject(recorded, bug),
                              RunConfig(examples=15, seed=SEED, checks=UPGRADE, backends=("heap", "bytes")))
    assert_caught(report, check_id)
    message = report[check_id].message
    for part in words:
        assert part in message, f"got {message!r}, should say {part!r} [{bug}]"
    # The records themselves upgrade (read as is, or migrate): only a key may not.
    assert report["versioning.upgrade_records"].status == "passed", f"got {report['versioning.upgrade_records']}"


def test_a_value_serializer_s_release_is_not_judged_as_a_key(recorded):
    subject = _v2_subject(recorded, "compact_numbers")
    report = check_serializer(Subject(subject.serializer, subject.values, key=False, golden=subject.golden),
                              RunConfig(examples=10, seed=SEED, checks=("versioning",), backends=("heap",)))
    result = report["versioning.upgrade_keys"]
    assert result.status == "skipped" and "not a key serializer" in result.message, f"got {result}"
    assert report.certified, f"got {[str(r) for r in report.failures]}: a value's bytes may change when it reads as is"
