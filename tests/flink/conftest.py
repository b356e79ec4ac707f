"""The Java side of the Flink cross-checks: CrossCheck.java compiled once per session against
the flink-dist jar of apache-flink-libraries (the ``flink`` extra), and real savepoints written
and restored by SavepointJob.java (see savepoints.py)."""

from __future__ import annotations

import glob
import importlib.util
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import savepoints

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


def _jar_and_jdk() -> tuple[str, str, str]:
    """The flink-dist jar, javac and java; skips the test when one is missing."""
    jar = _flink_dist_jar()
    if jar is None:
        pytest.skip(
            "Flink cross-check skipped: no flink-dist jar found (install the optional extra "
            "with `pip install -e .[flink]`, i.e. apache-flink-libraries 2.3, or set FLINK_DIST_JAR)"
        )
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("Flink cross-check skipped: needs a JDK (javac and java on PATH; Java 17 works)")
    return jar, javac, java


@pytest.fixture(scope="session")
def crosscheck(tmp_path_factory) -> list[str]:
    """The java command line running the compiled CrossCheck against flink-dist."""
    jar, javac, java = _jar_and_jdk()
    classes = tmp_path_factory.mktemp("crosscheck-classes")
    compiled = subprocess.run(
        [javac, "-nowarn", "-cp", jar, "-d", str(classes), str(HERE / "CrossCheck.java")],
        capture_output=True, text=True, timeout=300,
    )
    assert compiled.returncode == 0, f"javac failed on CrossCheck.java: {compiled.stderr}"
    return [java, "-cp", os.pathsep.join([str(classes), jar]), "CrossCheck"]




@pytest.fixture(scope="session")
def flink_job() -> savepoints.FlinkJava:
    """SavepointJob compiled against flink-dist (cached across sessions, see savepoints.py)."""
    jar, javac, java = _jar_and_jdk()
    return savepoints.compile_job(jar, javac, java)


@pytest.fixture(scope="session")
def flink_savepoints(flink_job, tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """{case name: (savepoint directory, expected.json)} for every case of savepoints.CASES,
    written by Flink in one JVM run per session."""
    written, seconds = savepoints.write_savepoints(flink_job, tmp_path_factory.mktemp("flink-savepoints"))
    print(f"SavepointJob wrote {len(written)} savepoints in {seconds:.0f} s")
    return written


@pytest.fixture(scope="session")
def flink_restore(flink_job):
    """Restores savepoints with Flink: ``flink_restore(requests, classpath_first=())`` returns
    {request name: savepoints.RestoreResult}, one JVM run per call."""

    def restore(requests, classpath_first=()):
        results, _ = savepoints.restore_savepoints(flink_job, requests, classpath_first=classpath_first)
        return results

    return restore


@pytest.fixture(scope="session")
def key_groups_java(tmp_path_factory) -> list[str]:
    """The java command line running KeyGroups (Flink's key group of given keys) against
    flink-dist: ``[*command, INPUT, OUTPUT]``."""
    jar, javac, java = _jar_and_jdk()
    classes = tmp_path_factory.mktemp("key-groups-classes")
    compiled = subprocess.run(
        [javac, "-nowarn", "-encoding", "UTF-8", "-cp", jar, "-d", str(classes), str(HERE / "KeyGroups.java")],
        capture_output=True, text=True, timeout=300,
    )
    assert compiled.returncode == 0, f"javac failed on KeyGroups.java: {compiled.stderr}"
    return [java, "-cp", os.pathsep.join([str(classes), jar]), "KeyGroups"]


@pytest.fixture(scope="session")
def rowdata_java() -> list[str]:
    """``java -cp ...`` for RowDataCheck.java and RowDataJob.java, compiled once (cached like
    SavepointJob) against flink-dist and the Table runtime's jars beside it."""
    jar, javac, java = _jar_and_jdk()
    lib = os.path.dirname(jar)
    table = sorted(glob.glob(os.path.join(lib, "flink-table-runtime*.jar"))) + sorted(
        glob.glob(os.path.join(lib, "flink-table-api-java-uber*.jar")))
    if len(table) != 2:
        pytest.skip(f"RowData cross-check skipped: flink-table-runtime and flink-table-api-java-uber "
                    f"jars not found beside {jar}")
    classpath = os.pathsep.join([jar, *table])
    classes = savepoints.compile_cached([HERE / "RowDataCheck.java", HERE / "RowDataJob.java"], classpath, javac,
                                        "RowDataJob.class")
    return [java, "-Xmx1g", "-cp", os.pathsep.join([str(classes), classpath])]


def _write_cases(lines: list[str], directory: Path) -> Path:
    cases = directory / "cases.txt"
    cases.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return cases


@pytest.fixture(scope="session")
def rowdata_check(rowdata_java):
    """Runs RowDataCheck.java: ``rowdata_check(lines, directory)`` writes the cases
    (``TYPE<TAB>VALUE`` lines) for one JVM run and returns its output lines, one per case."""

    def run(lines: list[str], directory: Path) -> list[str]:
        output = directory / "flink.txt"
        ran = subprocess.run([*rowdata_java, "RowDataCheck", str(_write_cases(lines, directory)), str(output)],
                             capture_output=True, text=True, timeout=600)
        assert ran.returncode == 0, f"RowDataCheck failed: {ran.stderr}"
        result = output.read_text(encoding="utf-8").splitlines()
        assert len(result) == len(lines), f"RowDataCheck wrote {len(result)} lines for {len(lines)} cases"
        return result

    return run


@pytest.fixture(scope="session")
def rowdata_job(rowdata_java):
    """Runs RowDataJob.java: ``rowdata_job(lines, directory)`` stores the row of line i under key
    i in a MiniCluster job's value state and returns the canonical savepoint's directory."""

    def run(lines: list[str], directory: Path) -> Path:
        ran = subprocess.run([*rowdata_java, "RowDataJob", str(_write_cases(lines, directory)),
                              str(directory / "savepoints")], capture_output=True, text=True, timeout=900)
        assert ran.returncode == 0, f"RowDataJob failed: {ran.stderr[-3000:]}"
        uri = [line for line in ran.stdout.splitlines() if line.startswith("file:")][-1]
        return Path(uri[len("file:"):])

    return run


@pytest.fixture(scope="session")
def sql_job_java() -> list[str]:
    """``java -cp ... SqlJob`` (SqlJob.java: a Flink SQL job, see its header), compiled once
    (cached like SavepointJob) against flink-dist and the Table API, planner and runtime jars
    beside it (the planner loads flink-cep's classes too)."""
    jar, javac, java = _jar_and_jdk()
    lib = os.path.dirname(jar)
    names = ("flink-table-api-java-uber", "flink-table-runtime", "flink-table-planner-loader", "flink-cep")
    jars = [sorted(glob.glob(os.path.join(lib, f"{name}-*.jar"))) for name in names]
    if not all(jars):
        pytest.skip(f"Flink SQL job skipped: {', '.join(n for n, j in zip(names, jars, strict=True) if not j)} jar(s) not found "
                    f"beside {jar}")
    classpath = os.pathsep.join([jar, *(found[-1] for found in jars)])
    classes = savepoints.compile_cached([HERE / "SqlJob.java"], classpath, javac, "SqlJob.class")
    return [java, "-Xmx1g", "-cp", os.pathsep.join([str(classes), classpath]), "SqlJob"]
