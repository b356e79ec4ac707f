"""``evolutions(schema)``: one change somewhere in a schema, with the verdict and the
migrated value the rules of docs/semantics.md require (the oracle), and ``evolution_chains``.

An evolution is drawn in two steps: first a *candidate* (where in the schema, which change),
from a list ordered simplest first (no change, then changes at the root, then deeper), whose
final verdict is known before anything else is drawn, so ``family=`` and ``verdict=`` select
candidates instead of filtering examples; then the change's parameters (positions, names,
types), each a labelled draw.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from reference import Verdict
from reference import types as t
from reference.types import serializer_for

from . import _oracle as o
from . import _pojo
from ._schemas import ENUM_NAMES, POJO_NAMES, PRIMITIVE_TYPES, ROW_NAMES, _integers
from ._values import _values

__all__ = [
    "SchemaEvolution", "evolutions", "evolution_chains", "chain_migration", "CHANGES", "KINDS",
    "EVOLUTION_FAMILIES", "candidates",
]

AS_IS = Verdict.COMPATIBLE_AS_IS
AFTER_MIGRATION = Verdict.COMPATIBLE_AFTER_MIGRATION
RECONFIGURED = Verdict.COMPATIBLE_WITH_RECONFIGURED_SERIALIZER
INCOMPATIBLE = Verdict.INCOMPATIBLE
KINDS = tuple(Verdict)

#: Every change label with the verdict it has where nothing around it changes that verdict.
CHANGES: dict[str, str] = {
    "identity": AS_IS,
    "simple.class_change": INCOMPATIBLE,
    "pickle.change": INCOMPATIBLE,
    "composite.class_change": INCOMPATIBLE,
    "composite.nullable_padding": INCOMPATIBLE,
    "composite.tuple_arity": INCOMPATIBLE,
    "row.add_nullable_field": AFTER_MIGRATION,
    "row.reorder": AFTER_MIGRATION,
    "row.nested": AFTER_MIGRATION,
    "row.remove_field": INCOMPATIBLE,
    "row.rename_field": INCOMPATIBLE,
    "row.change_field_type": INCOMPATIBLE,
    "row.add_not_null_field": INCOMPATIBLE,
    "row.make_not_null": INCOMPATIBLE,
    "row.changed_in_list": INCOMPATIBLE,
    "pojo.add_field_with_default": AFTER_MIGRATION,
    "pojo.add_field": AFTER_MIGRATION,
    "pojo.remove_field": AFTER_MIGRATION,
    "pojo.change_field_type": INCOMPATIBLE,
    "pojo.rename_class": INCOMPATIBLE,
    "enum.append": RECONFIGURED,
    "enum.reorder": RECONFIGURED,
    "enum.remove": INCOMPATIBLE,
    "enum.rename_class": INCOMPATIBLE,
    "kind.change": INCOMPATIBLE,
}
def _add_avro_changes() -> None:
    from . import _avro_bridge

    CHANGES.update(_avro_bridge.change_table())


_add_avro_changes()
EVOLUTION_FAMILIES = ("identity", "simple", "pickle", "composite", "row", "pojo", "enum", "avro", "kind")

_ROW_MIGRATING = ("row.add_nullable_field", "row.reorder")


@dataclasses.dataclass(frozen=True)
class SchemaEvolution:
    """One evolution of a state type and what the rules say about it.

    ``expect`` is the ``SchemaCompatibility.kind`` the NEW serializer's snapshot must give on
    the OLD snapshot; ``migrate`` maps an old value to the value the migrated state must hold
    (None when incompatible); ``change`` names the change (``"row.add_nullable_field"``);
    ``reason_contains`` is a word an incompatibility reason must mention (a field name), or
    None; ``path`` says where in the schema the change is, and ``reason_where`` (incompatible
    only) the words an incompatibility reason must mention in that order to say so, one per
    step of the path: ``null`` (a Nullable), ``element``, ``key``, ``value``, ``field i`` (a
    tuple field), a row or POJO field's name. It stops where the verdict is given above the
    change: at a list element for a row evolving inside a list (refused there) and at a padded
    Nullable (whose padding changes with its inner type's length).
    """

    old: Any
    new: Any
    expect: str
    migrate: o.Migration | None
    change: str
    reason_contains: str | None = None
    path: tuple[Any, ...] = ()
    reason_where: tuple[str, ...] = ()

    @property
    def family(self) -> str:
        return self.change.split(".", 1)[0]

    @property
    def compatible(self) -> bool:
        return self.expect != INCOMPATIBLE


# -- sites: every node of a schema with the path that leads to it ------------------------------
def _children(node: Any) -> list[tuple[Any, Any]]:
    if isinstance(node, t.NullableType):
        return [(("inner",), node.inner)]
    if isinstance(node, t.ListType):
        return [(("element",), node.element)]
    if isinstance(node, t.MapType):
        return [(("key",), node.key), (("value",), node.value)]
    if isinstance(node, t.TupleType):
        return [(("field", i), f) for i, f in enumerate(node.fields)]
    if isinstance(node, t.RowType):
        return [(("row", i), f.type) for i, f in enumerate(node.fields)]
    if isinstance(node, t.PojoType) and hasattr(node.cls, "__pojo_fields__"):
        return [(("pojo", i), f.type) for i, f in enumerate(_pojo.pojo_fields(node))]
    return []


def _child(node: Any, step: tuple[Any, ...]) -> Any:
    """The node ``step`` leads to from ``node`` (a step of ``_children``)."""
    return dict(_children(node))[step]


def _sites(schema: Any) -> list[tuple[tuple[Any, ...], tuple[Any, ...], Any]]:
    """(path, ancestors, node) for every node, breadth first (the root is simplest)."""
    out = []
    queue: list[tuple[tuple[Any, ...], tuple[Any, ...], Any]] = [((), (), schema)]
    while queue:
        path, ancestors, node = queue.pop(0)
        out.append((path, ancestors, node))
        for step, child in _children(node):
            queue.append(((*path, step), (*ancestors, node), child))
    return out


def declared_names(schema: Any) -> frozenset[str]:
    """Every field, member and symbol name in ``schema``, at any depth (what a chain retires
    once a step removes it)."""
    names: set[str] = set()
    for _, _, node in _sites(schema):
        if isinstance(node, t.RowType):
            names.update(f.name for f in node.fields)
        elif isinstance(node, t.PojoType) and hasattr(node.cls, "__pojo_fields__"):
            names.update(f.name for f in _pojo.pojo_fields(node))
        elif isinstance(node, t.EnumType):
            names.update(_pojo.enum_members(node))
        elif isinstance(node, t.AvroType):
            from . import _avro_bridge

            names.update(_avro_bridge.declared_names(node))
    return frozenset(names)


def _fixed_length(schema: Any) -> int:
    try:
        return int(serializer_for(schema).length)
    except Exception:
        return -1


def _labels_for(node: Any) -> list[str]:
    """The changes that can happen at ``node``: those of its own family, and a change of kind
    (``kind.change``) wherever a type of another kind can take its place."""
    labels = _own_labels(node)
    if _kind_of(node) is not None:
        labels.append("kind.change")
    return labels


def _kind_of(node: Any) -> str | None:
    """The kind ``kind.change`` moves a node away from: a primitive, a row, an enum, or another
    composite (a tuple, list, map, Nullable or POJO); None where it does not apply (a pickle,
    whose change is ``pickle.change``, and Avro, whose changes are Avro's)."""
    if isinstance(node, PRIMITIVE_CLASSES):
        return "primitive"
    if isinstance(node, t.RowType):
        return "row"
    if isinstance(node, t.EnumType):
        return "enum"
    if isinstance(node, (t.TupleType, t.ListType, t.MapType, t.NullableType, t.PojoType)):
        return "composite"
    return None


def _other_kind(draw: Any, node: Any) -> Any:
    """A type of another kind than ``node``'s: a long, a row holding a long, or an enum (each
    hashable, so a map key may become one)."""
    options = {
        "primitive": t.LongType(),
        "row": t.RowType((t.RowField("value", t.LongType()),)),
        "enum": _pojo.enum_type(("A", "B"), "KindChanged"),
    }
    options.pop(_kind_of(node), None)
    return _pick(draw, list(options.values()), "new kind")


def _own_labels(node: Any) -> list[str]:
    if isinstance(node, PRIMITIVE_CLASSES):
        return ["simple.class_change", "pickle.change"]
    if isinstance(node, t.PickleType):
        return ["pickle.change"]
    if isinstance(node, t.NullableType):
        labels = ["composite.class_change"]
        if _fixed_length(node.inner) > 0:
            labels.append("composite.nullable_padding")
        return labels
    if isinstance(node, (t.ListType, t.MapType)):
        return ["composite.class_change"]
    if isinstance(node, t.TupleType):
        return ["composite.tuple_arity", "composite.class_change"]
    if isinstance(node, t.RowType):
        n = len(node.fields)
        labels = ["row.add_nullable_field"]
        if n >= 2:
            labels.append("row.reorder")
        labels.append("row.add_not_null_field")
        if n >= 1:
            labels += ["row.remove_field", "row.rename_field", "row.change_field_type"]
        if any(f.nullable for f in node.fields):
            labels.append("row.make_not_null")
        return labels
    if isinstance(node, t.PojoType):
        n = len(_pojo.pojo_fields(node))
        labels = ["pojo.add_field_with_default", "pojo.add_field"]
        if n >= 1:
            labels += ["pojo.remove_field", "pojo.change_field_type"]
        labels.append("pojo.rename_class")
        return labels
    if isinstance(node, t.EnumType):
        n = len(node.cls)
        labels = ["enum.append"]
        if n >= 2:
            labels += ["enum.reorder", "enum.remove"]
        labels.append("enum.rename_class")
        return labels
    if isinstance(node, t.AvroType):
        from . import _avro_bridge

        return _avro_bridge.change_labels(node)
    return []


PRIMITIVE_CLASSES = tuple(type(p) for p in PRIMITIVE_TYPES)


@dataclasses.dataclass(frozen=True)
class _Candidate:
    path: tuple[Any, ...]
    ancestors: tuple[Any, ...]
    node: Any
    base: str  # the change applied at the node
    label: str  # the label reported (context may rename it)
    expect: str


def _base_kind(label: str, node: Any) -> str:
    if label in CHANGES:
        return CHANGES[label]
    from . import _avro_bridge

    return _avro_bridge.change_kind(label)


def candidates(schema: Any) -> list[_Candidate]:
    """Every (site, change) of ``schema`` with its final verdict, simplest first."""
    return list(_candidates(schema))


@functools.lru_cache(maxsize=4096)
def _candidates(schema: Any) -> tuple[_Candidate, ...]:
    out = [_Candidate((), (), schema, "identity", "identity", AS_IS)]
    for path, ancestors, node in _sites(schema):
        for base in _labels_for(node):
            kind = _base_kind(base, node)
            label = base
            if base in _ROW_MIGRATING:
                # FLIP-527: a row evolution inside a list (at any depth) is refused; one
                # inside another row is a nested row evolution.
                if any(isinstance(a, t.ListType) for a in ancestors):
                    label, kind = "row.changed_in_list", INCOMPATIBLE
                elif any(isinstance(a, t.RowType) for a in ancestors):
                    label = "row.nested"
            out.append(_Candidate(path, ancestors, node, base, label, kind))
    return tuple(out)


def _matches(candidate: _Candidate, family: str | None, verdict: str | None) -> bool:
    if family is not None and candidate.label.split(".", 1)[0] != family:
        return False
    if verdict is None:
        return True
    if verdict == "compatible":
        return candidate.expect != INCOMPATIBLE
    return candidate.expect == verdict


def _check_filters(family: str | None, verdict: str | None) -> None:
    if family is not None and family not in EVOLUTION_FAMILIES:
        raise InvalidArgument(f"family={family!r}: use one of {EVOLUTION_FAMILIES}")
    if verdict is not None and verdict not in (*KINDS, "compatible"):
        raise InvalidArgument(f"verdict={verdict!r}: use 'compatible' or one of {KINDS}")


# -- applying a change at a site ---------------------------------------------------------------
@dataclasses.dataclass
class _Applied:
    node: Any
    migration: o.Migration | None
    reason: str | None = None


def _pick(draw: Any, options: Sequence[Any], label: str) -> Any:
    """``sampled_from`` without building a strategy per draw (shrinks to the first)."""
    if len(options) == 1:
        return options[0]
    return options[draw(_integers(0, len(options) - 1), label=label)]


@functools.cache
def _permutations(n: int) -> st.SearchStrategy[list[int]]:
    return st.permutations(range(n))


@functools.cache
def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(st.none(), strategy)


def _fresh(draw: Any, pool: tuple[str, ...], taken: set[str], label: str, prefix: str) -> str:
    free = [n for n in pool if n not in taken]
    free += [f"{prefix}{i}" for i in range(len(taken) + 2) if f"{prefix}{i}" not in taken]
    return _pick(draw, free, label)


def _other_type(draw: Any, old: Any, label: str) -> Any:
    options = [p for p in PRIMITIVE_TYPES if type(p) is not type(old)]
    return _pick(draw, options, label)


def _permutation(draw: Any, n: int, label: str) -> list[int]:
    perm = draw(_permutations(n), label=label)
    if perm == list(range(n)):
        perm = perm[1:] + perm[:1]  # a permutation that changes something, by construction
    return list(perm)


def _pojo_zero(schema: Any) -> Any:
    """Flink's POJO rule for an added field without default: Java primitives (numbers,
    bool) get their zero, everything else null."""
    zeros = {t.BooleanType: False, t.ByteType: 0, t.ShortType: 0, t.IntType: 0, t.LongType: 0,
             t.FloatType: 0.0, t.DoubleType: 0.0}
    return zeros.get(type(schema))


def _apply(draw: Any, c: _Candidate, retired: frozenset[str]) -> _Applied:
    node, base = c.node, c.base
    if base == "identity":
        return _Applied(node, o.IDENTITY)
    if base == "simple.class_change":
        return _Applied(_other_type(draw, node, "new type"), None)
    if base == "kind.change":
        # A padded Nullable around it judges the padding first (the new type's length differs).
        padded = any(isinstance(a, t.NullableType) and a.padded for a in c.ancestors)
        return _Applied(_other_kind(draw, node), None, None if padded else "cannot become")
    if base == "pickle.change":
        if isinstance(node, t.PickleType):
            return _Applied(_pick(draw, PRIMITIVE_TYPES, "new type"), None)
        return _Applied(t.PickleType(), None)
    if base == "composite.class_change":
        if isinstance(node, t.NullableType):
            return _Applied(node.inner, None)
        if isinstance(node, t.ListType):
            return _Applied(node.element, None)
        if isinstance(node, t.MapType):
            return _Applied(t.ListType(node.value), None)
        return _Applied(t.ListType(node.fields[0] if node.fields else node), None)
    if base == "composite.nullable_padding":
        return _Applied(t.NullableType(node.inner, padded=not node.padded), None, "padding")
    if base == "composite.tuple_arity":
        extra = _pick(draw, PRIMITIVE_TYPES, "new tuple field")
        return _Applied(t.TupleType((*node.fields, extra)), None)
    if base.startswith("row."):
        return _apply_row(draw, node, base, retired)
    if base.startswith("pojo."):
        return _apply_pojo(draw, node, base, retired)
    if base.startswith("enum."):
        return _apply_enum(draw, node, base, retired)
    if base.startswith("avro."):
        from . import _avro_bridge

        new, migration, reason = _avro_bridge.apply_change(draw, node, base, retired)
        return _Applied(new, migration, reason)
    raise AssertionError(f"no change {base!r}")


def _row_identity_sources(n: int) -> tuple[int | None, ...]:
    return tuple(range(n))


def _apply_row(draw: Any, node: t.RowType, base: str, retired: frozenset[str]) -> _Applied:
    fields = list(node.fields)
    n = len(fields)
    names = {f.name for f in fields}
    ident = tuple(o.IDENTITY for _ in range(n))
    if base in ("row.add_nullable_field", "row.add_not_null_field"):
        pos = draw(_integers(0, n), label="position")
        name = _fresh(draw, ROW_NAMES, names | retired, "new field name", "f")
        ftype = _pick(draw, PRIMITIVE_TYPES, "new field type")
        nullable = base == "row.add_nullable_field"
        fields.insert(pos, t.RowField(name, ftype, nullable=nullable))
        if not nullable:
            return _Applied(t.RowType(tuple(fields)), None, name)
        sources = list(_row_identity_sources(n))
        sources.insert(pos, None)
        migration = o.RowMigration(tuple(sources), tuple(o.IDENTITY for _ in range(n + 1)))
        return _Applied(t.RowType(tuple(fields)), migration)
    if base == "row.reorder":
        perm = _permutation(draw, n, "field order")
        new_fields = tuple(fields[i] for i in perm)
        return _Applied(t.RowType(new_fields), o.RowMigration(tuple(perm), ident))
    i = draw(_integers(0, n - 1), label="field index") if base != "row.make_not_null" else \
        _pick(draw, [k for k, f in enumerate(fields) if f.nullable], "field index")
    old = fields[i]
    if base == "row.remove_field":
        del fields[i]
    elif base == "row.rename_field":
        fields[i] = dataclasses.replace(old, name=_fresh(draw, ROW_NAMES, names | retired, "new name", "f"))
    elif base == "row.change_field_type":
        fields[i] = dataclasses.replace(old, type=_other_type(draw, old.type, "new field type"))
    elif base == "row.make_not_null":
        fields[i] = dataclasses.replace(old, nullable=False)
    else:
        raise AssertionError(base)
    return _Applied(t.RowType(tuple(fields)), None, old.name)


def _apply_pojo(draw: Any, node: t.PojoType, base: str, retired: frozenset[str]) -> _Applied:
    fields = list(_pojo.pojo_fields(node))
    qualname = node.cls.__qualname__
    names = {f.name for f in fields}
    if base == "pojo.rename_class":
        new = _pojo.pojo_type(tuple(fields), _pojo.derived_name("Renamed", qualname))
        return _Applied(new, None, qualname)
    if base in ("pojo.add_field_with_default", "pojo.add_field"):
        name = _fresh(draw, POJO_NAMES, names | retired, "new field name", "f")
        ftype = _pick(draw, PRIMITIVE_TYPES, "new field type")
        if base == "pojo.add_field_with_default":
            default = draw(_maybe(_values(ftype, False)), label="default")
            missing = default
            added = _pojo.PojoField(name, ftype, default)
        else:
            missing = _pojo_zero(ftype)
            added = _pojo.PojoField(name, ftype)
        pos = draw(_integers(0, len(fields)), label="position")
        fields.insert(pos, added)
        new = _pojo.pojo_type(tuple(fields), qualname)
        plan = tuple(
            (f.name, None if f is added else f.name, o.IDENTITY, missing if f is added else None)
            for f in fields
        )
        return _Applied(new, o.PojoMigration(new.cls, plan))
    i = draw(_integers(0, len(fields) - 1), label="field index")
    old = fields[i]
    if base == "pojo.remove_field":
        del fields[i]
        new = _pojo.pojo_type(tuple(fields), qualname)
        plan = tuple((f.name, f.name, o.IDENTITY, None) for f in fields)
        return _Applied(new, o.PojoMigration(new.cls, plan))
    if base == "pojo.change_field_type":
        fields[i] = dataclasses.replace(old, type=_other_type(draw, old.type, "new field type"))
        return _Applied(_pojo.pojo_type(tuple(fields), qualname), None, old.name)
    raise AssertionError(base)


def _apply_enum(draw: Any, node: t.EnumType, base: str, retired: frozenset[str]) -> _Applied:
    members = [m.name for m in node.cls]
    qualname = node.cls.__qualname__
    if base == "enum.rename_class":
        return _Applied(_pojo.enum_type(tuple(members), _pojo.derived_name("Renamed", qualname)), None, qualname)
    if base == "enum.append":
        members.append(_fresh(draw, ENUM_NAMES, set(members) | retired, "new member", "M"))
    elif base == "enum.reorder":
        perm = _permutation(draw, len(members), "member order")
        members = [members[i] for i in perm]
    elif base == "enum.remove":
        i = draw(_integers(0, len(members) - 1), label="removed member")
        removed = members.pop(i)
        return _Applied(_pojo.enum_type(tuple(members), qualname), None, removed)
    new = _pojo.enum_type(tuple(members), qualname)
    return _Applied(new, o.EnumMigration(new.cls))


# -- rebuilding the schema around the changed node ---------------------------------------------
def _rebuild(node: Any, path: tuple[Any, ...], applied: _Applied) -> tuple[Any, o.Migration | None]:
    """The schema with the node at ``path`` replaced, and the migration of the whole value."""
    if not path:
        return applied.node, applied.migration
    step, rest = path[0], path[1:]
    kind = step[0]
    if kind == "inner":
        inner, m = _rebuild(_child(node, step), rest, applied)
        return dataclasses.replace(node, inner=inner), _wrap(m, o.NullableMigration)
    if kind == "element":
        element, m = _rebuild(_child(node, step), rest, applied)
        return t.ListType(element), _wrap(m, o.ListMigration)
    if kind == "key":
        key, m = _rebuild(_child(node, step), rest, applied)
        return t.MapType(key, node.value), _wrap(m, lambda k: o.MapMigration(k, o.IDENTITY))
    if kind == "value":
        value, m = _rebuild(_child(node, step), rest, applied)
        return t.MapType(node.key, value), _wrap(m, lambda v: o.MapMigration(o.IDENTITY, v))
    if kind == "field":
        i = step[1]
        field, m = _rebuild(_child(node, step), rest, applied)
        fields = list(node.fields)
        fields[i] = field
        return t.TupleType(tuple(fields)), _wrap(m, lambda f: o.TupleMigration(
            tuple(f if k == i else o.IDENTITY for k in range(len(fields)))))
    if kind == "row":
        i = step[1]
        ftype, m = _rebuild(_child(node, step), rest, applied)
        fields = list(node.fields)
        fields[i] = dataclasses.replace(fields[i], type=ftype)
        n = len(fields)
        return t.RowType(tuple(fields)), _wrap(m, lambda f: o.RowMigration(
            tuple(range(n)), tuple(f if k == i else o.IDENTITY for k in range(n))))
    if kind == "pojo":
        i = step[1]
        fields = list(_pojo.pojo_fields(node))
        ftype, m = _rebuild(_child(node, step), rest, applied)
        fields[i] = dataclasses.replace(fields[i], type=ftype)
        new = _pojo.pojo_type(tuple(fields), node.cls.__qualname__)
        if m is None:
            return new, None
        plan = tuple((f.name, f.name, m if k == i else o.IDENTITY, None) for k, f in enumerate(fields))
        # The class is a new version even when the field's values do not change.
        return new, o.PojoMigration(new.cls, plan)
    raise AssertionError(f"unknown path step {step!r}")


def _wrap(m: o.Migration | None, make: Callable[[o.Migration], o.Migration]) -> o.Migration | None:
    if m is None:
        return None
    if m.is_identity:
        return o.IDENTITY
    return make(m)


# -- the public strategies ---------------------------------------------------------------------
def _draw_evolution(
    draw: Any, schema: Any, family: str | None, verdict: str | None, retired: frozenset[str] = frozenset()
) -> SchemaEvolution:
    options = [c for c in _candidates(schema) if _matches(c, family, verdict)]
    # No change of the asked kind exists in this schema: this example is not usable (pair the
    # call with schemas(families=...) that can have one).
    assume(options)
    # Change first, then where: every kind of change is equally likely, whatever the number
    # of places it can happen at.
    labels = list(dict.fromkeys(c.label for c in options))
    if labels[0] == "identity" and len(labels) > 1:
        # No change is the simplest evolution (shrinking ends there) but only one in ten.
        if draw(_integers(0, 9), label="no change?") != 0:
            labels = labels[1:]
    label = labels[0] if len(labels) == 1 else _pick(draw, labels, "change")
    options = [c for c in options if c.label == label]
    c = options[0] if len(options) == 1 else _pick(draw, options, "where")
    applied = _apply(draw, c, retired)
    new, migration = _rebuild(schema, c.path, applied)
    if c.expect == INCOMPATIBLE:
        migration = None
    reason = applied.reason
    if c.label == "row.changed_in_list":
        reason = "list"
    incompatible = c.expect == INCOMPATIBLE
    return SchemaEvolution(
        old=schema, new=new, expect=c.expect, migrate=migration, change=c.label,
        reason_contains=reason if incompatible else None, path=c.path,
        reason_where=_where(schema, c.path, c.label) if incompatible else (),
    )


def _where(schema: Any, path: tuple[Any, ...], change: str) -> tuple[str, ...]:
    """The words that say where ``path`` leads in ``schema`` (``SchemaEvolution.reason_where``)."""
    words: list[str] = []
    node = schema
    for step in path:
        kind = step[0]
        if kind == "inner":
            words.append("null")
            if node.padded:
                break
        elif kind in ("element", "key", "value"):
            words.append(kind)
            if kind == "element" and change == "row.changed_in_list":
                break
        elif kind == "field":
            words.append(f"field {step[1]}")
        elif kind == "row":
            words.append(node.fields[step[1]].name)
        else:  # "pojo"
            words.append(_pojo.pojo_fields(node)[step[1]].name)
        node = _child(node, step)
    return tuple(words)


def evolutions(schema: Any, family: str | None = None, verdict: str | None = None) -> st.SearchStrategy[SchemaEvolution]:
    """Evolutions of ``schema``: the new schema, the verdict kind the rules require, and the
    oracle ``migrate(old_value) -> new_value``.

    ``family`` (one of ``EVOLUTION_FAMILIES``) picks the kind of change, ``verdict`` (one of
    the ``SchemaCompatibility.kind`` strings, or ``"compatible"`` / ``"incompatible"``) the
    verdict; simpler changes (none at all, then changes near the root) are drawn first.
    """
    _check_filters(family, verdict)
    return _evolutions(schema, family, verdict)


# Module-level composites: hypothesis inspects a composite's source when it is defined, which
# costs more than a whole draw, so none is defined per call.
@st.composite
def _evolution_strategy(draw: Any, schema: Any, family: str | None, verdict: str | None) -> SchemaEvolution:
    return _draw_evolution(draw, schema, family, verdict)


@st.composite
def _chain_strategy(draw: Any, schema: Any, length: int, verdict: str | None) -> list[SchemaEvolution]:
    chain = []
    current = schema
    retired: frozenset[str] = frozenset()
    for _ in range(length):
        ev = _draw_evolution(draw, current, None, verdict, retired)
        chain.append(ev)
        current = ev.new
        retired |= declared_names(ev.old) - declared_names(ev.new)
    return chain


@functools.lru_cache(maxsize=4096)
def _evolutions(schema: Any, family: str | None, verdict: str | None) -> st.SearchStrategy[SchemaEvolution]:
    return _evolution_strategy(schema, family, verdict)


def evolution_chains(
    schema: Any, length: int, verdict: str | None = "compatible"
) -> st.SearchStrategy[list[SchemaEvolution]]:
    """``length`` successive evolutions v1 → v2 → … (each one's ``old`` is the previous one's
    ``new``); by default every step is compatible, so migrating step by step and directly from
    v1 to the last version can be compared. A step with no change of the asked verdict left is
    the identity.

    A name a step removes (a field, alias, member or symbol) is never given to anything a later
    step adds or renames, as Avro and Protobuf advise: a re-added field would make the direct
    jump read the old value, which step by step has lost."""
    _check_filters(None, verdict)
    if length < 0:
        raise InvalidArgument(f"length={length} must be >= 0")
    return _chain_strategy(schema, length, verdict)


def chain_migration(chain: Sequence[SchemaEvolution]) -> o.Migration | None:
    """The oracle of a whole chain, v1 -> vn step by step (None when a step is incompatible).

    Where the reference also accepts the direct jump from v1 to vn and no step is lossy
    (``.is_lossy``), migrating directly must give the same values.
    """
    if any(ev.migrate is None for ev in chain):
        return None
    return o.Composed(tuple(ev.migrate for ev in chain if ev.migrate is not None))
