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

Enum and POJO evolutions (``test_generated_enum_and_pojo_evolutions_agree_with_flink``) need the
user classes on the Java side: each case's generated classes get Java names in a package of
their own (``c<case>.<name>``), and Java sources of their *new* versions (the restoring job's
classes; an old class renamed away is kept, so that Flink can read the old snapshot and judge
it) are compiled into one directory handed to the judge. POJO fields are ``Object`` fields
initialised as the dataclass's: its default, else 0 / false for numbers and booleans (Java's
primitive defaults, which the reference gives a new field), else null.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import struct
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import strategies
from reference import (
    DataInputView,
    DataOutputView,
    register_type,
    resolve_compatibility,
    snapshot_from_bytes,
    snapshot_to_bytes,
)
from reference import types as t
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
FLINK_23_WRONG = {
    "composite.class_change": ("incompatible", "compatible_as_is"),
    # An enum member removed inside a POJO: Flink cannot restore the field's enum snapshot,
    # takes the field for a removed one ("after migration") and then fails to migrate.
    "enum.remove": ("incompatible", "compatible_after_migration"),
}

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
    """The two records hold the same value where their bytes may differ by design: Flink reads a
    map into a HashMap (its rewrite may order entries otherwise) and writes every NaN as the
    canonical one (the reference keeps the payload: docs/formats.md's float rule). Both are read
    with the serializer Flink's form of the snapshot restores (rows positional and nullable, as
    Flink writes them: it keeps a null even in a field the new schema declares NOT NULL)."""
    kinds = {type(node) for node in _nodes(schema)}
    if not kinds & {t.MapType, t.FloatType, t.DoubleType}:
        return False
    flink_form = snapshot_to_bytes(serializer_for(schema).snapshot_configuration(), dialect="flink")
    serializer = snapshot_from_bytes(flink_form).restore_serializer()
    theirs = serializer.from_bytes(bytes.fromhex(flinks))
    return bool(_nan_free(canonical(serializer.from_bytes(ours))) == _nan_free(canonical(theirs)))


_CANONICAL_NAN = struct.pack(">d", float("nan"))


def _nan_free(form: object) -> object:
    """``canonical``'s form with every NaN as the canonical one."""
    if isinstance(form, tuple):
        if len(form) == 2 and form[0] == "float" and isinstance(form[1], bytes):
            value = struct.unpack(">d", form[1])[0]
            return ("float", _CANONICAL_NAN) if value != value else form
        return tuple(_nan_free(part) for part in form)
    if isinstance(form, frozenset):
        return frozenset(_nan_free(part) for part in form)
    return form


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
        elif hexed.startswith("ERROR:"):
            wrong.append(f"Flink failed bringing the record over: {hexed} {where}")
        elif data is not None and data.hex() != hexed and not _same_maps(evolution.new, data, hexed):
            wrong.append(f"got bytes {data.hex()}, should be Flink's {hexed} {where}")
        if verdict != evolution.expect:
            if (evolution.expect, verdict) in _differing_pairs(evolution.change):
                differs[evolution.change] += 1
            else:
                wrong.append(f"got Flink's {verdict}, should be the oracle's {evolution.expect} {where}")
    assert not wrong, f"{len(wrong)} of {len(cases)} evolutions disagree:\n" + "\n".join(wrong[:15])
    changes = collections.Counter(evolution.change for evolution, _ in cases)
    assert len(changes) >= 8, f"got only the changes {sorted(changes)}, should cover more of the generated kinds"
    print(f"{len(cases)} evolutions: {dict(changes)}; FLIP-527 vs Flink 2.3: {dict(differs)}; "
          f"Flink 2.3 wrong: {dict(flink_wrong)}")


def _differing_pairs(change: str) -> set[tuple[str, str]]:
    """(FLIP-527's verdict, Flink 2.3's) pairs that differ by design for ``change``; a change
    inside a nested row (``row.nested``) may be any of the row changes, one level down."""
    if change == "row.nested":
        return {(flip, flink) for flip, flinks in FLINK_23_DIFFERS.values() for flink in flinks}
    flip, flinks = FLINK_23_DIFFERS.get(change, (None, set()))
    return {(flip, flink) for flink in flinks}


