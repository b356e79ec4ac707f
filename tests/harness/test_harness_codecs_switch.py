"""``roundtrip.generated_codecs`` asks two fresh interpreters what the documented switch does
(``REFERENCE_GENERATED_CODECS`` unset: codecs on; ``=0``: off). Each planted fault below is in a
copy of the ``reference`` package that both the certify process and its fresh interpreters
import first, since a fault patched into this process would not reach them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINE = '_enabled = os.environ.get(ENVIRONMENT_VARIABLE, "1").strip().lower() not in ("0", "false", "no", "off")'

FAULTS = {
    "the switch read backwards (codecs off unless the variable is 0)": (
        LINE.replace(" not in ", " in "), "REFERENCE_GENERATED_CODECS unset gave generated_codecs_enabled() 'False'"),
    "the switch never read (codecs on whatever the variable says)": (
        LINE.replace('os.environ.get(ENVIRONMENT_VARIABLE, "1")', 'os.environ.get("1", ENVIRONMENT_VARIABLE)'),
        "REFERENCE_GENERATED_CODECS=0 gave generated_codecs_enabled() 'True', should be False"),
}


def _certify(pythonpath: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "REFERENCE_GENERATED_CODECS"}
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "conformance", "certify", "conformance._builtins.subjects:row", "--seed", "1",
         "--examples", "5", "--check", "roundtrip.generated_codecs"],
        cwd=pythonpath or ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_the_intact_switch_passes():
    done = _certify(None)
    assert done.returncode == 0, f"got exit {done.returncode}:\n{done.stdout}{done.stderr}\nshould certify"


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_broken_switch_fails_generated_codecs(fault, tmp_path):
    line, said = FAULTS[fault]
    shutil.copytree(ROOT / "reference", tmp_path / "reference", ignore=shutil.ignore_patterns("__pycache__"))
    codegen = tmp_path / "reference" / "serializers" / "_codegen.py"
    source = codegen.read_text(encoding="utf-8")
    assert LINE in source, f"got no line {LINE!r} in _codegen.py, should read the switch there"
    codegen.write_text(source.replace(LINE, line), encoding="utf-8")
    done = _certify(tmp_path)
    assert done.returncode == 1, f"got exit {done.returncode}:\n{done.stdout}{done.stderr}\nshould fail [{fault}]"
    assert "FAILED roundtrip.generated_codecs" in done.stdout and said in done.stdout, (
        f"got:\n{done.stdout}\nshould fail roundtrip.generated_codecs saying {said!r} [{fault}]")
