"""The harness's own proof: every broken serializer of the zoo is caught by the check meant for
its bug (and no earlier layer), and the correct serializers it is built from certify."""

from __future__ import annotations

import ast
import datetime
from typing import Any

import pytest
from hypothesis import strategies as st
from zoo import BUILTIN_BREAKS, GOLDEN, ZOO, StaleScratchKeyText
from zoo_base import (
    DICT_RECORD_VALUES,
    INT_PAIRS,
    LABELS,
    MATRIX,
    OFFSET_TIMES,
    PERCENTS,
    PRICES,
    RECORD_VALUES,
    SHADES,
    TAGS,
    TEXT,
    TICKETS,
    ZONED_TIMES,
    DecimalText,
    DictRecordSerializer,
    FixedIntSerializer,
    IntPairSerializer,
    LabelsSerializer,
    Matrix,
    MemoizingText,
    NamedEnumSerializer,
    OffsetTimestamps,
    PaddedKeyText,
    PairSerializer,
    PercentSerializer,
    RecordSerializer,
    TagSetSerializer,
    TextSerializer,
    TicketSerializer,
    ZonedWallClock,
    by_name,
    dict_by_name,
    fixed_int_values,
)

from conformance import Evolution, RunConfig, Subject, check_serializer
from conformance._builtins.subjects import builtin_subject
from conformance._engine.registry import LAYERS, RENAMED, all_checks, get_check
from conformance._user_serializers import Circle, Shape
from reference.serializers import AvroSerializer, PojoSerializer

EXAMPLES = 25
SEED = 12345


def families_through(check_id: str) -> tuple[str, ...]:
    """Every check id at or below the layer of ``check_id`` (backends only when needed)."""
    layer = get_check(check_id).layer
    return tuple(c.id for c in all_checks() if c.layer <= layer and c.family not in ("spark", "table"))


def assert_caught(report, check_id: str) -> None:
    result = report[check_id]
    assert result.status == "failed", f"got {check_id} {result.status} ({result.message}), should be failed"
    assert result.message, f"got an empty message for {check_id}, should say what is wrong"
    layer = get_check(check_id).layer
    early = [r for r in report.results if r.failed and get_check(r.id).layer < layer]
    assert not early, (
        f"got earlier-layer failures {[(r.id, r.message) for r in early]}, should be caught by {check_id} only"
    )


#: Checks that compare the backends with each other: their zoo entries run on both.
ACROSS_BACKENDS = ("backends.identical_savepoints", "domain.state_untouched")


def backends_for(check_id: str) -> tuple[str, ...]:
    return ("heap", "bytes") if check_id in ACROSS_BACKENDS else ("heap",)


def test_the_zoo_is_big_enough():
    assert len(ZOO) + len(GOLDEN) >= 30, f"got {len(ZOO) + len(GOLDEN)} zoo entries, should be at least 30"


@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_entry_is_caught_by_its_check(name):
    check_id, make = ZOO[name]
    # One backend is enough to catch a backends bug; the correct twins below use all three.
    report = check_serializer(make(),
                              RunConfig(examples=EXAMPLES, seed=SEED, checks=families_through(check_id),
                                        backends=backends_for(check_id)))
    assert_caught(report, check_id)
    assert not report.certified, f"got certified for {name!r}, should not be"


@pytest.mark.parametrize("name", sorted(BUILTIN_BREAKS))
def test_broken_builtin_is_caught_by_its_check(name, monkeypatch):
    check_id, make, (owner, attribute, broken) = BUILTIN_BREAKS[name]
    correct = check_serializer(make(), RunConfig(examples=EXAMPLES, seed=SEED, checks=(check_id,)))[check_id]
    assert correct.passed, f"got {check_id} {correct.status} ({correct.message}) on the intact built-in, should pass"
    monkeypatch.setattr(owner, attribute, broken)
    report = check_serializer(make(),
                              RunConfig(examples=EXAMPLES, seed=SEED, checks=families_through(check_id),
                                        backends=backends_for(check_id)))
    assert_caught(report, check_id)


