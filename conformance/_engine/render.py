"""How results read: the one renderer behind the CLI's terminal output, ``Report.summary()``
and the pytest plugin's summary.

A subject reads as one verdict line with its counts, then one line per failure (check id,
family, the sentence, the shrunk example or the golden file's record), per expected failure, and per skip with its
reason; a run of several subjects ends with a table of families per subject.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .golden import RECORDED_EXAMPLE
from .registry import STATUSES

if TYPE_CHECKING:
    from .report import CheckResult, Report

__all__ = ["render_result", "render_report", "render_results", "render_summary", "verdict_line"]


def render_result(result: CheckResult) -> str:
    """``id [family] status: message`` and, for a failure, its smallest example."""
    text = f"{result.id} [{result.family}] {result.status}"
    if result.message:
        text += f": {result.message}"
    if result.example is not None and result.status in ("failed", "xfailed"):
        text += f"\n    {example_line(result.example)}"
    return text


def example_line(example: str) -> str:
    """A failure's example as it reads: a drawn value is hypothesis' shrunk one; a golden file's
    record is labelled as recorded (it was never shrunk)."""
    return example if example.startswith(RECORDED_EXAMPLE) else f"smallest failing example: {example}"


def verdict_line(subject: str, certified: bool, counts: dict[str, int], seed: Any = None) -> str:
    shown = ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES if s != "xfailed" or counts.get(s))
    tail = f"; seed {seed}" if seed is not None else ""
    return f"{subject}: {'CERTIFIED' if certified else 'NOT CERTIFIED'} ({shown}{tail})"


def _detail_lines(results: Iterable[CheckResult], *, skips: bool = True) -> list[str]:
    lines = []
    for r in results:
        if r.status == "failed":
            lines.append(f"  FAILED {r.id} [{r.family}]: {r.message}")
            if r.example is not None:
                lines.append(f"    {example_line(r.example)}")
            lines += [f"    at {frame}" for frame in r.trace]
        elif r.status == "xfailed":
            lines.append(f"  xfailed {r.id} [{r.family}] (expected: {r.expected_failure}): {r.message}")
        elif r.status == "skipped" and skips:
            lines.append(f"  skipped {r.id}: {r.message}")
        elif r.status == "passed" and r.message:
            lines.append(f"  note {r.id}: {r.message}")
    return lines


def render_results(subject: str, results: list[CheckResult], *, seed: Any = None,
                   strict_failures: Iterable[str] = (), skips: bool = True) -> str:
    """A subject's verdict line, then its failures, expected failures and skips."""
    strict_failures = list(strict_failures)
    counts = {s: sum(r.status == s for r in results) for s in STATUSES}
    certified = not counts["failed"] and not strict_failures
    lines = [verdict_line(subject, certified, counts, seed)]
    lines += _detail_lines(results, skips=skips)
    lines += [f"  FAILED --strict: {problem}" for problem in strict_failures]
    return "\n".join(lines)


def render_report(report: Report, *, skips: bool = True) -> str:
    """The subject's verdict line, then its failures, expected failures and skips."""
    return render_results(report.subject, report.results, seed=report.seed,
                          strict_failures=report.strict_failures, skips=skips)


def _cell(report: Report, family: str) -> str:
    rs = [r for r in report.results if r.family == family]
    if not rs:
        return "-"
    failed = sum(r.failed for r in rs)
    passed = sum(r.passed for r in rs)
    return f"FAIL {failed}" if failed else (f"ok {passed}" if passed else "skipped")


def render_summary(reports: list[Report], seed: Any, *, tty: bool = False) -> str | None:
    """A table of families per subject and the closing line; printed with rich on a
    terminal (then None is returned), returned as plain text otherwise."""
    families: list[str] = []
    for report in reports:
        for r in report.results:
            if r.family not in families:
                families.append(r.family)
    certified = sum(r.certified for r in reports)
    closing = f"{certified} of {len(reports)} subject(s) certified; seed {seed} (rerun with --seed {seed})"
    if tty:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=f"conformance (seed {seed})")
        table.add_column("subject")
        for family in families:
            table.add_column(family)
        table.add_column("verdict")
        for report in reports:
            table.add_row(report.subject, *[_cell(report, f) for f in families],
                          "[green]certified[/]" if report.certified else "[red]NOT certified[/]")
        console = Console()
        console.print(table)
        console.print(closing, markup=False, highlight=False)
        return None
    width = max([len(r.subject) for r in reports] + [7])
    lines = ["", f"{'subject'.ljust(width)}  " + "  ".join(f.ljust(9) for f in families) + "  verdict"]
    for report in reports:
        lines.append(f"{report.subject.ljust(width)}  " + "  ".join(_cell(report, f).ljust(9) for f in families)
                     + ("  certified" if report.certified else "  NOT certified"))
    lines.append(closing)
    return "\n".join(lines)
