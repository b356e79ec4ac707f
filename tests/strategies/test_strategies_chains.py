"""Evolution chains: each step is a proper evolution of the previous version, its oracle agrees
with the reference, and when the reference also accepts the direct jump from the first to the
last version, the direct migration equals the step-by-step one."""

from __future__ import annotations

from typing import Any

from _strategies_oracle_check import check_evolution, read_all, to_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

import strategies
from reference import (
    DataInputView,
    DataOutputView,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference.types import serializer_for

_FAMILIES = ("row", "pojo", "enum", "list", "map", "tuple", "nullable", "avro")


@settings(max_examples=40)
@given(st.data())
def test_strategies_chain_steps_follow_each_other_and_agree_with_the_reference(data: Any) -> None:
    schema = data.draw(strategies.schemas(families=_FAMILIES), label="schema")
    chain = data.draw(strategies.evolution_chains(schema, 3), label="chain")
    assert len(chain) == 3, f"got {len(chain)} steps, should be 3"
    assert chain[0].old == schema, f"got first old {chain[0].old!r}, should be the schema {schema!r}"
    value = data.draw(strategies.values(schema), label="value")
    for i, ev in enumerate(chain):
        if i:
            assert ev.old == chain[i - 1].new, f"got step {i} starting at {ev.old!r}, should start at {chain[i - 1].new!r}"
        assert ev.expect != "incompatible", f"got an incompatible step {ev.change}, should be compatible"
        check_evolution(ev, [value])
        value = ev.migrate(value)


@settings(max_examples=40)
@given(st.data())
def test_strategies_chain_direct_migration_equals_step_by_step(data: Any) -> None:
    schema = data.draw(strategies.schemas(families=_FAMILIES), label="schema")
    chain = data.draw(strategies.evolution_chains(schema, 2), label="chain")
    values = data.draw(st.lists(strategies.values(schema), min_size=1, max_size=3), label="values")
    first, last = serializer_for(chain[0].old), serializer_for(chain[-1].new)
    stored = [to_bytes(first, v) for v in values]
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(first.snapshot_configuration()), allow_pickle=True)
    strategies.activate(chain[-1].new)
    new_snapshot = last.snapshot_configuration()
    result = resolve_compatibility(new_snapshot, old_snapshot)
    steps = strategies.chain_migration(chain)
    assert steps is not None, "got no chain migration, should have one for compatible steps"
    if result.is_incompatible() or steps.is_lossy:
        # Compared only when both paths are compatible and no step can lose information
        # (bytes -> string -> bytes, long -> float -> double, or a removed enum symbol read as
        # a default that a later step changes, differ from the jump in Java too).
        return
    for value, data_bytes in zip(values, stored, strict=True):
        expected = steps(value)
        if result.is_compatible_after_migration():
            target = DataOutputView()
            prior = old_snapshot.restore_serializer()
            new_snapshot.migrate_state(prior, last, DataInputView(data_bytes), target)
            got = read_all(last, target.getvalue())
        elif result.is_compatible_with_reconfigured_serializer():
            got = read_all(result.get_reconfigured_serializer(), data_bytes)
        else:
            got = read_all(last, data_bytes)
        assert strategies.values_equal(got, expected), (
            f"got {got!r} migrating directly, should be {expected!r} as step by step "
            f"[{[ev.change for ev in chain]}]"
        )


def test_strategies_lossy_promotions_are_marked() -> None:
    from reference import types as t

    schema = t.AvroType('"bytes"')
    seen = set()

    @settings(max_examples=60, database=None)
    @given(st.data())
    def collect(data: Any) -> None:
        ev = data.draw(strategies.evolutions(schema, family="avro", verdict="compatible"))
        if ev.change == "avro.promote":
            seen.add(ev.migrate.is_lossy)
            assert ev.migrate.is_lossy, f"got {ev.migrate!r} not lossy, should be (bytes -> string)"
            value = b"\x80"
            assert strategies.chain_migration([ev]).is_lossy, "got a lossy step hidden by the chain, should show"
            assert ev.migrate(value) == "\ufffd", f"got {ev.migrate(value)!r}, should be U+FFFD"

    collect()
    assert seen == {True}, f"got promotions {seen}, should have drawn bytes -> string"