#: Checks no realistic serializer bug is known to reach first, and why. The test below fails
#: when one of them gets a zoo entry, so that its note goes too.
NOT_SHOWN: dict[str, str] = {}


def test_every_check_is_shown_to_fail():
    """Each check of the serializer families has a zoo entry it must catch (the spark family's
    tests and the table zoo prove theirs; the release-upgrade mistakes of test_harness_upgrade.py
    and test_harness_key_upgrade.py count too): a check that is only ever seen passing proves
    nothing."""
    from test_harness_key_upgrade import KEY_MISTAKES  # they import this module: not at the top
    from test_harness_upgrade import MISTAKES

    # The zoo names some checks by their old ids (the aliases are proven there): count them as now.
    shown = {RENAMED.get(entry[0], entry[0])
             for catalogue in (ZOO, GOLDEN, BUILTIN_BREAKS, MISTAKES, KEY_MISTAKES) for entry in catalogue.values()}
    checks = [c.id for c in all_checks() if c.family not in ("spark", "table")]
    unshown = [c for c in checks if c not in shown and c not in NOT_SHOWN]
    assert not unshown, (
        f"got no zoo entry for {unshown}, should have one each: add a realistic broken serializer "
        "that the check catches first to tests/harness/zoo.py (ZOO, GOLDEN or BUILTIN_BREAKS) or, for a "
        "release-upgrade mistake, to MISTAKES in tests/harness/test_harness_upgrade.py (a key's: KEY_MISTAKES "
        "in tests/harness/test_harness_key_upgrade.py)"
    )
    stale = sorted(c for c in NOT_SHOWN if c in shown or c not in checks)
    assert not stale, f"got {stale} in NOT_SHOWN, should not be there: they have a zoo entry or are no check"
    unknown = sorted(shown - {c.id for c in all_checks()})
    assert not unknown, f"got zoo entries naming no registered check {unknown}, should name one each"


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_zoo_entry_is_caught(name, tmp_path, monkeypatch):
    check_id, cls = GOLDEN[name]
    values = fixed_int_values(4)
    recorded = check_serializer(Subject(cls(4), values, golden=tmp_path, release="1.0"),
                                RunConfig(examples=EXAMPLES, seed=SEED, checks=("versioning",),
                                          update_golden=True))
    assert recorded.certified, f"got {recorded.failures}, should record and re-read release 1.0"
    assert (tmp_path / "1.0" / "manifest.json").is_file(), f"got {list(tmp_path.iterdir())}, should hold 1.0/"
    monkeypatch.setattr(cls, "byte_order", "little")  # release 2 changes the format
    report = check_serializer(Subject(cls(4), values, golden=tmp_path),
                              RunConfig(examples=EXAMPLES, seed=SEED, checks=families_through(check_id)))
    assert_caught(report, check_id)


def test_shrunk_examples_are_minimal_and_messages_say_got_and_should():
    check_id, make = ZOO["-0.0 lost"]
    result = check_serializer(make(),
                              RunConfig(examples=EXAMPLES, seed=SEED,
                                        checks=("roundtrip.bit_exact",)))[check_id]
    assert result.example == "-0.0", f"got example {result.example!r}, should be the shrunk -0.0"
    assert "got 0.0, should be -0.0" in result.message, f"got message {result.message!r}"
    check_id, make = ZOO["length prefix counts characters"]
    result = check_serializer(make(), RunConfig(examples=EXAMPLES, seed=SEED, checks=(check_id,)))[check_id]
    assert result.example is not None and len(ast.literal_eval(result.example)) == 1, (
        f"got example {result.example!r}, should be a one-character string"
    )


AVRO_ORDER = {"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"]}]}
AVRO_ORDERS = st.fixed_dictionaries({"id": st.integers(-(2**63), 2**63 - 1), "note": st.none() | st.text()})

