"""Hypothesis strategies for Avro: schemas, values built from them, and schema evolutions.

Schemas are plain JSON objects (dicts, lists, type names) with unique names and no named type
used twice, so a change at one place changes exactly that place. Values are built from the
schema (never filtered). Unions only mix branches whose values fastavro cannot confuse when it
picks a branch to write (no two numeric types, no boolean with a number, one dict-valued and
one list-valued branch at most) and never both string and bytes: such a value reads back
exactly as it was drawn and resolves into the same branch everywhere. A logical type's values
are what fastavro reads for it (a decimal with the schema's scale, aware UTC datetimes for
timestamps, naive ones for local timestamps, dates, times, UUIDs), so they too read back as
drawn; schemas drawn here have none, and no change is drawn at a logical type.

Evolutions (``apply_change``) apply one labelled change at the root or at a field of a root
record and give the expected verdict and, for compatible ones, the expected migrated value as
Avro's resolution defines it, built by hand per change (not by the serializer under test).
"""

from __future__ import annotations

import copy
import datetime
import decimal
import json
import struct
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from reference import Verdict
from reference.serializers import AvroSerializer
from reference.types import AvroType

__all__ = [
    "avro_schemas", "avro_type_of", "avro_values", "change_labels", "change_kind", "apply_change",
    "declared_names",
    "COMPATIBLE_CHANGES", "INCOMPATIBLE_CHANGES", "schema_values",
]

AFTER_MIGRATION = Verdict.COMPATIBLE_AFTER_MIGRATION
INCOMPATIBLE = Verdict.INCOMPATIBLE

#: compatible change label -> what it does
COMPATIBLE_CHANGES = (
    "avro.add_field_with_default", "avro.remove_field", "avro.promote", "avro.add_enum_symbol",
    "avro.widen_union", "avro.add_alias",
)
#: incompatible change label -> the incompatibility kind its reason names
INCOMPATIBLE_CHANGES = {
    "avro.narrow": "type_mismatch",
    "avro.add_field_without_default": "reader_field_missing_default_value",
    "avro.remove_enum_symbol": "missing_enum_symbols",
    "avro.rename_record": "name_mismatch",
    "avro.change_fixed_size": "fixed_size_mismatch",
}

_PRIMITIVES = ("int", "long", "string", "boolean", "double", "float", "bytes", "null")
_NUMBERS = frozenset(("int", "long", "float", "double"))
_PROMOTIONS = {
    "int": ("long", "float", "double"), "long": ("float", "double"), "float": ("double",),
    "string": ("bytes",), "bytes": ("string",),
}
# Promotions that can lose information: beyond 2**24 / 2**53 for floats, and bytes that are not
# UTF-8 (they read as U+FFFD; a Python str cannot keep them as Java's Utf8 does).
_LOSSY_PROMOTIONS = {("int", "float"), ("long", "float"), ("long", "double"), ("bytes", "string")}
_NARROWINGS = {"long": ("int",), "float": ("int", "long"), "double": ("float", "int", "long")}
_FIELD_NAMES = ("a", "b", "c", "id", "name", "x", "y", "count")
_SYMBOLS = ("A", "B", "C", "D", "E")
# Defaults whose JSON form is exactly the value every reader fills in (floats exact in 32 bits)
_DEFAULTS: dict[str, tuple[Any, ...]] = {
    "int": (0, -1, 7), "long": (0, 1 << 40), "string": ("", "n/a"), "boolean": (False, True),
    "double": (0.0, -2.5), "float": (0.5, -1.25), "null": (None,),
}


def avro_type_of(schema: Any) -> AvroType:
    """The reference type of an Avro schema (a JSON object or string)."""
    return AvroType(AvroSerializer(schema).schema_json)


