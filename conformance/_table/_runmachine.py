"""Run a state machine under given settings and turn a failure into a ``Violation`` carrying
hypothesis' shrunk steps as the example."""

from __future__ import annotations

from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase
from hypothesis import settings as Settings
from hypothesis.stateful import run_state_machine_as_test

from .._engine.registry import Violation
from ._machine import TableViolation

__all__ = ["run_machine", "machine_settings"]


def machine_settings(max_examples: int = 30, steps: int = 20, derandomize: bool = True) -> Settings:
    return Settings(
        max_examples=max_examples,
        stateful_step_count=steps,
        deadline=None,
        derandomize=derandomize,
        database=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        # the explain phase re-runs the shrunk machine hundreds of times for little news
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    )


def run_machine(machine: Any, settings: Settings, seed: int | None = None) -> None:
    """Run ``machine`` under ``settings``; from ``seed`` unless the settings derandomize."""
    if seed is not None and not settings.derandomize:
        machine = hypothesis.seed(seed)(machine)
    try:
        run_state_machine_as_test(machine, settings=settings)
    except TableViolation as exc:
        raise Violation(str(exc), example=_steps(exc)) from exc
    except Violation:
        raise
    except Exception as exc:
        raise Violation(
            f"the table raised {type(exc).__name__} ({exc}) out of the harness's control",
            example=_steps(exc),
        ) from exc


def _steps(exc: BaseException) -> str:
    """Hypothesis attaches the shrunk steps (``state = TableMachine()``, ``state.put(...)``)
    to the exception as notes."""
    lines = [line for note in getattr(exc, "__notes__", ()) for line in str(note).splitlines()]
    text = "\n".join(line for line in lines
                     if not line.startswith(("Falsifying", "Failing test case", "You can reproduce")))
    return text.strip() or "(no steps reported)"