SHAPES = st.none() | st.builds(Shape, st.text(max_size=8)) | st.builds(Circle, st.text(max_size=8), st.floats())

CORRECT = {
    "fixed int": lambda: Subject(FixedIntSerializer(4), fixed_int_values(4), key=True, invalid_configurations={
        "a width of 0": lambda: FixedIntSerializer(0), "a negative width": lambda: FixedIntSerializer(-4),
    }, evolutions=[
        Evolution(FixedIntSerializer(8), "compatible_after_migration", migrate=lambda v: v),
        Evolution(FixedIntSerializer(2), "incompatible", reason_contains="narrows"),
        Evolution(FixedIntSerializer(4), "compatible_as_is"),
    ], chains=[[Evolution(FixedIntSerializer(4), "compatible_as_is"),
                Evolution(FixedIntSerializer(8), "compatible_after_migration", migrate=lambda v: v)]]),
    "text": lambda: Subject(TextSerializer(), TEXT, key=True),
    "memoizing text": lambda: Subject(MemoizingText(), TEXT, key=True),
    "matrix": lambda: Subject(Matrix(), MATRIX),
    "tags": lambda: Subject(TagSetSerializer(), TAGS, key=True),
    "record": lambda: Subject(RecordSerializer("a", "b"), RECORD_VALUES, evolutions=[
        Evolution(RecordSerializer("b", "c", "a"), "compatible_after_migration",
                  migrate=by_name(("a", "b"), ("b", "c", "a"))),
        Evolution(RecordSerializer("a"), "incompatible", reason_contains="b"),
    ]),
    "dict record": lambda: Subject(DictRecordSerializer("a", "b"), DICT_RECORD_VALUES, evolutions=[
        Evolution(DictRecordSerializer("b", "c", "a"), "compatible_after_migration",
                  migrate=dict_by_name(("b", "c", "a"))),
        Evolution(DictRecordSerializer("a"), "incompatible", reason_contains="b"),
    ]),
    "int pair": lambda: Subject(IntPairSerializer(FixedIntSerializer(4), FixedIntSerializer(4)), INT_PAIRS, evolutions=[
        Evolution(IntPairSerializer(FixedIntSerializer(4), FixedIntSerializer(8)), "compatible_after_migration",
                  migrate=lambda v: v),
        Evolution(IntPairSerializer(FixedIntSerializer(4), FixedIntSerializer(2)), "incompatible", reason_contains="narrows"),
    ]),
    "labels": lambda: Subject(LabelsSerializer(), LABELS, key=True),
    "percent": lambda: Subject(PercentSerializer(), PERCENTS, key=True),
    "ticket": lambda: Subject(TicketSerializer(), TICKETS, key=True),
    # Its snapshot has no form in Flink's dialect (NoFlinkFormError): snapshot.flink_dialect skips it.
    "avro binary": lambda: Subject(AvroSerializer(AVRO_ORDER, encoding="binary"), AVRO_ORDERS, key=True),
    "decimal text": lambda: Subject(DecimalText(), PRICES | st.decimals(), key=True),
    "offset timestamps": lambda: Subject(OffsetTimestamps(), OFFSET_TIMES, key=True),
    "zoned wall clock": lambda: Subject(ZonedWallClock(), ZONED_TIMES, key=True),
    "padded key text": lambda: Subject(PaddedKeyText(), TEXT, key=True),
    "named enum": lambda: Subject(NamedEnumSerializer(), SHADES, key=True),
    "pair": lambda: Subject(PairSerializer(FixedIntSerializer(4), TextSerializer()),
                            st.tuples(fixed_int_values(4), TEXT), invalid_configurations={
        "a pair whose first serializer is None": lambda: PairSerializer(None, TextSerializer()),
    }, evolutions=[
        Evolution(PairSerializer(FixedIntSerializer(8), TextSerializer()), "compatible_after_migration",
                  migrate=lambda v: v),
        Evolution(PairSerializer(FixedIntSerializer(2), TextSerializer()), "incompatible"),
    ]),
    # A compatible serializer need not write the old bytes: once Circle is registered it is
    # tagged, not named; the bytes backend keeps the named records, the heap backend rewrites them.
    "pojo learning a subclass": lambda: Subject(PojoSerializer(Shape), SHAPES, key=False, evolutions=[
        Evolution(PojoSerializer(Shape, registered_subclasses=[Circle]), "compatible_with_reconfigured_serializer"),
    ]),
}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_twins_certify_without_backends(name):
    report = check_serializer(CORRECT[name](),
                              RunConfig(examples=EXAMPLES, seed=SEED,
                                        checks=tuple(f for f in LAYERS if f not in ("backends", "spark", "table"))))
    assert report.certified, f"got failures {[str(r) for r in report.failures]}, should certify"
    assert sum(r.passed for r in report.results) >= 15, f"got {[str(r) for r in report.results]}, should mostly pass"


