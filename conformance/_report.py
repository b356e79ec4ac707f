"""Results: one ``CheckResult`` per check, a ``Report`` per subject, and their JSON shape."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckResult", "Report", "reports_to_json"]


@dataclass
class CheckResult:
    """The verdict of one check: ``status`` is ``passed``, ``failed`` or ``skipped``; a failure's
    ``message`` says what the serializer did wrong and ``example`` shows the shrunk value."""

    id: str
    family: str
    status: str
    message: str = ""
    example: str | None = None
    expected_failure: str | None = None
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def failed(self) -> bool:
        return self.status == "failed"

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "family": self.family, "status": self.status,
                "message": self.message, "example": self.example}

    def __str__(self) -> str:
        text = f"{self.id} [{self.family}] {self.status}"
        if self.message:
            text += f": {self.message}"
        if self.example is not None:
            text += f"\n    smallest failing example: {self.example}"
        return text


@dataclass
class Report:
    """All results for one subject. ``certified`` is True when no check failed (a failure listed
    in ``expected_failures`` does not count); ``certificate()`` adds seed, profile and versions."""

    subject: str
    results: list[CheckResult]
    seed: int | None = None
    profile: str = "dev"
    examples: int = 0
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def certified(self) -> bool:
        return not any(r.failed and r.expected_failure is None for r in self.results)

    @property
    def failures(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed and r.expected_failure is None]

    def __getitem__(self, check_id: str) -> CheckResult:
        for result in self.results:
            if result.id == check_id:
                return result
        raise KeyError(f"no result for check {check_id!r} in this report")

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.results)

    def to_json(self) -> dict[str, Any]:
        """``{"subject", "certified", "checks": [{"id", "family", "status", "message", "example"}]}``"""
        return {"subject": self.subject, "certified": self.certified,
                "checks": [r.to_json() for r in self.results]}

    def certificate(self) -> dict[str, Any]:
        """``to_json()`` plus what reproduces the run: seed, profile, examples, versions."""
        data = self.to_json()
        data.update({"seed": self.seed, "profile": self.profile, "examples": self.examples,
                     "versions": dict(self.versions)})
        return data

    def summary(self) -> str:
        counts = {s: sum(r.status == s for r in self.results) for s in ("passed", "failed", "skipped")}
        verdict = "CERTIFIED" if self.certified else "NOT CERTIFIED"
        lines = [f"{self.subject}: {verdict} ({counts['passed']} passed, {counts['failed']} failed, "
                 f"{counts['skipped']} skipped; seed {self.seed})"]
        lines += [f"  {r}" for r in self.results if r.failed]
        return "\n".join(lines)


def reports_to_json(reports: list[Report]) -> dict[str, Any]:
    """The several-subjects shape: ``{"certified": bool, "subjects": [...]}``."""
    return {"certified": all(r.certified for r in reports), "subjects": [r.to_json() for r in reports]}


def dump(data: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, sort_keys=False)
        fh.write("\n")
