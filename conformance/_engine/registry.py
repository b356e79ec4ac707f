"""The one registry of checks: ``@check(id, family, requires)`` and the order they run in.

A check is a function ``(ctx: CheckContext) -> None`` that raises ``Violation`` when the
serializer does something wrong, or ``NotApplicable`` when the subject gives it nothing to check.
Checks run in layers (api, roundtrip, snapshot, versioning, migration, backends, spark, table);
a check whose prerequisite failed is skipped with that reason instead of failing in cascade.

A family module may declare how its family is scheduled (``declare_family``): in a lane of its
own (``lane="spark"``: its checks need a Spark master and run in the process that owns the
Spark session), with work its first lane may do ahead (``prepare_ahead``) and the Spark lane
takes over (``take_ahead``). The scheduler asks ``family_declaration``, never a family by name.
Families imported only on request are listed in one table, ``conformance._checks.ON_REQUEST``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Check", "Violation", "NotApplicable", "UnknownCheckError", "check", "all_checks", "get_check",
    "load_families", "checks_for", "select", "known_ids", "FAMILIES", "LAYERS", "KINDS", "STATUSES",
    "LANES", "Family", "declare_family", "family_declaration",
]

#: What a check's result may be (the JSON contract): ``xfailed`` is a failure listed as expected.
STATUSES = ("passed", "failed", "skipped", "xfailed")
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


class UnknownCheckError(ValueError):
    """A selection or expected failure names no check this run can run (the message says
    what was meant, when something close exists)."""


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


#: The lanes a family may run in besides the first: ``spark``, the process that owns the
#: Spark session (the family's checks need a Spark master).
LANES = ("spark",)


@dataclass(frozen=True)
class Family:
    """How a family is scheduled (``declare_family``); a family nobody declared runs in the
    first lane with nothing ahead."""

    name: str
    lane: str | None = None
    #: ``prepare_ahead(ctx, directory)``, run in the first lane (another process) after the
    #: subject's other checks when any check of the family is selected: work written into
    #: ``directory`` (which outlives that runner) and described by what it returns (picklable;
    #: None when nothing was done).
    prepare_ahead: Callable[[Any, str], Any] | None = None
    #: ``take_ahead(runner, data)``, run in the family's lane before its checks, with what
    #: ``prepare_ahead`` returned.
    take_ahead: Callable[[Any, Any], None] | None = None


_DECLARED: dict[str, Family] = {}


def declare_family(name: str, *, lane: str | None = None, prepare_ahead: Callable[[Any, str], Any] | None = None,
                   take_ahead: Callable[[Any, Any], None] | None = None) -> Family:
    """Declare how family ``name`` is scheduled (called by the family's own module)."""
    if name not in FAMILIES:
        raise ValueError(f"family {name!r} is not one of {FAMILIES}")
    if lane is not None and lane not in LANES:
        raise ValueError(f"family {name!r}: lane {lane!r} is not one of {LANES}")
    if (prepare_ahead is None) != (take_ahead is None):
        raise ValueError(f"family {name!r}: give both prepare_ahead and take_ahead, or neither")
    declared = _DECLARED[name] = Family(name, lane, prepare_ahead, take_ahead)
    return declared


def family_declaration(name: str) -> Family:
    """How family ``name`` is scheduled (the default ``Family(name)`` when its module declared
    nothing or is not loaded)."""
    return _DECLARED.get(name) or Family(name)


_LOADED: set[str] = set()


def load_families(spark: bool = False, table: bool = False) -> None:
    """Import the modules that register checks: the built-in families always, those loaded only
    on request (``conformance._checks.ON_REQUEST``: family -> module) when asked."""
    checks = importlib.import_module("conformance._checks")
    requested = {"spark": spark, "table": table}
    for family, module in checks.ON_REQUEST.items():
        if requested.get(family) and module not in _LOADED:
            importlib.import_module(module)
            _LOADED.add(module)


#: What a subject of each kind is certified by: serializers by every family but ``table``,
#: tables by ``table`` alone.
KINDS = {"serializer": tuple(f for f in FAMILIES if f != "table"), "table": ("table",)}


def all_checks(families: tuple[str, ...] | None = None) -> list[Check]:
    """Registered checks in run order (layer, then registration order)."""
    load_families()
    checks = sorted(_CHECKS.values(), key=lambda c: (c.layer, c.order))
    if families is not None:
        checks = [c for c in checks if c.family in families]
    return checks


def checks_for(kind: str, *, spark: bool = False) -> list[Check]:
    """Every check a run over a subject of ``kind`` ("serializer" or "table") can select, in run
    order; the spark family only when ``spark`` (a master is given)."""
    if kind not in KINDS:
        raise ValueError(f"unknown subject kind {kind!r}; use one of {', '.join(KINDS)}")
    load_families(spark=spark or kind != "serializer", table=kind == "table")
    families = tuple(f for f in KINDS[kind] if spark or family_declaration(f).lane != "spark")
    return all_checks(families)


def _names(checks: Iterable[Check]) -> set[str]:
    names = set()
    for c in checks:
        names |= {c.id, c.family, c.id.split(".", 1)[0]}
    return names


def _suggest(word: str, names: Iterable[str]) -> str:
    import difflib

    close = difflib.get_close_matches(word, sorted(names), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def select(checks: list[Check], wanted: Iterable[str] | None, *, kind: str = "serializer") -> list[Check]:
    """The checks of ``checks`` whose id, family or id prefix (``api``) is in ``wanted`` (all
    when None), in run order: the one selection rule of the CLI, the library and pytest.

    A word that names nothing in ``checks`` raises ``UnknownCheckError`` (with the closest
    name, or saying that spark checks need a Spark master); so does a selection of nothing.
    """
    if wanted is None:
        picked = list(checks)
    else:
        words = [w.strip() for w in wanted]
        available = _names(checks)
        for word in words:
            if word not in available:
                raise UnknownCheckError(_unknown(word, available, kind))
        chosen = set(words)
        picked = [c for c in checks if c.id in chosen or c.family in chosen or c.id.split(".", 1)[0] in chosen]
    if not picked:
        raise UnknownCheckError(f"the selection {sorted(wanted or [])} leaves no check to run")
    return picked


def _unknown(word: str, available: set[str], kind: str) -> str:
    load_families(spark=True, table=True)
    if kind == "serializer" and word.split(".", 1)[0] == "spark" and word in _names(_CHECKS.values()):
        return f"check {word!r} is in the spark family, which runs only with a Spark master (--spark local[2])"
    if word in _names(_CHECKS.values()):
        return f"check {word!r} does not apply to a {kind} subject"
    return (f"no check {word!r}{_suggest(word, available)}; `conformance certify --list-checks` "
            "lists them")


def known_ids(checks: Iterable[Check], ids: Iterable[str], *, what: str = "expected failure",
              kind: str = "serializer") -> None:
    """Raise ``UnknownCheckError`` unless every id in ``ids`` is the id of one of ``checks``."""
    available = {c.id for c in checks}
    for check_id in ids:
        if check_id not in available:
            raise UnknownCheckError(f"{what} {check_id!r}: " + _unknown(check_id, available, kind))


def get_check(check_id: str) -> Check:
    load_families()
    try:
        return _CHECKS[check_id]
    except KeyError:
        raise KeyError(f"no check {check_id!r}; known: {', '.join(sorted(_CHECKS))}") from None
