"""Hypothesis profiles shared by the whole suite.

``dev`` (default): quick; ``ci``: hypothesis' own CI profile keys are left alone, we only set
what we need on top; ``certify``: many examples, derandomized.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("dev", max_examples=50, deadline=None)
settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "certify", max_examples=1000, deadline=None, derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_collection_modifyitems(config, items):
    """Spark tests share one session: keep them on one xdist worker (``--dist loadgroup``)."""
    import pytest

    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))
