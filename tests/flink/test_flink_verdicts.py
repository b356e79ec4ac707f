"""Verdicts and migrated bytes against the real Flink 2.3, for evolutions the strategies generate.

Generated evolutions of nested List / Map / Tuple / Nullable / Row types over primitives (the
``strategies`` families ``identity``, ``simple``, ``composite`` and ``row``) are written as
snapshots in the Flink dialect and handed, with a record of the old type, to CrossCheck's
``judge`` mode: Flink restores both snapshots, the new one judges the old one, and Flink brings
the record over (re-read as is, through the reconfigured serializer, or read by the old and
written by the new serializer after migration). For every evolution:

- the reference, judging the same two Flink-form snapshots, gives Flink's verdict and the same
  bytes;
- the reference in its own form gives the strategies' verdict (FLIP-527, the oracle);
- Flink's verdict equals the oracle's, except for the row changes where Flink 2.3 and FLIP-527
  differ by design (``FLINK_23_DIFFERS``; docs/flink-dialect.md): Flink 2.3 matches row fields
  by position and has no ``migrateState``.

Enum and POJO evolutions need two versions of one Java class and are not generated here.
"""

from __future__ import annotations

import collections
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
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
from strategies import canonical

pytestmark = [pytest.mark.flink, pytest.mark.xdist_group("flink")]

FAMILIES = ("primitive", "nullable", "list", "map", "tuple", "row")
EVOLUTIONS = ("identity", "simple", "composite", "row")

#: Where Flink 2.3 itself is wrong and the reference deliberately is not: since the new snapshot
#: judges the old one, Flink's CompositeTypeSerializerSnapshot no longer compares the snapshot
#: classes, so a composite replaced by another composite with the same number of compatible
#: nested serializers (a one-field Tuple by a List, ...) is "compatible as is", and Flink then
#: reads the old bytes with the wrong serializer.
FLINK_23_WRONG = {"composite.class_change": ("incompatible", "compatible_as_is")}

#: Row changes where Flink 2.3 (positional, no migration) and FLIP-527 (by name) give other
#: verdicts: (FLIP-527's verdict, Flink 2.3's possible verdicts).
FLINK_23_DIFFERS = {
    # an arity change is incompatible in Flink 2.3
    "row.add_nullable_field": ("compatible_after_migration", {"incompatible"}),
    # by position: fields of other types are incompatible, of the same types as is
    "row.reorder": ("compatible_after_migration", {"incompatible", "compatible_as_is"}),
    # Flink records neither names nor nullability
    "row.rename_field": ("incompatible", {"compatible_as_is"}),
    "row.make_not_null": ("incompatible", {"compatible_as_is"}),
}


def _generated(count: int = 300) -> list[tuple[object, object]]:
    cases: list[tuple[object, object]] = []

    @settings(max_examples=count, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        schema = data.draw(strategies.schemas(families=FAMILIES), label="schema")
        family = data.draw(st.sampled_from(EVOLUTIONS), label="evolution family")
        evolution = data.draw(strategies.evolutions(schema, family=family), label="evolution")
        cases.append((evolution, data.draw(strategies.values(schema), label="value")))

    draw()
    return cases


def _reference_route(old_bytes: bytes, new_bytes: bytes, record: bytes) -> tuple[str, bytes | None]:
    """What the reference does with the two Flink-form snapshots, as Flink's judge mode does."""
    old, new = snapshot_from_bytes(old_bytes), snapshot_from_bytes(new_bytes)
    result = resolve_compatibility(new, old)
    if result.is_incompatible():
        return result.kind, None
    new_serializer = new.restore_serializer()
    if result.is_compatible_as_is():
        return result.kind, new_serializer.to_bytes(new_serializer.from_bytes(record))
    if result.is_compatible_with_reconfigured_serializer():
        reconfigured = result.get_reconfigured_serializer()
        return result.kind, reconfigured.to_bytes(reconfigured.from_bytes(record))
    out = DataOutputView()
    new.migrate_state(old.restore_serializer(), new_serializer, DataInputView(record), out)
    return result.kind, out.getvalue()


def _same_maps(schema: object, ours: bytes, flinks: str) -> bool:
    """Flink reads a map into a HashMap, so its rewrite may order entries otherwise: for a type
    holding a map the two records are compared as values."""
    if "MapType(" not in repr(schema):
        return False
    serializer = serializer_for(schema)
    return bool(canonical(serializer.from_bytes(ours)) == canonical(serializer.from_bytes(bytes.fromhex(flinks))))


def test_generated_evolutions_agree_with_flink(crosscheck):
    cases = _generated()
    lines, expected = [], []
    for i, (evolution, value) in enumerate(cases):
        old, new = serializer_for(evolution.old), serializer_for(evolution.new)
        old_bytes = snapshot_to_bytes(old.snapshot_configuration(), dialect="flink")
        new_bytes = snapshot_to_bytes(new.snapshot_configuration(), dialect="flink")
        record = old.to_bytes(value)
        lines.append(f"{i} {old_bytes.hex()} {new_bytes.hex()} {record.hex()}\n")
        own = resolve_compatibility(new, old.snapshot_configuration()).kind
        expected.append((evolution, own, _reference_route(old_bytes, new_bytes, record)))
    ran = subprocess.run([*crosscheck, "judge"], input="".join(lines), capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, f"CrossCheck judge failed: {ran.stderr}"
    answers = ran.stdout.splitlines()
    assert len(answers) == len(cases), f"got {len(answers)} answers, should be {len(cases)}"

    wrong: list[str] = []
    differs: collections.Counter[str] = collections.Counter()
    flink_wrong: collections.Counter[str] = collections.Counter()
    for answer, (evolution, own, (kind, data)) in zip(answers, expected, strict=True):
        index, verdict, hexed = answer.split(" ", 2)
        where = f"[{index}: {evolution.change} {evolution.old} -> {evolution.new}]"
        if verdict == "ERROR":
            wrong.append(f"Flink failed: {hexed} {where}")
            continue
        if own != evolution.expect:
            wrong.append(f"got {own} in the reference's own form, should be the oracle's {evolution.expect} {where}")
        if verdict != kind:
            if FLINK_23_WRONG.get(evolution.change) == (kind, verdict):
                flink_wrong[evolution.change] += 1
                continue
            wrong.append(f"got the reference's {kind} on Flink's form, should be Flink's {verdict} {where}")
        elif data is not None and data.hex() != hexed and not _same_maps(evolution.new, data, hexed):
            wrong.append(f"got bytes {data.hex()}, should be Flink's {hexed} {where}")
        if verdict != evolution.expect:
            flip, flink = FLINK_23_DIFFERS.get(evolution.change, (None, set()))
            if evolution.expect == flip and verdict in flink:
                differs[evolution.change] += 1
            else:
                wrong.append(f"got Flink's {verdict}, should be the oracle's {evolution.expect} {where}")
    assert not wrong, f"{len(wrong)} of {len(cases)} evolutions disagree:\n" + "\n".join(wrong[:15])
    changes = collections.Counter(evolution.change for evolution, _ in cases)
    assert len(changes) >= 8, f"got only the changes {sorted(changes)}, should cover more of the generated kinds"
    print(f"{len(cases)} evolutions: {dict(changes)}; FLIP-527 vs Flink 2.3: {dict(differs)}; "
          f"Flink 2.3 wrong: {dict(flink_wrong)}")