def test_a_format_without_a_flink_form_is_not_applicable_to_the_flink_dialect_check():
    report = check_serializer(CORRECT["avro binary"](), RunConfig(examples=EXAMPLES, seed=SEED,
                                                                  checks=("snapshot.flink_dialect",)))
    result = report["snapshot.flink_dialect"]
    assert result.status == "skipped" and "no form in Flink's dialect" in result.message, (
        f"got {result.status}: {result.message}, should be skipped: Avro's binary encoding has no Flink form")


class IndexedShade(NamedEnumSerializer):
    """A user's enum serializer whose read finds the member by its place in a list: a corrupted
    name is refused with the list's ValueError, not a reference.StateError."""

    def deserialize(self, source):
        names = [m.name for m in self.enum_type]
        return list(self.enum_type)[names.index(source.read_utf())]


@pytest.mark.parametrize("nested", [False, True], ids=["alone", "inside a reference row"])
def test_a_users_serializer_may_refuse_corrupt_bytes_with_any_exception(nested):
    """Only a serializer built of the reference's classes is held to StateError on corrupt bytes
    (the break "a registered subclass's tag read without its bound" is caught so); a user's own
    class, alone or nested in a reference row, may refuse with any exception."""
    from reference.serializers import LongSerializer, RowSerializer

    if nested:
        row = RowSerializer([("id", LongSerializer(), False), ("shade", IndexedShade(), True)])
        subject = Subject(row, st.tuples(st.integers(0, 9), SHADES))
    else:
        subject = Subject(IndexedShade(), SHADES)
    result = check_serializer(subject, RunConfig(examples=EXAMPLES, seed=SEED, checks=("roundtrip.corrupted",)))[
        "roundtrip.corrupted"]
    assert result.passed, f"got roundtrip.corrupted {result.status}: {result.message}, should pass"


#: The twins of the backends entries: each backends check passes on them.
@pytest.mark.parametrize("name", ["fixed int", "record", "dict record", "matrix", "int pair", "labels",
                                  "pojo learning a subclass"])
def test_correct_twins_certify_on_every_backend(name):
    subject = CORRECT[name]()
    report = check_serializer(subject, RunConfig(examples=EXAMPLES, seed=SEED, checks=("backends",)))
    assert report.certified, f"got failures {[str(r) for r in report.failures]}, should certify"
    statuses = {r.id: r.status for r in report.results}
    verdicts = {evo.expect for evo in subject.evolutions}
    expected = {
        "backends.history": "passed", "backends.identical_savepoints": "passed", "backends.fresh_process": "passed",
        "backends.evolution": "passed" if verdicts - {"incompatible"} else "skipped",
        "backends.incompatible": "passed" if "incompatible" in verdicts else "skipped",
        "backends.keyed": "passed" if subject.key else "skipped",
    }
    for check_id, status in expected.items():
        assert statuses.get(check_id) == status, f"got {check_id} {statuses.get(check_id)}, should be {status} [{name}]"


