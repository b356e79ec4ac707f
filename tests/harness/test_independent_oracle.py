"""An evolution's ``migrate=`` is the oracle the new release's migration is judged by: one that
is, or calls, the code under test agrees with it whatever it does, so ``Subject`` refuses it in
one sentence; independent oracles (the built-ins', the zoo's, hand-written ones) pass."""

from __future__ import annotations

import functools

import pytest
from zoo_base import RECORD_VALUES, RecordSerializer, RecordSnapshot, by_name

from conformance import Evolution, Subject, SubjectError

OLD, NEW = ("a", "b"), ("b", "c", "a")


def reorder(old_fields, new_fields, element):
    """The helper the new release's migration is built on."""
    by_field = dict(zip(old_fields, element, strict=False))
    return tuple(by_field.get(name) for name in new_fields)


def oracle_on_helper(old):
    return reorder(OLD, NEW, old)


class HelperRecord(RecordSerializer):
    def snapshot_configuration(self) -> RecordSnapshot:
        return HelperRecordSnapshot(self.fields)

    def upgrade(self, old):
        return reorder(OLD, self.fields, old)


class HelperRecordSnapshot(RecordSnapshot):
    def restore_serializer(self) -> RecordSerializer:
        return HelperRecord(*self.fields)

    def migrate_element(self, prior, new, element, target=None):
        migrated = reorder(prior.fields, new.fields, element)
        if target is not None:
            new.serialize(migrated, target)
        return migrated


def _subject(migrate):
    return Subject(HelperRecord(*OLD), RECORD_VALUES,
                   evolutions=[Evolution(HelperRecord(*NEW), "compatible_after_migration", migrate=migrate)])


SHARED = {
    "the helper itself (partial)": (functools.partial(reorder, OLD, NEW), "reorder"),
    "a lambda calling the helper": (lambda old: reorder(OLD, NEW, old), "reorder"),
    "a function calling the helper": (oracle_on_helper, "reorder"),
    "a bound method of the new serializer": (HelperRecord(*NEW).upgrade, "HelperRecord"),
    "the snapshot's own migration": (
        lambda old: HelperRecordSnapshot(NEW).migrate_element(HelperRecord(*OLD), HelperRecord(*NEW), old),
        "migrate_element"),
}


@pytest.mark.parametrize("case", sorted(SHARED))
def test_an_oracle_built_on_the_code_under_test_is_refused(case):
    migrate, named = SHARED[case]
    with pytest.raises(SubjectError) as caught:
        _subject(migrate)
    message = str(caught.value)
    assert "independently" in message and named in message, (
        f"got {message!r}, should say migrate= must be written independently and name {named!r} [{case}]")
    assert "Subject(evolutions=[...]) item 0" in message, f"got {message!r}, should say which evolution"


def test_a_recorded_releases_oracle_built_on_the_migration_is_refused(tmp_path):
    with pytest.raises(SubjectError, match=r"releases=\{'1\.0\.0'.*reorder.*independently"):
        Subject(HelperRecord(*NEW), RECORD_VALUES, golden=tmp_path, release="2.0.0",
                releases={"1.0.0": Evolution(expect="compatible_after_migration",
                                             migrate=functools.partial(reorder, OLD, NEW))})


@pytest.mark.parametrize("migrate", [by_name(OLD, NEW), lambda old: (old[1], None, old[0])],
                         ids=["the zoo's by_name", "a hand-written lambda"])
def test_independent_oracles_are_accepted(migrate):
    subject = _subject(migrate)
    assert subject.evolutions[0].migrate is migrate


def test_no_built_in_subject_is_refused():
    from conformance._builtins.subjects import builtin_subjects

    assert len(builtin_subjects()) == 37
