"""Flink's own upgrade-test files, read end to end through the public API.

Apache Flink's ``TypeSerializerUpgradeTestBase`` resources (``<spec>-<flink version>/`` folders,
each a ``serializer-snapshot`` written by Flink and a ``test-data`` record written by the prior
serializer) are read in place from ``../shared/flink_golden`` beside the repository; the tests
skip when that folder is absent. For every folder of a serializer this project has:

- the snapshot parses (Java class names, Flink's layouts and versions);
- ``test-data`` read with the restored serializer equals the value Flink's specification wrote,
  and consumes every byte;
- that value re-serializes to the same bytes;
- in the Flink dialect the snapshot re-serializes to the same bytes, where the file was written
  at the snapshot version Flink writes today (a row's older forms: at their outer version, by
  ``RowSerializerSnapshot.in_flink_outer_version``);
- the upgraded serializer of the specification gets the specification's verdict, and reads the
  old record (as is, reconfigured, or after migration) as the specification's upgraded value.

The values, upgraded serializers and verdicts below are transcribed from Flink's
``*UpgradeTest`` / ``*UpgradeTestSpecifications`` sources (flink-core, flink-runtime,
flink-avro, flink-tests-java17 test trees). Java classes are modelled by dataclasses and enums
registered under the Java names (relocated ones under their relocation names); a class before
and after an upgrade is registered in turn under the same name, as a restoring Flink job sees
only the new class.
"""

from __future__ import annotations

import collections
import dataclasses
import enum
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import reference
from reference import DataInputView, DataOutputView, TypeSerializer
from reference.serializers import (
    AvroSerializer,
    BooleanSerializer,
    ByteSerializer,
    BytesSerializer,
    DoubleSerializer,
    EnumSerializer,
    FloatSerializer,
    IntSerializer,
    ListSerializer,
    LongSerializer,
    MapSerializer,
    NullableSerializer,
    PojoSerializer,
    RowSerializer,
    ShortSerializer,
    StringSerializer,
    TupleSerializer,
)
from strategies import canonical

GOLDEN = Path(__file__).resolve().parents[2].parent / "shared" / "flink_golden"
pytestmark = pytest.mark.skipif(
    not GOLDEN.is_dir(),
    reason=f"Flink's upgrade-test files are not at {GOLDEN} (the repository's parent folder's "
    "shared/flink_golden); they are read in place, never copied into the repository",
)

CORE = "flink-core/src/test/resources"
SPECS_CLASS = "org.apache.flink.api.java.typeutils.runtime.PojoSerializerUpgradeTestSpecifications"


def _int_field() -> Any:
    return dataclasses.field(default=0, metadata={"serializer": IntSerializer()})


# -- Java classes of the specifications -------------------------------------------------------
class FlinkTestEnum(enum.Enum):  # org.apache.flink.api.common.typeutils.base.TestEnum
    FOO = 0
    BAR = 1
    PETER = 2
    PAULA = 3
    NATHANIEL = 4
    EMMA = 5


class EnumBefore(enum.Enum):  # relocated to TestEnumSerializerReconfig before the upgrade
    FOO = 0
    BAR = 1
    PETER = 2
    NATHANIEL = 3
    EMMA = 4
    PAULA = 5


class EnumAfter(enum.Enum):  # ... and after it
    FOO = 0
    BAR = 1
    PETER = 2
    PAULA = 3
    NATHANIEL = 4
    EMMA = 5


class Color(enum.Enum):  # StaticSchemaPojo.Color
    RED = 0
    BLUE = 1
    GREEN = 2


@dataclasses.dataclass
class StaticSchemaPojo:
    name: str = None
    age: int = _int_field()
    favoriteColor: Color = None
    married: bool = False


@dataclasses.dataclass
class StaticSchemaPojoSubclassA(StaticSchemaPojo):
    subclassField: int = _int_field()


@dataclasses.dataclass
class StaticSchemaPojoSubclassB(StaticSchemaPojo):
    subclassField: bool = False


@dataclasses.dataclass
class StaticSchemaPojoSubclassC(StaticSchemaPojo):
    subclassField: float = 0.0


@dataclasses.dataclass
class PojoBeforeSchemaUpgrade:  # TestPojoWithModifiedSchema
    id: int = _int_field()
    name: str = None
    age: int = _int_field()
    height: float = 0.0


