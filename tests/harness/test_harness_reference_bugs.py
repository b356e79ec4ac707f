"""Checks that catch bugs in the reference itself (not in a user's serializer): a pre-1.7
snapshot unpickled by default, compatibility results that do not compare as values, a
create_instance() that is not the type's zero. Each planted bug must fail its check on a
built-in subject, and the built-in must pass without it."""

from __future__ import annotations

import pytest

import reference
from conformance import RunConfig, check_serializer
from conformance._builtins.subjects import builtin_subject
from reference import SchemaCompatibility
from reference.serializers import LongSerializer

EXAMPLES, SEED = 10, 3


def _status(subject, check_id):
    return check_serializer(subject, RunConfig(examples=EXAMPLES, seed=SEED, checks=(check_id,)))[check_id]


def test_the_pre_17_golden_file_is_refused_by_default_and_read_when_allowed():
    got = _status(builtin_subject("long"), "versioning.legacy_form")
    assert got.status == "passed", f"got {got}, should pass on the recorded pre-1.7 file"


def test_a_reader_that_unpickles_pre_17_snapshots_by_default_is_caught(monkeypatch):
    from conformance._checks import versioning

    original = reference.snapshot_from_bytes
    monkeypatch.setattr(versioning, "snapshot_from_bytes",
                        lambda data, allow_pickled_serializer=True: original(data, allow_pickled_serializer=allow_pickled_serializer))
    got = _status(builtin_subject("long"), "versioning.legacy_form")
    assert got.failed and "by default" in got.message, f"got {got}, should fail: the default unpickles"


def test_results_that_compare_by_identity_are_caught(monkeypatch):
    assert _status(builtin_subject("row"), "migration.verdict_values").status == "passed"
    monkeypatch.setattr(SchemaCompatibility, "__eq__", lambda self, other: self is other)
    got = _status(builtin_subject("row"), "migration.verdict_values")
    assert got.failed and "should be equal" in got.message, f"got {got}, should fail"


@pytest.mark.parametrize("zero", [None, 1])
def test_a_create_instance_other_than_the_zero_is_caught(monkeypatch, zero):
    monkeypatch.setattr(LongSerializer, "create_instance", lambda self: zero)
    got = _status(builtin_subject("long"), "roundtrip.create_instance")
    assert got.failed and "create_instance()" in got.message, f"got {got}, should fail on {zero!r}"
