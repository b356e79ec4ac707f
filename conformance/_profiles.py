"""Hypothesis profiles ``dev``, ``ci`` and ``certify`` for the harness and the suite.

``ci`` is built on top of hypothesis' own ``ci`` profile when it has one (its keys are kept);
``certify`` is derandomized, and the harness always runs it with a recorded seed.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["register_profiles", "harness_settings", "PROFILES", "default_profile"]

PROFILES = ("dev", "ci", "certify")
_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def _existing(name: str) -> settings | None:
    try:
        return settings.get_profile(name)
    except Exception:
        return None


def register_profiles() -> None:
    """Register the three profiles (idempotent; never replaces hypothesis' own ``ci`` keys)."""
    if "conformance" in getattr(register_profiles, "_done", ""):
        return
    settings.register_profile("dev", max_examples=50, deadline=None)
    parent = _existing("ci")
    if parent is not None and getattr(parent, "_conformance", False) is False:
        settings.register_profile(
            "ci", parent=parent, deadline=None,
            suppress_health_check=list(parent.suppress_health_check) + [HealthCheck.too_slow],
        )
    else:
        settings.register_profile(
            "ci", max_examples=100, deadline=None, derandomize=True,
            suppress_health_check=[HealthCheck.too_slow],
        )
    settings.register_profile(
        "certify", max_examples=1000, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    register_profiles._done = "conformance"  # type: ignore[attr-defined]


def default_profile() -> str:
    return os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")


def harness_settings(profile: str | None = None, examples: int | None = None) -> settings:
    """Settings for the harness's properties: the profile, quiet, no example database (runs are
    reproduced by their recorded seed), one bug reported per check."""
    from hypothesis import Phase, Verbosity

    register_profiles()
    name = profile or default_profile()
    if name not in PROFILES:
        raise ValueError(f"unknown hypothesis profile {name!r}; use one of {', '.join(PROFILES)}")
    base = settings.get_profile(name)
    return settings(
        base,
        max_examples=examples if examples is not None else base.max_examples,
        database=None,
        deadline=None,
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        print_blob=False,
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        suppress_health_check=list(set(base.suppress_health_check) | set(_SUPPRESS)),
    )
