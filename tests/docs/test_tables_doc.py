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


def test_the_python_blocks_run_as_written_and_certify(capsys):
    namespace: dict = {"__name__": "__main__"}  # as ``python tables.py``: its main block runs too
    for index, block in enumerate(python_blocks()):
        namespace.pop("results", None)
        try:
            exec(compile(block, f"{DOC.name} python block {index}", "exec"), namespace)
        except BaseException as exc:  # SystemExit too: the example exits 1 when not certified
            pytest.fail(f"{DOC.name} python block {index} raised {type(exc).__name__}: {exc}; every "
                        "example must run as written (with its imports) and certify", pytrace=False)
        printed = capsys.readouterr().out
        if 'if __name__ == "__main__":' in block:
            results = namespace.get("results")
            assert results is not None, f"block {index} certifies under __main__, should keep its results in `results`"
            failed = [f"{r.id}: {r.message}" for r in results if r.status == "failed"]
            assert not failed, f"got failures {failed} in block {index}, the page's table should certify"
            passed = sum(r.status == "passed" for r in results)
            assert passed, f"got {[(r.id, r.status) for r in results]}"
            assert re.search(rf": CERTIFIED \({passed} passed, 0 failed, \d+ skipped\)", printed), (
                f"got output {printed!r} from block {index}, should print a summary line saying CERTIFIED "
                f"with its {passed} passed checks"
            )


def test_importing_the_example_certifies_nothing(capsys):
    """The CLI and pytest import the example module: that must only define its subjects."""
    namespace: dict = {"__name__": "mypackage.tables"}
    for index, block in enumerate(python_blocks()):
        exec(compile(block, f"{DOC.name} python block {index}", "exec"), namespace)
    printed = capsys.readouterr().out
    assert "results" not in namespace and not printed, (
        f"got results {namespace.get('results')!r} and output {printed!r} on import, should be none: a "
        "certification belongs under `if __name__ == \"__main__\":`"
    )
