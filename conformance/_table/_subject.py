"""``TableSubject``: a table implementation to certify, with the data to drive it."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

__all__ = ["TableSubject", "TableSubjectError"]


class TableSubjectError(ValueError):
    """The subject cannot be certified as given (says what to change)."""


def _strategy(what: str, given: Any) -> SearchStrategy[Any]:
    if isinstance(given, SearchStrategy):
        return given
    if isinstance(given, Iterable) and not isinstance(given, (str, bytes, dict)):
        items = list(given)
        if not items:
            raise TableSubjectError(f"TableSubject: {what} is empty; give a strategy or a non-empty list")
        return st.sampled_from(items)
    raise TableSubjectError(
        f"TableSubject: {what} is {type(given).__name__}; give a hypothesis strategy or a list of examples"
    )


def _arity(factory: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return 2
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return 2
    return min(len(positional), 2)


class TableSubject:
    """A table implementation under certification.

    ``table_factory(read_function, write_function)`` builds a fresh table doing its I/O through
    the harness's functions (an instrumented in-memory store): then every observable result is
    checked, including what reaches the store (PUTs and updates applied, write calls), failures
    are injected, and retry metrics are checked. A zero-argument ``table_factory()`` (the table
    talks to its own store, which must start empty) is certified on values and errors only.

    ``keys``, ``values``, ``updates``: hypothesis strategies (or lists of examples) of K, V, U.
    ``apply_update(value, update) -> new value``: the meaning of an update (must not mutate).
    ``operator_factory(table, contract)``: the send-to-table-with-update operator to drive
    (default: ``reference.table.SendToTableWithUpdate``); it needs ``send_async(key, message)``
    and ``process_async(messages, return_exceptions=True)``.
    ``write_retries``: how many consecutive transient write failures the table absorbs by
    retrying (0: none are injected). ``write_metrics(table)``: the table's writer retry metrics
    (default: its ``write_metrics`` attribute when present).
    ``keeps_order``: concurrent operations on one key take effect in the order issued (else
    concurrent steps use distinct keys). ``operation_timeout``: seconds one operation may take
    before the table is reported stuck.
    """

    def __init__(
        self,
        table_factory: Callable[..., Any],
        keys: Any,
        values: Any,
        updates: Any,
        apply_update: Callable[[Any, Any], Any],
        *,
        name: str | None = None,
        operator_factory: Callable[[Any, Any], Any] | None = None,
        write_retries: int = 0,
        write_metrics: Callable[[Any], Any] | None = None,
        keeps_order: bool = True,
        operation_timeout: float = 10.0,
    ) -> None:
        if not callable(table_factory):
            raise TableSubjectError(
                f"TableSubject: table_factory is {type(table_factory).__name__}; give a callable "
                f"(read_function, write_function) -> table"
            )
        if not callable(apply_update):
            raise TableSubjectError("TableSubject: apply_update must be a callable (value, update) -> new value")
        if write_retries < 0:
            raise TableSubjectError(f"TableSubject: write_retries is {write_retries}; give 0 or more")
        self.table_factory = table_factory
        self.keys = _strategy("keys", keys)
        self.values = _strategy("values", values)
        self.updates = _strategy("updates", updates)
        self.apply_update = apply_update
        self.name = name or getattr(table_factory, "__qualname__", type(table_factory).__name__)
        self.operator_factory = operator_factory
        self.write_retries = write_retries
        self._write_metrics = write_metrics
        self.keeps_order = keeps_order
        if not operation_timeout > 0:
            raise TableSubjectError(f"TableSubject: operation_timeout is {operation_timeout}; give seconds > 0")
        self.operation_timeout = float(operation_timeout)
        self.observes_io = _arity(table_factory) >= 2

    def make_table(self, store: Any) -> Any:
        """A fresh table (over ``store`` when the subject observes I/O)."""
        if self.observes_io:
            return self.table_factory(store, store)
        return self.table_factory()

    def make_operator(self, table: Any, contract: Any) -> Any:
        if self.operator_factory is not None:
            return self.operator_factory(table, contract)
        from reference.table import SendToTableWithUpdate

        return SendToTableWithUpdate(table, contract)

    def write_metrics(self, table: Any) -> Any:
        if self._write_metrics is not None:
            return self._write_metrics(table)
        return getattr(table, "write_metrics", None)

    def __repr__(self) -> str:
        return f"TableSubject({self.name})"
