"""versioning: the golden files of earlier releases are there, and the current code upgrades
them (``upgrade.*``, in ``_upgrade``).

A subject that declares a golden directory must have at least one release recorded there
(``--update-golden`` records the current one); a missing or empty directory is a failure,
never a silent skip, and so is a release named in ``Subject(releases=...)`` that was never
recorded.
"""

from __future__ import annotations

import json
from typing import Any

from .._engine.golden import GoldenRelease, current_release, record_release, recorded_releases
from .._engine.providers import Provider, provider
from .._engine.registry import NotApplicable, Violation, check

__all__ = ["RELEASES", "releases"]


def _collect_values(ctx: Any, count: int) -> list[Any]:
    drawn: list[Any] = []

    def body(value: Any) -> None:
        drawn.append(value)

    ctx.for_all(ctx.subject.values, body, max_examples=count)
    return drawn[:count]


def _read_releases(ctx: Any) -> list[GoldenRelease]:
    try:
        return recorded_releases(ctx.subject.golden)
    except (OSError, ValueError, json.JSONDecodeError) as exc:
        raise Violation(f"the golden directory {ctx.subject.golden} cannot be read ({exc}); "
                        "restore it from version control or record it again with --update-golden") from None


#: Every release recorded in the subject's golden directory, oldest first.
RELEASES: Provider[list[GoldenRelease]] = provider("golden_releases", _read_releases)


def releases(ctx: Any) -> list[GoldenRelease]:
    """The recorded releases (NotApplicable when the subject declares no golden directory)."""
    if ctx.subject.golden is None:
        raise NotApplicable(
            "no golden directory (Subject(golden='golden/<name>'); record one with "
            "conformance certify --update-golden)"
        )
    return ctx.get(RELEASES)


@check(id="versioning.golden", family="versioning", requires=("snapshot.exact_read", "roundtrip.bit_exact"))
def golden(ctx) -> None:  # type: ignore[no-untyped-def]
    """The declared golden directory holds the recorded releases (--update-golden records the
    current one), including every release Subject(releases=...) names."""
    directory = ctx.subject.golden
    if directory is None:
        raise NotApplicable(
            "no golden directory (Subject(golden='golden/<name>'); record one with "
            "conformance certify --update-golden)"
        )
    recorded_now = None
    if ctx.update_golden:
        serializer = ctx.serializer()
        release = current_release(ctx.subject, serializer)
        values = _collect_values(ctx, min(ctx.examples, 50))
        recorded_now = record_release(directory, release, serializer, values, {"seed": ctx.seed},
                                      force=ctx.force).describe()
        ctx.take(RELEASES)  # read again, with the new recording
    found = releases(ctx)
    if not found:
        raise Violation(f"no recorded release at {directory}; run with --update-golden to record the "
                        "current release (and keep the directory in version control)")
    missing = sorted(set(ctx.subject.releases) - {r.release for r in found})
    if missing:
        raise Violation(f"Subject(releases=...) names {missing}, but {directory} holds only "
                        f"{[r.release for r in found]}; record them or fix the names")
    if recorded_now is not None:
        ctx.note(recorded_now)
