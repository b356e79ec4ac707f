"""The ``table`` family of checks (registered in the harness's check registry).

Each check takes a context with ``subject`` (a ``TableSubject``), ``settings`` (hypothesis
settings for the state machines) and raises ``Violation`` / ``NotApplicable``.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from hypothesis import find
from hypothesis.errors import NoSuchExample

from reference.table import TableWriteFunction

from .._engine.registry import NotApplicable, Violation, check
from .._table._exactly import check_exactly_once
from .._table._history import check_linearizable
from .._table._machine import build_machine
from .._table._runmachine import run_machine
from .._table._store import HarnessStore

if TYPE_CHECKING:
    from .._engine.runner import CheckContext

__all__: list[str] = []

_METHODS = ("get", "get_all", "put", "put_all", "delete", "delete_all", "update", "update_all", "flush")


@check(id="table.subject", family="table")
def subject_usable(ctx: CheckContext) -> None:
    """The factory builds a table with the whole API, the strategies give examples, and a write
    function whose calls must be observed is given to the harness."""
    subject = ctx.subject
    for what in ("keys", "values", "updates"):
        try:
            find(getattr(subject, what), lambda _: True)
        except NoSuchExample:
            raise Violation(f"the subject's {what} strategy gives no example; give one that does") from None
    store = HarnessStore(subject.apply_update)
    table = subject.make_table(store)
    missing = [m for base in _METHODS for m in (base, base + "_async") if not callable(getattr(table, m, None))]
    if missing:
        raise Violation(
            f"the table {type(table).__name__} lacks {', '.join(missing)}; a table needs the whole "
            f"ReadWriteTable API (subclass reference.table.ReadWriteTable)"
        )
    if subject.observes_io and (subject.write_retries or subject.write_metrics(table) is not None
                                or subject.limited):
        found = _write_function_of(table)
        if found is not None and found is not store.boundary:
            name = type(found).__name__
            raise Violation(
                f"the table writes through {name}, a write function built inside the factory: got "
                f"calls into {name} the harness cannot see, should be given to the harness so retry "
                f"metrics, credits and injected failures are judged per call into it: "
                f"TableSubject(..., write_function=lambda store: {name}(store)) and the factory "
                f"uses the write function it receives (or, if {name} has its own store, "
                f"factory_args=())", example=f"table.write_function is {found!r}",
            )


@check(id="table.nulls", family="table", requires=("table.subject",))
def nulls_rejected(ctx: CheckContext) -> None:
    """A None key or update is refused when the method is called, and nothing reaches the write
    function or the store."""
    subject = ctx.subject
    store = HarnessStore(subject.apply_update)
    table = subject.make_table(store)
    key = find(subject.keys, lambda _: True)
    value = find(subject.values, lambda _: True)
    update = find(subject.updates, lambda _: True)
    calls = [
        ("get_async(None)", lambda: table.get_async(None)),
        ("get_all_async([None])", lambda: table.get_all_async([None])),
        ("put_async(None, value)", lambda: table.put_async(None, value)),
        ("put_all_async([(None, value)])", lambda: table.put_all_async([(None, value)])),
        ("delete_async(None)", lambda: table.delete_async(None)),
        ("delete_all_async([None])", lambda: table.delete_all_async([None])),
        ("update_async(None, update)", lambda: table.update_async(None, update)),
        ("update_async(key, None)", lambda: table.update_async(key, None)),
        ("update_all_async([(None, update)])", lambda: table.update_all_async([(None, update)])),
        ("update_all_async([(key, None)])", lambda: table.update_all_async([(key, None)])),
    ]
    loop = asyncio.new_event_loop()
    try:
        for what, call in calls:
            try:
                awaitable = call()
            except Exception:
                continue  # refused synchronously, as it should be
            try:
                loop.run_until_complete(asyncio.wait_for(_await(awaitable), subject.operation_timeout))
            except Exception as exc:
                raise Violation(
                    f"{what}: got {type(exc).__name__} only when awaited, should be refused when "
                    f"the method is called", example=f"table.{what}",
                ) from exc
            raise Violation(f"{what}: got success, should be refused when the method is called",
                            example=f"table.{what}")
    finally:
        loop.close()
        close = getattr(table, "close", None)
        if close is not None:
            close()
    for what, counts in (("the store", store.counts), ("the write function", store.boundary.counts)):
        if subject.observes_io and counts.write_calls:
            raise Violation(
                f"null arguments reached {what}: got {counts.write_calls} write calls, should be 0",
                example=str(counts.calls),
            )


@check(id="table.sequential", family="table", requires=("table.subject",))
def sequential(ctx: CheckContext) -> None:
    """Random sequences of single operations (sync and async) and update messages under both
    contracts match the model: results, errors, records, PUTs and updates reaching the store."""
    run_machine(build_machine(ctx.subject, concurrent=False, faults=False), ctx.settings, ctx.seed)


@check(id="table.concurrent", family="table", requires=("table.sequential",))
def concurrent(ctx: CheckContext) -> None:
    """Operations issued together (batches; same-key order when the table keeps order) and
    message streams match the model applied in the order of issue; only the operations that
    failed fail; every key written reads back as the model says."""
    run_machine(build_machine(ctx.subject, concurrent=True, faults=False), ctx.settings, ctx.seed)


@check(id="table.linearizable", family="table", requires=("table.sequential",))
def linearizable(ctx: CheckContext) -> None:
    """Concurrent histories on one key (clients issuing single and one-entry bulk operations
    together, then a read-back after every operation answered): a table that keeps the order
    of issue gives what the model gives in that order; any other table is linearizable (some
    order consistent with real time explains every result, the read-back and the store's
    record); the store applies one update entry per acknowledged update."""
    subject = ctx.subject
    probe = subject.make_table(HarnessStore(subject.apply_update))
    try:
        keeps_order, why = subject.order_guarantee(probe)
        supports_updates = bool(getattr(probe, "supports_updates", True))
    finally:
        close = getattr(probe, "close", None)
        if close is not None:
            close()
    check_linearizable(subject, ctx.settings, ctx.seed, keeps_order, why, supports_updates)


@check(id="table.faults", family="table", requires=("table.sequential",))
def faults(ctx: CheckContext) -> None:
    """Injected store failures: permanent ones fail exactly their operation; the operator's
    first update, default put or second update failing leaves the record as the docs say;
    transient ones within the declared retries are absorbed; writer retry metrics count exactly
    the calls into the write function."""
    if not ctx.subject.observes_io:
        raise NotApplicable("the table has its own store (factory_args=()): no failures can be injected")
    run_machine(build_machine(ctx.subject, concurrent=False, faults=True), ctx.settings, ctx.seed)


@check(id="table.exactly_once", family="table", requires=("table.sequential",))
def exactly_once(ctx: CheckContext) -> None:
    """Transient and permanent failures of single entries in the store beneath the write
    function (in the middle of the bulk calls it fans out too): every acknowledged entry is
    applied exactly once, a failed one not at all; a failure is the table's error carrying the
    store's; transient failures within the declared retries are absorbed."""
    subject = ctx.subject
    if not subject.observes_io:
        raise NotApplicable("the table has its own store (factory_args=()): no failures can be injected")
    probe = subject.make_table(HarnessStore(subject.apply_update))
    try:
        supports_updates = bool(getattr(probe, "supports_updates", True))
    finally:
        close = getattr(probe, "close", None)
        if close is not None:
            close()
    check_exactly_once(subject, ctx.settings, ctx.seed, supports_updates)


@check(id="table.credits", family="table", requires=("table.sequential",))
def credits(ctx: CheckContext) -> None:
    """Rate limiting: every operation (put, delete, update, their bulk forms, update messages)
    takes credit_function(key, value) credits from the write limiter per entry it writes, and
    again for each retried attempt."""
    subject = ctx.subject
    if not subject.limited:
        raise NotApplicable(
            "the factory takes no rate limiter: add 'write_rate_limiter' to factory_args and give "
            "the limiter it receives to the table to check the credits it takes"
        )
    run_machine(build_machine(subject, concurrent=False, faults=False, credits=True), ctx.settings, ctx.seed)


def _write_function_of(table: Any, depth: int = 8) -> Any:
    """The write function a table (or a table it decorates, through ``.table``) writes with,
    if it says (``write_function``, as remote tables do); else ``None``."""
    for _ in range(depth):
        found = getattr(table, "write_function", None)
        if isinstance(found, TableWriteFunction):
            return found
        table = getattr(table, "table", None)
        if table is None:
            return None
    return None


async def _await(awaitable: Any) -> Any:
    return await awaitable
