"""Migration plans against the object path they stand for (read with the restored old
serializer, ``migrated_element``, write with the new one): same bytes on generated schemas and
evolutions, same ``StateError`` kinds (or the same values) on corrupt input, the byte path
really taken."""

from __future__ import annotations

import pickle
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import strategies
from reference import (
    DataInputView,
    DataOutputView,
    SerializationError,
    StateError,
    migrated_element,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.backends import MigrationPlan, migration_plan
from reference.backends._plan import CopyStep, RowStep, _Detour
from reference.savepoint import encode_list_value
from reference.serializers import (
    AvroSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    MapSerializer,
    NullableSerializer,
    RowSerializer,
    StringSerializer,
    TupleSerializer,
    generated_codecs,
)
from reference.serializers._codegen import Bail
from reference.types import serializer_for


def object_path(old_snapshot: Any, new: Any, data: bytes) -> bytes:
    """What the plan must give, computed without it."""
    prior = old_snapshot.restore_serializer()
    value = prior.from_bytes(data)
    migrated = migrated_element(new.snapshot_configuration(), prior, new, value)
    return new.to_bytes(migrated)


def outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(*args)
    except StateError as exc:
        return "error", type(exc)


def _evolved(data: Any, verdict: str) -> tuple[Any, Any, Any, Any, list[Any]]:
    schema = data.draw(strategies.schemas(), label="schema")
    ev = data.draw(strategies.evolutions(schema, verdict=verdict), label="evolution")
    values = data.draw(st.lists(strategies.values(ev.old), min_size=1, max_size=3), label="old values")
    old = serializer_for(ev.old)
    stored = [old.to_bytes(v) for v in values]
    snapshot_bytes = snapshot_to_bytes(old.snapshot_configuration())
    strategies.activate(ev.new)
    new = serializer_for(ev.new)
    return ev, snapshot_from_bytes(snapshot_bytes, allow_pickle=True), new, stored, values


#: How the byte path declines a record it does not take on itself (the plan then takes the
#: object path): a step's detour, a generated fragment leaving its fast path, or a size the
#: layout's own reading refuses that the object path decides (a list of zero-width elements).
DECLINES = (_Detour, Bail, SerializationError)


@settings(max_examples=150)
@given(st.data())
def test_plan_gives_the_object_paths_bytes_and_the_oracles_values(data: Any) -> None:
    ev, old_snapshot, new, stored, values = _evolved(data, "compatible_after_migration")
    plan = migration_plan(old_snapshot, new)
    where = f"[{ev.change} at {ev.path}: {ev.old!r} -> {ev.new!r}]\n{plan}"
    assert plan.needs_migration, f"got a plan that keeps the bytes, should migrate {where}"
    for value, raw in zip(values, stored, strict=True):
        want = object_path(old_snapshot, new, raw)
        got = plan.migrate(raw)
        assert got == want, f"got {got.hex()}, should be {want.hex()} (the object path) {where}"
        # the byte path alone (no detour to objects) gives the same bytes when it takes the record
        source, target = DataInputView(raw), DataOutputView()
        try:
            plan.root.run(source, target)
        except DECLINES:
            pass
        else:
            assert (target.getvalue(), source.available()) == (want, 0), (
                f"got {target.getvalue().hex()} ({source.available()} bytes left) on the byte path, "
                f"should be {want.hex()} {where}")
        expected = ev.migrate(value)
        read = new.from_bytes(got)
        assert strategies.values_equal(read, expected), f"got {read!r}, should be {expected!r} {where}"
    if all(stored):  # Flink's list layout has no room for elements of zero bytes
        joined = plan.migrate_list(encode_list_value(stored))
        want = encode_list_value([object_path(old_snapshot, new, raw) for raw in stored])
        assert joined == want, f"got {joined.hex()}, should be {want.hex()} (element by element) {where}"
    again = pickle.loads(pickle.dumps(plan))
    assert again == plan and str(again) == str(plan), f"got {again}, should equal {plan} after pickling"
    assert again.migrate(stored[0]) == plan.migrate(stored[0]), f"got other bytes after pickling {where}"


@settings(max_examples=150)
@given(st.data())
def test_plan_and_object_path_fail_alike_on_corrupt_input(data: Any) -> None:
    ev, old_snapshot, new, stored, _ = _evolved(data, "compatible_after_migration")
    plan = migration_plan(old_snapshot, new)
    raw = bytearray(stored[0])
    how = data.draw(st.sampled_from(["truncate", "flip", "append", "set"]), label="corruption")
    if how == "truncate" and raw:
        del raw[data.draw(st.integers(0, len(raw) - 1), label="cut at"):]
    elif how == "append":
        raw += data.draw(st.binary(min_size=1, max_size=4), label="extra bytes")
    elif raw:
        i = data.draw(st.integers(0, len(raw) - 1), label="byte")
        raw[i] = raw[i] ^ 0xFF if how == "flip" else data.draw(st.integers(0, 255), label="to")
    corrupt = bytes(raw)
    want = outcome(object_path, old_snapshot, new, corrupt)
    got = outcome(plan.migrate, corrupt)
    where = f"for {corrupt.hex()} [{ev.change} at {ev.path}: {ev.old!r} -> {ev.new!r}]\n{plan}"
    assert got[0] == want[0], f"got {got}, should be {want} (the object path) {where}"
    if got[0] == "error":
        assert got == want, f"got {got}, should be {want} (the object path) {where}"
        return
    # Bytes that read although not canonical (a set unused mask bit) are copied as they are
    # where the object path rewrites them: both must hold the same value.
    read, should = new.from_bytes(got[1]), new.from_bytes(want[1])
    assert strategies.values_equal(read, should), f"got {read!r}, should be {should!r} {where}"


@settings(max_examples=60)
@given(st.data())
def test_a_plan_without_migration_keeps_the_bytes(data: Any) -> None:
    verdict = data.draw(st.sampled_from(["compatible_as_is", "compatible_with_reconfigured_serializer"]))
    schema = data.draw(strategies.schemas(families=("enum",) if "reconfigured" in verdict else None))
    ev = data.draw(strategies.evolutions(schema, verdict=verdict), label="evolution")
    old = serializer_for(ev.old)
    snapshot_bytes = snapshot_to_bytes(old.snapshot_configuration())
    value = data.draw(strategies.values(ev.old), label="value")
    raw = old.to_bytes(value)
    strategies.activate(ev.new)
    plan = migration_plan(snapshot_from_bytes(snapshot_bytes, allow_pickle=True), serializer_for(ev.new))
    assert not plan.needs_migration and plan.migrate(raw) == raw, f"got {plan}, should keep the bytes"
    read = plan.reader.from_bytes(raw)
    assert strategies.values_equal(read, ev.migrate(value)), f"got {read!r}, should be {ev.migrate(value)!r}"


# -- the byte path is the one taken ----------------------------------------------------------------
ADDRESS = RowSerializer([("street", StringSerializer(), True), ("zip", IntSerializer(), True)])
ADDRESS_2 = RowSerializer([("zip", IntSerializer(), True), ("street", StringSerializer(), True),
                           ("country", StringSerializer(), True)])
PERSON = RowSerializer([("id", LongSerializer(), False), ("name", StringSerializer(), True),
                        ("tags", ListSerializer(StringSerializer()), True), ("address", ADDRESS, True)])
PERSON_2 = RowSerializer([("address", ADDRESS_2, True), ("name", StringSerializer(), True),
                          ("email", StringSerializer(), True), ("id", LongSerializer(), False),
                          ("tags", ListSerializer(StringSerializer()), True)])
AVRO = AvroSerializer({"type": "record", "name": "P", "fields": [{"name": "a", "type": "int"}]})
AVRO_2 = AvroSerializer({"type": "record", "name": "P", "fields": [
    {"name": "a", "type": "long"}, {"name": "b", "type": "string", "default": "-"}]})
CASES = [
    (PERSON, PERSON_2, (7, "ann", ["x", ""], ("1 Main Street", 10115))),
    (PERSON, PERSON_2, (8, None, None, (None, 3))),
    (ListSerializer(AVRO), ListSerializer(AVRO_2), [{"a": 1}, {"a": -2}]),
    (MapSerializer(IntSerializer(), AVRO), MapSerializer(IntSerializer(), AVRO_2), {1: {"a": 5}, 2: None}),
    (NullableSerializer(ADDRESS), NullableSerializer(ADDRESS_2), ("b", 2)),
    (NullableSerializer(ADDRESS), NullableSerializer(ADDRESS_2), None),
    (TupleSerializer(LongSerializer(), ADDRESS), TupleSerializer(LongSerializer(), ADDRESS_2), (3, ("c", 4))),
]


def test_builtin_composites_migrate_on_the_byte_path_without_objects() -> None:
    for old, new, value in CASES:
        plan = migration_plan(old.snapshot_configuration(), new)
        raw = old.to_bytes(value)
        source, target = DataInputView(raw), DataOutputView()
        plan.root.run(source, target)  # raises _Detour if it fell back to objects
        want = object_path(old.snapshot_configuration(), new, raw)
        assert target.getvalue() == want, f"got {target.getvalue().hex()}, should be {want.hex()}\n{plan}"
        assert "decode" not in str(plan), f"got objects in the plan, should copy and rebuild only:\n{plan}"


def test_plan_is_a_readable_tree_of_steps() -> None:
    plan = migration_plan(PERSON.snapshot_configuration(), PERSON_2)
    assert isinstance(plan, MigrationPlan) and isinstance(plan.root, RowStep), f"got {plan!r}"
    text = str(plan)
    for line in ("compatible_after_migration", "'email': added, null", "'country': added, null",
                 "'tags' (field 2 before): copy bytes (ListSerializer", "reordered"):
        assert line in text, f"got\n{text}\nshould contain {line!r}"
    kept = [s for s in plan.root.children() if isinstance(s, CopyStep)]
    assert len(kept) == 3, f"got {len(kept)} copied fields, should be 3 (name, id, tags)"
    same = migration_plan(PERSON.snapshot_configuration(), PERSON_2)
    assert same == plan and hash(same) == hash(plan), "got unequal plans for the same pair, should be equal"
    other = migration_plan(ADDRESS.snapshot_configuration(), ADDRESS_2)
    assert other != plan, "got equal plans for different pairs, should differ"


def test_a_string_promoted_to_bytes_is_refused_where_the_old_serializer_cannot_read_it():
    # 0xcf alone is not UTF-8: the old string serializer refuses the record, so its migration
    # to bytes must refuse it too, on the byte path as on the object path.
    from reference import SerializationError
    from reference.serializers import AvroSerializer

    old, new = AvroSerializer("string"), AvroSerializer("bytes")
    plan = migration_plan(old.snapshot_configuration(), new)
    assert plan.migrate(bytes.fromhex("0000000141")) == bytes.fromhex("0000000141"), "got another migration of 'A'"
    for path in (plan.migrate, plan.migrate_as_objects):
        with pytest.raises(SerializationError, match="(?i)utf-8"):
            path(bytes.fromhex("00000001cf"))


# -- the byte steps are the serializers' own, generated or generic ------------------------------
def _byte_path(plan: MigrationPlan, raw: bytes) -> bytes | None:
    """The byte path alone: the migrated bytes, or None where it leaves the record to objects."""
    source, target = DataInputView(raw), DataOutputView()
    try:
        plan.root.run(source, target)
    except Exception:
        return None
    return target.getvalue() if not source.available() else None


@settings(max_examples=100)
@given(st.data())
def test_byte_steps_give_the_object_paths_bytes_generated_and_generic(data: Any) -> None:
    ev, old_snapshot, new, stored, _ = _evolved(data, "compatible_after_migration")
    raws = [*stored, stored[0][:-1], stored[0] + b"\x00"]
    taken = {}
    for enabled in (True, False):
        with generated_codecs(enabled):  # the plan compiles its steps on first use, in this mode
            plan = migration_plan(old_snapshot, new)
            where = f"(generated codecs {enabled}) [{ev.change} at {ev.path}: {ev.old!r} -> {ev.new!r}]\n{plan}"
            taken[enabled] = []
            for raw in raws:
                got = _byte_path(plan, raw)
                want = outcome(object_path, old_snapshot, new, raw)
                if got is not None:
                    assert want[0] == "ok", f"got {got.hex()} on the byte path, should fail as {want} {where}"
                    read, should = new.from_bytes(got), new.from_bytes(want[1])
                    assert strategies.values_equal(read, should), f"got {read!r}, should be {should!r} {where}"
                    if raw in stored:
                        assert got == want[1], f"got {got.hex()}, should be {want[1].hex()} {where}"
                taken[enabled].append(got is not None)
                assert outcome(plan.migrate, raw)[0] == want[0], f"got another outcome than {want} {where}"
    # canonical records the generic form takes, the generated one takes too
    for generic, generated, raw in zip(taken[False], taken[True], raws, strict=True):
        assert generated or not generic, f"got {raw.hex()} left to objects by the generated form only"


def test_generated_byte_steps_take_lists_of_zero_width_elements() -> None:
    """A list of elements written as no bytes (empty tuples) holds more elements than bytes: the
    generated step copies it as the generic one does, within the record's element budget."""
    from reference.serializers import ListSerializer, TupleSerializer

    old = RowSerializer([("a", ListSerializer(TupleSerializer()), False)])
    new = RowSerializer([("b", IntSerializer(), True), ("a", ListSerializer(TupleSerializer()), False)])
    for value in ([], [()], [(), (), ()]):
        raw = old.to_bytes((value,))
        want = object_path(old.snapshot_configuration(), new, raw)
        for enabled in (True, False):
            with generated_codecs(enabled):
                got = _byte_path(migration_plan(old.snapshot_configuration(), new), raw)
            assert got == want, (
                f"got {None if got is None else got.hex()} on the byte path (generated codecs {enabled}) for "
                f"{value!r}, should be {want.hex()}")
    too_many = bytes(1) + (1 << 20).to_bytes(4, "big")  # beyond the element budget of a 5-byte record
    with generated_codecs(True):
        assert _byte_path(migration_plan(old.snapshot_configuration(), new), too_many) is None, (
            "got 2**20 zero-width elements migrated from a 5-byte record, should be left to deserialize to refuse")


def test_byte_steps_without_generated_codecs_stay_on_the_byte_path() -> None:
    with generated_codecs(False):
        for old, new, value in CASES:
            plan = migration_plan(old.snapshot_configuration(), new)
            raw = old.to_bytes(value)
            source, target = DataInputView(raw), DataOutputView()
            plan.root.run(source, target)  # raises if the byte path gave the record up
            want = object_path(old.snapshot_configuration(), new, raw)
            assert target.getvalue() == want, f"got {target.getvalue().hex()}, should be {want.hex()}\n{plan}"


def test_a_rows_byte_migration_is_generated_from_the_fragments() -> None:
    with generated_codecs(True):
        part = ADDRESS.byte_migration(ADDRESS_2, (1, 0, -1), {})
        assert "raise Bail" in getattr(part, "__source__", ""), "got the generic form, should be generated"
        assert part(DataInputView(ADDRESS.to_bytes(("Main", 3)))) == ADDRESS_2.to_bytes((3, "Main", None))
    with generated_codecs(False):
        part = ADDRESS.byte_migration(ADDRESS_2, (1, 0, -1), {})
        assert not hasattr(part, "__source__"), "got generated code, should be the generic form"
        assert part(DataInputView(ADDRESS.to_bytes(("Main", None)))) == ADDRESS_2.to_bytes((None, "Main", None))


@pytest.mark.parametrize("enabled", [True, False])
def test_a_rows_byte_migration_keeps_the_row_kind_and_refuses_to_drop_it(enabled: bool) -> None:
    from reference.serializers import Row, RowKind

    legacy = RowSerializer([("zip", IntSerializer(), True), ("street", StringSerializer(), True)],
                           supports_row_kind=False)
    deleted = ADDRESS.to_bytes(Row(("x", 1), RowKind.DELETE))
    with generated_codecs(enabled):
        kept = ADDRESS.byte_migration(ADDRESS_2, (1, 0, -1), {})
        assert ADDRESS_2.from_bytes(kept(DataInputView(deleted))) == Row((1, "x", None), RowKind.DELETE)
        dropped = ADDRESS.byte_migration(legacy, (1, 0), {})
        assert legacy.from_bytes(dropped(DataInputView(ADDRESS.to_bytes(("x", 1))))) == (1, "x")
        with pytest.raises(Exception):  # noqa: B017 - any refusal: the plan redoes it on objects
            dropped(DataInputView(deleted))
        with pytest.raises(ValueError):
            ADDRESS.byte_migration(ADDRESS_2, (1, 0), {})
        with pytest.raises(ValueError):
            ADDRESS.byte_migration(ADDRESS_2, (1, 0, 2), {})


def test_a_plan_counts_the_records_it_redoes_on_the_object_path(monkeypatch):
    """``redone`` counts the records the byte path gave to the object path: none of the records a
    plan of byte steps (``bytes_only``) migrates; each one when its row step fails; a plan
    holding a snapshot's own migrate_element is not ``bytes_only`` (a null goes to the object
    path by design); a pickled copy counts its own."""
    from dataclasses import make_dataclass

    from reference.serializers import PojoSerializer

    old = RowSerializer([("a", LongSerializer(), True)])
    new = RowSerializer([("a", LongSerializer(), True), ("b", StringSerializer(), True)])
    plan = migration_plan(old.snapshot_configuration(), new)
    assert plan.bytes_only, f"got {plan}, should be byte steps only"
    records = [old.to_bytes((i,)) for i in range(3)]
    migrated = [plan.migrate(r) for r in records]
    assert plan.redone == 0, f"got {plan.redone} records redone, should be 0"

    def failing(self: Any, new: Any, order: Any, changed: Any) -> Any:
        def part(source: Any) -> bytes:
            raise TypeError("a row step that fails")
        return part

    monkeypatch.setattr(RowSerializer, "byte_migration", failing)
    broken = migration_plan(old.snapshot_configuration(), new)
    assert [broken.migrate(r) for r in records] == migrated, "got other bytes, should be the object path's"
    assert broken.redone == 3, f"got {broken.redone} records redone, should be 3"
    assert pickle.loads(pickle.dumps(broken)).redone == 0, "got a pickled copy with the sender's count"
    Point = make_dataclass("Point", [("x", int)])
    Point2 = make_dataclass("Point", [("x", int), ("y", int, 0)])
    Point.__module__ = Point2.__module__ = __name__
    pojo_plan = migration_plan(PojoSerializer(Point).snapshot_configuration(), PojoSerializer(Point2))
    assert pojo_plan.needs_migration and not pojo_plan.bytes_only, f"got {pojo_plan}, should not be bytes only"


def test_a_plan_of_the_references_own_object_steps_redoes_only_records_holding_a_null():
    """``redoes_only_nulls``: a list of POJOs migrates each list without a null on its byte path
    (a null element goes to the object path by design); a plan whose object step is a user's
    snapshot, or an Avro snapshot's own migrate_state, is not one."""
    from dataclasses import make_dataclass

    from backend_support import EvolvingSerializer

    from reference.serializers import ListSerializer, PojoSerializer

    Point = make_dataclass("ListedPoint", [("x", int)])
    Point.__module__ = __name__
    old = ListSerializer(PojoSerializer(Point))
    snapshot = snapshot_to_bytes(old.snapshot_configuration())  # as a savepoint holds it
    records = [old.to_bytes(v) for v in ([], [Point(1), Point(2)], [Point(3), None])]
    Point2 = make_dataclass("ListedPoint", [("x", int), ("y", int, 0)])  # the next release's Point
    Point2.__module__ = __name__
    new = ListSerializer(PojoSerializer(Point2))
    plan = migration_plan(snapshot_from_bytes(snapshot), new)
    assert plan.redoes_only_nulls and not plan.bytes_only, f"got {plan}, should redo only nulls, not be bytes only"
    got = [new.from_bytes(plan.migrate(r)) for r in records[:2]]
    assert got == [[], [Point2(1, 0), Point2(2, 0)]], f"got {got}, should be the lists with y = 0"
    assert plan.redone == 0, f"got {plan.redone} records redone, should be 0 (no null)"
    got = new.from_bytes(plan.migrate(records[2]))
    assert got == [Point2(3, 0), None], f"got {got}, should be [ListedPoint(3, 0), None]"
    assert plan.redone == 1, f"got {plan.redone} records redone, should be 1 (the list holding a null)"
    user = migration_plan(EvolvingSerializer(1).snapshot_configuration(), EvolvingSerializer(2))
    assert user.needs_migration and not user.redoes_only_nulls, f"got {user}, should not redo only nulls (a user's snapshot)"
    unchanged = migration_plan(old.snapshot_configuration(), old)
    assert not unchanged.redoes_only_nulls, "got a plan of no steps redoing only nulls, should be False (nothing to run)"


@pytest.mark.parametrize("enabled", [True, False])
def test_a_list_of_elements_written_as_no_bytes_is_copied_on_the_byte_path(enabled: bool) -> None:
    """A row kept field by field copies a list of Avro fixed(0) elements (no bytes each, length
    -1 as Flink's Avro serializer says): more elements than bytes left, which the generated copy
    used to leave to the object path while the generic one took it."""
    from reference import types as t
    from reference.serializers import generated_codecs

    fixed = t.AvroType('{"name":"F1","size":0,"type":"fixed"}')
    old = serializer_for(t.RowType((t.RowField("b", t.IntType(), nullable=False),
                                    t.RowField("c", t.ListType(fixed), nullable=False))))
    new = serializer_for(t.RowType((t.RowField("d", t.IntType(), nullable=True),
                                    t.RowField("b", t.IntType(), nullable=False),
                                    t.RowField("c", t.ListType(fixed), nullable=False))))
    raw = old.to_bytes((7, [b"", b""]))
    with generated_codecs(enabled):
        plan = migration_plan(old.snapshot_configuration(), new)
        got = _byte_path(plan, raw)
    assert got is not None, f"got the record left to objects (generated codecs {enabled}), should be taken on bytes"
    assert new.from_bytes(got) == (None, 7, [b"", b""]), f"got {new.from_bytes(got)!r}, should be (None, 7, [b'', b''])"
