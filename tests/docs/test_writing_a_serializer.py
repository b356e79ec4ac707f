"""docs/writing-a-serializer.md, followed literally in an empty folder.

The page is walked top to bottom: a fenced block whose info string has ``file=PATH`` writes
that file (a later block for the same path replaces it, as the reader's editor would); a
``mistake=PATH`` block replaces, in that file, the method it shows, for the next ``console``
block only; each ``$ command`` line of a ``console`` block runs in the folder and must exit with
the block's ``exit=N`` (default 0). ``$ tox`` runs the commands of the page's tox.ini
``[testenv]`` (as ``tox config`` lists them) in this interpreter: tox itself would install
packages; the tox.ini's ``deps`` are checked to resolve from this checkout (``pip install
--dry-run --no-deps``, the checkout standing in for the reader's). The page's claims are checked too: the golden directory lands beside the subject's
module, each mistake is caught by the upgrade check the page shows, naming release 1.0.0, and
the certificate matches docs/certificate.schema.json.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "writing-a-serializer.md"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)


def blocks() -> list[tuple[str, dict[str, str], str]]:
    """(language, attributes, content) of every fenced block of the page, in order."""
    found = []
    for match in FENCE.finditer(DOC.read_text(encoding="utf-8")):
        attributes = dict(part.split("=", 1) for part in match.group(2).split() if "=" in part)
        found.append((match.group(1), attributes, match.group(3)))
    return found


def replace_method(source: str, method: str) -> str:
    """``source`` with the method whose ``def`` line opens ``method`` replaced by ``method``."""
    first = method.splitlines()[0]
    lines = source.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.rstrip() == first.rstrip()]
    assert len(starts) == 1, f"got {len(starts)} lines {first.strip()!r}, should be 1 in the file the mistake edits"
    start = starts[0]
    indent = len(first) - len(first.lstrip())
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # keep the blank lines between methods
    return "".join(lines[:start]) + method + "".join(lines[end:])


def tox_commands(folder: Path) -> list[str]:
    """The commands of the page's tox.ini, as tox itself reads them when tox is installed (so a
    tox.ini that tox rejects fails here), else as configparser reads them."""
    if importlib.util.find_spec("tox") is not None:
        done = subprocess.run([sys.executable, "-m", "tox", "config", "-e", "py3", "-k", "commands"],
                              cwd=folder, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"got exit {done.returncode}, should be 0 for `tox config`:\n{done.stderr}"
        text = done.stdout.split("commands =", 1)[1]
    else:
        config = configparser.ConfigParser()
        config.read(folder / "tox.ini", encoding="utf-8")
        return [line.strip() for line in config["testenv"]["commands"].splitlines() if line.strip()]
    commands = []
    for line in text.splitlines():
        if line.strip() and not line.startswith((" ", "\t")) and commands:
            break  # the next key of tox's listing
        if line.strip():
            commands.append(line.strip())
    return commands


#: The environment variable the page's tox.ini reads for the path of the reader's checkout.
CHECKOUT_VARIABLE = "STATE_CONFORMANCE"


def tox_deps(folder: Path, env: dict[str, str]) -> list[str]:
    """The ``deps`` of the page's tox.ini as tox resolves them under ``env`` (configparser with
    ``{env:NAME:default}`` substituted when tox is not installed)."""
    if importlib.util.find_spec("tox") is not None:
        done = subprocess.run([sys.executable, "-m", "tox", "config", "-e", "py3", "-k", "deps"],
                              cwd=folder, capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, f"got exit {done.returncode}, should be 0 for `tox config`:\n{done.stderr}"
        text = done.stdout.split("deps =", 1)[1]
        lines = []
        for line in text.splitlines():
            if line.strip() and not line.startswith((" ", "\t")) and lines:
                break
            if line.strip():
                lines.append(line.strip())
        return lines
    config = configparser.ConfigParser(interpolation=None)
    config.read(folder / "tox.ini", encoding="utf-8")
    raw = config["testenv"]["deps"]
    raw = re.sub(r"\{env:(\w+):?([^}]*)\}", lambda m: env.get(m.group(1), m.group(2)), raw)
    return [line.strip() for line in raw.splitlines() if line.strip()]


def test_the_tox_deps_install_from_a_checkout(tmp_path: Path) -> None:
    """The page's tox.ini names this project in a form pip installs from a checkout (the
    package is not on a package index), with the pytest extra the tox commands need."""
    folder = tmp_path / "orders-project"
    folder.mkdir()
    for _, attributes, content in blocks():
        if attributes.get("file") == "tox.ini":
            (folder / "tox.ini").write_text(content, encoding="utf-8")
    assert (folder / "tox.ini").is_file(), "got no tox.ini block on the page, should be one"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    env[CHECKOUT_VARIABLE] = str(ROOT)
    deps = tox_deps(folder, env)
    assert any(str(ROOT) in dep and "[pytest]" in dep for dep in deps), (
        f"got deps {deps}, should name the checkout given in ${CHECKOUT_VARIABLE} with its pytest extra"
    )
    for dep in deps:
        done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "-q",
                               *shlex.split(dep)], cwd=folder, capture_output=True, text=True, timeout=600, env=env)
        assert done.returncode == 0, (
            f"got exit {done.returncode}, should be 0 for `pip install --dry-run --no-deps {dep}` "
            f"(the tox.ini's deps):\n{done.stdout}{done.stderr}"
        )


def run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    # The reader's shell: none of this run's pytest or hypothesis settings leak into theirs.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    # The reader has the project installed; here the checkout under test stands in for it.
    env["PYTHONPATH"] = str(ROOT)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    argv = shlex.split(command)
    if argv[0] == "python":
        argv[0] = sys.executable
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=900)


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    folder = tmp_path / "orders-project"
    folder.mkdir()
    outputs: list[tuple[str, str]] = []
    pending: tuple[Path, str] | None = None  # (file, original text) while a mistake is applied
    last_output: str | None = None  # what the latest console block printed
    shown_outputs = 0
    for language, attributes, content in blocks():
        if "file" in attributes:
            path = folder / attributes["file"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
        elif "mistake" in attributes:
            path = folder / attributes["mistake"]
            original = path.read_text(encoding="utf-8")
            path.write_text(replace_method(original, content), encoding="utf-8")
            pending = (path, original)
        elif language == "console":
            expected = int(attributes.get("exit", "0"))
            for line in content.splitlines():
                if not line.startswith("$ "):
                    continue
                commands = tox_commands(folder) if line == "$ tox" else [line[2:]]
                for command in commands:
                    done = run(command, folder)
                    output = done.stdout + done.stderr
                    assert done.returncode == expected, (
                        f"got exit {done.returncode}, should be {expected} for `{command}` "
                        f"{'with a mistake applied ' if pending else ''}in the tutorial:\n{output}"
                    )
                    outputs.append((command, output))
            if pending is not None:
                if expected:
                    assert "versioning.upgrade_" in output and "1.0.0" in output, (
                        f"got {output!r}, should name an upgrade check and release 1.0.0 for the mistake"
                    )
                pending[0].write_text(pending[1], encoding="utf-8")
                pending = None
            last_output = output
        elif language == "text" and last_output is not None:
            # The failures and notes the page shows after a command are ones that command prints.
            for shown in re.findall(r"^\s*(FAILED \S+ \[\w+\]|note \S+: recorded release \S+)", content, re.M):
                assert shown in last_output, f"got {last_output!r}, should report {shown!r} as the page shows"
                shown_outputs += 1
    assert pending is None, "got a mistake block with no console block after it, should be followed by one"

    assert shown_outputs == 3, (
        f"got {shown_outputs} outputs checked, should be 3 (the recording and one failure per mistake)"
    )
    recorded = sorted(p.name for p in (folder / "tests" / "golden" / "order" / "1.0.0").iterdir())
    assert recorded == ["data.bin", "manifest.json", "snapshot.bin"], (
        f"got {recorded}, should be the three golden files beside the subject's module"
    )
    commands = [command for command, _ in outputs]
    assert any("--update-golden" in c for c in commands), f"got commands {commands}, should record a release"
    assert sum("--check versioning" in c for c in commands) == 2, (
        f"got commands {commands}, should show two mistakes caught by the versioning family"
    )

    jsonschema = pytest.importorskip("jsonschema")
    certificate = json.loads((folder / "certificate.json").read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "docs" / "certificate.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(certificate, schema)
    upgrade = {c["id"]: c["status"] for c in certificate["checks"] if c["id"].startswith("versioning.upgrade_")}
    assert upgrade.pop("versioning.upgrade_keys", None) == "skipped", f"got {upgrade}: the tutorial's Order is no key"
    assert upgrade and set(upgrade.values()) == {"passed"}, (
        f"got upgrade checks {upgrade}, should all pass for release 2.0.0 against 1.0.0"
    )
