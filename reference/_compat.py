"""Schema compatibility results and Flink's rule for combining nested results."""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from ._serializer import TypeSerializer

T = TypeVar("T")

__all__ = ["Verdict", "SchemaCompatibility", "OuterSchemaCompatibility", "combine_nested",
           "reconfigured_or_as_is"]


class Verdict(str, enum.Enum):
    """The four kinds of schema compatibility result: the project's one vocabulary for them.

    A ``str`` enum: each member equals its string (``Verdict.INCOMPATIBLE == "incompatible"``),
    so JSON, golden files and user code that spell the strings keep working.
    """

    COMPATIBLE_AS_IS = "compatible_as_is"
    COMPATIBLE_AFTER_MIGRATION = "compatible_after_migration"
    COMPATIBLE_WITH_RECONFIGURED_SERIALIZER = "compatible_with_reconfigured_serializer"
    INCOMPATIBLE = "incompatible"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: object) -> Verdict:
        """The verdict spelled ``text`` (a member or its string); ValueError names the four."""
        try:
            return cls(text)
        except ValueError:
            raise ValueError(
                f"{text!r} is not a verdict; use one of {', '.join(v.value for v in cls)}"
            ) from None


AS_IS = Verdict.COMPATIBLE_AS_IS
AFTER_MIGRATION = Verdict.COMPATIBLE_AFTER_MIGRATION
RECONFIGURED = Verdict.COMPATIBLE_WITH_RECONFIGURED_SERIALIZER
INCOMPATIBLE = Verdict.INCOMPATIBLE
KINDS = tuple(Verdict)


class SchemaCompatibility(Generic[T]):
    """The verdict of a new serializer's snapshot on an old one (Flink's
    ``TypeSerializerSchemaCompatibility``).

    ``row_paths`` lists the FLIP-527 row fields whose evolution makes this result need
    migration; backends use it to apply the ``state.schema-evolution.enable`` policy and list
    snapshots use it to refuse row evolution inside lists.
    """

    __slots__ = ("kind", "reason", "_serializer", "row_paths")

    def __init__(
        self,
        kind: str,
        reason: str | None = None,
        serializer: TypeSerializer[T] | None = None,
        row_paths: Sequence[str] = (),
    ) -> None:
        self.kind = Verdict.parse(kind)
        self.reason = reason
        self._serializer = serializer
        self.row_paths = tuple(row_paths)

    @classmethod
    def compatible_as_is(cls) -> SchemaCompatibility[Any]:
        return cls(AS_IS)

    @classmethod
    def compatible_after_migration(cls, row_paths: Sequence[str] = ()) -> SchemaCompatibility[Any]:
        return cls(AFTER_MIGRATION, row_paths=row_paths)

    @classmethod
    def compatible_with_reconfigured_serializer(
        cls, serializer: TypeSerializer[Any]
    ) -> SchemaCompatibility[Any]:
        if serializer is None:
            raise ValueError("a reconfigured result needs the reconfigured serializer")
        return cls(RECONFIGURED, serializer=serializer)

    @classmethod
    def incompatible(cls, reason: str = "incompatible") -> SchemaCompatibility[Any]:
        return cls(INCOMPATIBLE, reason=reason)

    def is_compatible_as_is(self) -> bool:
        return self.kind == AS_IS

    def is_compatible_after_migration(self) -> bool:
        return self.kind == AFTER_MIGRATION

    def is_compatible_with_reconfigured_serializer(self) -> bool:
        return self.kind == RECONFIGURED

    def is_incompatible(self) -> bool:
        return self.kind == INCOMPATIBLE

    def get_reconfigured_serializer(self) -> TypeSerializer[T]:
        if self._serializer is None:
            raise ValueError(f"a {self.kind} result carries no reconfigured serializer")
        return self._serializer

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, SchemaCompatibility)
            and self.kind == other.kind
            and self._serializer == other._serializer
        )

    def __hash__(self) -> int:
        return hash(self.kind)

    def __repr__(self) -> str:
        extra = ""
        if self.reason:
            extra = f": {self.reason}"
        elif self._serializer is not None:
            extra = f": {self._serializer!r}"
        return f"<{self.kind.value}{extra}>"


class OuterSchemaCompatibility(enum.Enum):
    """Verdict on a composite's own (outer) configuration."""

    COMPATIBLE_AS_IS = AS_IS.value
    COMPATIBLE_AFTER_MIGRATION = AFTER_MIGRATION.value
    INCOMPATIBLE = INCOMPATIBLE.value


def combine_nested(
    outer: OuterSchemaCompatibility,
    nested: Sequence[SchemaCompatibility[Any]],
    new_nested_serializers: Sequence[TypeSerializer[Any]],
    rebuild: Callable[[list[TypeSerializer[Any]]], TypeSerializer[Any]],
    labels: Sequence[str] | None = None,
) -> SchemaCompatibility[Any]:
    """Flink's ``constructFinalSchemaCompatibilityResult``.

    Precedence INCOMPATIBLE > AFTER_MIGRATION > RECONFIGURED > AS_IS over the outer result and
    every nested one; a nested reconfiguration rebuilds the outer serializer around the
    reconfigured nested serializers (the others stay the new ones).
    """
    names = list(labels) if labels is not None else [f"nested serializer {i}" for i in range(len(nested))]
    if outer is OuterSchemaCompatibility.INCOMPATIBLE:
        return SchemaCompatibility.incompatible("the outer configuration is incompatible")
    broken = [f"{names[i]}: {r.reason}" for i, r in enumerate(nested) if r.is_incompatible()]
    if broken:
        return SchemaCompatibility.incompatible("; ".join(broken))
    if outer is OuterSchemaCompatibility.COMPATIBLE_AFTER_MIGRATION or any(
        r.is_compatible_after_migration() for r in nested
    ):
        paths = [p for r in nested for p in r.row_paths]
        return SchemaCompatibility.compatible_after_migration(row_paths=paths)
    return reconfigured_or_as_is(nested, new_nested_serializers, rebuild)


def reconfigured_or_as_is(
    nested: Sequence[SchemaCompatibility[Any]],
    new_nested_serializers: Sequence[TypeSerializer[Any]],
    rebuild: Callable[[list[TypeSerializer[Any]]], TypeSerializer[Any]],
) -> SchemaCompatibility[Any]:
    """The tail of the precedence rule, once nothing is incompatible or needs migration: a
    nested reconfiguration rebuilds the outer serializer around the reconfigured nested ones
    (the others stay the new ones); otherwise as is."""
    if any(r.is_compatible_with_reconfigured_serializer() for r in nested):
        serializers = [
            r.get_reconfigured_serializer() if r.is_compatible_with_reconfigured_serializer() else s
            for r, s in zip(nested, new_nested_serializers, strict=True)
        ]
        return SchemaCompatibility.compatible_with_reconfigured_serializer(rebuild(serializers))
    return SchemaCompatibility.compatible_as_is()
