"""The one registry of checks: ``@check(id, family, requires)`` and the order they run in.

A check is a function ``(ctx: CheckContext) -> None`` that raises ``Violation`` when the
serializer does something wrong, or ``NotApplicable`` when the subject gives it nothing to check.
Checks run in layers (api, roundtrip, snapshot, versioning, migration, backends, spark, table);
a check whose prerequisite failed is skipped with that reason instead of failing in cascade.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Check", "Violation", "NotApplicable", "check", "all_checks", "get_check", "load_families",
    "FAMILIES", "LAYERS", "selected",
]

#: Family names a result may carry (the JSON contract).
FAMILIES = ("roundtrip", "snapshot", "versioning", "migration", "backends", "spark", "table")
#: Run order by id prefix (``api.*`` checks belong to the roundtrip family but run first).
LAYERS = {"api": 0, "roundtrip": 1, "snapshot": 2, "versioning": 3, "migration": 4,
          "backends": 5, "spark": 6, "table": 7}


class Violation(Exception):
    """The serializer broke the contract: ``message`` says what it did wrong in one sentence,
    ``example`` shows the (shrunk) value it did it on."""

    def __init__(self, message: str, example: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


class NotApplicable(Exception):
    """The subject gives this check nothing to check (e.g. no evolutions); it is skipped."""


@dataclass(frozen=True)
class Check:
    id: str
    family: str
    requires: tuple[str, ...]
    func: Callable[[Any], None]
    order: int

    @property
    def layer(self) -> int:
        prefix = self.id.split(".", 1)[0]
        return LAYERS.get(prefix, LAYERS.get(self.family, len(LAYERS)))

    @property
    def doc(self) -> str:
        first_paragraph = (self.func.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(line.strip() for line in first_paragraph.splitlines())


_CHECKS: dict[str, Check] = {}


def check(id: str, family: str, requires: tuple[str, ...] | list[str] = ()) -> Callable[[Callable[[Any], None]], Callable[[Any], None]]:
    """Register ``func`` as the check ``id`` of ``family`` (run after every id in ``requires``)."""
    if family not in FAMILIES:
        raise ValueError(f"check {id!r}: family {family!r} is not one of {FAMILIES}")

    def register(func: Callable[[Any], None]) -> Callable[[Any], None]:
        previous = _CHECKS.get(id)
        if previous is not None and previous.func.__qualname__ != func.__qualname__:
            raise ValueError(f"check id {id!r} is registered twice ({previous.func.__qualname__})")
        order = previous.order if previous is not None else len(_CHECKS)
        _CHECKS[id] = Check(id, family, tuple(requires), func, order)
        return func

    return register


_LOADED: set[str] = set()


def load_families(spark: bool = False, table: bool = False) -> None:
    """Import the modules that register checks (Spark and table ones only on request)."""
    modules = ["conformance._checks"]
    if spark:
        modules.append("conformance._spark.checks")
    if table:
        modules.append("conformance._table.checks")
    for name in modules:
        if name not in _LOADED:
            importlib.import_module(name)
            _LOADED.add(name)


def all_checks(families: tuple[str, ...] | None = None) -> list[Check]:
    """Registered checks in run order (layer, then registration order)."""
    load_families()
    checks = sorted(_CHECKS.values(), key=lambda c: (c.layer, c.order))
    if families is not None:
        checks = [c for c in checks if c.family in families]
    return checks


def selected(checks: list[Check], select: Iterable[str] | None) -> list[Check]:
    """The checks whose id, family or id prefix (``api``) is in ``select`` (all if None)."""
    if select is None:
        return checks
    wanted = set(select)
    return [c for c in checks if c.id in wanted or c.family in wanted or c.id.split(".", 1)[0] in wanted]


def get_check(check_id: str) -> Check:
    load_families()
    try:
        return _CHECKS[check_id]
    except KeyError:
        raise KeyError(f"no check {check_id!r}; known: {', '.join(sorted(_CHECKS))}") from None
