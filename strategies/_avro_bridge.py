"""Where the generic strategies meet the Avro ones (``strategies._avro``, written with the Avro
serializer): schemas, values and labelled changes of ``reference.types.AvroType``."""

from __future__ import annotations

import functools
from typing import Any

from hypothesis import strategies as st

from reference import Verdict

__all__ = ["avro_schemas", "avro_values", "change_labels", "change_kind",
           "apply_change", "change_table", "declared_names"]


@functools.cache
def avro_schemas(depth: int) -> Any:
    from . import _avro

    return _avro.avro_schemas(min(depth, 2))


@functools.lru_cache(maxsize=4096)
def avro_values(schema: Any, allow_none: bool = True) -> st.SearchStrategy[Any]:
    """Values of an Avro type; without ``allow_none`` a top-level union loses its null branch
    (for places such as tuple fields and NOT NULL row fields that cannot hold None)."""
    from . import _avro

    parsed = schema.schema
    if not allow_none and isinstance(parsed, list) and "null" in parsed:
        branches = [b for b in parsed if b != "null"]
        return _avro.schema_values(branches if len(branches) > 1 else branches[0])
    return _avro.avro_values(schema)


def change_labels(schema: Any) -> list[str]:
    from . import _avro

    return [*_avro.change_labels(schema), *_extra_labels(schema)]


def change_kind(label: str) -> str:
    if label in _EXTRA:
        return _EXTRA[label]
    from . import _avro

    return str(_avro.change_kind(label))


def change_table() -> dict[str, str]:
    """Every Avro change label with its verdict kind."""
    from . import _avro

    labels = [*_avro.COMPATIBLE_CHANGES, *_avro.INCOMPATIBLE_CHANGES, *_EXTRA]
    return {label: change_kind(label) for label in labels}


def apply_change(draw: Any, schema: Any, label: str, retired: frozenset[str] = frozenset()) -> Any:
    if label in _EXTRA:
        return _apply_extra(draw, schema, label)  # removes, never names anything
    from . import _avro

    return _avro.apply_change(draw, schema, label, retired)


def declared_names(schema: Any) -> set[str]:
    from . import _avro

    return _avro.declared_names(schema)


# -- two Avro changes the Avro strategies do not make: a narrowed union and an enum symbol
# removed from an enum that has a default. Same sites as ``_avro``: the root, or a field of a
# root record.
_EXTRA = {
    "avro.narrow_union": Verdict.INCOMPATIBLE,
    "avro.remove_enum_symbol_with_default": Verdict.COMPATIBLE_AFTER_MIGRATION,
}
#: writer type -> reader types that read it (Avro's promotions)
_READS_AS = {
    "int": {"int", "long", "float", "double"}, "long": {"long", "float", "double"},
    "float": {"float", "double"}, "double": {"double"}, "string": {"string", "bytes"},
    "bytes": {"bytes", "string"}, "boolean": {"boolean"}, "null": {"null"},
}


def _type_of(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    return schema if isinstance(schema, str) else str(schema["type"])


def _readable_by(branch: Any, others: list[Any]) -> bool:
    """Whether a reader union of ``others`` can still read the writer's ``branch`` (then
    removing the branch would not break anything, and it is not a narrowing)."""
    kind = _type_of(branch)
    for other in others:
        other_kind = _type_of(other)
        if isinstance(branch, dict) and "name" in branch:
            if isinstance(other, dict) and other.get("name") == branch["name"]:
                return True
        elif kind in ("array", "map"):
            if other_kind == kind:
                return True  # conservatively: the items may well be readable
        elif isinstance(other, str) and other_kind in _READS_AS.get(kind, {kind}):
            return True
    return False


def _removable_branches(site: Any) -> list[int]:
    if not isinstance(site, list) or len(site) < 2:
        return []
    return [i for i, b in enumerate(site) if not _readable_by(b, site[:i] + site[i + 1:])]


def _extra_labels_at(site: Any) -> list[str]:
    labels = []
    if _removable_branches(site):
        labels.append("avro.narrow_union")
    if isinstance(site, dict) and site.get("type") == "enum" and len(site["symbols"]) >= 2:
        labels.append("avro.remove_enum_symbol_with_default")
    return labels


def _sites(schema: Any) -> list[tuple[int | None, Any]]:
    sites: list[tuple[int | None, Any]] = [(None, schema)]
    if isinstance(schema, dict) and schema.get("type") == "record":
        sites += [(i, f["type"]) for i, f in enumerate(schema["fields"])]
    return sites


class AvroSymbolDefault:
    """Oracle of a removed enum symbol when the reader enum has a default: the removed symbol
    reads as the default, every other symbol as itself (picklable, unlike closures).

    Lossy: the removed symbol collapses into the default. Through a later step that removes
    or changes the default, the chain and the direct jump disagree, in Java too (the jump reads
    the removed symbol as the last version's default)."""

    is_identity = False
    is_lossy = True

    def __init__(self, field: str | None, removed: str, default: str) -> None:
        self.field, self.removed, self.default = field, removed, default

    def _symbol(self, value: Any) -> Any:
        return self.default if value == self.removed else value

    def __call__(self, value: Any) -> Any:
        if self.field is None:
            return self._symbol(value)
        return {k: (self._symbol(v) if k == self.field else v) for k, v in value.items()}

    def __repr__(self) -> str:
        where = "the value" if self.field is None else f"field {self.field!r}"
        return f"<avro migration: {self.removed!r} reads as default {self.default!r} in {where}>"


def _apply_extra(draw: Any, schema: Any, label: str) -> Any:
    import copy

    from . import _avro

    parsed = schema.schema
    sites = [(pos, site) for pos, site in _sites(parsed) if label in _extra_labels_at(site)]
    pos, site = sites[0] if len(sites) == 1 else sites[draw(st.integers(0, len(sites) - 1), label="site")]
    if label == "avro.narrow_union":
        removable = _removable_branches(site)
        index = removable[draw(st.integers(0, len(removable) - 1), label="removed branch")] \
            if len(removable) > 1 else removable[0]
        # Stays a union (of one branch, maybe): a plain type would be a type mismatch instead.
        new_site: Any = [b for i, b in enumerate(site) if i != index]
        migration = None
        reason = "missing_union_branch"
    else:
        symbols = list(site["symbols"])
        removed = symbols.pop(draw(st.integers(0, len(symbols) - 1), label="removed symbol"))
        default = symbols[draw(st.integers(0, len(symbols) - 1), label="default symbol")] \
            if len(symbols) > 1 else symbols[0]
        new_site = dict(site, symbols=symbols, default=default)
        field = None if pos is None else parsed["fields"][pos]["name"]
        migration, reason = AvroSymbolDefault(field, removed, default), None
    if pos is None:
        new_schema = new_site
    else:
        new_schema = copy.deepcopy(parsed)
        new_schema["fields"][pos]["type"] = new_site
        if label == "avro.narrow_union":
            # The field's default may belong to the removed branch (e.g. None once "null" is
            # gone), which makes the schema invalid; a field present in both versions never
            # reads its default, so dropping it leaves the verdict (missing union branch) as is.
            new_schema["fields"][pos].pop("default", None)
    return _avro.avro_type_of(new_schema), migration, reason


def _extra_labels(schema: Any) -> list[str]:
    found = {label for _, site in _sites(schema.schema) for label in _extra_labels_at(site)}
    return [label for label in _EXTRA if label in found]