class AfterColor(enum.Enum):  # PojoAfterSchemaUpgrade.Color
    RED = 0
    BLUE = 1
    GREEN = 2


@dataclasses.dataclass
class PojoAfterSchemaUpgrade:  # TestPojoWithModifiedSchema
    name: str = None
    age: int = _int_field()
    favoriteColor: AfterColor = None
    married: bool = False


@dataclasses.dataclass
class PojoWithIntField:  # TestPojoWithDifferentFieldType
    fieldValue: int = _int_field()


@dataclasses.dataclass
class PojoWithStringField:  # TestPojoWithDifferentFieldType
    fieldValue: str = None


@dataclasses.dataclass
class BasePojo:  # BasePojo
    baseFieldA: int = _int_field()
    baseFieldB: str = None


@dataclasses.dataclass
class SubclassPojoBeforeSchemaUpgrade(BasePojo):  # SublassPojo
    subclassFieldC: bool = False
    subclassFieldD: float = 0.0


@dataclasses.dataclass
class SubclassPojoAfterSchemaUpgrade(BasePojo):  # SublassPojo
    subclassFieldC: bool = False
    subclassFieldE: int = 0
    subclassFieldF: float = 0.0


@dataclasses.dataclass
class SubclassPojoWithIntField(StaticSchemaPojo):  # TestPojoSubclassWithDifferentFieldType
    fieldValue: int = _int_field()


@dataclasses.dataclass
class SubclassPojoWithStringField(StaticSchemaPojo):  # TestPojoSubclassWithDifferentFieldType
    fieldValue: str = None


@dataclasses.dataclass
class PojoBeforeUpgrade:  # TestPojoToRecord
    id: int = _int_field()
    name: str = None


@dataclasses.dataclass
class PojoAfterUpgrade:  # TestPojoToRecord (a Java record after the upgrade)
    id: int = _int_field()
    name: str = None


@dataclasses.dataclass
class RecordBeforeMigration:  # TestRecordMigration
    id: int = _int_field()
    name: str = None


@dataclasses.dataclass
class RecordAfterSchemaUpgrade:  # TestRecordMigration
    name: str = None
    age: int = _int_field()
    newField: str = None


#: Java names that stay bound to one class for the whole module.
_FIXED = {
    StaticSchemaPojo: f"{SPECS_CLASS}$StaticSchemaPojo",
    Color: f"{SPECS_CLASS}$StaticSchemaPojo$Color",
    StaticSchemaPojoSubclassA: f"{SPECS_CLASS}$StaticSchemaPojoSubclassA",
    StaticSchemaPojoSubclassB: f"{SPECS_CLASS}$StaticSchemaPojoSubclassB",
    StaticSchemaPojoSubclassC: f"{SPECS_CLASS}$StaticSchemaPojoSubclassC",
    FlinkTestEnum: "org.apache.flink.api.common.typeutils.base.TestEnum",
    BasePojo: "BasePojo",
    AfterColor: "TestPojoWithModifiedSchema$Color",
}


def _bind(*pairs: tuple[type, str]) -> Callable[[], None]:
    def bind() -> None:
        for cls, name in _FIXED.items():
            reference.register_type(cls, name)
        for cls, name in pairs:
            reference.register_type(cls, name)

    return bind


@dataclasses.dataclass
class Spec:
    family: str
    folder: str  # path of the folders without the "-<flink version>" suffix
    value: Any  # what the prior serializer wrote
    upgraded: Callable[[], TypeSerializer[Any]]
    verdict: str | Callable[[str], str]  # as_is | reconfigured | after_migration | incompatible
    upgraded_value: Any = None  # the value read after the upgrade; None: ``value``
    prior_classes: Callable[[], None] = _bind()
    upgraded_classes: Callable[[], None] = _bind()
    current: Callable[[str], bool] = lambda version: True  # written at Flink's current version?


def _simple(family: str, folder: str, value: Any, serializer: Callable[[], TypeSerializer[Any]]) -> Spec:
    return Spec(family, f"{CORE}/{folder}", value, serializer, "as_is")


#: Java's 123.456f, the float nearest to 123.456.
_JAVA_FLOAT_123_456 = struct.unpack(">f", struct.pack(">f", 123.456))[0]


def _minor(version: str) -> int:
    return int(version.split(".")[1])


_STATIC = StaticSchemaPojo("Gordon", 27, Color.BLUE, False)
_GT_A = StaticSchemaPojoSubclassA("gt", 7, Color.BLUE, False, 911108)
_GT_B = StaticSchemaPojoSubclassB("gt", 7, Color.BLUE, False, True)


