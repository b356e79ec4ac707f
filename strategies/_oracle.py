"""The oracle: what a value of the old schema must become under the new one.

Migrations are small picklable objects (not closures) so that an evolution can ship to Spark
executors with its oracle. Each one is written from the evolution rules in docs/semantics.md,
never by calling the serializer under test.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

__all__ = [
    "Migration", "Identity", "NullableMigration", "ListMigration", "MapMigration",
    "TupleMigration", "RowMigration", "PojoMigration", "EnumMigration", "Composed",
    "IDENTITY",
]


class Migration:
    """``migration(old_value) -> new_value``."""

    def __call__(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def is_identity(self) -> bool:
        return False

    @property
    def is_lossy(self) -> bool:
        """Whether some part may lose information (a promotion such as long -> float, Avro
        bytes -> string for bytes that are not UTF-8, or a removed Avro enum symbol read as the
        default). Through such a step, a chain need not agree with the direct jump, in Java
        either."""
        return any(_lossy(part) for part in _parts(self))


def _parts(migration: Any) -> list[Any]:
    if not dataclasses.is_dataclass(migration):
        return []
    parts: list[Any] = []
    for f in dataclasses.fields(migration):
        value = getattr(migration, f.name)
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                stack.extend(item)
            else:
                parts.append(item)
    return parts


def _lossy(part: Any) -> bool:
    return bool(getattr(part, "is_lossy", False))


@dataclasses.dataclass(frozen=True)
class Identity(Migration):
    """Unchanged parts of a schema keep their values."""

    def __call__(self, value: Any) -> Any:
        return value

    @property
    def is_identity(self) -> bool:
        return True


IDENTITY = Identity()


@dataclasses.dataclass(frozen=True)
class NullableMigration(Migration):
    inner: Migration

    def __call__(self, value: Any) -> Any:
        return None if value is None else self.inner(value)


@dataclasses.dataclass(frozen=True)
class ListMigration(Migration):
    element: Migration

    def __call__(self, value: Any) -> Any:
        # Elements may be None where the element type holds it (String).
        return [None if v is None else self.element(v) for v in value]


@dataclasses.dataclass(frozen=True)
class MapMigration(Migration):
    key: Migration
    value: Migration

    def __call__(self, value: Any) -> Any:
        return {self.key(k): (None if v is None else self.value(v)) for k, v in value.items()}


@dataclasses.dataclass(frozen=True)
class TupleMigration(Migration):
    fields: tuple[Migration, ...]

    def __call__(self, value: Any) -> Any:
        return tuple(m(v) for m, v in zip(self.fields, value, strict=True))


@dataclasses.dataclass(frozen=True)
class RowMigration(Migration):
    """FLIP-527: new field i takes old field ``sources[i]`` (by name), or None when new."""

    sources: tuple[int | None, ...]
    fields: tuple[Migration, ...]

    def __call__(self, value: Any) -> Any:
        out = tuple(
            None if src is None else (None if value[src] is None else m(value[src]))
            for src, m in zip(self.sources, self.fields, strict=True)
        )
        kind = getattr(value, "kind", None)
        if type(value) is not tuple and kind is not None:
            # A row with a non-INSERT kind keeps its kind.
            return type(value)(out, kind=kind)
        return out


@dataclasses.dataclass(frozen=True)
class PojoMigration(Migration):
    """Flink POJO rules: fields kept by name, new fields take their default (else the given
    zero value), removed fields are dropped; the result is an instance of the new class."""

    new_class: Any
    #: per new field: (name, old field name or None, migration, value when new)
    fields: tuple[tuple[str, str | None, Migration, Any], ...]

    def __call__(self, value: Any) -> Any:
        if value is None:
            return None
        kwargs = {}
        for name, source, migration, missing in self.fields:
            if source is None:
                kwargs[name] = copy.deepcopy(missing)
            else:
                old = getattr(value, source)
                kwargs[name] = None if old is None else migration(old)
        return self.new_class(**kwargs)


@dataclasses.dataclass(frozen=True)
class EnumMigration(Migration):
    """A member keeps its name: it becomes the new class's member of that name."""

    new_class: Any

    def __call__(self, value: Any) -> Any:
        return self.new_class[value.name]


@dataclasses.dataclass(frozen=True)
class Composed(Migration):
    """Step-by-step migrations of an evolution chain, applied in order."""

    steps: tuple[Migration, ...]

    def __call__(self, value: Any) -> Any:
        for step in self.steps:
            value = step(value)
        return value
