"""docs/tables.md's Python examples, run as written: the page's ``python`` blocks are read from
the markdown and executed in order in one fresh namespace (as a reader pasting them into one file would), so
the page and this test cannot drift. Each block that certifies a table must certify it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "tables.md"
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def python_blocks() -> list[str]:
    return FENCE.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_python_examples():
    assert len(python_blocks()) >= 2, f"got {len(python_blocks())} python blocks in {DOC}, should be at least 2"


def test_the_python_blocks_run_as_written_and_certify():
    namespace: dict = {"__name__": "__main__"}  # as ``python tables.py``: its main block runs too
    for index, block in enumerate(python_blocks()):
        namespace.pop("results", None)
        try:
            exec(compile(block, f"{DOC.name} python block {index}", "exec"), namespace)
        except Exception as exc:
            pytest.fail(f"{DOC.name} python block {index} raised {type(exc).__name__}: {exc}; every "
                        "example must run as written (with its imports)", pytrace=False)
        if "certify_table(" in block:
            results = namespace.get("results")
            assert results is not None, f"block {index} calls certify_table, should keep its results in `results`"
            failed = [f"{r.id}: {r.message}" for r in results if r.status == "failed"]
            assert not failed, f"got failures {failed} in block {index}, the page's table should certify"
            assert any(r.status == "passed" for r in results), f"got {[(r.id, r.status) for r in results]}"
