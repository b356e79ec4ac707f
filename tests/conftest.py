"""Hypothesis profiles shared by the whole suite: ``dev`` (default), ``ci`` (hypothesis' own CI
profile keys kept, ours added on top), ``certify`` (many examples, derandomized). They are
defined once, in conformance/_profiles.py; HYPOTHESIS_PROFILE picks one."""

import os

from hypothesis import settings

from conformance._profiles import register_profiles

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_collection_modifyitems(config, items):
    """Spark tests share one session: keep them on one xdist worker (``--dist loadgroup``)."""
    import pytest

    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))
