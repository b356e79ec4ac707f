"""One Spark session (local[2]) for every Spark test in the run."""

import os

import pytest


@pytest.fixture(scope="session")
def spark():
    from conformance.spark import get_session

    session = get_session("local[2]")
    # Executors unpickle the test serializers by module name: ship the helper module to them.
    session.sparkContext.addPyFile(os.path.join(os.path.dirname(__file__), "spark_support.py"))
    return session
