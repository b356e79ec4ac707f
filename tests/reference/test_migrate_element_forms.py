"""FLIP-527's ``migrate_element(prior, new, element, target)`` comes in two forms, and both
work everywhere elements migrate: the returning form (the reference's default) and the writing
form, which writes the migrated element to ``target`` and returns None."""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from reference import (
    DataInputView,
    DataOutputView,
    SchemaCompatibility,
    TypeSerializer,
    TypeSerializerSnapshot,
    migrated_element,
)
from reference.backends import BytesStateBackend, HeapStateBackend, ValueStateDescriptor
from reference.serializers import LongSerializer


class Money(TypeSerializer[int]):
    """An amount in ``unit`` ("euro" or "cent"), written as a long."""

    def __init__(self, unit: str = "euro") -> None:
        self.unit = unit

    def serialize(self, value: int, target: DataOutputView) -> None:
        target.write_long(value)

    def deserialize(self, source: DataInputView) -> int:
        return source.read_long()

    def copy(self, value: int) -> int:
        return value

    def copy_serialized(self, source: DataInputView, target: DataOutputView) -> None:
        target.write(source.read_fully(8))

    def duplicate(self) -> Money:
        return self

    def create_instance(self) -> int:
        return 0

    @property
    def is_immutable_type(self) -> bool:
        return True

    @property
    def length(self) -> int:
        return 8

    def snapshot_configuration(self) -> MoneySnapshot:
        return MoneySnapshot(self.unit)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and other.unit == self.unit

    def __hash__(self) -> int:
        return hash(self.unit)


class MoneySnapshot(TypeSerializerSnapshot[int]):
    def __init__(self, unit: str = "euro") -> None:
        self.unit = unit

    def get_current_version(self) -> int:
        return 1

    def write_snapshot(self, target: DataOutputView) -> None:
        target.write_utf(self.unit)

    def read_snapshot(self, read_version: int, source: DataInputView) -> None:
        self.unit = source.read_utf()

    def restore_serializer(self) -> Money:
        return Money(self.unit)

    def resolve_schema_compatibility(self, old_snapshot: TypeSerializerSnapshot[int]) -> SchemaCompatibility[int]:
        if not isinstance(old_snapshot, MoneySnapshot):
            return SchemaCompatibility.incompatible("not money")
        if old_snapshot.unit == self.unit:
            return SchemaCompatibility.compatible_as_is()
        return SchemaCompatibility.compatible_after_migration()


class WritingMoneySnapshot(MoneySnapshot):
    """FLIP-527's writing form: the migrated element goes to ``target``; nothing is returned."""

    def restore_serializer(self) -> Money:
        return WritingMoney(self.unit)

    def migrate_element(self, prior, new, element, target):  # type: ignore[no-untyped-def,override]
        factor = 100 if (prior.unit, new.unit) == ("euro", "cent") else 1
        new.serialize(element * factor, target)


class ReturningMoneySnapshot(MoneySnapshot):
    def restore_serializer(self) -> Money:
        return ReturningMoney(self.unit)

    def migrate_element(self, prior, new, element, target=None):  # type: ignore[no-untyped-def,override]
        migrated = element * (100 if (prior.unit, new.unit) == ("euro", "cent") else 1)
        if target is not None:
            new.serialize(migrated, target)
        return migrated


class PlainReturningMoneySnapshot(MoneySnapshot):
    """The returning form without a ``target`` parameter at all, as users often write it."""

    def restore_serializer(self) -> Money:
        return PlainReturningMoney(self.unit)

    def migrate_element(self, prior, new, element):  # type: ignore[no-untyped-def,override]
        return element * (100 if (prior.unit, new.unit) == ("euro", "cent") else 1)


class PlainReturningMoney(Money):
    def snapshot_configuration(self) -> MoneySnapshot:
        return PlainReturningMoneySnapshot(self.unit)


class WritingMoney(Money):
    def snapshot_configuration(self) -> MoneySnapshot:
        return WritingMoneySnapshot(self.unit)


class ReturningMoney(Money):
    def snapshot_configuration(self) -> MoneySnapshot:
        return ReturningMoneySnapshot(self.unit)