# -- enums and POJOs: the user classes on the Java side ------------------------------------------
def _classes(schema: object) -> list[type]:
    """The generated enum and POJO classes in ``schema``, nested ones included."""
    found: list[type] = []
    for node in _nodes(schema):
        if isinstance(node, (t.PojoType, t.EnumType)) and node.cls not in found:
            found.append(node.cls)
    return found


def _nodes(schema: object) -> list[object]:
    """Every node of ``schema``, through POJO fields too."""
    nodes: list[object] = []
    stack = [schema]
    while stack:
        node = stack.pop()
        nodes.append(node)
        if isinstance(node, t.NullableType):
            stack.append(node.inner)
        elif isinstance(node, t.ListType):
            stack.append(node.element)
        elif isinstance(node, t.MapType):
            stack += [node.key, node.value]
        elif isinstance(node, t.TupleType):
            stack += list(node.fields)
        elif isinstance(node, t.RowType):
            stack += [f.type for f in node.fields]
        elif isinstance(node, t.PojoType):
            stack += [f.metadata["logical_type"] for f in dataclasses.fields(node.cls)]
    return nodes


_ZERO = {
    t.IntType: "Integer.valueOf(0)", t.LongType: "Long.valueOf(0L)", t.ShortType: "Short.valueOf((short) 0)",
    t.ByteType: "Byte.valueOf((byte) 0)", t.FloatType: "Float.valueOf(0f)", t.DoubleType: "Double.valueOf(0d)",
    t.BooleanType: "Boolean.FALSE",
}


def _java_literal(kind: object, value: object) -> str | None:
    """A Java expression for a scalar default, None for anything else."""
    if value is None:
        return "null"
    if isinstance(kind, t.BooleanType):
        return "Boolean.TRUE" if value else "Boolean.FALSE"
    if isinstance(kind, t.IntType):
        return f"Integer.valueOf({value})"
    if isinstance(kind, t.LongType):
        return f"Long.valueOf({value}L)"
    if isinstance(kind, t.ShortType):
        return f"Short.valueOf((short) {value})"
    if isinstance(kind, t.ByteType):
        return f"Byte.valueOf((byte) {value})"
    if isinstance(kind, t.FloatType):
        return f"Float.intBitsToFloat({struct.unpack('>i', struct.pack('>f', value))[0]})"
    if isinstance(kind, t.DoubleType):
        return f"Double.longBitsToDouble({struct.unpack('>q', struct.pack('>d', value))[0]}L)"
    if isinstance(kind, t.StringType):
        units = str(value).encode("utf-16-be")
        return '"' + "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)) + '"'
    return None


def _java_source(package: str, cls: type) -> tuple[str, bool]:
    """The Java source of ``cls`` and whether every field's initial value could be rendered."""
    name = cls.__qualname__
    if issubclass(cls, enum.Enum):
        members = ", ".join(m.name for m in cls)
        return f"package {package};\npublic enum {name} {{ {members}; }}\n", True
    exact = True
    lines = []
    for f in dataclasses.fields(cls):
        kind = f.metadata["logical_type"]
        if f.default is not dataclasses.MISSING:
            init = _java_literal(kind, f.default)
        elif f.default_factory is not dataclasses.MISSING:
            init = _java_literal(kind, f.default_factory())
        else:
            init = _ZERO.get(type(kind), "null")
        if init is None:
            exact, init = False, "null"
        lines.append(f"    public Object {f.name} = {init};")
    body = "\n".join(lines)
    return f"package {package};\npublic class {name} {{\n{body}\n    public {name}() {{}}\n}}\n", exact


POJO_FAMILIES = ("primitive", "pojo", "enum", "nullable", "list", "map", "tuple")
POJO_EVOLUTIONS = ("pojo", "enum", "composite", "identity")