def test_a_pre_17_golden_snapshot_is_reported_non_conforming(tmp_path):
    from reference import DataOutputView
    from reference._snapshot import write_legacy_pickled_serializer

    subject = Subject(FixedIntSerializer(4), fixed_int_values(4), golden=tmp_path, release="1.0")
    recorded = check_serializer(subject,
                                RunConfig(examples=EXAMPLES, seed=SEED, checks=("versioning",),
                                          update_golden=True))
    assert recorded.certified, f"got {recorded.failures}, should record release 1.0"
    out = DataOutputView()
    write_legacy_pickled_serializer(out, FixedIntSerializer(4))
    (tmp_path / "1.0" / "snapshot.bin").write_bytes(out.getvalue())
    result = check_serializer(Subject(FixedIntSerializer(4), fixed_int_values(4), golden=tmp_path),
                              RunConfig(examples=EXAMPLES, seed=SEED,
                                        checks=("versioning",)))["upgrade.snapshot"]
    assert result.failed and "pre-1.7" in result.message and "non-conforming" in result.message, f"got {result}"


def test_history_dependent_key_bytes_are_blamed_on_key_determinism_not_on_duplicate():
    """A key built in a scratch buffer with stale padding: the original and a duplicate() write
    one key to different bytes because of what each wrote before, not because duplicate() lost
    configuration; duplicate, concurrent and pickle must not say so, key_determinism must, showing
    both writes."""
    check_id, make = ZOO["key padding from a stale scratch buffer"]
    report = check_serializer(make(), RunConfig(examples=EXAMPLES, seed=SEED, checks=("roundtrip",),
                                                backends=("heap",)))
    for other in ("roundtrip.duplicate", "roundtrip.concurrent", "roundtrip.pickle"):
        assert report[other].passed, f"got {other} {report[other].status} ({report[other].message}), should pass"
    message = report[check_id].message
    assert message.startswith("key determinism:") and message.count(" 00 00 00 ") >= 2, (
        f"got {message!r}, should name key determinism and show the two writes")
    # A duplicate() that really loses configuration, and compares equal, is still caught by
    # its bytes in roundtrip.duplicate.
    forgetful = check_serializer(Subject(_EqualForgetfulDuplicate(4), fixed_int_values(4)),
                                 RunConfig(examples=EXAMPLES, seed=SEED, checks=("roundtrip.duplicate",)))
    result = forgetful["roundtrip.duplicate"]
    assert result.failed and "lost configuration" in result.message, f"got {result.status} ({result.message})"


class _EqualForgetfulDuplicate(FixedIntSerializer):
    """duplicate() forgets the width, and serializers compare equal whatever their width."""

    def duplicate(self) -> FixedIntSerializer:
        return _EqualForgetfulDuplicate()

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self)

    def __hash__(self) -> int:
        return hash(type(self).__name__)


class _ReserializingStaleText(StaleScratchKeyText):
    """copy_serialized reads the value and writes it again through the stale scratch buffer."""

    def copy_serialized(self, source: Any, target: Any) -> None:
        self.serialize(self.deserialize(source), target)

    def duplicate(self) -> _ReserializingStaleText:
        return _ReserializingStaleText()

    def __reduce__(self) -> Any:
        return (_ReserializingStaleText, ())


def test_bytes_that_follow_history_are_named_as_such_and_not_blamed_on_threads():
    """Stale padding of a longer value written before: a copy that re-serializes says the
    serializer's bytes follow what it wrote before (showing one value's two writes); the
    threads of roundtrip.concurrent, each from a fresh duplicate(), are not blamed for bytes the
    original wrote after other checks' values."""
    values = st.sampled_from(["zzzzzzzzzzzzzzzzzzzz", "yyyyyyyyyyyy", "ab"])
    report = check_serializer(Subject(_ReserializingStaleText(), values),
                              RunConfig(examples=EXAMPLES, seed=SEED, checks=("roundtrip",), backends=("heap",)))
    copy = report["roundtrip.copy_serialized"]
    assert copy.failed and "follow what it wrote before" in copy.message, (
        f"got {copy.status} ({copy.message}), should fail naming bytes that follow history")
    concurrent = report["roundtrip.concurrent"]
    assert not concurrent.failed, f"got {concurrent.status} ({concurrent.message}), should not blame threads"


