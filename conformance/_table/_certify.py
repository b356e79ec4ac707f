"""``certify_table``: run the ``table`` family against a ``TableSubject`` (through the same
runner as every other subject: ``conformance.check_serializer`` and ``conformance.certify``
take a ``TableSubject`` too)."""

from __future__ import annotations

from typing import Any

from .._engine.report import CheckResult
from ._subject import TableSubject

__all__ = ["certify_table"]


def certify_table(subject: TableSubject, *, max_examples: int = 30, steps: int = 20,
                  checks: tuple[str, ...] | None = None, derandomize: bool = True,
                  seed: int | None = None, expected_failures: Any = None) -> list[CheckResult]:
    """Run every ``table.*`` check (or those in ``checks``) on ``subject``; one ``CheckResult``
    per check, in run order. A check whose prerequisite did not pass is skipped, saying why.
    The state machines run derandomized unless ``derandomize=False`` (then from ``seed``)."""
    from .._engine.config import RunConfig
    from .._engine.runner import Runner

    if not isinstance(subject, TableSubject):
        raise TypeError(f"certify_table needs a TableSubject, got {type(subject).__name__}")
    config = RunConfig(examples=max_examples, seed=seed, steps=steps, derandomize=derandomize,
                       checks=checks, expected_failures=expected_failures or {})
    runner = Runner(subject, config)
    try:
        return runner.run().results
    finally:
        runner.close()
