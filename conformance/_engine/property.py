"""Run one property with hypothesis and turn its shrunk counterexample into a ``Violation``.

Hypothesis replays the minimal failing example last before it re-raises, so the value recorded
by the most recent run is the shrunk one, and the Violation raised by that run carries the
sentence computed on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .canonical import show
from .registry import Violation

__all__ = ["for_all", "guarded"]


def guarded(what: str, func: Callable[..., Any], *args: Any) -> Any:
    """``func(*args)``; an unexpected exception becomes a Violation saying ``what`` raised it."""
    try:
        return func(*args)
    except Violation:
        raise
    except Exception as exc:
        raise Violation(f"{what} raised {type(exc).__name__}: {exc}") from exc


def for_all(
    settings: Any,
    seed: int | None,
    strategy: Any,
    body: Callable[[Any], None],
    *,
    max_examples: int | None = None,
    display: Callable[[Any], str] = show,
) -> None:
    """Run ``body(value)`` for values drawn from ``strategy``; raise the shrunk Violation."""
    import hypothesis
    from hypothesis import errors, given

    last: dict[str, Any] = {}

    def prop(value: Any) -> None:
        last["value"] = value
        try:
            body(value)
        except Violation:
            raise
        except Exception as exc:  # a crash inside the serializer is a finding, not a harness bug
            raise Violation(f"raised {type(exc).__name__}: {exc}") from exc

    run_settings = settings if max_examples is None else hypothesis.settings(
        settings, max_examples=max(1, min(max_examples, settings.max_examples))
    )
    test = given(strategy)(prop)
    test = hypothesis.settings(run_settings)(test)
    if seed is not None:
        test = hypothesis.seed(seed)(test)
    try:
        test()
    except Violation as violation:
        if violation.example is None and "value" in last:
            violation.example = display(last["value"])
        raise
    except errors.FailedHealthCheck as exc:
        raise Violation(
            "the values strategy failed hypothesis' health check (fix the strategy, e.g. build "
            f"values instead of filtering them): {str(exc).splitlines()[0]}"
        ) from None
    except errors.Unsatisfiable as exc:
        raise Violation(f"the values strategy produced no usable value: {exc}") from None
    except BaseException as exc:
        flaky = getattr(errors, "FlakyFailure", None) or errors.Flaky
        if isinstance(exc, (flaky, errors.Flaky)):
            inner = getattr(exc, "exceptions", None) or [exc]
            first = inner[0]
            message = getattr(first, "message", None) or str(first)
            raise Violation(
                f"failed only intermittently (not on every replay): {message}",
                example=display(last["value"]) if "value" in last else None,
            ) from None
        raise
