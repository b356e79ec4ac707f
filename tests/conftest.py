"""Hypothesis profiles shared by the whole suite: ``dev`` (default), ``ci`` (hypothesis' own CI
profile keys kept, ours added on top), ``certify`` (many examples, derandomized). They are
defined once, in conformance/_profiles.py; HYPOTHESIS_PROFILE picks one."""

import os

from hypothesis import settings

from conformance._engine.profiles import register_profiles

register_profiles()
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def pytest_collection_modifyitems(config, items):
    """Spark tests share one session: keep them on one xdist worker (``--dist loadgroup``)."""
    import pytest

    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))


# -- an S3-compatible server on loopback ------------------------------------------------------
def _free_port():
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start_s3_server():
    """moto's S3 server as a subprocess on a free loopback port: (process, endpoint URL)."""
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
                                   os.environ.get("TMPDIR", "/tmp"), f"s3-server-{port}.log"), "wb"))
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


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def s3_server():
    """The endpoint URL of an S3-compatible server (moto's, a separate process speaking S3
    over HTTP on 127.0.0.1), stopped by its pid at the end of the run."""
    pytest.importorskip("moto.server", reason="the S3 server comes from the dev extra: pip install 'moto[server]'")
    process, endpoint = _start_s3_server()
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
