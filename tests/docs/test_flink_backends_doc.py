"""docs/flink-savepoints.md's runnable examples ("State backends and Flink savepoints"), run as
written: the ``python`` blocks whose first line is ``# runs as written`` are read from the
markdown and executed in order in one fresh namespace, so the page and this test cannot drift.
The key groups the example asserts are Flink 2.3's (tests/flink/test_flink_key_groups.py checks
the rule against Flink for many more keys)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "flink-savepoints.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
MARK = "# runs as written"


def runnable_blocks() -> list[str]:
    return [b for b in FENCE.findall(DOC.read_text(encoding="utf-8")) if b.startswith(MARK)]


def test_the_page_has_runnable_examples():
    assert runnable_blocks(), f"{DOC} should have python blocks starting with {MARK!r}"


def test_the_runnable_blocks_run_as_written(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the example's mkdtemp() is the test's to remove
    namespace: dict = {"__name__": "__main__"}
    for index, block in enumerate(runnable_blocks()):
        try:
            exec(compile(block, f"{DOC.name} runnable block {index}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"{DOC.name} runnable block {index} raised {type(exc).__name__}: {exc}; every example "
                        "marked to run must run as written (with its imports)", pytrace=False)
