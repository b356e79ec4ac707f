"""``pip install -e .`` alone runs the main job (``conformance certify --builtins``): the base
dependencies hold what the CLI, the library and the reference import, and nothing only tests,
linters or storage test servers need (those are the ``dev`` extra)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: Tools of the test suite, the linters and the S3 test server: never needed by the main job.
DEV_ONLY = {"pytest", "pytest-xdist", "pytest-benchmark", "moto", "mypy", "tox", "ruff", "jsonschema", "pyspark"}


def _project() -> dict:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;]", requirement, maxsplit=1)[0].lower()


def test_base_dependencies_leave_test_and_dev_tools_to_extras():
    project = _project()
    base = {_name(r) for r in project["dependencies"]}
    assert not base & DEV_ONLY, (
        f"got {sorted(base & DEV_ONLY)} in the base dependencies, should be in the dev extra: the main job "
        "(conformance certify --builtins) never imports them")
    extras = project["optional-dependencies"]
    dev = {_name(r) for r in extras["dev"]}
    assert {"pytest-xdist"} <= dev and any("pytest" in r for r in extras["dev"]), (
        f"got dev = {extras['dev']}, should still bring pytest and pytest-xdist for the test suite")
    assert {_name(r) for r in extras["pytest"]} == {"pytest"}, f"got {extras.get('pytest')}"


BLOCKED = '''
import sys

class Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("pytest", "_pytest", "xdist"):
            raise ImportError(f"{name} is not installed (blocked by the test)")

sys.meta_path.insert(0, Blocked())
import conformance.pytest_plugin  # the entry point pytest loads: importable without pytest
from conformance.cli import main

sys.exit(main(["certify", "--builtins", "--check", "roundtrip.bit_exact", "--examples", "2", "--seed", "1",
               "--jobs", "1"]))
'''


def test_the_main_job_runs_without_pytest():
    done = subprocess.run([sys.executable, "-c", BLOCKED], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, (
        f"got exit {done.returncode}, should be 0 with pytest not installed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    assert "37 of 37 subject(s) certified" in done.stdout, done.stdout[-2000:]
