"""The built-in serializers as subjects: one per serializer class, with values, declared
evolutions and generated ones from the strategies (``conformance certify --builtins``).

Every schema is fixed, so golden files recorded by one release stay meaningful for the next:
pojo and enum use the strategies' generated classes built from a fixed field/member list (their
names are fixed too, so every process, including the fresh-process restore that finds a subject
by ``conformance._builtins.subjects:<name>``, rebuilds exactly the same classes); avro is a fixed record.
Evolutions are drawn from the strategies with a fixed seed.

Two built-ins take the shapes users write rather than the ones the strategies generate:
``annotated_pojo`` is a dataclass declared with plain annotations (``int``, ``dict[str, int]``,
``Optional[str]``, ``list[Point]``, ...) from which ``PojoSerializer`` infers its fields'
serializers; ``row_of_user_type`` is a row whose field is a hand-written, stateful serializer
with an older-style snapshot (``conformance._user_serializers``), with declared evolutions;
``pojo_with_subclasses`` is a dataclass hierarchy with a registered subclass; ``counter`` is a
hand-written serializer at the top whose wider releases migrate by the defaults a snapshot
inherits. ``flink_row`` is
a row serializer restored from the snapshot Flink itself writes (no field names), so it is
positional and evolves as Flink 2.3 evolves rows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from functools import cache
from typing import Any

from reference import Verdict
from reference import types as t

from .._engine.golden import UNRELEASED
from .._engine.subject import Evolution, Subject

__all__ = ["builtin_subjects", "BUILTIN_NAMES"]

_SEED = 20260401

#: name -> (schema or a strategies family to draw one from, used as a key serializer)
_PLAN: dict[str, tuple[Any, bool]] = {
    "boolean": (t.BooleanType(), True),
    "byte": (t.ByteType(), True),
    "short": (t.ShortType(), True),
    "int": (t.IntType(), True),
    "long": (t.LongType(), True),
    "float": (t.FloatType(), True),
    "double": (t.DoubleType(), True),
    "string": (t.StringType(), True),
    "bytes": (t.BytesType(), True),
    "nullable": (t.NullableType(t.LongType()), True),
    "nullable_padded": (t.NullableType(t.IntType(), padded=True), True),
    "list": (t.ListType(t.StringType()), True),
    "map": (t.MapType(t.StringType(), t.NullableType(t.DoubleType())), False),
    "tuple": (t.TupleType((t.IntType(), t.StringType())), True),
    "row": (t.RowType((t.RowField("id", t.LongType(), nullable=False), t.RowField("name", t.StringType()),
                       t.RowField("tags", t.ListType(t.StringType())))), True),
    "pojo": (lambda: _fixed_pojo(), False),
    "enum": (lambda: _fixed_enum(), True),
    "avro": (lambda: _fixed_avro(), False),
    "pickle": (t.PickleType(), False),
    # Shapes the ones above never take: a padded Nullable of a 1-byte type; nesting in which
    # reconfiguration, migration and zero-width types sit below lists, maps, rows and pojos,
    # with non-ASCII field and class names in the snapshots.
    "nullable_padded_byte": (t.NullableType(t.ByteType(), padded=True), True),
    "nested_row": (lambda: _fixed_nested_row(), False),
    "map_of_pojo": (lambda: _fixed_map_of_pojo(), False),
    # A list at the top whose elements migrate (the list's snapshot writes migrated records)
    # and end with a list of zero-width elements.
    "list_of_pojo": (lambda: _fixed_list_of_pojo(), False),
    # Shapes users write: annotations instead of explicit field serializers; a hand-written
    # field serializer (no schema: its values and evolutions are declared below).
    "annotated_pojo": (lambda: _fixed_annotated_pojo(), False),
    "row_of_user_type": (None, False),
    "pojo_with_subclasses": (None, False),
    # A hand-written serializer at the top whose wider release migrates by the defaults a
    # snapshot inherits (no migrate_element or migrate_state of its own).
    "counter": (None, False),
    # A row that evolves inside a pojo field (the pojo's migration runs the row's), and a
    # padded Nullable of a tuple whose fixed length sums a zero-width field.
    "pojo_of_row": (lambda: _fixed_pojo_of_row(), False),
    # A row in Flink 1.10's layout (no row kind) over a user's subclass of a built-in and a
    # user type migrated by FLIP-527's returning form.
    "legacy_row": (None, False),
    # A row restored from the snapshot Flink writes (no field names): positional, and evolving
    # as Flink 2.3 evolves rows (by position).
    "flink_row": (None, True),
    # A user's serializer at the top whose snapshot migrates by FLIP-527's returning form
    # (``migrate_element(prior, new, element)``, no target), the form users write most.
    "temperature": (None, False),
    # A row restored from the snapshot Flink 1.10 wrote (outer version 2: rows without a kind),
    # as a savepoint of Flink 1.10 restores: Flink 1.11's row (outer version 3) migrates it.
    "flink_row_1_10": (None, True),
    # Flink's Table runtime rows (BinaryRowData): FLIP-527's Events example, whose nested row
    # gains nullable fields.
    "rowdata": (None, False),
    # A tuple at the top whose second field is a row whose first field is a row: when the
    # inner row changes, the tuple migrates a field (on bytes, and by its snapshot's
    # migrate_element in both FLIP-527 forms) and the outer row migrates its first field.
    "tuple_of_row": (lambda: _fixed_tuple_of_row(), True),
    # A map keyed by a user's serializer that keeps a scratch buffer (the map's duplicate must
    # duplicate its key serializer, while its value serializer is shared), whose keys migrate.
    "map_of_readings": (None, False),
    # A dataclass (fields annotated as users write them, one of them ``Any``, pickled) holding an
    # Avro record of logical types (a timestamp, a date, a decimal of fixed scale, a UUID):
    # values fastavro converts, so the POJO's generated code
    # calls the Avro serializer's own methods, which are its generic ones (no generated code
    # takes a logical type).
    "avro_logical": (lambda: _logical_avro(), False),
    # A dataclass defined in a function, as in a notebook or a test: not importable by its name,
    # known to the reference because its module registers it; a list field with a default factory.
    "local_pojo": (None, False),
}
BUILTIN_NAMES = tuple(_PLAN)


def _fixed_pojo() -> Any:
    from strategies import PojoField, pojo_type

    return pojo_type((
        PojoField("id", t.LongType()),
        PojoField("name", t.StringType()),
        PojoField("score", t.DoubleType(), default=0.0),
        PojoField("tags", t.ListType(t.StringType())),
    ), qualname="BuiltinPojo")


def _fixed_nested_row() -> Any:
    from strategies import enum_type

    colour = enum_type(("RED", "GREEN", "BLUE"), qualname="Farbe_Ä")
    item = t.RowType((t.RowField("x", t.IntType(), nullable=False), t.RowField("farbe", colour)))
    # A nested row of 8 fields: with its 2 row-kind bits, a mask of 2 bytes, a NOT NULL field
    # in each; a row below a row reads its mask where it stands (the top level's has a path of its own).
    wide = t.RowType((
        t.RowField("b", t.ByteType(), nullable=False),
        # A name past the BMP: modified UTF-8 writes it as two 3-byte surrogates.
        t.RowField("é_\U0001d11e", t.StringType()),
        *(t.RowField(f"n{i}", t.IntType() if i % 2 else t.LongType(), nullable=i != 3) for i in range(1, 6)),
        t.RowField("last", t.ShortType(), nullable=False),
    ))
    # Lists six deep: past the depth to which generated codecs inline nested serializers (they
    # call the nested serializer's own methods there).
    deep: Any = t.NullableType(t.IntType())
    for _ in range(6):
        deep = t.ListType(deep)
    return t.RowType((
        t.RowField("id", t.LongType(), nullable=False),
        t.RowField("名字", t.StringType()),
        t.RowField("items", t.ListType(item)),
        t.RowField("inner", wide),
        t.RowField("deep", deep),
        # Last, so that nothing follows: entries of 2 bytes (a byte key, a null value) and
        # elements of none meet the bounds that compare a size with the bytes left.
        t.RowField("flags", t.MapType(t.ByteType(), t.BooleanType())),
    ))


def _fixed_map_of_pojo() -> Any:
    from strategies import PojoField, enum_type, pojo_type

    inner = pojo_type((PojoField("x", t.IntType()),), qualname="Innen_ß")
    reading = pojo_type((PojoField("v", t.LongType()),), qualname="Ablesung_ö")
    colour = enum_type(("C", "F", "K"), qualname="Einheit_é")
    pair = pojo_type((PojoField("w", t.LongType()),), qualname="Paar_ü")
    value = pojo_type((
        PojoField("wert", t.DoubleType()),
        PojoField("é", t.LongType()),
        PojoField("props", t.MapType(t.StringType(), t.IntType())),
        PojoField("inner", inner),
        PojoField("readings", t.ListType(t.NullableType(reading))),
        PojoField("paar", t.TupleType((t.IntType(), pair))),
        PojoField("einheit", colour),
        PojoField("leer", t.ListType(t.TupleType(()))),
    ), qualname="Messwert_é")
    return t.MapType(t.StringType(), value)


def _fixed_annotated_pojo() -> Any:
    from strategies import PojoField, enum_type, pojo_type

    def annotated(name: str, ftype: Any, **kwargs: Any) -> Any:
        return PojoField(name, ftype, annotated=True, **kwargs)

    point = pojo_type((annotated("x", t.LongType()), annotated("y", t.DoubleType())), qualname="AnnotatedPoint")
    level = enum_type(("LOW", "HIGH"), qualname="AnnotatedLevel")
    marker = pojo_type((), qualname="AnnotatedMarker")  # a dataclass without fields
    return pojo_type((
        annotated("id", t.LongType()),                                      # id: int
        annotated("name", t.StringType()),                                  # name: str
        annotated("counts", t.MapType(t.StringType(), t.LongType())),       # counts: dict[str, int]
        annotated("tags", t.ListType(t.StringType())),                      # tags: list[str]
        annotated("note", t.NullableType(t.StringType())),                  # note: Optional[str]
        annotated("pair", t.TupleType((t.LongType(), t.BooleanType()))),    # pair: tuple[int, bool]
        annotated("points", t.ListType(point)),                             # points: list[AnnotatedPoint]
        annotated("level", level),                                          # level: AnnotatedLevel
        annotated("marker", t.NullableType(marker)),                        # marker: Optional[AnnotatedMarker]
        annotated("raw", t.BytesType(), default=b""),                       # raw: bytes = b""
        annotated("ratio", t.DoubleType(), default=0.0),                    # ratio: float = 0.0
    ), qualname="AnnotatedPojo")


def _user_shaped(name: str, serializer: Any, values: Any, evolutions: list[Evolution], **options: Any) -> Subject:
    """Built-in ``name`` written the way users write theirs (values and evolutions declared by
    hand): not a key serializer, with its golden files, rebuilt by its locator in a fresh
    process, refusing ``_invalid_configurations(name)``, unless ``options`` say otherwise."""
    options.setdefault("key", False)
    options.setdefault("locator", f"conformance._builtins.subjects:{name}")
    options.setdefault("invalid_configurations", _invalid_configurations(name))
    return Subject(serializer, values, evolutions, name=f"builtin:{name}", golden=os.path.join(_GOLDEN, name),
                   release=_release(), **options)


def _format_1_readings() -> Any:
    """Readings as ``ReadingSerializer(1)`` writes them: a float32 Celsius (no NaN), an int32
    count, no humidity."""
    from hypothesis import strategies as st

    from .._user_serializers import Reading

    return st.builds(Reading, st.floats(width=32, allow_nan=False), st.integers(-(2**31), 2**31 - 1))


def _humidity_added(reading: Any) -> Any:
    """A format-1 reading as format 2 reads it after migration: humidity 0.0."""
    from .._user_serializers import Reading

    return Reading(reading.celsius, reading.count, 0.0)


def _row_of_user_type() -> Subject:
    """A row over ``ReadingSerializer`` (see ``conformance._user_serializers``), as a field,
    below a map, a list, a tuple and a Nullable, and as a POJO's field (``Sample``'s, named in
    its metadata, format 1 in every release), and a ``pair``: a tuple and a row each of whose
    fields is stateful (as ``Sample``'s are): each composite then duplicates into a new instance,
    whether some or all of what it holds is stateful, and migrates the readings it holds. Values
    and evolutions declared by hand, as a user declares them."""
    from hypothesis import strategies as st

    from reference.serializers import (
        ListSerializer,
        LongSerializer,
        MapSerializer,
        NullableSerializer,
        PojoSerializer,
        Row,
        RowKind,
        RowSerializer,
        StringSerializer,
        TupleSerializer,
    )

    from .._user_serializers import ReadingSerializer, Sample

    def row(reading: Any) -> RowSerializer:
        history = MapSerializer(StringSerializer(), ListSerializer(TupleSerializer(
            LongSerializer(), NullableSerializer(reading.duplicate()))))
        pair = TupleSerializer(NullableSerializer(reading.duplicate()), RowSerializer(
            [("low", reading.duplicate(), True), ("high", reading.duplicate(), True)]))
        return RowSerializer([("id", LongSerializer(), False), ("reading", reading, True), ("history", history, True),
                              ("last", PojoSerializer(Sample), True), ("pair", pair, True)])

    def make(values: tuple[Any, ...], kind: RowKind) -> tuple[Any, ...]:
        return tuple(values) if kind is RowKind.INSERT else Row(values, kind)

    def humidity_added(old: tuple[Any, ...]) -> tuple[Any, ...]:
        def reading(r: Any) -> Any:
            return None if r is None else _humidity_added(r)

        key, first, history, last, pair = old
        if history is not None:
            history = {k: [(at, reading(r)) for at, r in entries] for k, entries in history.items()}
        if pair is not None:
            single, (low, high) = pair
            pair = (reading(single), (reading(low), reading(high)))
        return make((key, reading(first), history, last, pair), getattr(old, "kind", RowKind.INSERT))

    readings = st.none() | _format_1_readings()
    longs = st.integers(-(2**63), 2**63 - 1)
    histories = st.none() | st.dictionaries(st.text(max_size=4), st.lists(st.tuples(longs, readings), max_size=3),
                                            max_size=3)
    samples = st.none() | st.builds(Sample, readings, readings)
    pairs = st.none() | st.tuples(readings, st.tuples(readings, readings))
    values = st.builds(lambda key, reading, history, last, pair, kind: make((key, reading, history, last, pair), kind),
                       longs, readings, histories, samples, pairs, st.sampled_from(list(RowKind)))
    evolutions = [
        Evolution(lambda: row(ReadingSerializer(1)), Verdict.COMPATIBLE_AS_IS,
                  name="the same format, judged by the old snapshot"),
        Evolution(lambda: row(ReadingSerializer(2)), Verdict.COMPATIBLE_AFTER_MIGRATION, humidity_added,
                  name="format 2 adds humidity (migrated by the writing form)"),
        Evolution(lambda: row(LongSerializer()), Verdict.INCOMPATIBLE, reason_contains="reading",
                  name="the reading becomes a long"),
    ]
    return _user_shaped("row_of_user_type", lambda: row(ReadingSerializer(1)), values, evolutions)


def _map_of_readings() -> Subject:
    """``MapSerializer(ReadingSerializer(1), LongSerializer())``: counts per reading, keyed by a
    serializer that writes through a scratch buffer of its own (see
    ``conformance._user_serializers``) and valued by a stateless one; format 2 adds humidity to
    every key."""
    from hypothesis import strategies as st

    from reference.serializers import LongSerializer, MapSerializer

    from .._user_serializers import ReadingSerializer

    def counts(key: Any) -> MapSerializer:
        return MapSerializer(key, LongSerializer())

    def humidity_added(old: dict[Any, Any]) -> dict[Any, Any]:
        return {_humidity_added(k): v for k, v in old.items()}

    values = st.dictionaries(_format_1_readings(), st.integers(-(2**63), 2**63 - 1), max_size=4)
    evolutions = [
        Evolution(lambda: counts(ReadingSerializer(2)), Verdict.COMPATIBLE_AFTER_MIGRATION, humidity_added,
                  name="format 2 adds humidity to every key"),
        Evolution(lambda: counts(LongSerializer()), Verdict.INCOMPATIBLE, reason_contains="Reading",
                  reason_where=("map key",), name="the key becomes a long"),
    ]
    return _user_shaped("map_of_readings", lambda: counts(ReadingSerializer(1)), values, evolutions)


def _pojo_with_subclasses() -> Subject:
    """``PojoSerializer(Shape, registered_subclasses=[Circle])`` over shapes and circles (see
    ``conformance._user_serializers``); the next release's ``Circle`` has a field more, and its
    circles migrate while shapes read as they are; in a chain of two releases, Circle gains an enum
    field and the enum a member. Its recorded snapshot then lists no subclass met by
    name, so the current serializer must read the recorded release as is: registering the
    subclass differently would show."""
    from hypothesis import strategies as st

    from reference.serializers import PojoSerializer

    from .._user_serializers import (
        Circle,
        CircleWithColour,
        CircleWithPaleShade,
        CircleWithShade,
        CircleWithTextRadius,
        Shade,
        ShadeWithPale,
        Shape,
        Square,
    )

    def coloured(value: Any) -> Any:
        return CircleWithColour(value.name, value.radius) if type(value) is Circle else value

    def shaded(value: Any) -> Any:
        return CircleWithShade(value.name, value.radius) if type(value) is Circle else value

    def paler(value: Any) -> Any:
        if type(value) is not CircleWithShade:
            return value
        shade = None if value.shade is None else ShadeWithPale[value.shade.name]
        return CircleWithPaleShade(value.name, value.radius, shade)

    names = st.text(max_size=8)
    values = st.none() | st.builds(Shape, names) | st.builds(Circle, names, st.floats())
    evolutions = [
        Evolution(lambda: PojoSerializer(Circle), Verdict.INCOMPATIBLE, reason_contains="dataclass",
                  name="the state's class becomes Circle"),
        Evolution(lambda: PojoSerializer(Shape), Verdict.COMPATIBLE_WITH_RECONFIGURED_SERIALIZER,
                  name="Circle is no longer registered (met by name)"),
        Evolution(lambda: PojoSerializer(Shape, registered_subclasses=[CircleWithColour]),
                  Verdict.COMPATIBLE_AFTER_MIGRATION, coloured, classes=([Circle], [CircleWithColour]),
                  name="the registered Circle gains a field (the subclass evolves on its own)"),
        Evolution(lambda: PojoSerializer(Shape, registered_subclasses=[CircleWithTextRadius]), Verdict.INCOMPATIBLE,
                  classes=([Circle], [CircleWithTextRadius]), reason_contains="registered subclass",
                  name="the registered Circle's radius becomes text (the subclass's field changes type)"),
        Evolution(lambda: PojoSerializer(Shape, registered_subclasses=[Square, Circle]),
                  Verdict.COMPATIBLE_WITH_RECONFIGURED_SERIALIZER,
                  name="Square registered before Circle (Circle keeps its tag and its serializer)"),
    ]
    # The registered Circle gains an enum field, then the enum a member: the second step's
    # snapshots judge each other differently in the two directions (reconfigured new against
    # old, incompatible old against new), so the subclasses' direction of judgment shows.
    shades = [
        Evolution(lambda: PojoSerializer(Shape, registered_subclasses=[CircleWithShade]),
                  Verdict.COMPATIBLE_AFTER_MIGRATION, shaded, classes=([Circle], [CircleWithShade, Shade]),
                  name="the registered Circle gains an enum field"),
        Evolution(lambda: PojoSerializer(Shape, registered_subclasses=[CircleWithPaleShade]),
                  Verdict.COMPATIBLE_WITH_RECONFIGURED_SERIALIZER, paler,
                  classes=([CircleWithShade, Shade], [CircleWithPaleShade, ShadeWithPale]),
                  name="the registered Circle's enum gains a member"),
    ]
    return _user_shaped("pojo_with_subclasses", lambda: PojoSerializer(Shape, registered_subclasses=[Circle]), values,
                        evolutions, chains=[shades])


def _temperature() -> Subject:
    """``TemperatureSerializer("C")`` (see ``conformance._user_serializers``): a double in Celsius
    whose next release keeps Kelvin, migrated by its snapshot's ``migrate_element`` in FLIP-527's
    returning form, the form users write most, with the serializer at the top (Flink's runtime
    calls the snapshot's ``migrate_state``, which every snapshot inherits); a plain double is
    incompatible, and a unit other than C and K is refused at construction."""
    from hypothesis import strategies as st

    from reference.serializers import DoubleSerializer

    from .._user_serializers import TemperatureSerializer

    def in_kelvin(celsius: float) -> float:
        return celsius + 273.15

    evolutions = [
        Evolution(lambda: TemperatureSerializer("K"), Verdict.COMPATIBLE_AFTER_MIGRATION, in_kelvin,
                  name="temperatures are kept in Kelvin (the returning form of migrate_element)"),
        Evolution(DoubleSerializer, Verdict.INCOMPATIBLE, reason_contains="temperature",
                  name="a plain double"),
    ]
    return _user_shaped("temperature", lambda: TemperatureSerializer("C"), st.floats(width=64), evolutions,
                        invalid_configurations={"Fahrenheit, a unit it does not know": lambda: TemperatureSerializer("F")})


def _legacy_row() -> Subject:
    """``RowSerializer(..., supports_row_kind=False)`` (the layout of rows Flink 1.10 wrote)
    over ``EpochMillisSerializer`` and ``TemperatureSerializer`` (see
    ``conformance._user_serializers``): a release adding a nullable field and reading
    temperatures in Kelvin migrates every row (INSERT rows only, as the layout holds); one adding
    the field alone keeps the temperatures as they are (their snapshot's migration must not run)."""
    import datetime

    from hypothesis import strategies as st

    from reference.serializers import DoubleSerializer, RowSerializer, StringSerializer

    from .._user_serializers import EpochMillisSerializer, TemperatureSerializer

    def row(temperature: Any, *more: Any) -> RowSerializer:
        return RowSerializer([("at", EpochMillisSerializer(), False), ("temp", temperature, True), *more],
                             supports_row_kind=False)

    def in_kelvin(old: tuple[Any, ...]) -> tuple[Any, ...]:
        at, temp = old
        return (at, None if temp is None else temp + 273.15, None)

    def noted(old: tuple[Any, ...]) -> tuple[Any, ...]:
        return (*old, None)

    instants = st.datetimes(timezones=st.just(datetime.timezone.utc)).map(
        lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000))
    values = st.tuples(instants, st.none() | st.floats(allow_nan=False))
    evolutions = [
        Evolution(lambda: row(TemperatureSerializer("K"), ("note", StringSerializer(), True)),
                  Verdict.COMPATIBLE_AFTER_MIGRATION, in_kelvin,
                  name="a note is added and temperatures are kept in Kelvin"),
        # The temperatures read as they are: their snapshot's migration (to Kelvin) must not run.
        Evolution(lambda: row(TemperatureSerializer("C"), ("note", StringSerializer(), True)),
                  Verdict.COMPATIBLE_AFTER_MIGRATION, noted, name="a note is added, temperatures still in Celsius"),
        Evolution(lambda: row(DoubleSerializer()), Verdict.INCOMPATIBLE, reason_contains="temp",
                  name="the temperature becomes a plain double"),
    ]
    return _user_shaped("legacy_row", lambda: row(TemperatureSerializer("C")), values, evolutions)


#: The fields of Flink's own ``RowSerializerUpgradeTest`` row (String, Long, String, String):
#: ``flink_row``'s snapshot is byte for byte the one Flink writes for it (its upgrade-test
#: resources since 1.15; tests/reference/test_flink_golden.py compares them when present).
def _flink_row_fields() -> list[Any]:
    from reference.serializers import LongSerializer, StringSerializer

    return [StringSerializer(), LongSerializer(), StringSerializer(), StringSerializer()]


@cache
def flink_snapshot(name: str) -> bytes | None:
    """The serializer snapshot Flink 2.3 writes for built-in ``name``'s serializer (the bytes of
    ``flink_snapshots.json``, printed by Flink itself), or None for a built-in Flink has no
    serializer for (a Python class, Avro, pickle, the shapes users write)."""
    with open(os.path.join(os.path.dirname(__file__), "flink_snapshots.json"), encoding="utf-8") as handle:
        found = json.load(handle)["snapshots"].get(name)
    return None if found is None else bytes.fromhex(found)


def flink_row_snapshot() -> bytes:
    """The top-level snapshot Flink 2.3 writes for a ``Row(String, Long, String, String)``
    serializer: outer version 4, the row-kind flag, no field names."""
    found = flink_snapshot("flink_row")
    assert found is not None
    return found


def flink_1_10_row_snapshot() -> bytes:
    """The top-level snapshot Flink 1.10 wrote for ``flink_row``'s row: outer version 2, which has
    no row-kind flag (rows had no kind before 1.11), the rest as Flink 2.3 writes it; byte for
    byte Flink's own ``RowSerializerUpgradeTest`` snapshot of 1.10. Written by the reference
    (``RowSerializerSnapshot.in_flink_outer_version``)."""
    return _flink_row_snapshot_at(2, supports_row_kind=False)


def flink_1_11_row_snapshot() -> bytes:
    """The same row's snapshot as Flink 1.11 to 1.13 wrote it: outer version 3, whose rows always
    have a kind (no flag); byte for byte Flink's ``RowSerializerUpgradeTest`` snapshot of 1.11."""
    return _flink_row_snapshot_at(3, supports_row_kind=True)


def _flink_row_snapshot_at(outer_version: int, supports_row_kind: bool) -> bytes:
    from reference import snapshot_from_bytes, snapshot_to_bytes
    from reference.serializers import RowSerializer

    restored: Any = snapshot_from_bytes(flink_row_snapshot()).restore_serializer()
    row = RowSerializer(restored.fields, supports_row_kind=supports_row_kind).snapshot_configuration()
    return snapshot_to_bytes(row.in_flink_outer_version(outer_version), dialect="flink")


def _named_row(*types: Any, names: tuple[str, ...] = ("name", "count", "city", "note"), **options: Any) -> Any:
    """A factory of the row of ``types`` with ``names``, every field nullable."""
    from reference.serializers import RowSerializer

    return lambda: RowSerializer([(n, s, True) for n, s in zip(names, types, strict=False)], **options)


def _flink_row_values() -> Any:
    """Values of ``Row(String, Long, String, String)``: plain tuples (INSERT rows, which every
    layout holds)."""
    from hypothesis import strategies as st

    texts = st.none() | st.text(max_size=6)
    return st.tuples(texts, st.none() | st.integers(-(2**63), 2**63 - 1), texts, texts)


def _restored_from(written: bytes) -> Callable[[], Any]:
    def restored() -> Any:
        from reference import snapshot_from_bytes

        return snapshot_from_bytes(written).restore_serializer()

    return restored


def _flink_row() -> Subject:
    """A row serializer restored from the snapshot Flink writes (``flink_row_snapshot``): no
    names, so its fields are Flink's positional ``f0..f3`` and it evolves by position, as Flink
    2.3 judges rows: new names for the same types read as is, a change of arity is
    incompatible, and a change of the row-kind layout migrates (names and all, by position)."""
    from reference.serializers import StringSerializer

    written = flink_row_snapshot()
    fields = _flink_row_fields
    evolutions = [
        Evolution(_named_row(*fields()), Verdict.COMPATIBLE_AS_IS,
                  name="the fields get names (Flink matches by position: read as is)"),
        Evolution(_named_row(*fields(), supports_row_kind=False), Verdict.COMPATIBLE_AFTER_MIGRATION, tuple,
                  name="named fields in rows without a kind (migrated field by field, by position)"),
        Evolution(_named_row(*fields(), StringSerializer(), names=("name", "count", "city", "note", "extra")),
                  Verdict.INCOMPATIBLE, reason_contains="arity", name="a fifth field (Flink: the arity may not change)"),
    ]
    return _user_shaped("flink_row", _restored_from(written), _flink_row_values(), evolutions, key=True,
                        invalid_configurations=_invalid_configurations("row"), flink_snapshot=written)


def _flink_row_1_10() -> Subject:
    """A row serializer restored from the snapshot Flink 1.10 wrote (``flink_1_10_row_snapshot``),
    as a job restores a savepoint of Flink 1.10: positional, and without a row kind. The row
    Flink 1.11 restores from its snapshot (``flink_1_11_row_snapshot``: always a kind) migrates
    each row, as Flink 2.3's does (``tests/flink/test_flink_row_1_10.py`` has Flink 2.3 judge
    it); names for the same layout read as is; a fifth field is incompatible."""
    from reference.serializers import StringSerializer

    fields = _flink_row_fields
    evolutions = [
        Evolution(_restored_from(flink_1_11_row_snapshot()), Verdict.COMPATIBLE_AFTER_MIGRATION, tuple,
                  name="Flink 1.11's row, which always has a row kind (each row migrated by position)"),
        Evolution(_named_row(*fields(), supports_row_kind=False), Verdict.COMPATIBLE_AS_IS,
                  name="the fields get names, still without a kind (Flink matches by position: read as is)"),
        Evolution(_named_row(*fields(), StringSerializer(), names=("name", "count", "city", "note", "extra"),
                             supports_row_kind=False),
                  Verdict.INCOMPATIBLE, reason_contains="arity", name="a fifth field (Flink: the arity may not change)"),
    ]
    return _user_shaped("flink_row_1_10", _restored_from(flink_1_10_row_snapshot()), _flink_row_values(), evolutions,
                        key=True, invalid_configurations=_invalid_configurations("row"))


def _rowdata() -> Subject:
    """``RowDataSerializer`` of FLIP-527's ``Events`` row (a nested ``device`` row with a
    string past the inline limit, a non-compact decimal and timestamp, an array and a map):
    its next release adds nullable fields to the nested row and reorders the top level;
    renaming a field is incompatible, relaxing a NOT NULL field changes nothing."""
    import strategies
    from reference import sqltypes as sql
    from reference.serializers import Row, RowDataSerializer

    device = [("userId", sql.IntType()), ("timestamp", sql.BigIntType()), ("deviceType", sql.VarCharType())]
    event = sql.RowType([("id", sql.BigIntType(False)), ("device", sql.RowType(device)),
                         ("amount", sql.DecimalType(24, 4)), ("at", sql.TimestampType(9)),
                         ("tags", sql.ArrayType(sql.VarCharType())),
                         ("counts", sql.MapType(sql.VarCharType(), sql.IntType()))])
    evolved = sql.RowType([("at", sql.TimestampType(9)), ("id", sql.BigIntType(False)),
                           ("device", sql.RowType([*device, ("osVersion", sql.VarCharType())])),
                           ("amount", sql.DecimalType(24, 4)), ("tags", sql.ArrayType(sql.VarCharType())),
                           ("counts", sql.MapType(sql.VarCharType(), sql.IntType())),
                           ("note", sql.VarCharType())])

    def kept_kind(old: tuple[Any, ...], values: tuple[Any, ...]) -> tuple[Any, ...]:
        return Row(values, old.kind) if isinstance(old, Row) else values

    def evolve(old: tuple[Any, ...]) -> tuple[Any, ...]:
        key, dev, amount, at, tags, counts = old
        device = None if dev is None else kept_kind(dev, (*dev, None))
        return kept_kind(old, (at, key, device, amount, tags, counts, None))

    evolutions = [
        Evolution(lambda: RowDataSerializer(evolved), Verdict.COMPATIBLE_AFTER_MIGRATION, evolve,
                  name="the device row gains osVersion, the top level is reordered and gains note"),
        Evolution(lambda: RowDataSerializer(sql.RowType([("id", sql.BigIntType()), *event.fields[1:]])),
                  Verdict.COMPATIBLE_AS_IS, name="id becomes nullable"),
        Evolution(lambda: RowDataSerializer(sql.RowType([("key", sql.BigIntType(False)), *event.fields[1:]])),
                  Verdict.INCOMPATIBLE, reason_contains="'id' was removed or renamed", name="id is renamed"),
    ]
    return _user_shaped("rowdata", lambda: RowDataSerializer(event), strategies.rowdata_values(event, allow_none=False),
                        evolutions)


#: The built-ins without a schema, declared by hand as users declare subjects.
def _counter() -> Subject:
    """``CountSerializer(2)`` (see ``conformance._user_serializers``): counts as shorts, whose
    releases widen them to ints and longs, migrated by the defaults every snapshot inherits (the
    restored serializer reads, the new one writes the same count)."""
    from hypothesis import strategies as st

    from reference.serializers import LongSerializer

    from .._user_serializers import CountSerializer

    def same(count: int) -> int:
        return count

    counts = st.integers(0, 2**15 - 1) | st.sampled_from((0, 1, 255, 256, 2**15 - 1))
    evolutions = [
        Evolution(lambda: CountSerializer(4), Verdict.COMPATIBLE_AFTER_MIGRATION, same,
                  name="counts become ints (the default migration)"),
        Evolution(lambda: CountSerializer(8), Verdict.COMPATIBLE_AFTER_MIGRATION, same,
                  name="counts become longs (the default migration)"),
        Evolution(LongSerializer, Verdict.INCOMPATIBLE, reason_contains="CountSnapshot",
                  name="the count becomes a plain long"),
    ]
    return _user_shaped("counter", lambda: CountSerializer(2), counts, evolutions, locator=None,
                        invalid_configurations={"a width of 3 bytes": lambda: CountSerializer(3)})


@cache
def _local_visits() -> tuple[tuple[type, type], tuple[type, type], tuple[type, type]]:
    """``Visit`` and the ``Page`` it holds as a function defines them (``reference.register_type``
    makes them known by their names, which imports nothing), and two next releases of both
    under the same names, as a release's module defines its classes anew: one whose Visit has a
    dict field and a text field more and whose classes have slots (its Page's fields unchanged:
    another class of the same fields), one whose count is
    text. Each as (Visit, Page). An annotation naming a class defined in a function cannot be
    resolved by name, so ``last`` says its serializer."""
    import dataclasses

    from reference import register_type
    from reference.serializers import PojoSerializer

    @dataclasses.dataclass
    class Page:
        path: str
        millis: int = 0

    @dataclasses.dataclass
    class Visit:
        user: str
        count: int = 0
        pages: list[str] = dataclasses.field(default_factory=list)
        tag: int | str = 0
        last: Page | None = dataclasses.field(default=None, metadata={"serializer": PojoSerializer(Page)})

    current = Visit, Page

    # The next release adopts ``slots=True``: its instances hold no class attribute to fall back
    # on, so a field an old record lacks has its default only if the migration sets it.
    @dataclasses.dataclass(slots=True)
    class Page:  # type: ignore[no-redef]
        path: str
        millis: int = 0

    @dataclasses.dataclass(slots=True)
    class Visit:  # type: ignore[no-redef]
        user: str
        count: int = 0
        pages: list[str] = dataclasses.field(default_factory=list)
        tag: int | str = 0
        last: Page | None = dataclasses.field(default=None, metadata={"serializer": PojoSerializer(Page)})
        referrers: dict[str, int] = dataclasses.field(default_factory=dict)
        source: str = "web"

    with_referrers = Visit, Page

    @dataclasses.dataclass
    class Page:  # type: ignore[no-redef]
        path: str
        millis: int = 0

    @dataclasses.dataclass
    class Visit:  # type: ignore[no-redef]
        user: str
        count: str = ""
        pages: list[str] = dataclasses.field(default_factory=list)
        tag: int | str = 0
        last: Page | None = dataclasses.field(default=None, metadata={"serializer": PojoSerializer(Page)})

    for cls in current:
        register_type(cls)
    return current, with_referrers, (Visit, Page)


# Registered when this module is imported, as a process that unpickles the serializer (a Spark
# executor) needs: the classes are known there by their names only once the module defining
# them is imported, as a user's module that creates and registers classes does.
_local_visits()


def _local_pojo() -> Subject:
    """``PojoSerializer(Visit)`` of a dataclass defined in a function (``_local_visits``), with a
    list field whose default is a factory, a field annotated ``int | str`` (pickled, as any
    union but ``X | None``) and a ``Page`` defined in the same function (its serializer given
    by the field): it pickles and restores by its registered name, in this process and in
    others (a fresh process, Spark executors), which import this module. Its next release
    gains a dict field, which its default factory fills in every migrated record, and a text field
    of a plain default, and defines its classes anew with slots (no class attribute holds a
    default): an old Page becomes the new class."""
    from hypothesis import strategies as st

    from reference.serializers import PojoSerializer

    (visit, page), (with_referrers, new_page), (text_count, text_page) = _local_visits()
    text = st.text(max_size=10)
    pages = st.none() | st.builds(page, path=text, millis=st.integers(-(2**63), 2**63 - 1))
    values = st.builds(visit, user=text, count=st.integers(-(2**63), 2**63 - 1), pages=st.lists(text, max_size=3),
                       tag=st.integers() | text, last=pages)

    def gains_referrers(value: Any) -> Any:
        last = None if value.last is None else new_page(path=value.last.path, millis=value.last.millis)
        return with_referrers(user=value.user, count=value.count, pages=list(value.pages), tag=value.tag, last=last)

    # A next release's class defined in a function is known only in the process that defines it
    # (a Spark executor resolves the name to the class its module registers): spark.migration
    # says so and leaves that evolution to the heap and bytes backends.
    evolutions = [
        Evolution(lambda: PojoSerializer(with_referrers), Verdict.COMPATIBLE_AFTER_MIGRATION, gains_referrers,
                  classes=([visit, page], [with_referrers, new_page]),
                  name="Visit gains a dict field (a default factory) and a text field (a plain default), its "
                       "classes defined anew with slots"),
        Evolution(lambda: PojoSerializer(text_count), Verdict.INCOMPATIBLE, classes=([visit, page], [text_count, text_page]),
                  reason_contains="count", reason_where=("count",), name="Visit's count becomes text"),
    ]
    return _user_shaped("local_pojo", lambda: PojoSerializer(visit), values, evolutions)


_USER_SHAPED = {"row_of_user_type": _row_of_user_type, "pojo_with_subclasses": _pojo_with_subclasses,
                "counter": _counter, "map_of_readings": _map_of_readings, "temperature": _temperature,
                "legacy_row": _legacy_row, "flink_row": _flink_row, "flink_row_1_10": _flink_row_1_10,
                "rowdata": _rowdata,
                "local_pojo": _local_pojo}


def _fixed_list_of_pojo() -> Any:
    from strategies import PojoField, pojo_type

    # Fields are written in name order: "zeichen", a list of zero-width tuples, ends every
    # element, so the list's size is compared with no bytes left at the end of the record.
    item = pojo_type((PojoField("n", t.LongType()), PojoField("label", t.StringType()),
                      PojoField("zeichen", t.ListType(t.TupleType(())))), qualname="Posten_ø")
    return t.ListType(item)


def _fixed_pojo_of_row() -> Any:
    from strategies import PojoField, pojo_type

    reading = t.RowType((t.RowField("wert", t.DoubleType()), t.RowField("einheit", t.StringType())))
    return pojo_type((
        PojoField("id", t.LongType()),
        PojoField("messung", reading),
        PojoField("fest", t.NullableType(t.TupleType((t.IntType(), t.TupleType(()))), padded=True)),
    ), qualname="Messung_å")


def _fixed_tuple_of_row() -> Any:
    # Fullwidth parentheses (U+FF08, U+FF09): modified UTF-8 writes them with the lead byte EF,
    # the last of the 3-byte leads.
    messung = t.RowType((t.RowField("温度（℃）", t.DoubleType()), t.RowField("einheit", t.StringType())))
    return t.TupleType((t.LongType(), t.RowType((
        t.RowField("messung", messung, nullable=False),
        t.RowField("n", t.IntType()),
    ))))


def _fixed_enum() -> Any:
    from strategies import enum_type

    return enum_type(("RED", "GREEN", "BLUE", "UNKNOWN"), qualname="BuiltinColor")


def _fixed_avro() -> Any:
    import json

    schema = {
        "type": "record", "name": "Reading", "namespace": "builtin",
        "fields": [
            {"name": "sensor", "type": "string"},
            {"name": "value", "type": "double"},
            {"name": "count", "type": "int"},
            {"name": "unit", "type": {"type": "enum", "name": "Unit", "symbols": ["C", "F", "K"]}},
            {"name": "note", "type": ["null", "string"], "default": None},
            {"name": "history", "type": {"type": "array", "items": "long"}},
        ],
    }
    return t.AvroType(json.dumps(schema, sort_keys=True, separators=(",", ":")))


def _logical_avro() -> Any:
    import json

    schema = {
        "type": "record", "name": "Payment", "namespace": "builtin",
        "fields": [
            {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {"name": "day", "type": {"type": "int", "logicalType": "date"}},
            {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
            {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
        ],
    }
    from strategies import PojoField, pojo_type

    payment = t.AvroType(json.dumps(schema, sort_keys=True, separators=(",", ":")))
    return pojo_type((
        PojoField("id", t.LongType(), annotated=True),                  # id: int
        PojoField("payment", payment),                                  # an AvroSerializer field
        PojoField("extra", t.PickleType(), annotated=True),             # extra: Any (pickled)
    ), qualname="Ledger")


def _draws(strategy: Any, count: int) -> list[Any]:
    """The first ``count`` examples of ``strategy`` under the fixed seed (deterministic)."""
    import hypothesis
    from hypothesis import HealthCheck, Phase, given

    drawn: list[Any] = []

    @hypothesis.seed(_SEED)
    @hypothesis.settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
                         suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: Any) -> None:
        drawn.append(value)

    collect()
    return drawn


@cache
def _schema(name: str) -> Any:
    spec = _PLAN[name][0]
    return spec() if callable(spec) else spec


#: Evolutions declared per verdict at least (more where more kinds of change were drawn):
#: composite schemas have many kinds and places of change.
_PER_VERDICT = {True: 2, False: 1}
_CANDIDATES = 16


def _evolutions(schema: Any) -> list[Evolution]:
    """Of the first draws of each verdict, every kind of change drawn (each at its deepest
    place: each kind has verdict and migration code of its own), then the deepest distinct
    changes (a change below a list, a Nullable or a tuple exercises the nested migration and
    reconfiguration paths)."""
    import strategies
    from reference.types import serializer_for

    composite = isinstance(schema, (t.RowType, t.PojoType, t.MapType, t.ListType, t.TupleType))
    found: list[Evolution] = []
    for verdict in (Verdict.COMPATIBLE_AFTER_MIGRATION, Verdict.COMPATIBLE_WITH_RECONFIGURED_SERIALIZER, Verdict.INCOMPATIBLE):
        try:
            drawn = _draws(strategies.evolutions(schema, verdict=verdict), _CANDIDATES)
        except Exception:
            continue  # no change of that verdict exists for this schema
        distinct = {(e.change, e.path): e for e in reversed(drawn) if e.expect == verdict}
        ranked = sorted(distinct.values(), key=lambda e: (-len(e.path), e.change, repr(e.path)))
        # Every kind of change drawn, each at its deepest place (each kind has verdict and
        # migration code of its own); then deepest first, one per branch (the first two steps
        # of the path) while others remain.
        kinds: dict[str, Any] = {}
        for e in ranked:
            kinds.setdefault(e.change, e)
        chosen = list(kinds.values())
        chosen += [e for i, e in enumerate(ranked) if e not in chosen and all(e.path[:2] != r.path[:2] for r in ranked[:i])]
        chosen += [e for e in ranked if e not in chosen]
        for evo in chosen[:max(_PER_VERDICT[composite], len(kinds))]:
            strategies.activate(evo.new)
            try:
                new = serializer_for(evo.new)
            finally:
                strategies.activate(schema)
            migrate = evo.migrate if evo.expect != Verdict.INCOMPATIBLE else None
            found.append(Evolution(new, evo.expect, migrate,
                                   reason_contains=evo.reason_contains if evo.expect == Verdict.INCOMPATIBLE else None,
                                   reason_where=evo.reason_where,
                                   name=f"{evo.change} at {'/'.join(map(str, evo.path)) or 'the top'} ({evo.expect})",
                                   schemas=(schema, evo.new)))
    return found


#: What the current code must do with each recorded release of a built-in, where that is not
#: "read as is": release 0.1.0 wrote Avro records in standard Avro binary; the current
#: AvroSerializer writes Flink's encoding and migrates the old records to it.
_RELEASES = {
    "avro": {"0.1.0": Evolution(expect=Verdict.COMPATIBLE_AFTER_MIGRATION)},
}


def _invalid_configurations(name: str) -> dict[str, Any]:
    """What the built-in's serializer class must refuse at construction: description -> a
    function building it (``roundtrip.invalid_configuration``)."""
    import json

    from reference.serializers import (
        AvroSerializer,
        DoubleSerializer,
        EnumSerializer,
        IntSerializer,
        ListSerializer,
        LongSerializer,
        MapSerializer,
        NullableSerializer,
        PojoSerializer,
        RowSerializer,
        StringSerializer,
        TupleSerializer,
    )

    nothing: Any = None  # where a serializer or a class belongs
    yes: Any = "yes"  # where a bool belongs
    not_a_class: Any = int  # where a dataclass or an Enum class belongs
    a_class: Any = LongSerializer  # where an instance belongs

    def rows(**options: Any) -> dict[str, Any]:
        return {
            "a row with a field name twice": lambda: RowSerializer(
                [("id", LongSerializer(), False), ("id", StringSerializer(), True)], **options),
            "a row field without a name": lambda: RowSerializer([("", LongSerializer(), False)], **options),
            "a row field whose serializer is None": lambda: RowSerializer([("id", nothing, False)], **options),
            "a row field whose nullable flag is not a bool": lambda: RowSerializer(
                [("id", LongSerializer(), yes)], **options),
        }

    def misconfigured(what: str) -> Any:
        """A dataclass whose fields give PojoSerializer no serializer it can derive."""
        import dataclasses

        if what == "metadata":  # a serializer's name where the serializer belongs
            return dataclasses.make_dataclass("NamedSerializer", [("n", int, dataclasses.field(
                metadata={"serializer": "LongSerializer"}))])
        if what == "annotation":  # a name no module defines
            return dataclasses.make_dataclass("UnknownAnnotation", [("n", "NoSuchType")])
        chain = dataclasses.make_dataclass("Chain", [("next", object)])  # a field of its own class
        chain.__annotations__["next"] = chain
        return chain

    def pojos(cls: Any) -> dict[str, Any]:
        return {
            "a field whose metadata 'serializer' is not a serializer": lambda: PojoSerializer(misconfigured("metadata")),
            "a field annotation that names nothing defined": lambda: PojoSerializer(misconfigured("annotation")),
            "a dataclass holding itself without a serializer for that field": lambda: PojoSerializer(
                misconfigured("recursive")),
            "a pojo of a class that is not a dataclass": lambda: PojoSerializer(not_a_class),
            "a registered subclass that is not a subclass": lambda: PojoSerializer(cls, registered_subclasses=[not_a_class]),
            "the pojo's own class registered as its subclass": lambda: PojoSerializer(cls, registered_subclasses=[cls]),
        }

    nullables = {
        "a Nullable of None": lambda: NullableSerializer(nothing),
    }
    if name in ("nullable", "nullable_padded", "nullable_padded_byte"):
        return nullables
    if name == "list":
        return {"a list of None": lambda: ListSerializer(nothing), "a list of a class": lambda: ListSerializer(a_class)}
    if name == "map":
        return {"a map with a null key serializer": lambda: MapSerializer(nothing, DoubleSerializer()),
                "a map with a null value serializer": lambda: MapSerializer(StringSerializer(), nothing)}
    if name == "tuple":
        return {"a tuple with a null field serializer": lambda: TupleSerializer(IntSerializer(), nothing)}
    if name == "tuple_of_row":
        return {"a tuple with a null field serializer": lambda: TupleSerializer(LongSerializer(), nothing),
                **rows()}
    if name in ("row", "nested_row"):
        return rows()
    if name == "legacy_row":
        return rows(supports_row_kind=False)
    if name in ("pojo", "annotated_pojo", "pojo_of_row"):
        return pojos(_schema(name).cls)
    if name == "local_pojo":
        return pojos(_local_visits()[0])
    if name == "pojo_with_subclasses":
        from .._user_serializers import Circle, Shape

        def subclasses(n: int) -> list[type]:
            import dataclasses

            return [dataclasses.make_dataclass(f"Shape{i}", [], bases=(Shape,)) for i in range(n)]

        return {**pojos(Shape), "a subclass registered twice": lambda: PojoSerializer(
            Shape, registered_subclasses=[Circle, Circle]),
            # Flink reads the subclass tag as a signed byte: tags 0 to 127, 128 subclasses.
            "129 registered subclasses": lambda: PojoSerializer(Shape, registered_subclasses=subclasses(129))}
    if name == "enum":
        colour = _schema(name).cls
        return {
            "an enum of a class that is not an Enum": lambda: EnumSerializer(not_a_class),
            "a symbol the enum class does not have": lambda: EnumSerializer(colour, symbols=["RED", "PURPLE"]),
            "a member named twice": lambda: EnumSerializer(colour, symbols=["RED", "RED"]),
        }
    if name == "avro_logical":
        return {
            "a decimal whose scale exceeds its precision": lambda: AvroSerializer(
                {"type": "bytes", "logicalType": "decimal", "precision": 2, "scale": 3}),
            "a decimal without a precision": lambda: AvroSerializer({"type": "bytes", "logicalType": "decimal"}),
            "a decimal wider than its fixed size holds": lambda: AvroSerializer(
                {"type": "fixed", "name": "F", "size": 2, "logicalType": "decimal", "precision": 9}),
        }
    if name == "avro":
        record = json.loads(_schema(name).schema_json)
        return {
            "an Avro schema that is not JSON": lambda: AvroSerializer.from_json("{not json"),
            "an unknown encoding": lambda: AvroSerializer(record, encoding="xml"),
            "a fixed of negative size": lambda: AvroSerializer({"type": "fixed", "name": "F", "size": -1}),
            "a record with a field twice": lambda: AvroSerializer({"type": "record", "name": "R", "fields": [
                {"name": "a", "type": "int"}, {"name": "a", "type": "long"}]}),
        }
    if name == "row_of_user_type":
        from .._user_serializers import ReadingSerializer

        return {**rows(), "a reading format that does not exist": lambda: ReadingSerializer(3)}
    if name == "map_of_readings":
        from .._user_serializers import ReadingSerializer

        return {"a map with a null key serializer": lambda: MapSerializer(nothing, LongSerializer()),
                "a reading format that does not exist": lambda: ReadingSerializer(3)}
    if name in ("map_of_pojo", "list_of_pojo"):
        return {"a list of None": lambda: ListSerializer(nothing),
                "a map with a null key serializer": lambda: MapSerializer(nothing, LongSerializer())}
    return {}


@cache
def builtin_subject(name: str) -> Subject:
    import strategies
    from reference.types import serializer_for

    if name not in _PLAN:
        raise KeyError(f"no built-in subject {name!r}; known: {', '.join(_PLAN)}")
    if _PLAN[name][0] is None:
        return _USER_SHAPED[name]()
    schema = _schema(name)
    strategies.activate(schema)
    return Subject(
        _FACTORIES.get(name, lambda: serializer_for(schema)), strategies.values(schema), _evolutions(schema),
        key=_PLAN[name][1], schema=schema, name=f"builtin:{name}",
        golden=os.path.join(_GOLDEN, name), release=_release(), releases=_RELEASES.get(name, {}),
        # Only generated classes need the subject rebuilt in a fresh process; the rest restore
        # from the savepoint's snapshots alone (and the child stays light).
        locator=f"conformance._builtins.subjects:{name}" if callable(_PLAN[name][0]) else None,
        invalid_configurations=_invalid_configurations(name), flink_snapshot=flink_snapshot(name),
    )


def _default_nullable() -> Any:
    from reference.serializers import LongSerializer, NullableSerializer

    return NullableSerializer(LongSerializer())


#: Built-ins made with the public constructor's defaults rather than from the schema (equal
#: serializers, so the golden files also pin the defaults).
_FACTORIES = {"nullable": _default_nullable}


#: Golden files of the built-ins, shipped with the package (``conformance/_builtins/golden``):
#: every release of this project restores what earlier releases recorded there;
#: ``--builtins --update-golden`` records the current release there.
_GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def _release() -> str:
    try:
        from importlib import metadata

        return metadata.version("state-conformance")
    except Exception:
        return UNRELEASED


def builtin_subjects(names: Any = None) -> list[Subject]:
    """Every built-in serializer as a Subject (or those named)."""
    return [builtin_subject(n) for n in (names or _PLAN)]


def __getattr__(name: str) -> Any:
    if name in _PLAN:
        return builtin_subject(name)
    raise AttributeError(name)
