"""``certify_table``: run the ``table`` family against a ``TableSubject``."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .._registry import NotApplicable, Violation, all_checks, load_families
from .._report import CheckResult
from ._runmachine import machine_settings
from ._subject import TableSubject

__all__ = ["certify_table", "TableCheckContext"]


@dataclass
class TableCheckContext:
    """What a table check sees: the subject and the state machines' hypothesis settings."""

    subject: TableSubject
    settings: Any

    def not_applicable(self, reason: str) -> None:
        raise NotApplicable(reason)


def certify_table(subject: TableSubject, *, max_examples: int = 30, steps: int = 20,
                  checks: tuple[str, ...] | None = None, derandomize: bool = True) -> list[CheckResult]:
    """Run every ``table.*`` check (or those in ``checks``) on ``subject``; one ``CheckResult``
    per check, in run order. A check whose prerequisite did not pass is skipped, saying why."""
    if not isinstance(subject, TableSubject):
        raise TypeError(f"certify_table needs a TableSubject, got {type(subject).__name__}")
    load_families(table=True)
    ctx = TableCheckContext(subject, machine_settings(max_examples, steps, derandomize))
    results: dict[str, CheckResult] = {}
    for chk in all_checks(families=("table",)):
        if checks is not None and chk.id not in checks:
            continue
        blocked = [r for r in chk.requires if r in results and results[r].status != "passed"]
        started = time.perf_counter()
        if blocked:
            result = CheckResult(chk.id, "table", "skipped",
                                 f"skipped: prerequisite {blocked[0]} did not pass")
        else:
            try:
                chk.func(ctx)
            except Violation as exc:
                example = exc.example if exc.example is None or isinstance(exc.example, str) else repr(exc.example)
                result = CheckResult(chk.id, "table", "failed", exc.message, example)
            except NotApplicable as exc:
                result = CheckResult(chk.id, "table", "skipped", str(exc))
            except Exception as exc:  # the subject blew up outside any operation
                result = CheckResult(chk.id, "table", "failed",
                                     f"{type(exc).__name__} while checking: {exc}")
            else:
                result = CheckResult(chk.id, "table", "passed", chk.doc)
        result.seconds = time.perf_counter() - started
        results[chk.id] = result
    return list(results.values())
