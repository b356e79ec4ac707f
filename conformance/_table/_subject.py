"""``TableSubject``: a table implementation to certify, with the data to drive it.

How the harness calls ``table_factory`` is declared by ``factory_args``, the names of what it
passes, in order: ``"read_function"`` and ``"write_function"`` (the harness's instrumented
in-memory store, or the subject's own I/O functions built over it) and ``"write_rate_limiter"``
(the harness's limiter, which counts the credits taken). ``factory_args=()``: the table has its
own store. Left out, it is read from the factory's signature only when that is unambiguous (no
parameters at all, or exactly two required positional ones); anything else must be declared.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from .._engine.errors import ConformanceError

__all__ = ["TableSubject", "TableSubjectError", "FACTORY_ARGS"]

#: What the harness can pass to a table factory.
FACTORY_ARGS = ("read_function", "write_function", "write_rate_limiter")
_OVER_STORE = ("read_function", "write_function")


class TableSubjectError(ConformanceError, ValueError):
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


def _record_values(given: Any) -> SearchStrategy[Any]:
    """The strategy of record values, without None: ``put(key, None)`` deletes the record (None
    is no record's value), and the harness draws deletes of its own; a None drawn as a value
    would be judged as a record the table holds."""
    if not isinstance(given, SearchStrategy) and isinstance(given, Iterable) and not isinstance(given, (str, bytes, dict)):
        given = list(given)  # examples, read once
    if isinstance(given, list) and given and all(item is None for item in given):
        raise TableSubjectError("TableSubject: values holds only None, which is no record's value (put(key, "
                                "None) deletes the record, and the harness draws deletes itself); give "
                                "examples of the values your records hold")
    return _strategy("values", given).filter(lambda value: value is not None)


def _declare_hint(shown: str) -> str:
    shown = shown if len(shown) <= 120 else shown[:117] + "..."
    return (
        f"declare how to call it: factory_args=('read_function', 'write_function') if it builds "
        f"the table over the harness's store (add 'write_rate_limiter' to also receive the "
        f"harness's rate limiter), or factory_args=() if the table has its own, empty store "
        f"[table_factory {shown}]"
    )


def _factory_args(factory: Callable[..., Any], declared: Sequence[str] | None) -> tuple[str, ...]:
    shown = getattr(factory, "__qualname__", None) or repr(factory)
    if declared is not None:
        if isinstance(declared, str):
            raise TableSubjectError(
                f"TableSubject: factory_args is the string {declared!r}; give a tuple of names, "
                f"e.g. ('read_function', 'write_function')"
            )
        args = tuple(declared)
        unknown = [a for a in args if a not in FACTORY_ARGS]
        if unknown or len(set(args)) != len(args):
            raise TableSubjectError(
                f"TableSubject: factory_args {args!r}: each name once, from {FACTORY_ARGS}"
            )
        if args and not set(_OVER_STORE) <= set(args):
            raise TableSubjectError(
                f"TableSubject: factory_args {args!r}: a table over the harness's store gets both "
                f"'read_function' and 'write_function' (give factory_args=() for a table with its own store)"
            )
        return args
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):
        raise TableSubjectError(
            f"TableSubject: the parameters of table_factory cannot be read; {_declare_hint(shown)}"
        ) from None
    params = list(signature.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    required_keywords = [p for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty]
    if not params:
        return ()
    if (len(required) == 2 and len(positional) == 2 and not required_keywords
            and not any(p.kind is p.VAR_POSITIONAL for p in params)):
        return _OVER_STORE
    listed = ", ".join(("*" + p.name) if p.kind is p.VAR_POSITIONAL else ("**" + p.name)
                       if p.kind is p.VAR_KEYWORD else p.name + ("=..." if p.default is not p.empty else "")
                       for p in params)
    raise TableSubjectError(
        f"TableSubject: cannot tell how to call table_factory from its parameters ({listed}): "
        f"{_declare_hint(shown)}"
    )


class TableSubject:
    """A table implementation under certification.

    ``table_factory`` builds a fresh table; ``factory_args`` says what it is given (see module
    doc). Over the harness's store every observable result is checked, including what reaches
    the store (PUTs and updates applied, write calls), failures are injected, retry metrics and
    rate-limiter credits are checked. A table with its own store (``factory_args=()``; it must
    start empty) is certified on values and errors only.

    ``keys``, ``values``, ``updates``: hypothesis strategies (or lists of examples) of K, V, U.
    ``apply_update(value, update) -> new value``: the meaning of an update (must not mutate).
    ``read_function(store)`` / ``write_function(store)``: your own I/O functions, built over
    the harness's store (which has the ``TableReadFunction`` / ``TableWriteFunction`` methods);
    the factory then receives them, and the harness observes each call into the write function.
    ``operator_factory(table, contract)``: the send-to-table-with-update operator to drive
    (default: ``reference.table.SendToTableWithUpdate``); it needs ``send_async(key, message)``
    and ``process_async(messages, return_exceptions=True)``.
    ``write_retries``: how many consecutive transient write failures the table absorbs by
    retrying (0: none are injected). ``write_metrics(table)``: the table's writer retry metrics
    (default: its ``write_metrics`` attribute when present; return ``None`` for none).
    ``credit_function(key, value_or_update)``: the credits the table takes per entry written
    (default 1), judged when the factory receives ``write_rate_limiter``.
    ``keeps_order``: concurrent operations on one key take effect in the order issued (else
    concurrent steps use distinct keys); default: what the table declares (its ``keeps_order``
    attribute, as every ``reference.table`` table has). ``operation_timeout``: seconds one
    operation may take before the table is reported stuck.
    """

    conformance_kind = "table"  # what the harness certifies it as (conformance._engine.subject.subject_kind)

    def __init__(
        self,
        table_factory: Callable[..., Any],
        keys: Any,
        values: Any,
        updates: Any,
        apply_update: Callable[[Any, Any], Any],
        *,
        name: str | None = None,
        factory_args: Sequence[str] | None = None,
        read_function: Callable[[Any], Any] | None = None,
        write_function: Callable[[Any], Any] | None = None,
        operator_factory: Callable[[Any, Any], Any] | None = None,
        write_retries: int = 0,
        write_metrics: Callable[[Any], Any] | None = None,
        credit_function: Callable[[Any, Any], int] | None = None,
        keeps_order: bool | None = None,
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
        for what, given in (("read_function", read_function), ("write_function", write_function),
                            ("credit_function", credit_function)):
            if given is not None and not callable(given):
                raise TableSubjectError(f"TableSubject: {what} is {type(given).__name__}; give a callable")
        self.table_factory = table_factory
        self.factory_args = _factory_args(table_factory, factory_args)
        self.observes_io = "write_function" in self.factory_args
        if (read_function is not None or write_function is not None) and not self.observes_io:
            raise TableSubjectError(
                "TableSubject: read_function/write_function are built over the harness's store, "
                "but the factory takes no I/O functions; declare factory_args=('read_function', "
                "'write_function')"
            )
        self.keys = _strategy("keys", keys)
        self.values = _record_values(values)
        self.updates = _strategy("updates", updates)
        self.apply_update = apply_update
        self.name = name or getattr(table_factory, "__qualname__", type(table_factory).__name__)
        self.read_function = read_function
        self.write_function = write_function
        self.operator_factory = operator_factory
        self.write_retries = write_retries
        self._write_metrics = write_metrics
        self.credit_function = credit_function or (lambda key, value: 1)
        self.limited = "write_rate_limiter" in self.factory_args
        self.keeps_order = keeps_order
        if not operation_timeout > 0:
            raise TableSubjectError(f"TableSubject: operation_timeout is {operation_timeout}; give seconds > 0")
        self.operation_timeout = float(operation_timeout)

    def make_table(self, store: Any) -> Any:
        """A fresh table (over ``store``, a ``HarnessStore``, when the subject observes I/O)."""
        if not self.observes_io:
            return self.table_factory()
        given = {
            "read_function": store.reader(self.read_function),
            "write_function": store.writer(self.write_function),
            "write_rate_limiter": store.limiter,
        }
        return self.table_factory(*(given[a] for a in self.factory_args))

    def make_operator(self, table: Any, contract: Any) -> Any:
        if self.operator_factory is not None:
            return self.operator_factory(table, contract)
        from reference.table import SendToTableWithUpdate

        return SendToTableWithUpdate(table, contract)

    def write_metrics(self, table: Any) -> Any:
        if self._write_metrics is not None:
            return self._write_metrics(table)
        return getattr(table, "write_metrics", None)

    def order_guarantee(self, table: Any) -> tuple[bool, str]:
        """Whether same-key operations issued together are checked in order of issue, and why."""
        if self.keeps_order is not None:
            return self.keeps_order, f"TableSubject(keeps_order={self.keeps_order})"
        declared = bool(getattr(table, "keeps_order", False))
        return declared, f"{type(table).__name__}.keeps_order is {declared}"

    def __repr__(self) -> str:
        return f"TableSubject({self.name})"
