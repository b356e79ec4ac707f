"""How results read: the one renderer behind the CLI's terminal output, ``Report.summary()``
and the pytest plugin's summary.

It takes ``Report``s and nothing else, and shows their verdict (``Report.certified``, the one
rule, in ``conformance._engine.report``) without deciding one. A subject reads as one verdict
line with its counts, then one line per failure (check id, family, the sentence, the shrunk
example or the golden file's record), per expected failure, and per skip reason: ``skipped N: reason [families]``, the
checks skipped for the same reason counted on one line (a failed prerequisite and the dozens
of checks it blocks read as one failure and one line). ``verbose`` (the CLI's ``-v``,
pytest's own ``-v`` for the plugin's summary) lists each skipped check on a line of its own
instead; the certificate always holds every check. Then why a subject with no failed check
is not certified (its ``nothing_certified``: no selected check passed; its
``declared_skipped``: ``--strict``'s families skipped as a whole). A run of several subjects ends with a table of
families per subject. It imports no report, not even for annotations (it
states what it reads of one as protocols): the one arrow points from the results
(``Report.summary()``) to how they read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .golden import example_line
from .registry import STATUSES


class CheckResult(Protocol):
    """What the renderer reads of a ``report.CheckResult`` (read-only)."""

    @property
    def id(self) -> str: ...
    @property
    def family(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def example(self) -> str | None: ...
    @property
    def trace(self) -> Sequence[str]: ...
    @property
    def expected_failure(self) -> str | None: ...
    @property
    def failed(self) -> bool: ...
    @property
    def passed(self) -> bool: ...


class Report(Protocol):
    """What the renderer reads of a ``report.Report``, its verdict included (never recomputed)."""

    @property
    def subject(self) -> str: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def results(self) -> Sequence[CheckResult]: ...
    @property
    def certified(self) -> bool: ...
    @property
    def nothing_certified(self) -> str | None: ...
    @property
    def declared_skipped(self) -> list[str]: ...
    def counts(self) -> dict[str, int]: ...


__all__ = ["render_report", "render_summary", "verdict_line", "counted"]


def counted(n: int, noun: str) -> str:
    """``1 check``, ``2 checks``: the one plural rule of the harness's sentences (``noun`` is
    singular, its plural adds an s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"



def verdict_line(report: Report) -> str:
    """``subject: CERTIFIED (n passed, ...; seed N)``."""
    counts = report.counts()
    shown = ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES if s != "xfailed" or counts.get(s))
    tail = f"; seed {report.seed}" if report.seed is not None else ""
    return f"{report.subject}: {'CERTIFIED' if report.certified else 'NOT CERTIFIED'} ({shown}{tail})"


def _families(results: Sequence[CheckResult]) -> str:
    """``[versioning]``, or ``[migration 2, backends 1]`` for checks of several families."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.family] = counts.get(r.family, 0) + 1
    if len(counts) == 1:
        return f"[{next(iter(counts))}]"
    return "[" + ", ".join(f"{family} {n}" for family, n in counts.items()) + "]"


def _detail_lines(results: Sequence[CheckResult], *, verbose: bool = False) -> list[str]:
    lines = []
    skipped: dict[str, list[CheckResult]] = {}
    for r in results:
        if r.status == "failed":
            lines.append(f"  FAILED {r.id} [{r.family}]: {r.message}")
            if r.example is not None:
                lines.append(f"    {example_line(r.example)}")
            lines += [f"    at {frame}" for frame in r.trace]
        elif r.status == "xfailed":
            lines.append(f"  xfailed {r.id} [{r.family}] (expected: {r.expected_failure}): {r.message}")
        elif r.status == "skipped" and verbose:
            lines.append(f"  skipped {r.id}: {r.message}")
        elif r.status == "skipped":
            skipped.setdefault(r.message, []).append(r)
        elif r.status == "passed" and r.message:
            lines.append(f"  note {r.id}: {r.message}")
    lines += [f"  skipped {len(rs)}: {reason} {_families(rs)}" for reason, rs in skipped.items()]
    return lines


def render_report(report: Report, *, verbose: bool = False) -> str:
    """The subject's verdict line, then its failures, expected failures and skips (one line
    per reason; ``verbose``: one per skipped check), then why it is not certified when no
    check failed (nothing certified; ``--strict``'s declared families skipped)."""
    lines = [verdict_line(report)]
    lines += _detail_lines(report.results, verbose=verbose)
    if report.nothing_certified is not None:
        lines.append(f"  NOT CERTIFIED: {report.nothing_certified}")
    lines += [f"  FAILED --strict: {problem}" for problem in report.declared_skipped]
    return "\n".join(lines)


def _cell(report: Report, family: str) -> str:
    rs = [r for r in report.results if r.family == family]
    if not rs:
        return "-"
    failed = sum(r.failed for r in rs)
    passed = sum(r.passed for r in rs)
    return f"FAIL {failed}" if failed else (f"ok {passed}" if passed else "skipped")


def render_summary(reports: Sequence[Report], *, tty: bool = False) -> str | None:
    """A table of families per subject and the closing line with the run's seed (the
    reports'); printed with rich on a terminal (then None is returned), returned as plain text
    otherwise."""
    seed = reports[0].seed if reports else None
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