FORMS = {"writing": WritingMoney, "returning": ReturningMoney, "returning without a target": PlainReturningMoney}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_default_migrate_state_honours_each_form(form):
    """What Flink's runtime calls per record: read one, migrate it, write it, whichever form
    migrate_element takes."""
    cls = FORMS[form]
    source, target = DataInputView(cls("euro").to_bytes(7) + cls("euro").to_bytes(8)), DataOutputView()
    cls("cent").snapshot_configuration().migrate_state(cls("euro"), cls("cent"), source, target)
    got = cls("cent").from_bytes(target.getvalue())
    assert (got, source.position) == (700, 8), (
        f"got {got!r} having read {source.position} bytes, should be 700 having read the first record's 8 ({form} form)")


@pytest.mark.parametrize("form", sorted(FORMS))
def test_migrated_element_honours_both_forms(form):
    cls = FORMS[form]
    got = migrated_element(cls("cent").snapshot_configuration(), cls("euro"), cls("cent"), 7)
    assert got == 700, f"got {got!r}, should be 700 ({form} form)"


@pytest.mark.parametrize("backend", ["heap", "bytes"])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_both_forms_migrate_on_both_backends(tmp_path, form, backend):
    cls = FORMS[form]
    backends = {"heap": HeapStateBackend, "bytes": BytesStateBackend}
    old = backends[backend](LongSerializer())
    state = old.get_value_state(ValueStateDescriptor("amount", cls("euro")))
    for key in range(5):
        old.set_current_key(key)
        state.update(key + 1)
    path = old.savepoint(str(tmp_path / "sp"))
    old.close()
    restored = backends[backend].restore(path, key_serializer=LongSerializer())
    state = restored.get_value_state(ValueStateDescriptor("amount", cls("cent")))
    got = []
    for key in range(5):
        restored.set_current_key(key)
        got.append(state.value())
    restored.close()
    assert got == [100, 200, 300, 400, 500], f"got {got}, should be in cents ({form} form, {backend} backend)"


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_harness_certifies_both_forms(form):
    from conformance import Evolution, RunConfig, Subject, check_serializer

    cls = FORMS[form]
    subject = Subject(cls("euro"), st.integers(-2**40, 2**40), evolutions=[
        Evolution(cls("cent"), "compatible_after_migration", migrate=lambda euros: euros * 100)])
    report = check_serializer(subject, RunConfig(examples=10, seed=5, checks=("migration", "backends")))
    assert report.certified, f"got {[str(r) for r in report.failures]}, should certify the {form} form"
    assert report["migration.migrate_element"].status == "passed", report["migration.migrate_element"]


class WritingAndReturningMoneySnapshot(MoneySnapshot):
    """The writing form (``target`` required) that also returns what it wrote."""

    def restore_serializer(self) -> Money:
        return WritingAndReturningMoney(self.unit)

    def migrate_element(self, prior, new, element, target):  # type: ignore[no-untyped-def,override]
        migrated = element * (100 if (prior.unit, new.unit) == ("euro", "cent") else 1)
        new.serialize(migrated, target)
        return migrated


class WritingAndReturningMoney(Money):
    def snapshot_configuration(self) -> MoneySnapshot:
        return WritingAndReturningMoneySnapshot(self.unit)


def test_a_writing_form_that_also_returns_gives_the_returned_element():
    cls = WritingAndReturningMoney
    got = migrated_element(cls("cent").snapshot_configuration(), cls("euro"), cls("cent"), 7)
    assert got == 700, f"got {got!r}, should be 700 (what migrate_element returned and wrote)"


def test_the_form_is_told_from_the_signature():
    from reference import migrate_element_form

    class Returning:  # only migrate_element matters
        def migrate_element(self, prior, new, element):
            return element

    class Writing:  # only migrate_element matters
        def migrate_element(self, prior, new, element, target):
            new.serialize(element, target)

    class Optional:  # only migrate_element matters
        def migrate_element(self, prior, new, element, target=None):
            return element

    class Variadic:  # only migrate_element matters
        def migrate_element(self, prior, new, element, *rest):
            return element

    got = {cls.__name__: migrate_element_form(cls) for cls in (Returning, Writing, Optional, Variadic)}
    should = {"Returning": "returning", "Writing": "writing", "Optional": "either", "Variadic": "either"}
    assert got == should, f"got {got}, should be {should}"
    assert migrate_element_form(Writing()) == "writing", "got another form for an instance, should be its class's"