def _family(schema: Any) -> str:
    t = schema if isinstance(schema, str) else schema["type"]
    if t in _NUMBERS or t == "boolean":
        return "number"  # booleans are ints to fastavro's branch picking
    if t in ("record", "map"):
        return "dict"
    # string and bytes promote into each other: with both in a union, which branch a value
    # resolves into is where Avro implementations differ (Java: the exact type; fastavro: the
    # first readable branch), so generated unions hold at most one of them
    return {"string": "text", "bytes": "text"}.get(t, t)


def _clashes(branch: Any, others: list[Any]) -> bool:
    """fastavro takes a bytes value for an array branch (bytes is a sequence of ints, and an
    empty one fits any array), so a union holds an array or bytes/fixed, not both: which
    branch a bytes value lands in would depend on branch order, not on its type as in Java."""
    kinds = {_type_name(b) for b in [branch, *others]}
    return "array" in kinds and bool(kinds & {"bytes", "fixed"})


@st.composite
def _schema(draw: Any, depth: int, names: list[int], top: bool = False, union: bool = True) -> Any:
    def fresh(prefix: str) -> str:
        names[0] += 1
        return f"{prefix}{names[0]}"

    kinds = ["primitive", "enum", "fixed"]
    if depth > 0:
        kinds += ["record", "array", "map"] + (["union"] if union else [])
    if top and depth > 0:
        kinds = ["record", *kinds]  # records first: the most common top-level Avro schema
    kind = draw(st.sampled_from(kinds), label="avro kind")
    if kind == "primitive":
        return draw(st.sampled_from(_PRIMITIVES[:-1]), label="avro primitive")
    if kind == "enum":
        n = draw(st.integers(1, len(_SYMBOLS)), label="enum size")
        return {"type": "enum", "name": fresh("E"), "symbols": list(_SYMBOLS[:n])}
    if kind == "fixed":
        return {"type": "fixed", "name": fresh("F"), "size": draw(st.integers(0, 4), label="fixed size")}
    if kind == "array":
        return {"type": "array", "items": draw(_schema(depth - 1, names), label="items")}
    if kind == "map":
        return {"type": "map", "values": draw(_schema(depth - 1, names), label="values")}
    if kind == "union":
        branches: list[Any] = []
        families: set[str] = set()
        if draw(st.booleans(), label="nullable union"):
            branches.append("null")
            families.add("null")
        for _ in range(draw(st.integers(1, 3), label="union size")):
            branch = draw(_schema(depth - 1, names, union=False), label="branch")
            family = _family(branch)
            if family not in families and not _clashes(branch, branches):
                families.add(family)
                branches.append(branch)
        return branches
    count = draw(st.integers(0, 4), label="field count")
    chosen = draw(st.lists(st.sampled_from(_FIELD_NAMES), min_size=count, max_size=count, unique=True), label="field names")
    fields = [{"name": n, "type": draw(_schema(depth - 1, names), label=f"field {n}")} for n in chosen]
    return {"type": "record", "name": fresh("R"), "namespace": "gen", "fields": fields}


@st.composite
def _fresh_schema(draw: Any, depth: int) -> Any:
    # A new name counter per drawn schema: names must not depend on what was drawn before
    # (that made examples differ with test order, and seeds irreproducible).
    return draw(_schema(max(depth, 0), [0], top=True))


def avro_schemas(depth: int = 2) -> st.SearchStrategy[AvroType]:
    """Random Avro schemas as ``reference.types.AvroType`` (canonical JSON)."""
    return _fresh_schema(depth).map(avro_type_of)


def raw_avro_schemas(depth: int = 2) -> st.SearchStrategy[Any]:
    """Random Avro schemas as JSON objects."""
    return _fresh_schema(depth)


# -- values --------------------------------------------------------------------------------------
def schema_values(schema: Any) -> st.SearchStrategy[Any]:
    """Values of a schema given as JSON objects (canonical form: named types defined inline)."""
    return _values(schema, {})


def avro_values(avro_type: AvroType) -> st.SearchStrategy[Any]:
    return schema_values(avro_type.schema)


