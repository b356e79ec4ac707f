"""``RunConfig``: what a certification run is asked to do, in one value shared by the library
(``check_serializer``, ``certify``, ``Runner``), the CLI and the pytest plugin.

>>> from conformance import RunConfig, check_serializer
>>> report = check_serializer(subject, RunConfig(examples=200, seed=7, backends=("heap",)))

A ``RunConfig`` is frozen and validated when it is made: a value out of range raises
``RunConfigError`` saying which field, what it got and what to give instead. The backend and
profile names are checked here and nowhere else (``BACKENDS``, ``PROFILES``); the CLI and the
plugin parse their options with ``backend_names`` and ``profile_name``.

The keywords the library took before ``RunConfig`` (``check_serializer(subject, examples=5)``)
still work for one release: ``from_keywords`` turns them into a ``RunConfig`` and warns
(``DeprecationWarning``) naming the field to use.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConformanceError, did_you_mean
from .registry import current_ids, current_keys

__all__ = ["RunConfig", "RunConfigError", "BACKENDS", "DEFAULT_BACKENDS", "PROFILES",
           "backend_names", "profile_name", "from_keywords"]

#: The state backends the ``backends`` family runs histories on (all of them by default).
BACKENDS = ("heap", "bytes")
DEFAULT_BACKENDS = BACKENDS
#: The harness's hypothesis profiles (``conformance._engine.profiles`` defines their settings).
PROFILES = ("dev", "ci", "certify")
#: Check options that are fields of their own (``options={"steps": 4}`` -> ``steps=4``).
_OWN_FIELDS = ("spark_entries", "steps")


class RunConfigError(ConformanceError, ValueError):
    """A run configuration value out of range (the message names the field and what to give)."""


def profile_name(name: Any) -> str:
    """``name`` when it is one of ``PROFILES``; else ``RunConfigError`` listing them."""
    if name not in PROFILES:
        raise RunConfigError(f"unknown hypothesis profile {name!r}{did_you_mean(str(name), PROFILES)}; "
                             f"use one of {', '.join(PROFILES)}")
    return str(name)


def backend_names(given: str | Iterable[str]) -> tuple[str, ...]:
    """The backends named by ``given``: a sequence of names or one comma-separated text
    (``"heap,bytes"``); each must be one of ``BACKENDS``, at least one given."""
    if isinstance(given, str):
        names = tuple(p.strip() for p in given.split(",") if p.strip())
    elif isinstance(given, Iterable):
        names = tuple(given)
    else:
        raise RunConfigError(f"backends {given!r} is a {type(given).__name__}; give names such as "
                             f"{BACKENDS!r} or 'heap,bytes'")
    bad = [n for n in names if n not in BACKENDS]
    if bad:
        hint = did_you_mean(str(bad[0]), BACKENDS)
        raise RunConfigError(f"unknown backend(s) {', '.join(map(repr, bad))}{hint}; use "
                             f"{' and/or '.join(BACKENDS)} (e.g. 'heap,bytes')")
    if not names:
        raise RunConfigError(f"no backend given; use {' and/or '.join(BACKENDS)} (e.g. 'heap,bytes')")
    return names


def _whole(name: str, value: Any, what: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise RunConfigError(f"RunConfig({name}={value!r}): should be a whole number >= 1 ({what}), "
                             "or None for the default")


def _flag(name: str, value: Any, optional: bool = False) -> None:
    if not isinstance(value, bool) and not (optional and value is None):
        raise RunConfigError(f"RunConfig({name}={value!r}): should be True or False"
                             + (" (None: the profile decides)" if optional else ""))


@dataclass(frozen=True)
class RunConfig:
    """What a certification run is asked to do (see the module docstring).

    ``examples``: hypothesis examples per check (a table: state machine runs per check); None
    for the profile's. ``seed``: the run's seed (None: random, recorded in the report).
    ``profile``: ``dev``, ``ci`` or ``certify`` (None: ``HYPOTHESIS_PROFILE``, else ``ci`` under
    CI, else ``dev``). ``backends``: the state backends of the ``backends`` family. ``spark``:
    the Spark master the ``spark`` family runs on (``local[*]``, ``spark://host:port``), or
    ``"off"``. ``spark_entries``: entries in the spark family's history (None: 100000 or
    ``$CONFORMANCE_SPARK_ENTRIES``). ``steps``: a table's operations per state machine run
    (None: 20). ``jobs``: subjects certified in parallel by ``certify`` (None: 2 when there are
    several). ``strict``: fail a subject when a family it declares data for was skipped (None:
    on in the ``certify`` profile). ``exitfirst``: stop at the first failed check.
    ``derandomize``: run a table's state machines derandomized instead of from the seed.
    ``update_golden``: record the current release into the subject's golden directory (a release
    already recorded with other bytes raises ``GoldenOverwriteError``).
    ``force``: with ``update_golden``, re-record such a release, replacing its files.
    ``checks``: the check ids, families or id prefixes to run (None: all that apply).
    ``expected_failures``: check id -> reason, for checks known to fail (they are ``xfailed``).
    ``options``: further values handed to the checks as ``ctx.options``.
    ``allow_all_skipped``: certify a run in which no selected check passed (all skipped, e.g.
    ``checks=("versioning",)`` before any golden file exists); by default such a run certifies
    nothing and is not certified (``Report.certified``).
    """

    examples: int | None = None
    seed: int | None = None
    profile: str | None = None
    backends: tuple[str, ...] = DEFAULT_BACKENDS
    spark: str = "off"
    spark_entries: int | None = None
    steps: int | None = None
    jobs: int | None = None
    strict: bool | None = None
    exitfirst: bool = False
    derandomize: bool = False
    update_golden: bool = False
    force: bool = False
    checks: tuple[str, ...] | None = None
    expected_failures: Mapping[str, str] = field(default_factory=dict, hash=False)
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)
    allow_all_skipped: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        _whole("examples", self.examples, "hypothesis examples per check")
        _whole("spark_entries", self.spark_entries, "entries in the spark family's history")
        _whole("steps", self.steps, "a table's operations per state machine run")
        _whole("jobs", self.jobs, "subjects certified in parallel")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise RunConfigError(f"RunConfig(seed={self.seed!r}): should be an int, or None for a random "
                                 "seed (recorded in the report)")
        if self.profile is not None:
            try:
                profile_name(self.profile)
            except RunConfigError as exc:
                raise RunConfigError(f"RunConfig(profile={self.profile!r}): {exc}") from None
        try:
            set_(self, "backends", backend_names(self.backends))
        except RunConfigError as exc:
            raise RunConfigError(f"RunConfig(backends={self.backends!r}): {exc}") from None
        spark = "off" if self.spark in (None, "") else self.spark
        if not isinstance(spark, str):
            raise RunConfigError(f"RunConfig(spark={self.spark!r}): should be a Spark master such as "
                                 "'local[*]' or 'spark://host:7077', or 'off'")
        set_(self, "spark", spark)
        _flag("strict", self.strict, optional=True)
        for name in ("exitfirst", "derandomize", "update_golden", "force", "allow_all_skipped"):
            _flag(name, getattr(self, name))
        if self.checks is not None:
            if isinstance(self.checks, str) or not isinstance(self.checks, Iterable):
                raise RunConfigError(f"RunConfig(checks={self.checks!r}): should be a sequence of check ids, "
                                     f"families or id prefixes, e.g. checks=({self.checks!r},)")
            set_(self, "checks", tuple(self.checks))
            bad = [c for c in self.checks if not isinstance(c, str)]
            if bad:
                raise RunConfigError(f"RunConfig(checks=...): {bad[0]!r} is not a check id, family or prefix "
                                     "(a str)")
            set_(self, "checks", tuple(current_ids(self.checks)))  # old ids: told once, here
        expected = self.expected_failures
        if not isinstance(expected, Mapping) or not all(isinstance(k, str) for k in expected):
            raise RunConfigError(f"RunConfig(expected_failures={expected!r}): should map check ids to the "
                                 "reason each is expected to fail, e.g. {'snapshot.no_pickle': 'pickles by design'}")
        set_(self, "expected_failures", current_keys({k: str(v) for k, v in expected.items()}))
        if not isinstance(self.options, Mapping):
            raise RunConfigError(f"RunConfig(options={self.options!r}): should be a mapping of option names "
                                 "to values")
        own = [k for k in _OWN_FIELDS if k in self.options]
        if own:
            raise RunConfigError(f"RunConfig(options={{{own[0]!r}: ...}}): {own[0]} is a field of its own; "
                                 f"give RunConfig({own[0]}={self.options[own[0]]!r})")
        set_(self, "options", dict(self.options))

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` applied (validated like a new one)."""
        return dataclasses.replace(self, **changes)


