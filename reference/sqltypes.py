"""Logical types of Flink's Table API (``org.apache.flink.table.types.logical``): what a
``RowDataSerializer`` writes, and their SQL text.

``LogicalType`` is one immutable value per type: its root (Flink's ``LogicalTypeRoot`` name),
its nullability, its parameters (length, precision, scale) and its children (a row's named
fields, an array's or multiset's element, a map's key and value). Build them with the
constructors below, named as Flink's classes (``RowType([("userId", IntType()), ...])``,
``VarCharType(VarCharType.MAX_LENGTH)`` for ``STRING``); ``str(t)`` is Flink's
``asSerializableString()`` (``ROW<`userId` INT, `deviceType` STRING>``), which Flink's
``LogicalTypeParser`` reads back.

The roots supported are the ones SQL state holds through ``RowDataSerializer``: BOOLEAN,
TINYINT, SMALLINT, INTEGER, BIGINT, FLOAT, DOUBLE, CHAR, VARCHAR, BINARY, VARBINARY, DECIMAL,
DATE, TIME_WITHOUT_TIME_ZONE, TIMESTAMP_WITHOUT_TIME_ZONE, TIMESTAMP_WITH_LOCAL_TIME_ZONE,
ARRAY, MAP, MULTISET and ROW. Intervals, RAW, structured and distinct types are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LogicalType", "ROOTS",
    "BooleanType", "TinyIntType", "SmallIntType", "IntType", "BigIntType", "FloatType", "DoubleType",
    "CharType", "VarCharType", "BinaryType", "VarBinaryType", "DecimalType", "DateType", "TimeType",
    "TimestampType", "LocalZonedTimestampType", "ArrayType", "MapType", "MultisetType", "RowType",
]

#: Flink's ``LogicalTypeRoot`` names of the supported roots.
ROOTS = (
    "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "FLOAT", "DOUBLE", "CHAR", "VARCHAR",
    "BINARY", "VARBINARY", "DECIMAL", "DATE", "TIME_WITHOUT_TIME_ZONE", "TIMESTAMP_WITHOUT_TIME_ZONE",
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "ARRAY", "MAP", "MULTISET", "ROW",
)
_MAX_LENGTH = 2147483647
_LENGTH_ROOTS = {"CHAR": 1, "VARCHAR": 1, "BINARY": 1, "VARBINARY": 1}
_PRECISION_ROOTS = {"TIME_WITHOUT_TIME_ZONE", "TIMESTAMP_WITHOUT_TIME_ZONE", "TIMESTAMP_WITH_LOCAL_TIME_ZONE"}
_TIMESTAMP_KINDS = {"TIMESTAMP_WITHOUT_TIME_ZONE": ("REGULAR", "ROWTIME"),
                    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": ("REGULAR", "ROWTIME", "PROCTIME")}
_SIMPLE_SQL = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INTEGER": "INT",
    "BIGINT": "BIGINT", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DATE": "DATE",
}


@dataclass(frozen=True)
class LogicalType:
    """One logical type; build it with the constructors of this module (``IntType()`` ...).

    ``fields`` (ROW) is a tuple of ``(name, type, description)``; ``children`` are the element
    (ARRAY, MULTISET), or key and value (MAP). ``kind`` is a timestamp's Flink
    ``TimestampKind``: ``REGULAR``, or the time attribute a SQL job's state row can hold
    (``ROWTIME``; ``PROCTIME`` for TIMESTAMP_LTZ only, e.g. a deduplication's ``PROCTIME()``
    column); as in Flink it is neither part of the type's equality (``equals`` and ``hashCode``
    leave it out, so a RowData snapshot with a PROCTIME column reads as is where the new job
    declares a plain timestamp) nor of its SQL text, only of its summary
    (``as_summary_string``: ``TIMESTAMP_LTZ(3) NOT NULL *PROCTIME*``)."""

    root: str
    nullable: bool = True
    length: int | None = None
    precision: int | None = None
    scale: int | None = None
    children: tuple[LogicalType, ...] = ()
    fields: tuple[tuple[str, LogicalType, str | None], ...] = ()
    kind: str = field(default="REGULAR", compare=False)

    def __post_init__(self) -> None:
        if self.root not in ROOTS:
            raise ValueError(f"LogicalType: unknown root {self.root!r}; supported roots: {', '.join(ROOTS)}")
        if type(self.nullable) is not bool:
            raise TypeError(f"LogicalType {self.root}: nullable must be a bool, got {self.nullable!r}")
        if self.root in _LENGTH_ROOTS:
            if type(self.length) is not int or not 1 <= self.length <= _MAX_LENGTH:
                raise ValueError(f"{self.root}: length must be 1..{_MAX_LENGTH}, got {self.length!r}")
        if self.root == "DECIMAL":
            if type(self.precision) is not int or not 1 <= self.precision <= 38:
                raise ValueError(f"DECIMAL: precision must be 1..38, got {self.precision!r}")
            if type(self.scale) is not int or not 0 <= self.scale <= self.precision:
                raise ValueError(f"DECIMAL({self.precision}, s): scale must be 0..{self.precision}, got {self.scale!r}")
        if self.root in _PRECISION_ROOTS:
            if type(self.precision) is not int or not 0 <= self.precision <= 9:
                raise ValueError(f"{self.root}: precision must be 0..9, got {self.precision!r}")
        kinds = _TIMESTAMP_KINDS.get(self.root, ("REGULAR",))
        if self.kind not in kinds:
            raise ValueError(f"{self.root}: kind must be one of {', '.join(kinds)}, got {self.kind!r}")
        arity = {"ARRAY": 1, "MULTISET": 1, "MAP": 2}.get(self.root, 0)
        if len(self.children) != arity or not all(isinstance(c, LogicalType) for c in self.children):
            raise ValueError(f"{self.root}: takes {arity} child types, got {self.children!r}")
        if self.root == "ROW":
            names = [f[0] for f in self.fields]
            if any(type(n) is not str or not n for n in names) or len(set(names)) != len(names):
                raise ValueError(f"ROW: field names must be unique non-empty strings, got {names}")
            if any(not isinstance(f[1], LogicalType) for f in self.fields):
                raise ValueError("ROW: every field's type must be a LogicalType")
        elif self.fields:
            raise ValueError(f"{self.root}: only ROW has fields")

    # -- shape ---------------------------------------------------------------------------
    @property
    def field_names(self) -> list[str]:
        return [f[0] for f in self.fields]

    @property
    def field_types(self) -> list[LogicalType]:
        return [f[1] for f in self.fields]

    def copy(self, nullable: bool) -> LogicalType:
        """This type with the given nullability (Flink's ``copy(boolean)``)."""
        return LogicalType(self.root, nullable, self.length, self.precision, self.scale, self.children, self.fields,
                           self.kind)

    def depth(self) -> int:
        """Levels of nesting (1 for a type without children)."""
        inner = [c.depth() for c in self.children] + [f[1].depth() for f in self.fields]
        return 1 + max(inner, default=0)

    # -- SQL text ------------------------------------------------------------------------
    def as_serializable_string(self) -> str:
        """Flink's ``asSerializableString()``: the text ``LogicalTypeParser`` reads back."""
        return self._text(summary=False)

    def as_summary_string(self) -> str:
        """Flink's ``asSummaryString()``, the text Flink's messages and plans show: the SQL text
        with ``STRING`` and ``BYTES`` for the longest VARCHAR and VARBINARY, ``TIMESTAMP_LTZ(p)``,
        a time attribute's kind after its type (``TIMESTAMP(3) *ROWTIME*``), and ``'...'`` for a
        field's description."""
        return self._text(summary=True)

    def _text(self, summary: bool) -> str:
        root = self.root
        if summary and root in ("VARCHAR", "VARBINARY") and self.length == _MAX_LENGTH:
            text = "STRING" if root == "VARCHAR" else "BYTES"
        elif root in _SIMPLE_SQL:
            text = _SIMPLE_SQL[root]
        elif root in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
            text = f"{root}({self.length})"
        elif root == "DECIMAL":
            text = f"DECIMAL({self.precision}, {self.scale})"
        elif root == "TIME_WITHOUT_TIME_ZONE":
            text = f"TIME({self.precision})"
        elif root == "TIMESTAMP_WITHOUT_TIME_ZONE":
            text = f"TIMESTAMP({self.precision})"
        elif root == "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
            text = f"TIMESTAMP_LTZ({self.precision})" if summary else f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"
        elif root in ("ARRAY", "MULTISET", "MAP"):
            text = f"{root}<{', '.join(child._text(summary) for child in self.children)}>"
        else:
            parts = []
            for name, ftype, description in self.fields:
                part = f"`{name.replace('`', '``')}` {ftype._text(summary)}"
                if description is not None:
                    part += " '...'" if summary else " '" + description.replace("'", "''") + "'"
                parts.append(part)
            text = f"ROW<{', '.join(parts)}>"
        text = text if self.nullable else text + " NOT NULL"
        return text + (f" *{self.kind}*" if summary and self.kind != "REGULAR" else "")

    def __str__(self) -> str:
        return self.as_serializable_string()


# -- constructors, named as Flink's classes ---------------------------------------------------
def BooleanType(nullable: bool = True) -> LogicalType:  # noqa: N802 - Flink's class names
    return LogicalType("BOOLEAN", nullable)


def TinyIntType(nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("TINYINT", nullable)


def SmallIntType(nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("SMALLINT", nullable)


def IntType(nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("INTEGER", nullable)


def BigIntType(nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("BIGINT", nullable)


def FloatType(nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("FLOAT", nullable)


def DoubleType(nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("DOUBLE", nullable)


def CharType(length: int = 1, nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("CHAR", nullable, length=length)


def VarCharType(length: int = _MAX_LENGTH, nullable: bool = True) -> LogicalType:  # noqa: N802
    """``VARCHAR(length)``; the default length is ``STRING``'s."""
    return LogicalType("VARCHAR", nullable, length=length)


VarCharType.MAX_LENGTH = _MAX_LENGTH  # type: ignore[attr-defined]


def BinaryType(length: int = 1, nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("BINARY", nullable, length=length)


def VarBinaryType(length: int = _MAX_LENGTH, nullable: bool = True) -> LogicalType:  # noqa: N802
    """``VARBINARY(length)``; the default length is ``BYTES``'s."""
    return LogicalType("VARBINARY", nullable, length=length)


def DecimalType(precision: int = 10, scale: int = 0, nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("DECIMAL", nullable, precision=precision, scale=scale)


def DateType(nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("DATE", nullable)


def TimeType(precision: int = 0, nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("TIME_WITHOUT_TIME_ZONE", nullable, precision=precision)


def TimestampType(precision: int = 6, nullable: bool = True, kind: str = "REGULAR") -> LogicalType:  # noqa: N802
    return LogicalType("TIMESTAMP_WITHOUT_TIME_ZONE", nullable, precision=precision, kind=kind)


def LocalZonedTimestampType(precision: int = 6, nullable: bool = True,  # noqa: N802
                            kind: str = "REGULAR") -> LogicalType:
    """``TIMESTAMP_LTZ``; ``kind="PROCTIME"`` is the type of a ``PROCTIME()`` column."""
    return LogicalType("TIMESTAMP_WITH_LOCAL_TIME_ZONE", nullable, precision=precision, kind=kind)


def ArrayType(element: LogicalType, nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("ARRAY", nullable, children=(element,))


def MultisetType(element: LogicalType, nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("MULTISET", nullable, children=(element,))


def MapType(key: LogicalType, value: LogicalType, nullable: bool = True) -> LogicalType:  # noqa: N802
    return LogicalType("MAP", nullable, children=(key, value))


def RowType(  # noqa: N802
    fields: Iterable[tuple[str, LogicalType] | tuple[str, LogicalType, str | None] | Sequence[Any]],
    nullable: bool = True,
) -> LogicalType:
    """``ROW<...>`` of ``(name, type)`` or ``(name, type, description)`` fields."""
    normalized = []
    for entry in fields:
        entry = tuple(entry)
        if len(entry) == 2:
            entry = (*entry, None)
        if len(entry) != 3:
            raise TypeError(f"RowType: give each field as (name, type) or (name, type, description), got {entry!r}")
        normalized.append(entry)
    return LogicalType("ROW", nullable, fields=tuple(normalized))  # type: ignore[arg-type]