#: flink-avro's test schema (Address.avsc) and the record AvroSerializerUpgradeTest writes.
ADDRESS = {
    "type": "record", "name": "Address", "namespace": "org.apache.flink.formats.avro.generated",
    "fields": [
        {"name": "num", "type": "int"}, {"name": "street", "type": "string"},
        {"name": "city", "type": "string"}, {"name": "state", "type": "string"},
        {"name": "zip", "type": "string"},
    ],
}
BAKER_STREET = {"num": 239, "street": "Baker Street", "city": "London", "state": "London", "zip": "NW1 6XE"}
AVRO = "flink-formats/flink-avro/src/test/resources"


def _pojo(folder: str, **kwargs: Any) -> Spec:
    return Spec("POJO", f"{CORE}/pojo-serializer-{folder}", **kwargs)


SPECS = [
    _simple("primitives + String", "boolean-serializer", True, BooleanSerializer),
    _simple("primitives + String", "byte-serializer", 42, ByteSerializer),
    _simple("primitives + String", "short-serializer", 123, ShortSerializer),
    _simple("primitives + String", "int-serializer", 123456, IntSerializer),
    _simple("primitives + String", "long-serializer", 1234567890, LongSerializer),
    _simple("primitives + String", "float-serializer", _JAVA_FLOAT_123_456, FloatSerializer),
    _simple("primitives + String", "double-serializer", 12345.6789, DoubleSerializer),
    _simple("primitives + String", "string-serializer", "123456789012345678901234567890123456", StringSerializer),
    _simple("byte[]", "byte-primitive-array-serializer", bytes(range(10)), BytesSerializer),
    _simple("List/ArrayList", "list-serializer", ["Apache", "Flink"], lambda: ListSerializer(StringSerializer())),
    Spec("List/ArrayList", "flink-runtime/src/test/resources/arraylist-serializer", ["Apache", "Flink"],
         lambda: ListSerializer(StringSerializer()), "as_is"),
    _simple("Map", "map-serializer", {0: "0", 1: "1", 2: "2"},
            lambda: MapSerializer(IntSerializer(), StringSerializer())),
    _simple("Nullable", "nullable-padded-serializer", None, lambda: NullableSerializer(LongSerializer(), padded=True)),
    _simple("Nullable", "nullable-not-padded-serializer", None, lambda: NullableSerializer(LongSerializer())),
    _simple("Tuple", "tuple-serializer", ("hello Gordon", "ciao", 14),
            lambda: TupleSerializer(StringSerializer(), StringSerializer(), IntSerializer())),
    # Flink 1.10 wrote rows without a row kind: the upgraded serializer (with it) migrates.
    Spec("Row", f"{CORE}/row-serializer", (None, 42, "My string.", None),
         lambda: RowSerializer([(f"f{i}", s, True) for i, s in enumerate(
             [StringSerializer(), LongSerializer(), StringSerializer(), StringSerializer()])]),
         lambda version: "as_is" if _minor(version) > 10 else "after_migration",
         current=lambda version: _minor(version) >= 15),
    Spec("Enum", f"{CORE}/enum-serializer", FlinkTestEnum.EMMA, lambda: EnumSerializer(FlinkTestEnum), "as_is"),
    Spec("Enum", f"{CORE}/enum-serializerreconfig", EnumBefore.EMMA, lambda: EnumSerializer(EnumAfter),
         "reconfigured", upgraded_value=EnumAfter.EMMA,
         prior_classes=_bind((EnumBefore, "TestEnumSerializerReconfig")),
         upgraded_classes=_bind((EnumAfter, "TestEnumSerializerReconfig"))),
    _pojo("identical-schema", value=_STATIC, upgraded=lambda: PojoSerializer(StaticSchemaPojo),
          verdict="as_is"),
    _pojo("with-modified-schema", value=PojoBeforeSchemaUpgrade(911108, "Gordon", 27, 172.8),
          upgraded=lambda: PojoSerializer(PojoAfterSchemaUpgrade), verdict="after_migration",
          upgraded_value=PojoAfterSchemaUpgrade("Gordon", 27, None, False),
          prior_classes=_bind((PojoBeforeSchemaUpgrade, "TestPojoWithModifiedSchema")),
          upgraded_classes=_bind((PojoAfterSchemaUpgrade, "TestPojoWithModifiedSchema"))),
    _pojo("with-different-field-types", value=PojoWithIntField(911108),
          upgraded=lambda: PojoSerializer(PojoWithStringField), verdict="incompatible",
          prior_classes=_bind((PojoWithIntField, "TestPojoWithDifferentFieldType")),
          upgraded_classes=_bind((PojoWithStringField, "TestPojoWithDifferentFieldType"))),
    _pojo("with-modified-schema-in-registered-subclass",
          value=SubclassPojoBeforeSchemaUpgrade(911108, "Gordon", True, 66.7),
          upgraded=lambda: PojoSerializer(BasePojo, registered_subclasses=[SubclassPojoAfterSchemaUpgrade]),
          verdict="after_migration",
          upgraded_value=SubclassPojoAfterSchemaUpgrade(911108, "Gordon", True, 0, 0.0),
          prior_classes=_bind((SubclassPojoBeforeSchemaUpgrade, "SublassPojo")),
          upgraded_classes=_bind((SubclassPojoAfterSchemaUpgrade, "SublassPojo"))),
    _pojo("with-different-field-types-in-registered-subclass",
          value=SubclassPojoWithIntField("gt", 7, Color.BLUE, False, 911108),
          upgraded=lambda: PojoSerializer(StaticSchemaPojo, registered_subclasses=[SubclassPojoWithStringField]),
          verdict="incompatible",
          prior_classes=_bind((SubclassPojoWithIntField, "TestPojoSubclassWithDifferentFieldType")),
          upgraded_classes=_bind((SubclassPojoWithStringField, "TestPojoSubclassWithDifferentFieldType"))),
    _pojo("with-non-registered-subclass", value=_GT_A,
          upgraded=lambda: PojoSerializer(StaticSchemaPojo), verdict="reconfigured"),
    _pojo("with-different-subclass-registration-order", value=_GT_B,
          upgraded=lambda: PojoSerializer(
              StaticSchemaPojo, registered_subclasses=[StaticSchemaPojoSubclassB, StaticSchemaPojoSubclassA]),
          verdict="reconfigured"),
    _pojo("with-missing-registered-subclass", value=_GT_B,
          upgraded=lambda: PojoSerializer(StaticSchemaPojo, registered_subclasses=[StaticSchemaPojoSubclassB]),
          verdict="reconfigured"),
    _pojo("with-new-registered-subclass", value=_GT_A,
          upgraded=lambda: PojoSerializer(StaticSchemaPojo, registered_subclasses=[StaticSchemaPojoSubclassA]),
          verdict="reconfigured"),
    _pojo("with-new-and-missing-registered-subclasses", value=_GT_B,
          upgraded=lambda: PojoSerializer(
              StaticSchemaPojo, registered_subclasses=[StaticSchemaPojoSubclassB, StaticSchemaPojoSubclassC]),
          verdict="reconfigured"),
    Spec("POJO", "flink-tests-java17/src/test/resources/pojo-serializer-to-record",
         PojoBeforeUpgrade(911108, "Gordon"), lambda: PojoSerializer(PojoAfterUpgrade), "as_is",
         upgraded_value=PojoAfterUpgrade(911108, "Gordon"),
         prior_classes=_bind((PojoBeforeUpgrade, "TestPojoToRecord")),
         upgraded_classes=_bind((PojoAfterUpgrade, "TestPojoToRecord"))),
    Spec("POJO", "flink-tests-java17/src/test/resources/pojo-serializer-record-migration",
         RecordBeforeMigration(911108, "Gordon"), lambda: PojoSerializer(RecordAfterSchemaUpgrade),
         "after_migration", upgraded_value=RecordAfterSchemaUpgrade("Gordon", 0, None),
         prior_classes=_bind((RecordBeforeMigration, "TestRecordMigration")),
         upgraded_classes=_bind((RecordAfterSchemaUpgrade, "TestRecordMigration"))),
    # Flink 1.11 wrote snapshot version 2, later ones version 3.
    Spec("Avro", f"{AVRO}/generic-avro-serializer", BAKER_STREET, lambda: AvroSerializer(ADDRESS), "as_is",
         current=lambda version: _minor(version) >= 12),
    Spec("Avro", f"{AVRO}/specific-avro-serializer", BAKER_STREET,
         lambda: AvroSerializer(ADDRESS, runtime_type="org.apache.flink.formats.avro.generated.Address"),
         "as_is", current=lambda version: _minor(version) >= 12),
]