class _YearBoundWallClock(ZonedWallClock):
    """ZonedWallClock for the years its strategy draws: out of them, struct-style overflow."""

    def serialize(self, value, target):
        if not 1990 <= value.year <= 2040:
            raise OverflowError(f"year {value.year} is out of 1990..2040")
        super().serialize(value, target)


class _GapBlindWallClock(ZonedWallClock):
    """Refuses a wall time a spring-forward skips, but with a ValueError, not SerializationError."""

    def serialize(self, value, target):
        if value.astimezone(datetime.timezone.utc).astimezone(value.tzinfo).replace(tzinfo=None) != (
                value.replace(tzinfo=None)):
            raise ValueError(f"{value!r} does not exist")
        super().serialize(value, target)


def test_time_edges_out_of_the_years_a_strategy_draws_are_skipped_on_any_error():
    result = check_serializer(Subject(_YearBoundWallClock(), ZONED_TIMES, key=True),
                              RunConfig(examples=EXAMPLES, seed=SEED, checks=("roundtrip.size_boundaries",)))
    assert result["roundtrip.size_boundaries"].passed, (
        f"got {result['roundtrip.size_boundaries']}, should skip epoch edges outside 1990..2040 refused with OverflowError")


def test_a_transition_edge_refused_without_serialization_error_fails_naming_it():
    result = check_serializer(Subject(_GapBlindWallClock(), ZONED_TIMES, key=True),
                              RunConfig(examples=EXAMPLES, seed=SEED, checks=("roundtrip.size_boundaries",)))
    got = result["roundtrip.size_boundaries"]
    assert got.failed and "serialize raised ValueError" in got.message and "nonexistent" in got.message, (
        f"got {got.status}: {got.message!r}, should fail naming the nonexistent wall time serialize refused "
        "with a ValueError (a refusal is a SerializationError)")



def test_a_reference_composite_snapshot_without_declared_outer_versions_fails_corrupt_bytes(monkeypatch):
    """``snapshot.corrupt_bytes`` holds each composite snapshot class of the reference to saying
    which outer versions it reads: a class that lost its declaration (and so reads any) fails."""
    from conformance._builtins.subjects import builtin_subject
    from reference.serializers import NullableSerializerSnapshot

    monkeypatch.delattr(NullableSerializerSnapshot, "READ_OUTER_VERSIONS")
    result = check_serializer(builtin_subject("nullable"),
                              RunConfig(examples=EXAMPLES, seed=SEED, checks=("snapshot.corrupt_bytes",)))
    got = result["snapshot.corrupt_bytes"]
    assert got.status == "failed" and "declares no READ_OUTER_VERSIONS" in got.message, (
        f"got {got.status} ({got.message}), should fail saying the class declares no READ_OUTER_VERSIONS")


def test_codecs_left_off_after_a_switch_are_caught_by_the_generated_codecs_check(monkeypatch):
    """set_generated_codecs returning nothing where it should return the setting it replaced:
    ``generated_codecs(False)`` then leaves the codecs off for good."""
    from reference.serializers import _codegen, generated_codecs_enabled, set_generated_codecs

    def returns_nothing(enabled: bool) -> None:
        original(enabled)

    original = _codegen.set_generated_codecs
    assert generated_codecs_enabled(), "the codecs should be on before this test (the suite's default)"
    monkeypatch.setattr(_codegen, "set_generated_codecs", returns_nothing)
    try:
        report = check_serializer(builtin_subject("row"), RunConfig(examples=EXAMPLES, seed=SEED,
                                                                      checks=("roundtrip.generated_codecs",)))
    finally:
        set_generated_codecs(True)
    result = report["roundtrip.generated_codecs"]
    assert result.failed and "should be on again" in result.message, f"got {result.status} ({result.message}), should fail"
