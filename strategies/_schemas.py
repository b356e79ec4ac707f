"""``schemas()``: random nested logical types (``reference.types``).

Every choice is a labelled draw whose first alternative is the simplest (an Int leaf, no
nesting, fewest fields), so a failing schema shrinks towards a small flat one. Recursion is
budgeted twice: by depth and by the number of leaves.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from reference import types as t

from . import _pojo

__all__ = ["schemas", "FAMILIES", "PRIMITIVE_TYPES", "ROW_NAMES", "POJO_NAMES", "ENUM_NAMES",
           "family_of"]

#: Schema families, simplest first.
FAMILIES = ("primitive", "nullable", "list", "map", "tuple", "row", "pojo", "enum", "pickle", "avro")

#: Leaf types, simplest first (hypothesis shrinks towards the first).
PRIMITIVE_TYPES: tuple[Any, ...] = (
    t.IntType(), t.LongType(), t.BooleanType(), t.ByteType(), t.ShortType(), t.FloatType(),
    t.DoubleType(), t.StringType(), t.BytesType(),
)

#: Row field names: simple first, then names that stress encodings (non-ASCII, non-BMP, spaces).
ROW_NAMES = ("a", "b", "c", "d", "e", "id", "x", "y", "é", "名字", "with space", "\U0001f600")
#: Pojo field names must be Python identifiers.
POJO_NAMES = ("a", "b", "c", "d", "e", "id", "x", "y", "é", "名字")
ENUM_NAMES = ("A", "B", "C", "D", "E", "RED", "GREEN", "Ä")
#: Generated class names start with one of these: ASCII first, then names whose snapshots carry
#: non-ASCII in modified UTF-8 (2- and 3-byte sequences).
CLASS_PREFIXES = ("Pojo", "Pojo_é", "Pojo_名")

_LEAF_FAMILIES = ("primitive", "enum", "pickle", "avro")
_HASHABLE_FAMILIES = ("primitive", "nullable", "tuple", "row", "enum")


def family_of(schema: Any) -> str:
    """The family name of a schema node (one of ``FAMILIES``)."""
    return _FAMILY_OF[type(schema)]


_FAMILY_OF = {type(p): "primitive" for p in PRIMITIVE_TYPES}
_FAMILY_OF.update({
    t.NullableType: "nullable", t.ListType: "list", t.MapType: "map", t.TupleType: "tuple",
    t.RowType: "row", t.PojoType: "pojo", t.EnumType: "enum", t.PickleType: "pickle",
    t.AvroType: "avro",
})


try:  # hypothesis' own resolution of a lazily built strategy (not public API: used if present)
    from hypothesis.strategies._internal.lazy import unwrap_strategies as _unwrap
except ImportError:  # pragma: no cover - another hypothesis layout: draw the strategy as built
    def _unwrap(strategy: Any) -> Any:
        return strategy


def _eager(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``strategy`` with its lazy wrapper resolved once: ``st.integers(...)`` and the like are
    lazy, and every draw from a lazy strategy looks its resolution up again (a sixth of the
    cost of drawing a nested value). Draws the same choices, so the same values."""
    return _unwrap(strategy)  # type: ignore[no-any-return]


# Strategies are built once: constructing and validating them per draw costs more than
# drawing from them.
_BOOLEANS = _eager(st.booleans())
_PRIMITIVE = _eager(st.sampled_from(PRIMITIVE_TYPES))


