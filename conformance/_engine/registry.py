"""The one registry of checks: ``@check(id, family, requires)``, the order they run in, and
the old ids they answer to.

A check is a function ``(ctx: CheckContext) -> None`` that raises ``Violation`` when the
serializer does something wrong, or ``NotApplicable`` when the subject gives it nothing to check.
A check's id is ``<family>.<name>``: its prefix is its family. Checks run in layers (api,
roundtrip, snapshot, versioning, migration, backends, spark, table; the api layer holds the two
roundtrip checks every other check builds on, registered with ``layer="api"``), in registration
order within a layer; a check whose prerequisite failed is skipped with that reason instead of
failing in cascade.

``RENAMED`` maps the ids of the previous release (whose prefix was not always the family:
``api.valid``, ``domain.refused``, ``upgrade.restore``, ...) to the current ones. Everywhere an
id is accepted (``select``, ``current_ids``/``current_keys`` for expected failures,
``get_check``, a report's ``[id]``) an old id, or an old prefix (``upgrade`` selects the five
``versioning.upgrade_*`` checks), is accepted until the next release, each use with a
``DeprecationWarning`` (the CLI prints the same sentence as one line on stderr); reports and
certificates carry the current ids.

A family module may declare how its family is scheduled (``declare_family``): in a lane of its
own (``lane="spark"``: its checks need a Spark master and run in the process that owns the
Spark session), with work its first lane may do ahead (``prepare_ahead``) and the Spark lane
takes over (``take_ahead``). The scheduler asks ``family_declaration``, never a family by name.
Families imported only on request are listed in one table, ``conformance._checks.ON_REQUEST``.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ConformanceError, did_you_mean

__all__ = [
    "Check", "Violation", "NotApplicable", "UnknownCheckError", "check", "all_checks", "get_check",
    "load_families", "checks_for", "select", "known_ids", "FAMILIES", "LAYERS", "KINDS", "STATUSES",
    "RENAMED", "current_id", "current_ids", "current_keys",
    "LANES", "Family", "declare_family", "family_declaration",
]

#: What a check's result may be (the JSON contract): ``xfailed`` is a failure listed as expected.
STATUSES = ("passed", "failed", "skipped", "xfailed")
#: Family names a result may carry (the JSON contract).
FAMILIES = ("roundtrip", "snapshot", "versioning", "migration", "backends", "spark", "table")
#: Run order by layer: a check's family, or ``api`` for the roundtrip checks registered with
#: ``layer="api"`` (they run first: every other check needs a usable serializer).
LAYERS = {"api": 0, "roundtrip": 1, "snapshot": 2, "versioning": 3, "migration": 4,
          "backends": 5, "spark": 6, "table": 7}

#: The ids of the previous release whose prefix was not their family, and what they are now.
#: Accepted (with a DeprecationWarning) until the next release; nothing else lists them.
RENAMED = {
    "api.valid": "roundtrip.api_valid",
    "api.create_instance": "roundtrip.create_instance",
    "domain.refused": "roundtrip.domain_refused",
    "domain.state_untouched": "backends.state_untouched",
    "upgrade.snapshot": "versioning.upgrade_snapshot",
    "upgrade.restore": "versioning.upgrade_restore",
    "upgrade.verdict": "versioning.upgrade_verdict",
    "upgrade.records": "versioning.upgrade_records",
    "upgrade.backends": "versioning.upgrade_backends",
}


class Violation(Exception):
    """The serializer broke the contract: ``message`` says what it did wrong in one sentence,
    ``example`` shows the (shrunk) value it did it on."""

    def __init__(self, message: str, example: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.example = example


class NotApplicable(Exception):
    """The subject gives this check nothing to check (e.g. no evolutions); it is skipped."""


class UnknownCheckError(ConformanceError, ValueError):
    """A selection or expected failure names no check this run can run (the message says
    what was meant, when something close exists)."""


#: A check: ``(ctx: runner.CheckContext) -> None`` (``Any`` here: the runner imports the registry,
#: never the other way round, not even for annotations).
CheckFunction = Callable[[Any], None]


@dataclass(frozen=True)
class Check:
    id: str
    family: str
    requires: tuple[str, ...]
    func: CheckFunction
    order: int
    layer_name: str = ""

    @property
    def layer(self) -> int:
        return LAYERS.get(self.layer_name or self.family, len(LAYERS))

    @property
    def former_ids(self) -> tuple[str, ...]:
        """The ids this check had in the previous release (accepted until the next one)."""
        return tuple(old for old, new in RENAMED.items() if new == self.id)

    @property
    def doc(self) -> str:
        first_paragraph = (self.func.__doc__ or "").strip().split("\n\n")[0]
        return " ".join(line.strip() for line in first_paragraph.splitlines())


_CHECKS: dict[str, Check] = {}


def check(id: str, family: str, requires: tuple[str, ...] | list[str] = (),
          *, layer: str = "") -> Callable[[CheckFunction], CheckFunction]:
    """Register ``func`` as the check ``id`` of ``family`` (run after every id in ``requires``;
    in ``layer`` when given, else in its family's layer). ``id`` starts with ``<family>.``."""
    if family not in FAMILIES:
        raise ValueError(f"check {id!r}: family {family!r} is not one of {FAMILIES}")
    if id.split(".", 1)[0] != family:
        raise ValueError(f"check {id!r} of family {family!r}: the id should start with {family + '.'!r}")
    if layer and layer not in LAYERS:
        raise ValueError(f"check {id!r}: layer {layer!r} is not one of {tuple(LAYERS)}")

    def register(func: CheckFunction) -> CheckFunction:
        previous = _CHECKS.get(id)
        if previous is not None and previous.func.__qualname__ != func.__qualname__:
            raise ValueError(f"check id {id!r} is registered twice ({previous.func.__qualname__})")
        order = previous.order if previous is not None else len(_CHECKS)
        _CHECKS[id] = Check(id, family, tuple(requires), func, order, layer)
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


def _renamed_sentence(old: str, new: Iterable[str]) -> str:
    now = ", ".join(repr(n) for n in new)
    if "." in old:
        return f"check id {old!r} is now {now}; the old id is accepted until the next release"
    return (f"check id prefix {old!r} is now {now}; the old prefix is accepted until the next "
            "release")


def _tell(sentence: str, report: Callable[[str], None] | None) -> None:
    if report is not None:
        report(sentence)
        return
    frame, level = sys._getframe(0), 1  # the warning points at the first caller outside conformance
    while frame.f_back is not None and frame.f_globals.get("__name__", "").split(".")[0] == "conformance":
        frame, level = frame.f_back, level + 1
    warnings.warn(sentence, DeprecationWarning, stacklevel=level)


def _renamed(word: str) -> list[str] | None:
    """The current ids an old id or old id prefix stands for (None for any other word)."""
    if word in RENAMED:
        return [RENAMED[word]]
    now = [new for old, new in RENAMED.items() if old.split(".", 1)[0] == word]
    return now or None


def current_id(check_id: str, *, report: Callable[[str], None] | None = None) -> str:
    """``check_id``, or the current id of an old one (told with a DeprecationWarning, or to
    ``report`` when given)."""
    new = RENAMED.get(check_id)
    if new is None:
        return check_id
    _tell(_renamed_sentence(check_id, [new]), report)
    return new


def current_ids(words: Iterable[str], *, report: Callable[[str], None] | None = None) -> list[str]:
    """Selection words (ids, families, id prefixes) with each old id or old id prefix replaced
    by the current ids it stands for (told with a DeprecationWarning, or to ``report``)."""
    found: list[str] = []
    for word in words:
        now = _renamed(word)
        if now is None:
            found.append(word)
        else:
            _tell(_renamed_sentence(word, now), report)
            found.extend(now)
    return found


def current_keys(by_id: Mapping[str, str], *, report: Callable[[str], None] | None = None) -> dict[str, str]:
    """Expected failures (id -> reason) with each old id replaced by its current one (told with
    a DeprecationWarning, or to ``report``)."""
    return {current_id(check_id, report=report): reason for check_id, reason in by_id.items()}


def _names(checks: Iterable[Check]) -> set[str]:
    names = set()
    for c in checks:
        names |= {c.id, c.family}
    return names


def select(checks: list[Check], wanted: Iterable[str] | None, *, kind: str = "serializer") -> list[Check]:
    """The checks of ``checks`` whose id or family (an id's prefix) is in ``wanted`` (all when
    None), in run order: the one selection rule of the CLI, the library and pytest. An old id
    or old id prefix (``RENAMED``) selects what it stands for now, with a DeprecationWarning.

    A word that names nothing in ``checks`` raises ``UnknownCheckError`` (with the closest
    name, or saying that spark checks need a Spark master); so does a selection of nothing.
    """
    if wanted is None:
        picked = list(checks)
    else:
        words = current_ids(w.strip() for w in wanted)
        available = _names(checks)
        for word in words:
            if word not in available:
                raise UnknownCheckError(_unknown(word, available, kind))
        chosen = set(words)
        picked = [c for c in checks if c.id in chosen or c.family in chosen]
    if not picked:
        raise UnknownCheckError(f"the selection {sorted(wanted or [])} leaves no check to run")
    return picked


def _unknown(word: str, available: set[str], kind: str) -> str:
    load_families(spark=True, table=True)
    if kind == "serializer" and word.split(".", 1)[0] == "spark" and word in _names(_CHECKS.values()):
        return f"check {word!r} is in the spark family, which runs only with a Spark master (--spark local[2])"
    if word in _names(_CHECKS.values()):
        return f"check {word!r} does not apply to a {kind} subject"
    command = "certify-table" if kind == "table" else "certify"
    return (f"no check {word!r}{did_you_mean(word, available)}; `conformance {command} --list-checks` "
            "lists them")


def known_ids(checks: Iterable[Check], ids: Iterable[str], *, what: str = "expected failure",
              kind: str = "serializer") -> None:
    """Raise ``UnknownCheckError`` unless every id in ``ids`` is the id of one of ``checks``."""
    available = {c.id for c in checks}
    for check_id in ids:
        if check_id not in available:
            raise UnknownCheckError(f"{what} {check_id!r}: " + _unknown(check_id, available, kind))


def get_check(check_id: str) -> Check:
    """The check ``check_id`` (an old id is accepted, with a DeprecationWarning)."""
    load_families()
    check_id = current_id(check_id)
    try:
        return _CHECKS[check_id]
    except KeyError:
        raise KeyError(f"no check {check_id!r}; known: {', '.join(sorted(_CHECKS))}") from None
