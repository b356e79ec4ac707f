"""Faults beneath the write function, judged by the exactly-once rule (the ``table.exactly_once``
check).

Each example runs up to four write operations (single and bulk puts, deletes, updates; one at a
time; before an update, the store is usually given a record for each key it updates that has
none) on a fresh table over the harness's store, each with a fault armed in the *store*, under
whatever write function the table uses (``HarnessStore.fail_entry``): the writes of one key the
operation carries fail, transiently (``1..write_retries + 1`` times) or permanently, in
whatever call they reach the store, so in the middle of a bulk call the table or its write
function fans out. When the operation has answered, the table is flushed; then:

- every entry of an acknowledged operation (and of a bulk operation, every entry its
  ``BatchWriteError`` does not list) was applied by the store **exactly once**: not lost, not
  applied twice by a retry; an entry the table reports failed was not applied at all;
- a failure is the table's error (a ``reference.StateError``) carrying the store's failure (or
  the missing record) in its cause chain, for every entry it fails: a permanent failure is
  never acknowledged (that is silent loss);
- a transient failure within the declared ``write_retries``, on an operation whose keys are
  distinct and whose updates find their records, is absorbed: the operation succeeds;
- the store's records are the model's, the acknowledged entries applied in list order.

A failing example is shrunk by hypothesis, then the steps and bulk entries it does not need are
dropped (delta debugging), so the message shows the shortest run of steps that fails.

The fault checks before this one (``table.faults``) fail whole calls into the write function;
this one fails rows beneath it.
"""

from __future__ import annotations

import asyncio
import copy
from collections import Counter
from typing import Any

import hypothesis
from hypothesis import settings as Settings
from hypothesis import strategies as st

from reference import StateError
from reference.table import BatchWriteError, RecordNotFoundError, find_cause

from .._engine.canonical import canonical, show, values_equal
from .._engine.property import for_all
from .._engine.registry import Violation
from ._store import HarnessStore, InjectedStoreError, InjectedTransientError
from ._subject import TableSubject

__all__ = ["check_exactly_once", "fault_strategy"]

#: how many times more examples than the budget's are run (an example is cheap)
EXAMPLES_PER_BUDGET = 3

_KIND = {"put": "put", "put_all": "put", "delete": "delete", "delete_all": "delete",
         "update": "update", "update_all": "update"}