@functools.cache
def _sampled(options: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return _eager(st.sampled_from(options))


@functools.cache
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    return _eager(st.integers(low, high))


class _Budget:
    __slots__ = ("leaves", "classes")

    def __init__(self, leaves: int) -> None:
        self.leaves = leaves
        # Generated classes drawn so far: each gets its own name, so that one class never
        # occurs twice in a schema (an evolution of one occurrence would otherwise give two
        # versions of one class name in one state type, which no process can load).
        self.classes = 0

    def next_class(self) -> int:
        self.classes += 1
        return self.classes - 1


def schemas(
    families: Iterable[str] | None = None, max_depth: int = 3, max_leaves: int = 8
) -> st.SearchStrategy[Any]:
    return _schemas(None if families is None else tuple(families), max_depth, max_leaves)


@functools.lru_cache(maxsize=256)
def _schemas(
    families: tuple[str, ...] | None, max_depth: int, max_leaves: int
) -> st.SearchStrategy[Any]:
    """Random nested state types of ``reference.types``.

    ``families`` (names from ``FAMILIES``) restricts the node kinds; the top-level node is of
    one of the given families, primitives are always available as leaves. ``max_depth`` bounds
    the nesting, ``max_leaves`` (roughly) the number of leaf types.
    """
    allowed: tuple[str, ...]
    top: tuple[str, ...]
    if families is None:
        allowed = top = FAMILIES
    else:
        given = tuple(families)
        unknown = [f for f in given if f not in FAMILIES]
        if unknown or not given:
            raise InvalidArgument(f"families={given!r}: use a non-empty selection of {FAMILIES}")
        top = tuple(f for f in FAMILIES if f in given)
        allowed = tuple(f for f in FAMILIES if f in given or f == "primitive")
    if max_depth < 0 or max_leaves < 1:
        raise InvalidArgument(f"max_depth={max_depth}, max_leaves={max_leaves}: need >= 0 and >= 1")
    return _schema_strategy(top, allowed, max_depth, max_leaves)


@st.composite
def _schema_strategy(draw: Any, top: tuple[str, ...], allowed: tuple[str, ...], max_depth: int,
                     max_leaves: int) -> Any:
    return _draw(draw, top, allowed, max_depth, _Budget(max_leaves), hashable=False)


def _draw(draw: Any, choices: tuple[str, ...], allowed: tuple[str, ...], depth: int,
          budget: _Budget, hashable: bool) -> Any:
    if depth <= 0 or budget.leaves <= 1:
        narrowed = tuple(f for f in choices if f in _LEAF_FAMILIES) or ("primitive",)
    else:
        narrowed = choices
    if hashable:
        narrowed = tuple(f for f in narrowed if f in _HASHABLE_FAMILIES) or ("primitive",)
    family = narrowed[0] if len(narrowed) == 1 else draw(_sampled(narrowed), label="family")
    return _BUILDERS[family](draw, allowed, depth - 1, budget, hashable)


def _nested(draw: Any, allowed: tuple[str, ...], depth: int, budget: _Budget, hashable: bool) -> Any:
    return _draw(draw, allowed, allowed, depth, budget, hashable)


def _primitive(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    budget.leaves -= 1
    return draw(_PRIMITIVE, label="primitive")


def _nullable(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    inner = _nested(draw, allowed, depth, budget, hashable)
    padded = draw(_BOOLEANS, label="padded")
    return t.NullableType(inner, padded=padded)


def _list(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    return t.ListType(_nested(draw, allowed, depth, budget, False))


def _map(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    key = _nested(draw, allowed, depth, budget, True)
    return t.MapType(key, _nested(draw, allowed, depth, budget, False))


def _arity(draw: Any, budget: _Budget, low: int, high: int, label: str) -> int:
    high = max(low, min(high, budget.leaves))
    return draw(_integers(low, high), label=label)


def _tuple(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    # An empty tuple is the zero-width type: a list of them holds elements without bytes.
    n = _arity(draw, budget, 0, 3, "tuple arity")
    return t.TupleType(tuple(_nested(draw, allowed, depth, budget, hashable) for _ in range(n)))


def _names(draw: Any, pool: tuple[str, ...], n: int, label: str) -> list[str]:
    """``n`` distinct names from ``pool``; shrinks towards the pool's first names in order."""
    free = list(pool)
    return [free.pop(draw(_integers(0, len(free) - 1), label=label)) for _ in range(n)]


def _row(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    n = _arity(draw, budget, 0, 4, "row arity")
    names = _names(draw, ROW_NAMES, n, "row field names")
    fields = []
    for name in names:
        field_type = _nested(draw, allowed, depth, budget, hashable)
        if isinstance(field_type, t.NullableType):
            # A row carries its own null mask: a Nullable field type would be a second one.
            field_type = field_type.inner
        nullable = draw(_BOOLEANS, label="nullable")
        fields.append(t.RowField(name, field_type, nullable=nullable))
    return t.RowType(tuple(fields))


def _pojo_schema(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    n = _arity(draw, budget, 0, 4, "pojo arity")
    names = _names(draw, POJO_NAMES, n, "pojo field names")
    fields = tuple(
        _pojo.PojoField(name, _nested(draw, allowed, depth, budget, False)) for name in names
    )
    spec = [(f.name, f.type) for f in fields]
    prefix = draw(_sampled(CLASS_PREFIXES), label="pojo class name")
    return _pojo.pojo_type(fields, _pojo.derived_name(prefix, spec, budget.next_class()))


def _enum(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    budget.leaves -= 1
    n = draw(_integers(1, 4), label="enum size")
    members = tuple(_names(draw, ENUM_NAMES, n, "enum members"))
    prefix = draw(_sampled(tuple(p.replace("Pojo", "Enum") for p in CLASS_PREFIXES)), label="enum class name")
    return _pojo.enum_type(members, _pojo.derived_name(prefix, members, budget.next_class()))


def _pickle(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    budget.leaves -= 1
    return t.PickleType()


def _avro(draw: Any, allowed: Any, depth: int, budget: _Budget, hashable: bool) -> Any:
    from . import _avro_bridge

    budget.leaves -= 1
    return draw(_avro_bridge.avro_schemas(max(depth, 0)), label="avro schema")


_BUILDERS = {
    "primitive": _primitive, "nullable": _nullable, "list": _list, "map": _map,
    "tuple": _tuple, "row": _row, "pojo": _pojo_schema, "enum": _enum, "pickle": _pickle,
    "avro": _avro,
}