_FIELDS = tuple(f.name for f in dataclasses.fields(RunConfig))


def from_keywords(config: RunConfig | None, keywords: Mapping[str, Any], where: str) -> RunConfig:
    """The one shim for the keywords taken before ``RunConfig`` (deprecated, removed in the next
    release): ``config`` when no keyword is given, else a ``RunConfig`` of the keywords (None
    meaning the default, ``options={"steps": N}`` becoming ``steps=N``), with a
    ``DeprecationWarning`` naming the fields to use. ``where`` is the caller's name."""
    if config is not None and not isinstance(config, RunConfig):
        raise TypeError(f"{where}: config should be a conformance.RunConfig, got {type(config).__name__}")
    if not keywords:
        return config if config is not None else RunConfig()
    unknown = [k for k in keywords if k not in _FIELDS]
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}"
                        f"{did_you_mean(unknown[0], _FIELDS)}")
    if config is not None:
        raise TypeError(f"{where}(): give config=RunConfig(...) or the deprecated keywords "
                        f"{', '.join(sorted(keywords))}, not both")
    given = {k: v for k, v in keywords.items() if v is not None}
    options = dict(given.pop("options", None) or {})
    for name in _OWN_FIELDS:
        if name in options:
            given[name] = options.pop(name)
    if options:
        given["options"] = options
    fields = ", ".join(f"{name}=..." for name in given) or ", ".join(f"{name}=..." for name in keywords)
    warnings.warn(f"{where}({', '.join(f'{k}=...' for k in keywords)}): these keywords are deprecated and go "
                  f"in the next release; pass a conformance.RunConfig({fields}) instead",
                  DeprecationWarning, stacklevel=3)
    return RunConfig(**given)
