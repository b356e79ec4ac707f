"""Concurrent histories on one key, judged for linearizability (the ``table.linearizable`` check).

A history: the store holds the record before (or no record; a table with its own store puts
it alone first), then two or three *clients* issue
operations on the same key concurrently, each client one operation after another, each
operation after a drawn number of yields to the event loop (so the interleavings vary and
hypothesis can shrink them). The operations are the single and one-entry bulk forms of put,
delete, update (when the table takes updates) and get. When every operation has answered, the
table is flushed and the key read back through the table, and, over the harness's store, the
store's record is read too.

The clients are tasks on the event loop the table's ``*_async`` methods run on (the table API
is asyncio: its sync methods share one private loop per table and are not for concurrent
threads). Invocation and response are stamped with a logical clock on that loop: the real-time
order is exact under any machine load, so a correct table is never flagged because the machine
was slow (timing changes which history is produced, never the verdict on it).

The verdict: a table that keeps the order of issue (``TableSubject.order_guarantee``) must give
what the model gives applied in the order the operations were invoked; any other table must be
linearizable (``_linear.linearize``): some order consistent with real time explains every
result, the read-back and the store's record. Over the harness's store, the update entries the
store applied must also be one per acknowledged update. A failing history is shrunk by
hypothesis; the message names the operation the search could not place and what the model
allowed there, and the example lists the history (client, operation, invocation and response
times, result).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Hashable
from typing import Any

from hypothesis import settings as Settings
from hypothesis import strategies as st

from reference.table import BatchWriteError

from .._engine.canonical import canonical, show
from .._engine.property import for_all
from .._engine.registry import Violation
from ._linear import Event, Verdict, in_order, linearize
from ._machine import classify
from ._store import HarnessStore
from ._subject import TableSubject

__all__ = ["check_linearizable", "history_strategy"]

ABSENT = object()
READ_BACK = "alone, after every operation answered"
#: how many times more histories than the budget's examples are tried (a history is cheap)
HISTORIES_PER_EXAMPLE = 10


def history_strategy(subject: TableSubject, supports_updates: bool) -> st.SearchStrategy[Any]:
    """(key, record before or None, clients: lists of (yields before, operation), the store's
    read and write latency in yields)."""
    forms = [st.tuples(st.sampled_from(["get", "get_all"])),
             st.tuples(st.sampled_from(["update", "update_all"]), subject.updates),
             st.tuples(st.sampled_from(["put", "put_all"]), subject.values),
             st.tuples(st.sampled_from(["delete", "delete_all"]))]
    op = st.one_of(*(forms if supports_updates else forms[:1] + forms[2:]))
    client = st.lists(st.tuples(st.integers(0, 2), op), min_size=1, max_size=2)
    # a record before the history three times out of four (shrinking towards one)
    before = st.tuples(st.integers(0, 3), subject.values).map(lambda p: None if p[0] == 3 else p[1])
    return st.tuples(subject.keys, before,
                     st.lists(client, min_size=2, max_size=3), st.integers(1, 3), st.integers(1, 3))


def _text(key: Any, op: tuple[Any, ...]) -> str:
    name = op[0]
    if name in ("put", "update"):
        return f"{name}({show(key)}, {show(op[1])})"
    if name in ("put_all", "update_all"):
        return f"{name}([({show(key)}, {show(op[1])})])"
    if name in ("delete_all", "get_all"):
        return f"{name}([{show(key)}])"
    return f"{name}({show(key)})"


def _call(table: Any, key: Any, op: tuple[Any, ...]) -> Any:
    name = op[0]
    if name in ("put", "update"):
        return getattr(table, name + "_async")(key, op[1])
    if name in ("put_all", "update_all"):
        return getattr(table, name + "_async")([(key, op[1])])
    if name in ("delete_all", "get_all"):
        return getattr(table, name + "_async")([key])
    return getattr(table, name + "_async")(key)


def _record(value: Any) -> str:
    return "no record" if value is ABSENT or value is None else show(value)


class _Model:
    """The sequential model of one key: ``step(state, op)`` -> (outcome, how it reads, state)."""

    def __init__(self, key: Any, apply_update: Any) -> None:
        self.key = key
        self.apply_update = apply_update

    def state_key(self, state: Any) -> Hashable:
        return ("absent",) if state is ABSENT else ("record", canonical(state))

    def step(self, state: Any, op: tuple[Any, ...]) -> tuple[Hashable, str, Any]:
        name = op[0]
        if name in ("get", "store"):
            value = None if state is ABSENT else state
            return ("value", canonical(value)), f"returns {_record(state)}", state
        if name == "get_all":
            found = {} if state is ABSENT else {self.key: state}
            return ("value", canonical(found)), f"returns {show(found)}", state
        if name in ("put", "put_all"):
            return ("ok",), "succeeds", copy.deepcopy(op[1])
        if name in ("delete", "delete_all"):
            return ("ok",), "succeeds", ABSENT
        # update, update_all
        if state is ABSENT:
            if name == "update":
                return ("error", "not_found"), "fails with RecordNotFoundError (no record)", state
            return ("batch", ((0, "not_found"),)), "fails with BatchWriteError {0: not_found}", state
        after = self.apply_update(copy.deepcopy(state), copy.deepcopy(op[1]))
        return ("ok",), f"succeeds (record {show(after)})", after


def _observed(key: Any, op: tuple[Any, ...], state: str, got: Any) -> tuple[Hashable, str]:
    """What an operation returned, as compared with the model and as it reads."""
    if state == "ok":
        if op[0] in ("get", "get_all", "store"):
            return ("value", canonical(got)), "no record" if got is None else show(got)
        return ("ok",), "success"
    if isinstance(got, BatchWriteError):
        kinds = tuple(sorted((i, classify(e)) for i, e in got.failures.items()))
        return ("batch", kinds), f"BatchWriteError {dict(kinds)}"
    return ("error", classify(got)), f"{type(got).__name__}: {got}"


class _Clock:
    def __init__(self) -> None:
        self.now = 0

    def tick(self) -> int:
        self.now += 1
        return self.now


async def _as_coroutine(awaitable: Any) -> Any:
    return await awaitable


def run_history(subject: TableSubject, drawn: Any) -> tuple[list[Event], list[str], HarnessStore, Any]:
    """Run one drawn history on a fresh table: the events (the record's put first when the table
    has its own store, the clients' operations, the read-back, the store's record), who issued
    each, the store and the table."""
    key, before, clients, store_reads, store_writes = drawn
    store = HarnessStore(subject.apply_update)
    store.read_yields, store.write_yields = store_reads, store_writes
    table = subject.make_table(store)
    loop = asyncio.new_event_loop()
    clock = _Clock()
    events: list[Event] = []
    who: list[str] = []

    async def one(op: tuple[Any, ...], client: str) -> None:
        invoked = clock.tick()
        try:
            got: Any = await _as_coroutine(_call(table, key, op))
            state = "ok"
        except Exception as exc:
            got, state = exc, "failed"
        answered = clock.tick()
        outcome, shown = _observed(key, op, state, got)
        events.append(Event(op, _text(key, op), outcome, shown, invoked, answered))
        who.append(client)

    async def client(name: str, ops: list[tuple[int, tuple[Any, ...]]]) -> None:
        for yields, op in ops:
            for _ in range(yields):
                await asyncio.sleep(0)
            await one(op, name)

    if before is not None and subject.observes_io:
        store.data[key] = copy.deepcopy(before)  # a store that holds the record already: no cache has it

    async def history() -> None:
        if before is not None and not subject.observes_io:
            await one(("put", before), "alone, first")
        await asyncio.gather(*(client(chr(ord("A") + i), ops) for i, ops in enumerate(clients)))
        await _as_coroutine(table.flush_async())
        await one(("get",), READ_BACK)

    timeout = subject.operation_timeout * (1 + max(len(c) for c in clients))
    try:
        loop.run_until_complete(asyncio.wait_for(history(), timeout))
    except asyncio.TimeoutError:
        raise Violation(
            f"concurrent operations on key {show(key)}: got no result within {timeout:g} s, should "
            f"complete (the table is stuck: a batch never flushed, or a future never completed)",
            example=_listing(drawn, events, who, None, subject.observes_io),
        ) from None
    finally:
        loop.close()
        close = getattr(table, "close", None)
        if close is not None:
            close()
    if subject.observes_io:
        now = clock.tick()
        value = copy.deepcopy(store.data.get(key))
        events.append(Event(("store",), f"the store's record of {show(key)}", ("value", canonical(value)),
                            _record(value), now, clock.tick()))
        who.append("harness")
    return events, who, store, table


def _listing(drawn: Any, events: list[Event], who: list[str], verdict: Verdict | None, io: bool) -> str:
    latency = (f"; the store answers reads after {drawn[3]} and writes after {drawn[4]} yields to the "
               f"event loop" if io else "")
    lines = [f"history on key {show(drawn[0])} (times are the order of invocations and responses{latency}):"]
    if io:
        lines.append(f"  the store holds {_record(drawn[1])} before the history")
    for event, client in sorted(zip(events, who, strict=True), key=lambda p: p[0].invoked):
        lines.append(f"  {event.text:<28} client {client:<38} called t{event.invoked:<3} answered "
                     f"t{event.answered:<3} -> {event.shown}")
    if verdict is not None and not verdict.ok:
        order = ", ".join(events[i].text for i in verdict.prefix) or "(nothing)"
        lines.append(f"longest order consistent with real time that explains the results: {order}; "
                     f"the record is then {_record(verdict.state)}")
        for i, allowed in verdict.stuck:
            lines.append(f"  next could be {events[i].text}: got {events[i].shown}, the model {allowed}")
    return "\n".join(lines)


def judge(subject: TableSubject, drawn: Any, keeps_order: bool, why: str) -> None:
    """Run one history and raise a ``Violation`` when it is not what the table promises."""
    events, who, store, table = run_history(subject, drawn)
    key = drawn[0]
    model = _Model(key, subject.apply_update)
    initial = copy.deepcopy(drawn[1]) if drawn[1] is not None and subject.observes_io else ABSENT
    if keeps_order:
        verdict = in_order(events, initial, model.step)
    else:
        verdict = linearize(events, initial, model.step, model.state_key)
    if not verdict.ok:
        index, allowed = verdict.stuck[0]
        event = events[index]
        if keeps_order:
            rule = (f"should be what the model gives applied in the order issued ({why}): it "
                    f"{allowed}")
        else:
            rule = (f"should be explained by some order of the operations consistent with real time "
                    f"(an operation that answered before another was called stays before it; {why}); "
                    f"no such order exists: after the longest order found, the model {allowed}")
        hint = ""
        if who[index] in (READ_BACK, "harness"):
            hint = ("; a read after every operation answered must see the final state: a write was lost "
                    "(a read-modify-write without a lock overwrites a concurrent write) or a stale value "
                    "is served (a cache that kept a value read before a concurrent write completed)")
        raise Violation(
            f"concurrent operations on key {show(key)}: {event.text} (client {who[index]}, called "
            f"t{event.invoked}, answered t{event.answered}): got {event.shown}, {rule}{hint}",
            example=_listing(drawn, events, who, verdict, subject.observes_io),
        )
    if subject.observes_io:
        acknowledged = sum(1 for e in events if e.op[0] in ("update", "update_all") and e.outcome == ("ok",))
        if store.counts.updates != acknowledged:
            raise Violation(
                f"concurrent operations on key {show(key)}: update entries the store applied: got "
                f"{store.counts.updates}, should be {acknowledged} (exactly one per acknowledged update)",
                example=_listing(drawn, events, who, None, subject.observes_io),
            )


def check_linearizable(subject: TableSubject, settings: Settings, seed: int | None,
                       keeps_order: bool, why: str, supports_updates: bool) -> None:
    """Run histories under the budget of ``settings`` (``HISTORIES_PER_EXAMPLE`` times its
    examples); a failure is shrunk by hypothesis and raised as a ``Violation``."""
    import hypothesis

    wider = hypothesis.settings(settings, max_examples=settings.max_examples * HISTORIES_PER_EXAMPLE)
    for_all(wider, seed if not settings.derandomize else None, history_strategy(subject, supports_updates),
            lambda drawn: judge(subject, drawn, keeps_order, why),
            display=lambda drawn: f"key {show(drawn[0])}, record before {show(drawn[1])}, clients "
                                  f"{show(drawn[2])}, store latency {drawn[3]}/{drawn[4]} yields")
