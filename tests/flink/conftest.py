"""The Java side of the Flink cross-checks: CrossCheck.java compiled once per session against
the flink-dist jar of apache-flink-libraries (the ``flink`` extra)."""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _flink_dist_jar() -> str | None:
    override = os.environ.get("FLINK_DIST_JAR")
    if override:
        return override if os.path.isfile(override) else None
    # find_spec locates the package without importing (and so without running) it.
    spec = importlib.util.find_spec("pyflink")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        jars = sorted(glob.glob(os.path.join(location, "lib", "flink-dist*.jar")))
        if jars:
            return jars[-1]
    return None


@pytest.fixture(scope="session")
def crosscheck(tmp_path_factory) -> list[str]:
    """The java command line running the compiled CrossCheck against flink-dist."""
    jar = _flink_dist_jar()
    if jar is None:
        pytest.skip(
            "Flink cross-check skipped: no flink-dist jar found (install the optional extra "
            "with `pip install -e .[flink]`, i.e. apache-flink-libraries 2.3, or set FLINK_DIST_JAR)"
        )
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("Flink cross-check skipped: needs a JDK (javac and java on PATH; Java 17 works)")
    classes = tmp_path_factory.mktemp("crosscheck-classes")
    compiled = subprocess.run(
        [javac, "-nowarn", "-cp", jar, "-d", str(classes), str(HERE / "CrossCheck.java")],
        capture_output=True, text=True, timeout=300,
    )
    assert compiled.returncode == 0, f"javac failed on CrossCheck.java: {compiled.stderr}"
    return [java, "-cp", os.pathsep.join([str(classes), jar]), "CrossCheck"]