def test_generated_enum_and_pojo_evolutions_agree_with_flink(crosscheck, tmp_path):
    cases: list[tuple[object, object]] = []

    @settings(max_examples=300, derandomize=True, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        schema = data.draw(strategies.schemas(families=POJO_FAMILIES), label="schema")
        family = data.draw(st.sampled_from(POJO_EVOLUTIONS), label="evolution family")
        evolution = data.draw(strategies.evolutions(schema, family=family), label="evolution")
        if _classes(evolution.old) or _classes(evolution.new):
            cases.append((evolution, data.draw(strategies.values(schema), label="value")))

    draw()
    sources = tmp_path / "src"
    lines, expected = [], []
    for i, (evolution, value) in enumerate(cases):
        package = f"c{i}"
        new_classes = _classes(evolution.new)
        kept = {cls.__qualname__ for cls in new_classes}
        old_only = [cls for cls in _classes(evolution.old) if cls.__qualname__ not in kept]
        exact = True
        for cls in [*new_classes, *old_only]:
            text, complete = _java_source(package, cls)
            exact = exact and complete
            path = sources / package / f"{cls.__qualname__}.java"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        for cls in [*_classes(evolution.old), *new_classes]:  # the new versions bound last
            register_type(cls, f"{package}.{cls.__qualname__}")
        old, new = serializer_for(evolution.old), serializer_for(evolution.new)
        old_bytes = snapshot_to_bytes(old.snapshot_configuration(), dialect="flink")
        new_bytes = snapshot_to_bytes(new.snapshot_configuration(), dialect="flink")
        record = old.to_bytes(value)
        strategies.activate(evolution.new)
        own = resolve_compatibility(new, old.snapshot_configuration()).kind
        lines.append(f"{i} {old_bytes.hex()} {new_bytes.hex()} {record.hex()}\n")
        expected.append((evolution, own, _reference_route(old_bytes, new_bytes, record), exact, value))
    classes = tmp_path / "classes"
    javac = crosscheck[0].replace("java", "javac") if crosscheck[0].endswith("java") else "javac"
    files = [str(p) for p in sources.rglob("*.java")]
    compiled = subprocess.run([javac, "-nowarn", "-encoding", "UTF-8", "-d", str(classes), *files],
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, f"javac failed on the generated classes: {compiled.stderr[:2000]}"
    ran = subprocess.run([*crosscheck, "judge", str(classes)], input="".join(lines),
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, f"CrossCheck judge failed: {ran.stderr}"
    answers = ran.stdout.splitlines()
    assert len(answers) == len(cases), f"got {len(answers)} answers, should be {len(cases)}"
    wrong: list[str] = []
    refused: collections.Counter[str] = collections.Counter()
    flink_wrong: collections.Counter[str] = collections.Counter()
    for answer, (evolution, own, (kind, data), exact, value) in zip(answers, expected, strict=True):
        index, verdict, hexed = answer.split(" ", 2)
        where = f"[{index}: {evolution.change} {evolution.old} -> {evolution.new}]"
        if own != evolution.expect:
            wrong.append(f"got {own} in the reference's own form, should be the oracle's {evolution.expect} {where}")
        if verdict == "ERROR" and kind == "incompatible" and evolution.expect == "incompatible":
            refused[evolution.change] += 1  # Flink refuses the restore with an exception
        elif verdict == "ERROR":
            wrong.append(f"Flink failed: {hexed} {where}")
        elif verdict != kind:
            if FLINK_23_WRONG.get(evolution.change) == (kind, verdict):
                flink_wrong[evolution.change] += 1
                continue
            wrong.append(f"got the reference's {kind} on Flink's form, should be Flink's {verdict} {where}")
        elif hexed.startswith("ERROR:"):
            wrong.append(f"Flink failed bringing the record over: {hexed} {where}")
        elif exact and data is not None and data.hex() != hexed and not _same_maps(evolution.new, data, hexed):
            wrong.append(f"got bytes {data.hex()}, should be Flink's {hexed} for {value!r} {where}")
        elif verdict != evolution.expect:
            wrong.append(f"got Flink's {verdict}, should be the oracle's {evolution.expect} {where}")
    assert not wrong, f"{len(wrong)} of {len(cases)} evolutions disagree:\n" + "\n".join(wrong[:15])
    changes = collections.Counter(evolution.change for evolution, _ in cases)
    print(f"{len(cases)} enum/POJO evolutions: {dict(changes)}; refused by Flink with an exception: "
          f"{dict(refused)}; Flink 2.3 wrong: {dict(flink_wrong)}")
