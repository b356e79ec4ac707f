"""Results: one ``CheckResult`` per check, a ``Report`` per subject, and their JSON shape
(the certificate, specified by ``docs/certificate.schema.json``).

A check's ``status`` is ``passed``, ``failed``, ``skipped`` (with the reason), or ``xfailed``:
it failed and was listed as an expected failure, which does not block certification. A
subject is certified when no check failed, at least one selected check passed (a run whose
checks were all skipped certifies nothing; ``RunConfig(allow_all_skipped=True)`` accepts it)
and, under ``--strict``, no family the subject declares data for (its evolutions, its golden
directory) was skipped as a whole: that rule is ``Report.certified``, here and nowhere else
(the renderer, the CLI's exit status and the JSON read it). Why a subject with no failed
check is not certified is its ``strict_failures`` (``nothing_certified``, then
``declared_skipped``). How reports read is ``conformance._engine.render``'s;
``Report.summary()`` hands the report to it.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any

from .golden import example_line
from .registry import STATUSES, current_id
from .render import counted

__all__ = ["CheckResult", "Report", "RunOptions", "STATUSES", "reports_to_json", "dump", "CERTIFICATE_FORMAT"]

#: Version of the JSON certificate's shape (``docs/certificate.schema.json``).
CERTIFICATE_FORMAT = 2


@dataclass
class CheckResult:
    """The verdict of one check: ``status`` is one of ``STATUSES``; a failure's ``message``
    says what the subject did wrong and ``example`` shows the shrunk value; ``blocked`` marks
    a skip because a prerequisite did not pass; ``trace`` lists the frames of the user's code
    (``file:line in function``) the failure was raised from, innermost last."""

    id: str
    family: str
    status: str
    message: str = ""
    example: str | None = None
    expected_failure: str | None = None
    seconds: float = 0.0
    blocked: bool = False
    trace: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed(self) -> bool:
        """A failure that blocks certification (an expected one is ``xfailed``)."""
        return self.status == "failed"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "family": self.family, "status": self.status,
                                "message": self.message, "example": self.example,
                                "seconds": round(self.seconds, 6)}
        if self.expected_failure is not None:
            data["expected_failure"] = self.expected_failure
        if self.trace:
            data["trace"] = list(self.trace)
        return data

    def __str__(self) -> str:
        """``id [family] status: message`` and, for a failure, its smallest example."""
        text = f"{self.id} [{self.family}] {self.status}"
        if self.message:
            text += f": {self.message}"
        if self.example is not None and self.status in ("failed", "xfailed"):
            text += f"\n    {example_line(self.example)}"
        return text


@dataclass(frozen=True)
class RunOptions:
    """What a run was asked to do, recorded in its certificate."""

    backends: tuple[str, ...] = ()
    spark: str = "off"
    spark_entries: int | None = None
    steps: int | None = None
    derandomize: bool = False
    allow_all_skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"backends": list(self.backends), "spark": self.spark, "spark_entries": self.spark_entries,
                "steps": self.steps, "derandomize": self.derandomize,
                "allow_all_skipped": self.allow_all_skipped}


@dataclass
class Report:
    """All results for one subject, and what reproduces the run (seed, profile, examples,
    options, versions)."""

    subject: str
    results: list[CheckResult]
    seed: int | None = None
    profile: str = "dev"
    examples: int = 0
    versions: dict[str, str] = field(default_factory=dict)
    kind: str = "serializer"
    options: RunOptions = field(default_factory=RunOptions)
    strict: bool = False
    declared: dict[str, str] = field(default_factory=dict)
    distribution: dict[str, str] | None = None

    @property
    def nothing_certified(self) -> str | None:
        """Why the run certified nothing: no selected check passed (all skipped, or skipped and
        expected failures), unless the run allowed it (``RunConfig(allow_all_skipped=True)``);
        None when a check passed, one failed, or it was allowed."""
        if self.options.allow_all_skipped or self.failures or any(r.passed for r in self.results):
            return None
        fix = ("(select checks that apply to the subject, or accept such a run with "
               "RunConfig(allow_all_skipped=True) or --allow-all-skipped)")
        if not self.results:
            return f"no check ran; nothing was certified {fix}"
        n = len(self.results)
        skipped = [r for r in self.results if r.status == "skipped"]
        reasons: dict[str, int] = {}
        for r in skipped:
            reasons[r.message] = reasons.get(r.message, 0) + 1
        why = "; ".join(f"{reason} ({counted(count, 'check')})" if count > 1 else reason
                        for reason, count in reasons.items())
        if len(skipped) == n:
            subject = f"the {counted(n, 'selected check')} was" if n == 1 else f"all {counted(n, 'selected check')} were"
            return f"{subject} skipped: {why}; nothing was certified {fix}"
        return (f"none of the {counted(n, 'selected check')} passed ({n - len(skipped)} expected to fail, "
                f"{len(skipped)} skipped: {why}); nothing was certified {fix}")

    @property
    def declared_skipped(self) -> list[str]:
        """Under ``--strict``: each declared family whose every check was skipped."""
        if not self.strict:
            return []
        found = []
        for family, what in self.declared.items():
            rs = [r for r in self.results if r.family == family]
            if rs and all(r.status == "skipped" for r in rs):
                reasons = "; ".join(dict.fromkeys(r.message for r in rs))
                found.append(f"the subject declares {what}, but every {family} check was skipped ({reasons})")
        return found

    @property
    def strict_failures(self) -> list[str]:
        """Why a subject with no failed check is not certified: ``nothing_certified`` and
        ``declared_skipped`` (the certificate's ``strict_failures``)."""
        nothing = self.nothing_certified
        return ([] if nothing is None else [nothing]) + self.declared_skipped

    @property
    def certified(self) -> bool:
        """The one certification rule (see the module docstring)."""
        return not self.failures and not self.strict_failures

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed]

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.results) for s in STATUSES}

    def __getitem__(self, check_id: str) -> CheckResult:
        """The result of ``check_id`` (an old id is accepted, with a DeprecationWarning)."""
        check_id = current_id(check_id)
        for result in self.results:
            if result.id == check_id:
                return result
        raise KeyError(f"no result for check {check_id!r} in this report")

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.results)

    def to_json(self) -> dict[str, Any]:
        """The subject's certificate (``docs/certificate.schema.json``, ``subject`` object)."""
        return {
            "format": CERTIFICATE_FORMAT, "subject": self.subject, "kind": self.kind, "certified": self.certified,
            "checks": [r.to_json() for r in self.results],
            "strict_failures": self.strict_failures,
            "seed": self.seed, "profile": self.profile, "examples": self.examples, "strict": self.strict,
            "options": self.options.to_json(),
            "versions": dict(self.versions), "distribution": self.distribution,
        }

    def summary(self, verbose: bool = False) -> str:
        """How the CLI shows this report: the verdict line, then failures, expected failures
        and skips, one line per reason (``verbose``: one per check)
        (``conformance._engine.render``)."""
        from .render import render_report

        return render_report(self, verbose=verbose)


def reports_to_json(reports: list[Report]) -> dict[str, Any]:
    """The several-subjects shape: ``{"format", "certified", "subjects": [...]}``."""
    return {"format": CERTIFICATE_FORMAT, "certified": all(r.certified for r in reports),
            "subjects": [r.to_json() for r in reports]}


def dump(data: dict[str, Any], path: str) -> None:
    """Write JSON to ``path`` (``-``: standard output)."""
    text = json.dumps(data, indent=2, sort_keys=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