def test_strategies_found_row_migration_re_encodes_a_reconfigured_field() -> None:
    # Found by the direct-jump test: a row that gains a field (after migration) while its enum
    # field's symbols are reordered (reconfigured) copied the enum's old ordinal bytes as they
    # were, so the new serializer read another member.
    from reference import types as t
    from strategies._pojo import enum_type

    old_enum = enum_type(("A", "B"), "EnumRowReencodeRegression")
    new_enum = enum_type(("B", "A"), "EnumRowReencodeRegression")
    old = t.RowType((t.RowField("e", old_enum, nullable=False),))
    new = t.RowType((t.RowField("x", t.IntType()), t.RowField("e", new_enum, nullable=False)))
    first = serializer_for(old)
    data = to_bytes(first, (old_enum.cls.A,))
    old_snapshot = snapshot_from_bytes(snapshot_to_bytes(first.snapshot_configuration()), allow_pickle=True)
    last = serializer_for(new)
    strategies.activate(new)
    snapshot = last.snapshot_configuration()
    result = resolve_compatibility(snapshot, old_snapshot)
    assert result.is_compatible_after_migration(), f"got {result}, should be after migration"
    target = DataOutputView()
    snapshot.migrate_state(old_snapshot.restore_serializer(), last, DataInputView(data), target)
    got = read_all(last, target.getvalue())
    assert strategies.values_equal(got, (None, new_enum.cls.A)), f"got {got!r}, should be (None, A)"


# -- names a chain has removed stay retired -------------------------------------------------------
# Found by CI's random draws: a POJO field removed and then added again under its old name made
# the direct jump read the old value back, while step by step it had become the zero value.


def _chain_retire_find(schema: Any, condition: Any, length: int = 2, examples: int = 400) -> list[Any]:
    from random import Random

    from hypothesis import find

    return find(strategies.evolution_chains(schema, length), condition,
                settings=settings(max_examples=examples, database=None), random=Random(6))


def _names_at_root(schema: Any) -> set[str]:
    """Field names of a root POJO or Avro record, read here from the schema itself."""
    from reference import types as t
    from strategies._pojo import pojo_fields

    if isinstance(schema, t.PojoType):
        return {f.name for f in pojo_fields(schema)}
    parsed = schema.schema  # a chain may turn the record into a union, e.g.
    return {f["name"] for f in parsed["fields"]} if isinstance(parsed, dict) and "fields" in parsed else set()


def _removed_then_added(chain: list[Any]) -> tuple[set[str], set[str]]:
    removed = _names_at_root(chain[0].old) - _names_at_root(chain[0].new)
    added = _names_at_root(chain[1].new) - _names_at_root(chain[1].old)
    return removed, added


def _retirement_schemas() -> list[Any]:
    from reference import types as t
    from strategies._pojo import PojoField, pojo_type
    from strategies.avro import avro_type_of as _avro_type

    record = {"type": "record", "name": "ChainRetirement",
              "fields": [{"name": "a", "type": "int"}, {"name": "b", "type": "string"}]}
    return [pojo_type((PojoField("a", t.IntType()),), "ChainRetirementPojo"), _avro_type(record)]


def test_strategies_chains_never_add_back_a_removed_name() -> None:
    from hypothesis.errors import NoSuchExample

    for schema in _retirement_schemas():
        # The case exists: a step removes a field and the next one adds a field ...
        chain = _chain_retire_find(schema, lambda c: all(_removed_then_added(c)))
        removed, added = _removed_then_added(chain)
        assert removed and added, f"got removed {removed} and added {added}, should both be non-empty"
        # ... but never under a name the first step removed.
        try:
            reused = _chain_retire_find(schema, lambda c: bool(set.intersection(*_removed_then_added(c))))
        except NoSuchExample:
            continue
        raise AssertionError(
            f"got {[ev.change for ev in reused]} adding back {set.intersection(*_removed_then_added(reused))}, "
            f"should take a name no earlier version had [{schema!r}]"
        )


def test_strategies_chain_of_enum_symbol_defaults_is_lossy() -> None:
    # v1 {A,B,C,D} -> v2 without D (default A) -> v3 without B (default C): step by step D
    # becomes A, the direct jump reads D as v3's default C. The chain must say it is lossy.
    from strategies.avro import avro_type_of as _avro_type

    schema = _avro_type({"type": "enum", "name": "ChainSymbols", "symbols": ["A", "B", "C", "D"]})
    label = "avro.remove_enum_symbol_with_default"
    chain = _chain_retire_find(schema, lambda c: all(ev.change == label for ev in c))
    steps = strategies.chain_migration(chain)
    assert steps is not None and steps.is_lossy, f"got {steps!r} not lossy, should be ({[ev.change for ev in chain]})"


def test_strategies_avro_chains_never_name_a_field_as_another_ones_alias() -> None:
    # add c, rename c -> id (alias c), add c again: two reader fields answer to "c".
    from hypothesis.errors import NoSuchExample

    def clash(chain: list[Any]) -> bool:
        parsed = chain[-1].new.schema
        if not isinstance(parsed, dict) or "fields" not in parsed:
            return False
        aliases = {a for f in parsed["fields"] for a in f.get("aliases", ())}
        return bool(aliases & {f["name"] for f in parsed["fields"]})

    try:
        chain = _chain_retire_find(_retirement_schemas()[1], clash, length=3, examples=2000)
    except NoSuchExample:
        return
    raise AssertionError(f"got {chain[-1].new.schema_json} after {[ev.change for ev in chain]}, "
                         "should name no field as another field's alias")
