"""Hypothesis profiles shared by the whole suite: ``dev`` (default), ``ci`` (hypothesis' own CI
profile keys kept, ours added on top), ``certify`` (many examples, derandomized). They are
defined once, in conformance/_profiles.py; HYPOTHESIS_PROFILE picks one."""

import os

import pytest
from hypothesis import settings

from conformance._engine.profiles import register_profiles

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_collection_modifyitems(config, items):
    """Spark tests share one session: keep them on one xdist worker (``--dist loadgroup``)."""
    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))


# -- the JVMs' temporary files ------------------------------------------------------------------
JAVA_TMP_PREFIX = "conformance-tests-java-"
_JAVA_TMP = pytest.StashKey()


def pytest_configure(config):
    """Flink's JVMs unpack jars (about 70 MB a JVM) and write MiniCluster directories into
    ``java.io.tmpdir``, and a halted JVM leaves them there: every JVM the session starts (the
    xdist workers inherit the variable) gets one directory, removed when the session ends, or
    by the next session when this one was killed."""
    if hasattr(config, "workerinput"):
        return
    import tempfile

    from reference.savepoint import new_owned_directory

    if " " in tempfile.gettempdir():
        return  # JAVA_TOOL_OPTIONS splits on spaces
    directory = new_owned_directory(JAVA_TMP_PREFIX)
    config.stash[_JAVA_TMP] = (directory, os.environ.get("JAVA_TOOL_OPTIONS"))
    os.environ["JAVA_TOOL_OPTIONS"] = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} -Djava.io.tmpdir={directory}".strip()


def pytest_unconfigure(config):
    import shutil

    stashed = config.stash.get(_JAVA_TMP, None)
    if stashed is None:
        return
    directory, before = stashed
    shutil.rmtree(directory, ignore_errors=True)
    if before is None:
        os.environ.pop("JAVA_TOOL_OPTIONS", None)
    else:
        os.environ["JAVA_TOOL_OPTIONS"] = before


# -- an S3-compatible server on loopback ------------------------------------------------------
def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_s3_server(log_dir):
    """moto's S3 server as a subprocess on a free loopback port, its log in ``log_dir``:
    (process, endpoint URL)."""
    import subprocess
    import sys
    import time
    import urllib.request

    port = _free_port()
    # faulthandler: SIGUSR1 makes the server print every thread's stack (to find a stuck request).
    code = ("import faulthandler, signal, sys; faulthandler.register(signal.SIGUSR1); "
            "from moto.server import main; main(sys.argv[1:])")
    process = subprocess.Popen([sys.executable, "-c", code, "-H", "127.0.0.1", "-p", str(port)],
                               stdout=subprocess.DEVNULL, stderr=open(os.path.join(  # noqa: SIM115
                                   log_dir, f"s3-server-{port}.log"), "wb"))
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(endpoint + "/", timeout=2):
                return process, endpoint
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError(f"got no answer from the S3 server at {endpoint} (exit {process.poll()}), "
                                   "should answer within 60 s") from None
            time.sleep(0.2)


def _stop(process):
    import signal
    import subprocess

    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=20)


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """The endpoint URL of an S3-compatible server (moto's, a separate process speaking S3
    over HTTP on 127.0.0.1), stopped by its pid at the end of the run."""
    pytest.importorskip("moto.server", reason="the S3 server comes from the dev extra: pip install 'moto[server]'")
    process, endpoint = _start_s3_server(str(tmp_path_factory.mktemp("s3-server")))
    try:
        yield endpoint
    finally:
        _stop(process)


@pytest.fixture
def s3_bucket(s3_server, monkeypatch):
    """``s3://<new bucket>`` on the loopback server, the standard AWS variables pointing at it
    (for this process and the subprocesses and Spark workers it starts)."""
    import urllib.request
    import uuid

    monkeypatch.setenv("AWS_ENDPOINT_URL", s3_server)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "loopback-key-id")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "loopback-secret-value")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    bucket = f"sp-{uuid.uuid4().hex[:12]}"
    with urllib.request.urlopen(urllib.request.Request(f"{s3_server}/{bucket}", method="PUT"), timeout=10) as answer:
        assert answer.status == 200, f"got HTTP {answer.status} creating bucket {bucket}, should be 200"
    return f"s3://{bucket}"
