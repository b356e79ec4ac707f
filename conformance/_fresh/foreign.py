"""What makes the fresh process foreign: the differences a TaskManager on another machine has.

A savepoint written on one machine is restored on another, whose process differs in ways a
serializer must not depend on. The fresh-process restore runs with all of them at once:

- **time zone**: ``TZ`` is a POSIX rule (no time-zone database needed) with daylight saving time
  and an offset that is not a whole hour (Newfoundland, UTC-3:30 / -2:30; or South Australia,
  UTC+9:30 / +10:30, when the writer already runs in the first);
- **locale**: ``LC_ALL`` is a locale other than the writer's, one with a decimal comma where the
  machine has one (``de_DE.UTF-8``, ``fr_FR.UTF-8``), else ``C`` (or ``C.UTF-8``);
- **hash seed**: ``PYTHONHASHSEED`` differs from the writer's (string and bytes hashes, and so
  the iteration order of sets and dicts built from them, change).

When the restored values differ, ``DIAGNOSES`` are tried one at a time (each in a new
interpreter) to say which difference mattered: the hash seed alone first (a new interpreter
always has another hash seed unless the writer fixed one), then the time zone, then the locale.
"""

from __future__ import annotations

import locale
import os
import time
from collections.abc import Iterable, Mapping

__all__ = ["DIFFERENCES", "DIAGNOSES", "foreign_environment", "apply_locale", "describe"]

DIFFERENCES = ("hash seed", "time zone", "locale")
#: The variants that tell which difference mattered, in the order they are tried.
DIAGNOSES = (("hash seed",), ("hash seed", "time zone"), ("hash seed", "locale"))

_ZONES = ("NST+3:30NDT,M3.2.0,M11.1.0", "ACST-9:30ACDT,M10.1.0,M4.1.0/3")
_LOCALES = ("de_DE.UTF-8", "fr_FR.UTF-8", "C", "C.UTF-8")
#: Where the child's locale candidates travel (the child tries them in order).
LOCALE_CANDIDATES = "CONFORMANCE_FOREIGN_LOCALES"


def foreign_environment(env: Mapping[str, str], differences: Iterable[str] = DIFFERENCES) -> dict[str, str]:
    """``env`` (the writer's environment) with each of ``differences`` made foreign."""
    differences = set(differences)
    unknown = differences - set(DIFFERENCES)
    if unknown:
        raise ValueError(f"unknown process differences {sorted(unknown)}; use some of {DIFFERENCES}")
    out = dict(env)
    if "time zone" in differences:
        out["TZ"] = _ZONES[1] if env.get("TZ") == _ZONES[0] else _ZONES[0]
    if "locale" in differences:
        writer = _writer_locale()
        out[LOCALE_CANDIDATES] = ":".join(name for name in _LOCALES if name != writer)
    if "hash seed" in differences:
        seed = env.get("PYTHONHASHSEED", "")
        out["PYTHONHASHSEED"] = str((int(seed) + 1) % 4294967296 or 1) if seed.isdigit() else "4242"
    return out


def _writer_locale() -> str:
    name = locale.setlocale(locale.LC_CTYPE)
    return name or "C"


def apply_locale(env: Mapping[str, str]) -> str | None:
    """In the restoring process: take the time zone of ``env`` and the first of its locale
    candidates this machine has. Returns the locale taken (None: the writer's kept)."""
    if hasattr(time, "tzset"):
        time.tzset()
    for name in filter(None, env.get(LOCALE_CANDIDATES, "").split(":")):
        try:
            locale.setlocale(locale.LC_ALL, name)
        except locale.Error:
            continue
        os.environ["LC_ALL"] = name
        return name
    return None


def describe(env: Mapping[str, str], taken_locale: str | None) -> dict[str, str]:
    """The foreign process's differences as the verdict names them."""
    return {"time zone": env.get("TZ", "(the writer's)"), "locale": taken_locale or "(the writer's)",
            "hash seed": env.get("PYTHONHASHSEED", "(random)")}
