"""Providers: the data the checks of one subject share, declared once and typed.

A check that needs what another computed (the snapshot's bytes, the values of the backends'
histories, the savepoints they wrote) asks its context for a ``Provider`` rather than for a
string key, as a pytest test asks for a fixture::

    SNAPSHOT_BYTES: Provider[bytes] = provider("snapshot_bytes", lambda ctx: ...)

    @check(id="snapshot.no_pickle", family="snapshot")
    def no_pickle(ctx):
        data = ctx.get(SNAPSHOT_BYTES)   # computed once per subject, then shared

A provider with ``compute`` makes its value on first use; one without is filled in by the
check that produces it (``ctx.put``), and ``ctx.get`` then raises ``LookupError`` until it has
been. ``close(value)`` runs when the run ends, for values that hold a process or a file.
Values live as long as the runner of one subject: nothing crosses subjects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Provider", "provider", "Provided"]

T = TypeVar("T")


class Provider(Generic[T]):
    """A named, typed value shared by the checks of one subject (see the module docstring)."""

    __slots__ = ("name", "compute", "close")

    def __init__(self, name: str, compute: Callable[[Any], T] | None = None,
                 close: Callable[[T], None] | None = None) -> None:
        self.name = name
        self.compute = compute
        self.close = close

    def __repr__(self) -> str:
        return f"Provider({self.name!r})"


def provider(name: str, compute: Callable[[Any], T] | None = None, *,
             close: Callable[[T], None] | None = None) -> Provider[T]:
    """Declare a provider (module level, next to the checks that produce or use it)."""
    return Provider(name, compute, close)


class Provided:
    """The values provided so far for one subject (held by its runner)."""

    def __init__(self) -> None:
        self._values: dict[Provider[Any], Any] = {}

    def get(self, wanted: Provider[T], ctx: Any) -> T:
        if wanted in self._values:
            return self._values[wanted]  # type: ignore[no-any-return]
        if wanted.compute is None:
            raise LookupError(f"{wanted.name} has not been provided yet (the check that produces it did not run)")
        value = wanted.compute(ctx)
        self._values[wanted] = value
        return value

    def put(self, wanted: Provider[T], value: T) -> None:
        self._values[wanted] = value

    def has(self, wanted: Provider[Any]) -> bool:
        return wanted in self._values

    def take(self, wanted: Provider[T]) -> T | None:
        """Remove and return the value (None when there is none): its user now owns it."""
        return self._values.pop(wanted, None)  # type: ignore[no-any-return]

    def close(self) -> None:
        """Release what the values hold (each provider's ``close``), then forget them."""
        values, self._values = self._values, {}
        for wanted, value in values.items():
            if wanted.close is not None:
                try:
                    wanted.close(value)
                except Exception:  # closing must not hide the run's result
                    pass
