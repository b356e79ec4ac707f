"""One Spark standalone cluster (a Master and two Workers on loopback, ``standalone.py``) for
every cluster test in the run, stopped by its process ids at the end: teardown fails if any
of its processes (daemons, executors, Python workers) is still running then."""

from __future__ import annotations

import os
import sys

import pytest

# The Spark tests' history, oracle and reference migration (tests/spark/spark_support.py).
SPARK_TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spark")
if SPARK_TESTS not in sys.path:
    sys.path.insert(0, SPARK_TESTS)


@pytest.fixture(scope="session")
def standalone_cluster(tmp_path_factory):
    from standalone import StandaloneCluster

    from conformance.spark import java_version

    java_version()  # no Java: say so (as the Spark session would) before starting daemons
    cluster = StandaloneCluster(tmp_path_factory.mktemp("standalone")).start()
    try:
        yield cluster
    finally:
        cluster.stop()
    left = cluster.running_processes()
    assert not left, f"got processes {sorted(left)} of the cluster still running after stop, should be none"
