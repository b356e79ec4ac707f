"""Concurrent histories on one key, judged for linearizability (the ``table.linearizable`` check).

A history: the store holds the record before (or no record; a table with its own store puts
it alone first), then two or three *clients* issue
operations on the same key concurrently, each client one operation after another, each
operation after a drawn number of yields to the event loop (so the interleavings vary and
hypothesis can shrink them). The operations are the single and one-entry bulk forms of put,
delete, update (when the table takes updates) and get. When every operation has answered, the
table is flushed and the key read back through the table, and, over the harness's store, the
store's record is read too. The store reads as a remote one: a read takes its value and answers
some yields later, so a write can land and answer in between (half the histories are races made
for it: a read and a write issued together, the read's answer delayed, further reads after).

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
times, result); a read that returned the record as it was before a write that had completed
when the read began is named stale (a stale read, or a stale value served after quiescence).
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
    latency in yields: before a read takes its value, before a write acts, and between a read's
    value and its answer).

    Half the histories are drawn freely; the other half are *races*: a read and a write of the
    key issued together (the write: an update when the table takes updates, else a put or a
    delete), the read's answer travelling back for a few yields (so the write can land and
    answer meanwhile), then more reads (the read-back follows every history): what a table
    caching the first read's record serves later must not be older than the write."""
    reads = st.tuples(st.sampled_from(["get", "get_all"]))
    writes = [st.tuples(st.sampled_from(["update", "update_all"]), subject.updates),
              st.tuples(st.sampled_from(["put", "put_all"]), subject.values),
              st.tuples(st.sampled_from(["delete", "delete_all"]))]
    if not supports_updates:
        writes = writes[1:]
    op = st.one_of(reads, *writes)
    client = st.lists(st.tuples(st.integers(0, 2), op), min_size=1, max_size=2)
    # a record before the history three times out of four (shrinking towards one)
    before = st.tuples(st.integers(0, 3), subject.values).map(lambda p: None if p[0] == 3 else p[1])
    free = st.tuples(subject.keys, before, st.lists(client, min_size=2, max_size=3),
                     st.integers(1, 3), st.integers(1, 3), st.integers(0, 3))
    reader = st.tuples(st.tuples(st.just(0), reads), st.lists(st.tuples(st.integers(0, 2), reads), max_size=1)
                       ).map(lambda p: [p[0], *p[1]])
    writer = st.tuples(st.integers(0, 1), writes[0]).map(lambda w: [w])
    later = st.lists(st.tuples(st.integers(0, 6), reads), min_size=1, max_size=2)
    race = st.tuples(subject.keys, subject.values, st.tuples(reader, writer, later).map(list),
                     st.integers(0, 1), st.integers(1, 2), st.integers(2, 4))
    return st.one_of(free, race)


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
    key, before, clients, store_reads, store_writes, store_answers = drawn
    store = HarnessStore(subject.apply_update)
    store.read_yields, store.write_yields, store.answer_yields = store_reads, store_writes, store_answers
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
    latency = (f"; the store takes a read's value after {drawn[3]} yields to the event loop and answers "
               f"it {drawn[5]} yields later, and acts on a write after {drawn[4]} yields" if io else "")
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


_WRITES = ("put", "put_all", "delete", "delete_all", "update", "update_all")
_CACHE = "a cache that re-cached a record read before a concurrent write completed"


def _older_than(events: list[Event], verdict: Verdict, index: int, initial: Any, model: _Model) -> Event | None:
    """When the read ``events[index]`` returned the record as it was, in the longest order found,
    before a write that answered before the read was called: that write (the latest such)."""
    read = events[index]
    state, found = initial, None
    states = [initial]
    for i in verdict.prefix:
        state = model.step(state, events[i].op)[2]
        states.append(state)
    for j, before in enumerate(states[:-1]):
        if model.step(before, read.op)[0] != read.outcome:
            continue
        for i in verdict.prefix[j:]:
            write = events[i]
            if (write.op[0] in _WRITES and write.outcome == ("ok",) and write.answered < read.invoked
                    and model.state_key(model.step(before, write.op)[2]) != model.state_key(before)):
                found = write
                break
    return found


def _cause(events: list[Event], who: list[str], verdict: Verdict, index: int, initial: Any,
           model: _Model) -> str:
    """What the failure says about its cause: a stale read (the record as it was before a write
    that had completed when the read began), a stale value served after quiescence, or, for a
    read after every operation answered, a lost write or a stale value."""
    event = events[index]
    if event.op[0] not in ("get", "get_all", "store"):
        return ""
    older = _older_than(events, verdict, index, initial, model)
    stored = [e for e, w in zip(events, who, strict=True) if w == "harness"]
    if who[index] == READ_BACK and older is not None and stored and stored[0].outcome != event.outcome:
        return (f"; a stale value served after quiescence: every operation had answered, the store holds "
                f"{stored[0].shown}, and the table returned the record as it was before {older.text}, "
                f"which completed at t{older.answered} (the table serves an out-of-date copy: {_CACHE})")
    if who[index] != READ_BACK and who[index] != "harness" and older is not None:
        return (f"; a stale read: it returned the record as it was before {older.text}, which completed "
                f"at t{older.answered}, before this read began at t{event.invoked} (a read that starts "
                f"after a write completed must see it: {_CACHE} serves it)")
    if who[index] in (READ_BACK, "harness"):
        return ("; a read after every operation answered must see the final state: a write was lost "
                "(a read-modify-write without a lock overwrites a concurrent write) or a stale value "
                f"is served ({_CACHE})")
    return ""


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
        hint = _cause(events, who, verdict, index, initial, model)
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
                                  f"{show(drawn[2])}, store latency {drawn[3]}+{drawn[5]}/{drawn[4]} "
                                  f"yields")