def _values(schema: Any, named: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    if isinstance(schema, list):
        return st.one_of([_values(b, named) for b in schema])
    if isinstance(schema, str):
        if schema in named:
            return named[schema]  # one strategy object per named type: recursion stays finite
        return _primitive(schema)
    t = schema["type"]
    if t in ("record", "enum", "fixed"):
        built: list[st.SearchStrategy[Any]] = []
        named[schema["name"]] = st.deferred(lambda: built[0])
        built.append(_named_values(schema, named))
        return built[0]
    if t == "array":
        return st.lists(_values(schema["items"], named), max_size=3)
    if t == "map":
        return st.dictionaries(st.text(max_size=4), _values(schema["values"], named), max_size=3)
    if "logicalType" in schema:
        return _logical_values(schema, t)
    return _primitive(t)


def _named_values(schema: dict[str, Any], named: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    t = schema["type"]
    if t == "enum":
        return st.sampled_from(schema["symbols"])
    if t == "fixed":
        if schema.get("logicalType") == "decimal":
            return _logical_values(schema, t)
        return st.binary(min_size=schema["size"], max_size=schema["size"])
    names = [f["name"] for f in schema["fields"]]
    parts = st.tuples(*(_values(f["type"], named) for f in schema["fields"]))
    return parts.map(lambda values: dict(zip(names, values, strict=True)))  # in field order, as read back


_UTC = datetime.timezone.utc
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=_UTC)
#: The datetimes Python holds, as milliseconds and microseconds since the epoch.
_MILLIS = (-62_135_596_800_000, 253_402_300_799_999)
_MICROS = (_MILLIS[0] * 1000, _MILLIS[1] * 1000 + 999)
_DAYS = (datetime.date.min.toordinal() - 719_163, datetime.date.max.toordinal() - 719_163)


def _decimal(unscaled: int, scale: int) -> decimal.Decimal:
    """``unscaled`` * 10**-scale with exactly ``scale`` digits after the point (the exponent
    fastavro reads back), built from its digits: no context rounds it."""
    digits = tuple(int(d) for d in str(abs(unscaled)))
    return decimal.Decimal((int(unscaled < 0), digits, -scale))


def _logical_values(schema: dict[str, Any], t: str) -> st.SearchStrategy[Any]:
    """Values of a logical type as fastavro reads them (so they read back exactly): a decimal
    with the schema's scale and at most its precision digits (and what its fixed size holds);
    aware UTC datetimes for timestamps, naive ones for local timestamps, to the unit stored;
    dates, times of day and UUIDs. A logical type Avro does not know, or on a type it does not
    annotate, is its underlying type's values (Avro ignores it)."""
    logical = schema["logicalType"]
    if logical == "decimal" and t in ("bytes", "fixed"):
        scale, precision = schema.get("scale", 0), schema["precision"]
        high = 10**precision - 1
        if t == "fixed":
            high = min(high, 2 ** (8 * schema["size"] - 1) - 1)
        return st.integers(-high, high).map(lambda n: _decimal(n, scale))
    if logical in ("timestamp-millis", "local-timestamp-millis") and t == "long":
        aware = logical == "timestamp-millis"
        return st.integers(*_MILLIS).map(lambda n: _instant(datetime.timedelta(milliseconds=n), aware))
    if logical in ("timestamp-micros", "local-timestamp-micros") and t == "long":
        aware = logical == "timestamp-micros"
        return st.integers(*_MICROS).map(lambda n: _instant(datetime.timedelta(microseconds=n), aware))
    if logical == "date" and t == "int":
        return st.integers(*_DAYS).map(lambda n: datetime.date.fromordinal(n + 719_163))
    if logical == "time-millis" and t == "int":
        return st.integers(0, 86_399_999).map(lambda n: _time_of_day(n * 1000))
    if logical == "time-micros" and t == "long":
        return st.integers(0, 86_399_999_999).map(_time_of_day)
    if logical == "uuid" and t == "string":
        return st.uuids()
    return _primitive(t) if t != "fixed" else st.binary(min_size=schema["size"], max_size=schema["size"])


def _instant(since_epoch: datetime.timedelta, aware: bool) -> datetime.datetime:
    instant = _EPOCH + since_epoch
    return instant if aware else instant.replace(tzinfo=None)


def _time_of_day(micros: int) -> datetime.time:
    seconds, micro = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    return datetime.time(minutes // 60, minutes % 60, second, micro)


def _primitive(t: str) -> st.SearchStrategy[Any]:
    return {
        "null": st.none(),
        "boolean": st.booleans(),
        "int": st.integers(-(1 << 31), (1 << 31) - 1),
        "long": st.integers(-(1 << 63), (1 << 63) - 1),
        "float": st.floats(width=32),
        "double": st.floats(),
        "bytes": st.binary(max_size=8),
        "string": st.text(max_size=8),
    }[t]


# -- evolutions ----------------------------------------------------------------------------------
def _type_name(schema: Any) -> str:
    if isinstance(schema, list):
        return "union"
    return schema if isinstance(schema, str) else schema["type"]


def _labels_at(schema: Any) -> list[str]:
    if isinstance(schema, dict) and "logicalType" in schema:
        # A logical type's values are not its underlying type's: no promotion, narrowing or
        # resizing is drawn for one (its field may still be removed or its record changed).
        return []
    t = _type_name(schema)
    labels = []
    if t == "record":
        labels += ["avro.add_field_with_default", "avro.add_field_without_default", "avro.add_alias", "avro.rename_record"]
        if schema["fields"]:
            labels.append("avro.remove_field")
    if t in _PROMOTIONS:
        labels.append("avro.promote")
    if t in _NARROWINGS:
        labels.append("avro.narrow")
    if t == "enum":
        labels.append("avro.add_enum_symbol")
        if len(schema["symbols"]) >= 2 and "default" not in schema:
            labels.append("avro.remove_enum_symbol")
    if t == "fixed":
        labels.append("avro.change_fixed_size")
    if _widenings(schema):
        labels.append("avro.widen_union")
    return labels


def _widenings(schema: Any) -> list[Any]:
    """Branches that may be appended to ``schema`` (made a union if it is not one)."""
    branches = schema if isinstance(schema, list) else [schema]
    families = {_family(b) for b in branches}
    options = ("null", "string", "long", "bytes", {"type": "array", "items": "int"})
    return [p for p in options if _family(p) not in families and not _clashes(p, branches)]


def _sites(schema: Any) -> list[tuple[int | None, Any]]:
    """The root (None) and the fields of a root record (their positions)."""
    sites: list[tuple[int | None, Any]] = [(None, schema)]
    if _type_name(schema) == "record":
        sites += [(i, f["type"]) for i, f in enumerate(schema["fields"])]
    return sites


def change_labels(avro_type: AvroType) -> list[str]:
    """Every change ``apply_change`` can make to this schema, compatible ones first."""
    found = {label for _, site in _sites(avro_type.schema) for label in _labels_at(site)}
    order = [*COMPATIBLE_CHANGES, *INCOMPATIBLE_CHANGES]
    return [label for label in order if label in found]


def change_kind(label: str) -> str:
    if label in COMPATIBLE_CHANGES:
        return AFTER_MIGRATION
    if label in INCOMPATIBLE_CHANGES:
        return INCOMPATIBLE
    raise KeyError(label)


class AvroMigration:
    """The expected migration of a whole value (a callable, like the oracle's migrations)."""

    is_identity = False

    def __init__(self, function: Callable[[Any], Any], description: str, is_lossy: bool = False) -> None:
        self.function = function
        self.description = description
        self.is_lossy = is_lossy

    def __call__(self, value: Any) -> Any:
        return self.function(copy.deepcopy(value))

    def __repr__(self) -> str:
        return f"<avro migration: {self.description}>"


def _float32(value: float) -> float:
    return struct.unpack("<f", struct.pack("<f", value))[0]


def _convert(value: Any, old: str, new: str) -> Any:
    """Avro's promotion of one value (to float: rounded to 32 bits, as a float field holds)."""
    if new == "float":
        return _float32(float(value))
    if new == "double":
        return float(value)
    if new == "bytes":
        return value.encode("utf-8")
    if new == "string":
        return value.decode("utf-8", "replace")  # malformed bytes become U+FFFD (a str cannot hold them)
    return value


def _fresh_name(taken: set[str], pool: tuple[str, ...], prefix: str) -> list[str]:
    free = [n for n in pool if n not in taken]
    return free + [f"{prefix}{i}" for i in range(len(taken) + 2) if f"{prefix}{i}" not in taken]


def _field_names(record: Any) -> set[str]:
    """The record's field names and their aliases: a new name must be neither (a field named
    as another one's alias makes Avro's resolution ambiguous)."""
    return {n for f in record["fields"] for n in (f["name"], *f.get("aliases", ()))}


def declared_names(avro_type: AvroType) -> set[str]:
    """Every record field name (with its aliases) and enum symbol in an Avro type, at any depth."""
    names: set[str] = set()
    stack = [avro_type.schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            kind = node.get("type")
            if kind == "record":
                names |= _field_names(node)
                stack.extend(f["type"] for f in node["fields"])
            elif kind == "enum":
                names.update(node["symbols"])
            elif kind == "array":
                stack.append(node["items"])
            elif kind == "map":
                stack.append(node["values"])
            elif not isinstance(kind, str):
                stack.append(kind)  # {"type": {...}}: a nested type definition
    return names


def _apply_at_site(
    draw: Any, site: Any, label: str, retired: frozenset[str]
) -> tuple[Any, Callable[[Any], Any] | None, str]:
    """The changed site schema, the migration of a site value, and what it did (new names
    avoid ``retired``: names an earlier version of a chain had)."""
    new = copy.deepcopy(site)
    if label in ("avro.add_field_with_default", "avro.add_field_without_default"):
        taken = _field_names(site) | retired
        name = draw(st.sampled_from(_fresh_name(taken, _FIELD_NAMES, "f")), label="new field name")
        position = draw(st.integers(0, len(site["fields"])), label="new field position")
        ftype = draw(st.sampled_from(sorted(_DEFAULTS)), label="new field type")
        field: dict[str, Any] = {"name": name, "type": ftype}
        if label == "avro.add_field_with_default":
            default = draw(st.sampled_from(_DEFAULTS[ftype]), label="default")
            field["default"] = default
        new["fields"].insert(position, field)
        order = [f["name"] for f in new["fields"]]

        def add(value: dict[str, Any]) -> dict[str, Any]:
            merged = dict(value, **{name: field.get("default")})
            return {k: merged[k] for k in order}

        return new, add, name
    if label == "avro.remove_field":
        index = draw(st.integers(0, len(site["fields"]) - 1), label="removed field")
        name = new["fields"].pop(index)["name"]
        return new, lambda value: {k: v for k, v in value.items() if k != name}, name
    if label == "avro.add_alias":
        old_full = f"{site.get('namespace', '')}.{site['name']}".lstrip(".")
        new["name"] = site["name"] + "Renamed"
        new["aliases"] = [old_full]
        renamed: dict[str, str] = {}
        if site["fields"] and draw(st.booleans(), label="also rename a field"):
            index = draw(st.integers(0, len(site["fields"]) - 1), label="renamed field")
            taken = _field_names(site) | retired
            old_name = site["fields"][index]["name"]
            new_name = draw(st.sampled_from(_fresh_name(taken, _FIELD_NAMES, "g")), label="new field name")
            new["fields"][index] = dict(new["fields"][index], name=new_name, aliases=[old_name])
            renamed[old_name] = new_name
        return new, lambda value: {renamed.get(k, k): v for k, v in value.items()}, site["name"]
    if label == "avro.rename_record":
        new["name"] = site["name"] + "Moved"
        return new, None, site["name"]
    if label in ("avro.promote", "avro.narrow"):
        old_t = _type_name(site)
        table = _PROMOTIONS if label == "avro.promote" else _NARROWINGS
        new_t = draw(st.sampled_from(table[old_t]), label="new type")
        return new_t, (lambda value: _convert(value, old_t, new_t)), old_t
    if label == "avro.add_enum_symbol":
        symbols = list(site["symbols"])
        taken = {*symbols, *retired}
        extra = next(f"S{i}" for i in range(len(taken) + 1) if f"S{i}" not in taken)
        symbols.insert(draw(st.integers(0, len(symbols)), label="symbol position"), extra)
        new["symbols"] = symbols
        return new, (lambda value: value), extra
    if label == "avro.remove_enum_symbol":
        symbols = list(site["symbols"])
        removed = symbols.pop(draw(st.integers(0, len(symbols) - 1), label="removed symbol"))
        new["symbols"] = symbols
        return new, None, removed
    if label == "avro.change_fixed_size":
        new["size"] = site["size"] + draw(st.sampled_from((1, 2, 8)), label="size change")
        return new, None, str(site["size"])
    if label == "avro.widen_union":
        branches = site if isinstance(site, list) else [site]
        extra = draw(st.sampled_from(_widenings(site)), label="new branch")
        # appended last: Avro resolves into the first branch that reads a value, so an added
        # branch in front could capture existing values (e.g. double before int)
        return [*copy.deepcopy(branches), extra], (lambda value: value), _type_name(extra)
    raise KeyError(label)


def apply_change(
    draw: Any, avro_type: AvroType, label: str, retired: frozenset[str] = frozenset()
) -> tuple[AvroType, AvroMigration | None, str | None]:
    """Apply change ``label`` at a drawn site: (new type, expected migration or None, a word the
    incompatibility reason must contain or None). Added or renamed fields and added symbols
    take no name in ``retired``."""
    schema = avro_type.schema
    sites = [(pos, site) for pos, site in _sites(schema) if label in _labels_at(site)]
    if not sites:
        raise ValueError(f"change {label!r} does not apply to {avro_type.schema_json}")
    position, site = draw(st.sampled_from(sites), label="change site")
    new_site, migrate_site, what = _apply_at_site(draw, site, label, retired)
    if position is None:
        new_schema = new_site
    else:
        new_schema = copy.deepcopy(schema)
        new_schema["fields"][position]["type"] = new_site
    if label in INCOMPATIBLE_CHANGES:
        return avro_type_of(new_schema), None, INCOMPATIBLE_CHANGES[label]
    assert migrate_site is not None
    migrate: Callable[[Any], Any] = migrate_site
    if position is not None:
        name, at_site = schema["fields"][position]["name"], migrate_site

        def migrate(value: dict[str, Any]) -> dict[str, Any]:
            return {k: (at_site(v) if k == name else v) for k, v in value.items()}

    lossy = label == "avro.promote" and (what, new_site) in _LOSSY_PROMOTIONS
    return avro_type_of(new_schema), AvroMigration(migrate, f"{label} at {what}", lossy), None


def evolution(schema: Any, label: str) -> st.SearchStrategy[tuple[Any, AvroMigration | None, str | None]]:
    """A strategy of (new schema as JSON objects, migration, reason word) for one change."""

    @st.composite
    def build(draw: Any) -> tuple[Any, AvroMigration | None, str | None]:
        new, migration, reason = apply_change(draw, avro_type_of(schema), label)
        return json.loads(new.schema_json), migration, reason

    return build()