def _cases() -> list[tuple[Spec, str]]:
    cases = []
    for spec in SPECS:
        parent = GOLDEN / spec.folder
        prefix = parent.name + "-"
        if not parent.parent.is_dir():
            continue
        for folder in sorted(parent.parent.iterdir()):
            rest = folder.name[len(prefix):]
            if folder.name.startswith(prefix) and rest.replace(".", "").isdigit():
                cases.append((spec, rest))
    return cases


CASES = _cases()


def _verdict(result: reference.SchemaCompatibility[Any]) -> str:
    if result.is_compatible_as_is():
        return "as_is"
    if result.is_compatible_with_reconfigured_serializer():
        return "reconfigured"
    if result.is_compatible_after_migration():
        return "after_migration"
    return "incompatible"


def _read(spec: Spec, version: str) -> tuple[bytes, bytes]:
    folder = GOLDEN / f"{spec.folder}-{version}"
    return (folder / "serializer-snapshot").read_bytes(), (folder / "test-data").read_bytes()


@pytest.mark.parametrize(
    ("spec", "version"), CASES, ids=[f"{Path(s.folder).name}-{v}" for s, v in CASES]
)
def test_flink_golden_folder(spec: Spec, version: str) -> None:
    snapshot_bytes, data = _read(spec, version)
    where = f"[{Path(spec.folder).name}-{version}]"

    spec.prior_classes()
    snapshot = reference.snapshot_from_bytes(snapshot_bytes)
    restored = snapshot.restore_serializer()
    source = DataInputView(data)
    value = restored.deserialize(source)
    assert source.available() == 0, f"got {source.available()} bytes left, should be 0 {where}"
    assert canonical(value) == canonical(spec.value), f"got {value!r}, should be {spec.value!r} {where}"
    again = restored.to_bytes(value)
    assert again == data, f"got {again.hex()}, should be {data.hex()} (the record re-serialized) {where}"
    if spec.current(version):
        written = reference.snapshot_to_bytes(snapshot, dialect="flink")
        assert written == snapshot_bytes, (
            f"got {written.hex()}, should be {snapshot_bytes.hex()} (the snapshot in the Flink "
            f"dialect) {where}"
        )
    elif spec.family == "Row":  # Flink's older forms, written again at their own outer version
        older = 3 if restored.supports_row_kind else 2
        written = reference.snapshot_to_bytes(snapshot.in_flink_outer_version(older), dialect="flink")
        assert written == snapshot_bytes, (
            f"got {written.hex()}, should be {snapshot_bytes.hex()} (the snapshot written at Flink's outer "
            f"version {older}) {where}"
        )

    spec.upgraded_classes()
    snapshot = reference.snapshot_from_bytes(snapshot_bytes)
    upgraded = spec.upgraded()
    result = reference.resolve_compatibility(upgraded, snapshot)
    want = spec.verdict(version) if callable(spec.verdict) else spec.verdict
    assert _verdict(result) == want, f"got {result!r}, should be {want} {where}"
    if want == "incompatible":
        return
    if want == "as_is":
        after = upgraded.from_bytes(data)
    elif want == "reconfigured":
        after = result.get_reconfigured_serializer().from_bytes(data)
    else:
        out = DataOutputView()
        upgraded.snapshot_configuration().migrate_state(
            snapshot.restore_serializer(), upgraded, DataInputView(data), out
        )
        after = upgraded.from_bytes(out.getvalue())
    expected = spec.value if spec.upgraded_value is None else spec.upgraded_value
    assert canonical(after) == canonical(expected), f"got {after!r}, should be {expected!r} after the upgrade {where}"


def test_flink_golden_counts() -> None:
    """Every applicable folder of the corpus is read: the counts by family (the README's
    fidelity section quotes them)."""
    counts = collections.Counter(spec.family for spec, _ in CASES)
    assert sum(counts.values()) == 333, f"got {sum(counts.values())} folders, should be 333"
    want = {
        "primitives + String": 80, "byte[]": 10, "List/ArrayList": 20, "Map": 10, "Nullable": 20,
        "Tuple": 10, "Row": 11, "Enum": 20, "POJO": 132, "Avro": 20,
    }
    got = {family: counts[family] for family in want}
    assert got == want, f"got {got}, should be {want} folders by family"