def fault_strategy(subject: TableSubject, supports_updates: bool) -> st.SearchStrategy[Any]:
    """(records in the store before, steps: (operation name, entries, fault, record)); a fault
    is (position from the end of the entry whose key fails, times, permanent); ``record`` (or
    None) is put in the store, before an update, for each key it updates that has none."""
    keys, values, updates = subject.keys, subject.values, subject.updates

    def entries(payload: st.SearchStrategy[Any], bulk: bool) -> st.SearchStrategy[Any]:
        return st.lists(st.tuples(keys, payload), min_size=1, max_size=4 if bulk else 1)

    def form(kind: str, payload: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        # bulk forms twice as often: a fault in the middle of a bulk call is what this check adds
        return st.tuples(st.sampled_from([kind + "_all", kind, kind + "_all"]), entries(payload, False),
                         entries(payload, True))

    forms = [form("put", values), form("delete", st.none())]
    if supports_updates:
        # updates twice as often: their double application is the one that shows in the record
        forms += [form("update", updates), form("update", updates)]
    op = st.one_of(*forms).map(lambda f: (f[0], f[2] if f[0].endswith("_all") else f[1]))
    # (position, times, permanent); permanent first: a shrunk failure shows the simpler fault
    fault = st.tuples(st.integers(0, 3), st.integers(1, subject.write_retries + 1), st.booleans().map(lambda transient: not transient))
    # a record for an update's missing keys three times out of four (shrinking towards one)
    record = st.tuples(st.integers(0, 3), values).map(lambda p: None if p[0] == 3 else p[1])
    return st.tuples(st.lists(st.tuples(keys, values), max_size=4),
                     st.lists(st.tuples(op, fault, record), min_size=1, max_size=4))


def _text(name: str, entries: list[tuple[Any, Any]]) -> str:
    if name in ("put", "update"):
        return f"{name}({show(entries[0][0])}, {show(entries[0][1])})"
    if name == "delete":
        return f"delete({show(entries[0][0])})"
    if name == "delete_all":
        return f"delete_all({show([k for k, _ in entries])})"
    return f"{name}({show(entries)})"


def _call(table: Any, name: str, entries: list[tuple[Any, Any]]) -> Any:
    if name in ("put", "update"):
        return getattr(table, name + "_async")(*entries[0])
    if name == "delete":
        return table.delete_async(entries[0][0])
    if name == "delete_all":
        return table.delete_all_async([k for k, _ in entries])
    return getattr(table, name + "_async")(entries)


def _entry(kind: str, key: Any, payload: Any) -> tuple[Any, ...]:
    return kind, canonical(key), canonical(payload)


def _injected(exc: BaseException) -> BaseException | None:
    if isinstance(exc, BatchWriteError):
        causes = [_injected(e) for e in exc.failures.values()]
        return causes[0] if causes and all(c is not None for c in causes) else None
    for kind in (InjectedStoreError, InjectedTransientError, RecordNotFoundError):
        found = find_cause(exc, kind)
        if found is not None:
            return found
    return None


async def _as_coroutine(awaitable: Any) -> Any:
    return await awaitable


def judge(subject: TableSubject, drawn: Any) -> None:
    """Run one example (see module doc) and raise a ``Violation`` at the first breach."""
    before, steps = drawn
    store = HarnessStore(subject.apply_update)
    for key, value in before:
        store.data[key] = copy.deepcopy(value)
    table = subject.make_table(store)
    loop = asyncio.new_event_loop()
    model = {k: copy.deepcopy(v) for k, v in store.data.items()}
    done: list[str] = []
    try:
        for (name, entries), (position, times, permanent), record in steps:
            kind = _KIND[name]
            missing = [k for k, _ in entries if k not in model]
            if kind == "update" and record is not None and missing:
                for key in missing:
                    store.data[key] = copy.deepcopy(record)
                    model[key] = copy.deepcopy(record)
                done.append(f"(the store is given {show({k: record for k in missing})})")
            target = _target(entries, position)
            how = "permanently" if permanent else f"transiently {times} time{'s' if times > 1 else ''}"
            fault = f"the store failing the {kind} of key {show(target)} {how}"
            if name.endswith("_all"):
                fault += " (inside a bulk call)"
            step = f"{_text(name, entries)} with {fault}"
            example = "\n".join([f"store before: {show(dict(before))}", *done, step])
            start = len(store.applied)
            store.fail_entry(kind, target, 1 if permanent else times, permanent)
            try:
                outcome: BaseException | None = None
                try:
                    awaitable = _call(table, name, entries)
                except Exception as exc:
                    outcome = exc
                else:
                    try:
                        loop.run_until_complete(asyncio.wait_for(_as_coroutine(awaitable),
                                                                 subject.operation_timeout))
                    except asyncio.TimeoutError:
                        raise Violation(f"{step}: got no result within {subject.operation_timeout:g} s, "
                                        f"should complete (the table is stuck)", example=example) from None
                    except Exception as exc:
                        outcome = exc
                # quiescence: what the table still has to send is sent
                loop.run_until_complete(asyncio.wait_for(_settle(table), subject.operation_timeout))
            finally:
                store.clear_faults()
            _judge(subject, step, example, kind, name.endswith("_all"), entries, outcome, store, start, model, permanent, times)
            done.append(f"{step}: {'succeeded' if outcome is None else type(outcome).__name__}")
    finally:
        loop.close()
        close = getattr(table, "close", None)
        if close is not None:
            close()


async def _settle(table: Any) -> None:
    try:
        await _as_coroutine(table.flush_async())
    except Exception:  # a flush failing is the failed operations' news, judged through them
        pass
    for _ in range(8):
        await asyncio.sleep(0)


def _judge(subject: TableSubject, step: str, example: str, kind: str, bulk: bool, entries: list[tuple[Any, Any]],
           outcome: BaseException | None, store: HarnessStore, start: int, model: dict[Any, Any],
           permanent: bool, times: int) -> None:
    if outcome is None:
        failed: dict[int, BaseException] = {}
    elif isinstance(outcome, BatchWriteError) and bulk:
        failed = {i: e for i, e in outcome.failures.items() if 0 <= i < len(entries)}
    else:
        failed = {i: outcome for i in range(len(entries))}
    acknowledged = [e for i, e in enumerate(entries) if i not in failed]

    # the failure is the table's, carrying the store's
    for i, error in failed.items():
        if not isinstance(error, StateError) or _injected(error) is None:
            where = f" for entry {i} {show(entries[i])}" if len(entries) > 1 else ""
            raise Violation(
                f"{step}: got {type(error).__name__}: {error}{where}, should be the table's error (a "
                f"reference.StateError such as BatchWriteError, RetriesExhaustedError or the store's "
                f"error passed on) carrying the store's failure as its cause", example=example,
            )

    # exactly once per acknowledged entry, never for a failed one
    applied = Counter(_entry(k, key, p) for k, key, p in store.applied[start:])
    should = Counter(_entry(kind, key, p) for key, p in acknowledged)
    for entry in dict.fromkeys([*should, *applied]):
        got, due = applied[entry], should[entry]
        if got == due:
            continue
        shown = f"the {kind} {show(_shown(entries, entry))}"
        if due and not got:
            cause = ("the store failed it permanently and the table reported success: a permanent "
                     "failure must surface as the table's error, not be acknowledged"
                     if permanent else
                     "the store failed it transiently and the table reported success without it being "
                     "written again: a failed row must be retried or reported in a BatchWriteError")
            raise Violation(
                f"{step}: {shown}: got acknowledged and applied 0 times, should be applied "
                f"{_times(due)} (an acknowledged write was lost: {cause})", example=example,
            )
        if due:
            raise Violation(
                f"{step}: {shown}: got applied {got} times, should be {_times(due)} (exactly once per "
                f"acknowledged entry: a retry re-sent a row the store had already applied: resend only the rows "
                f"that failed; a write function fanning a bulk call out row by row must report the "
                f"failed rows in a BatchWriteError, not fail the whole call with a retriable error)",
                example=example,
            )
        raise Violation(
            f"{step}: {shown}: got reported failed yet applied {got} time{'s' if got > 1 else ''}, "
            f"should not be applied (a caller retrying what failed would apply it twice)",
            example=example,
        )

    # transient failures within the declared retries are absorbed
    keys = [canonical(k) for k, _ in entries]
    findable = kind != "update" or all(k in model for k, _ in entries)
    if (outcome is not None and not permanent and times <= subject.write_retries and findable
            and len(set(keys)) == len(keys)):
        raise Violation(
            f"{step}: got {type(outcome).__name__}: {outcome}, should be success (a transient failure "
            f"{times} time{'s' if times > 1 else ''}, within the declared write_retries="
            f"{subject.write_retries}, is absorbed by retrying the rows that failed)", example=example,
        )

    # the records: the acknowledged entries applied in list order
    for key, payload in acknowledged:
        if kind == "put":
            model[key] = copy.deepcopy(payload)
        elif kind == "delete":
            model.pop(key, None)
        elif key in model:
            model[key] = subject.apply_update(model[key], copy.deepcopy(payload))
    got_keys = {canonical(k) for k in store.data}
    if got_keys != {canonical(k) for k in model} or any(
            not values_equal(store.data[k], v) for k, v in model.items()):
        raise Violation(
            f"{step}: records in the store: got {show(store.data)}, should be {show(model)} (the "
            f"acknowledged entries applied once each, in list order)", example=example,
        )


def _target(entries: list[tuple[Any, Any]], position: int) -> Any:
    """The key whose writes fail: ``position`` counts from the last entry (the last row first,
    so the rows before it land: what a wrong retry would re-apply)."""
    return entries[len(entries) - 1 - position % len(entries)][0]


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _shown(entries: list[tuple[Any, Any]], entry: tuple[Any, ...]) -> Any:
    for key, payload in entries:
        if canonical(key) == entry[1] and canonical(payload) == entry[2]:
            return (key, payload) if payload is not None else key
    return entry[1:]


def check_exactly_once(subject: TableSubject, settings: Settings, seed: int | None,
                       supports_updates: bool) -> None:
    """Run examples under the budget of ``settings``; a failure is shrunk by hypothesis, then
    by dropping the steps it does not need (``_fewer_steps``)."""
    failing: list[Any] = []

    def body(drawn: Any) -> None:
        try:
            judge(subject, drawn)
        except Violation:
            failing[:] = [drawn]
            raise

    wider = hypothesis.settings(settings, max_examples=settings.max_examples * EXAMPLES_PER_BUDGET)
    try:
        for_all(wider, seed if not settings.derandomize else None, fault_strategy(subject, supports_updates),
                body, display=show)
    except Violation:
        if not failing:
            raise
        judge(subject, _fewer_steps(subject, failing[0]))
        raise


def _fails(subject: TableSubject, drawn: Any) -> bool:
    try:
        judge(subject, drawn)
    except Violation:
        return True
    except Exception:  # a crash is not the failure being shrunk
        return False
    return False


def _fewer_steps(subject: TableSubject, drawn: Any) -> Any:
    """Delta debugging: drop each step (last first), then each entry of a bulk step, then the
    records before, while the example still fails; the smallest failing example is returned."""
    before, steps = drawn
    i = len(steps) - 1
    while i >= 0 and len(steps) > 1:
        candidate = (before, steps[:i] + steps[i + 1:])
        if _fails(subject, candidate):
            steps = candidate[1]
        i -= 1
    for at in range(len(steps)):  # then the entries of each bulk step
        (name, entries), fault, record = steps[at]
        target = _target(entries, fault[0])
        j = len(entries) - 1
        while j >= 0 and len(entries) > 1:
            fewer = entries[:j] + entries[j + 1:]
            # the same key keeps failing: its position from the end in the shorter list
            keys = [canonical(k) for k, _ in fewer]
            if canonical(target) in keys:
                moved = (len(fewer) - 1 - keys.index(canonical(target)), *fault[1:])
                candidate = (before, steps[:at] + [((name, fewer), moved, record)] + steps[at + 1:])
                if _fails(subject, candidate):
                    steps, entries = candidate[1], fewer
            j -= 1
    if before and _fails(subject, ([], steps)):
        before = []
    return before, steps
