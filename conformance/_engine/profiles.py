"""Hypothesis profiles ``dev``, ``ci`` and ``certify`` for the harness and the project's suite.

``ci`` is built on hypothesis' own ``ci`` profile when it has one (its keys are kept, ours are
added on top); ``certify`` is derandomized, and the harness always runs with a recorded seed.
The harness uses these settings privately; ``register_profiles()`` publishes them under their
names (the project's tests/conftest.py does; a user's own profiles are never replaced by the
harness).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from .config import PROFILES, profile_name

__all__ = ["register_profiles", "profile_settings", "harness_settings", "PROFILES", "default_profile"]

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]


def _hypothesis_ci() -> settings | None:
    """Hypothesis' own ``ci`` profile (read before anyone registers ours over it)."""
    global _HYPOTHESIS_CI
    if _HYPOTHESIS_CI is None:
        try:
            _HYPOTHESIS_CI = settings.get_profile("ci")
        except Exception:
            _HYPOTHESIS_CI = False  # type: ignore[assignment]
    return _HYPOTHESIS_CI or None


_HYPOTHESIS_CI: settings | None = None
_hypothesis_ci()  # capture it at import, before register_profiles() can shadow the name


def profile_settings(name: str) -> settings:
    """The settings of one of our profiles, without registering anything."""
    if name == "dev":
        return settings(max_examples=50, deadline=None)
    if name == "ci":
        parent = _hypothesis_ci()
        if parent is not None:
            return settings(parent, deadline=None,
                            suppress_health_check=sorted(set(parent.suppress_health_check) | {HealthCheck.too_slow}, key=lambda h: h.value))
        return settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    if name == "certify":
        return settings(max_examples=1000, deadline=None, derandomize=True,
                        suppress_health_check=[HealthCheck.too_slow])
    profile_name(name)  # raises RunConfigError naming the profiles
    raise AssertionError(f"profile {name!r} is in PROFILES but has no settings here; add them")


def register_profiles() -> None:
    """Register ``dev``, ``ci`` and ``certify`` under their names (for the project's suite)."""
    for name in PROFILES:
        settings.register_profile(name, profile_settings(name))


def default_profile() -> str:
    """``HYPOTHESIS_PROFILE`` when it names one of ours, else ``ci`` under CI, else ``dev``."""
    env = os.environ.get("HYPOTHESIS_PROFILE")
    if env in PROFILES:
        return env
    return "ci" if os.environ.get("CI") else "dev"


def harness_settings(profile: str | None = None, examples: int | None = None) -> settings:
    """Settings for the harness's properties: the profile, quiet, no example database (runs are
    reproduced by their recorded seed), one bug reported per check."""
    from hypothesis import Phase, Verbosity

    base = profile_settings(profile or default_profile())
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
