"""The linearizability search the table family judges concurrent histories with
(conformance/_table/_linear.py), on hand-made histories of a register whose verdicts are known."""

from __future__ import annotations

import pytest

from conformance._table._linear import MAX_EVENTS, Event, in_order, linearize


def step(state, op):
    """A register: ("write", v) succeeds and stores v; ("read",) returns the value."""
    if op[0] == "write":
        return "ok", "succeeds", op[1]
    return state, f"returns {state}", state


def ev(op, outcome, invoked, answered):
    return Event(op, repr(op), outcome, repr(outcome), invoked, answered)


def test_overlapping_writes_may_take_effect_in_either_order():
    # write 1 [1,4] and write 2 [2,3] overlap; a read after both returns 1: write 2 then write 1
    history = [ev(("write", 1), "ok", 1, 4), ev(("write", 2), "ok", 2, 3), ev(("read",), 1, 5, 6)]
    verdict = linearize(history, 0, step)
    assert verdict.ok and verdict.order == [1, 0, 2], f"got {verdict}, should order write 2, write 1, read"


def test_an_operation_that_answered_before_another_started_stays_before_it():
    # write 1 [1,2] answered before write 2 [3,4] started: a later read of 1 is not linearizable
    history = [ev(("write", 1), "ok", 1, 2), ev(("write", 2), "ok", 3, 4), ev(("read",), 1, 5, 6)]
    verdict = linearize(history, 0, step)
    assert not verdict.ok, f"got {verdict}, should find no order (real time puts write 2 last)"
    assert verdict.prefix == [0, 1] and verdict.stuck == [(2, "returns 2")], (
        f"got prefix {verdict.prefix} and stuck {verdict.stuck}, should explain both writes and show the "
        f"read the model allows (2)"
    )


def test_a_read_concurrent_with_a_write_may_see_either_value():
    for seen in (0, 5):
        history = [ev(("write", 5), "ok", 1, 4), ev(("read",), seen, 2, 3)]
        assert linearize(history, 0, step).ok, f"got no order, should allow a concurrent read of {seen}"
    history = [ev(("write", 5), "ok", 1, 4), ev(("read",), 7, 2, 3)]
    assert not linearize(history, 0, step).ok, "got an order, should refuse a read of a value never written"


def test_the_memo_visits_each_set_and_state_once():
    # n concurrent writes of the same value and a final read of another: every subset of the
    # writes reaches one state, so the search visits at most 2**n nodes before refusing
    n = 12
    history = [ev(("write", 1), "ok", i + 1, 100) for i in range(n)] + [ev(("read",), 2, 101, 102)]
    verdict = linearize(history, 0, step)
    assert not verdict.ok, f"got {verdict.ok}, should refuse (nothing wrote 2)"
    assert verdict.explored <= 2 ** n, f"got {verdict.explored} nodes explored, should be at most {2 ** n}"


def test_a_history_longer_than_the_bound_is_refused():
    history = [ev(("write", i), "ok", 2 * i + 1, 2 * i + 2) for i in range(MAX_EVENTS + 1)]
    with pytest.raises(ValueError, match=f"at most {MAX_EVENTS}"):
        linearize(history, 0, step)


def test_in_order_applies_the_model_in_the_order_of_invocation():
    # write 1 invoked first, write 2 second, overlapping; a final read of 1 is linearizable but
    # not in the order issued
    history = [ev(("write", 2), "ok", 2, 3), ev(("write", 1), "ok", 1, 4), ev(("read",), 1, 5, 6)]
    assert linearize(history, 0, step).ok, "got no order, should be linearizable"
    verdict = in_order(history, 0, step)
    assert not verdict.ok and verdict.stuck == [(2, "returns 2")], (
        f"got {verdict}, should refuse the read: in the order issued the register holds 2"
    )


def test_the_harness_store_fails_one_row_of_a_bulk_call_and_applies_the_others():
    """What table.exactly_once arms beneath the write function: a row of a bulk call fails, the
    others are applied, and the failed one is listed (by position) in a BatchWriteError."""
    import asyncio

    from conformance._table._store import HarnessStore, InjectedTransientError
    from reference.table import BatchWriteError

    store = HarnessStore(lambda value, update: value + update)
    store.data = {1: 10, 2: 20, 3: 30}
    store.fail_entry("update", 2, times=1, permanent=False)
    with pytest.raises(BatchWriteError) as info:
        asyncio.run(store.update_all_async([(1, 1), (2, 1), (3, 1)]))
    assert list(info.value.failures) == [1] and isinstance(info.value.failures[1], InjectedTransientError), (
        f"got failures {info.value.failures}, should list only entry 1 (key 2), failed transiently"
    )
    assert store.data == {1: 11, 2: 20, 3: 31}, f"got {store.data}, should apply every row but key 2's"
    assert [(k, key) for k, key, _ in store.applied] == [("update", 1), ("update", 3)], (
        f"got applied log {store.applied}, should log the two rows applied"
    )
    asyncio.run(store.update_all_async([(2, 1)]))  # the fault was armed once
    assert store.data[2] == 21, f"got {store.data[2]}, should apply key 2's row once the fault is spent"


def test_the_harness_store_reads_when_the_request_arrives_and_answers_later():
    """With ``answer_yields``, a write landing between a read's arrival and its answer is not
    in what the read returns (as a remote store whose answer travels back)."""
    import asyncio

    from conformance._table._store import HarnessStore

    async def race(answer_yields):
        store = HarnessStore(lambda value, update: value + update)
        store.data = {1: 10}
        store.read_yields, store.write_yields, store.answer_yields = 0, 1, answer_yields
        read = asyncio.ensure_future(store.get_async(1))
        await asyncio.sleep(0)  # the read arrives and takes its value
        await store.update_async(1, 5)  # the update lands and answers
        return read.done(), await read, store.data[1]

    done, got, stored = asyncio.run(race(3))
    assert (done, got, stored) == (False, 10, 15), (
        f"got (answered before the update, value, store) {(done, got, stored)}, should be (False, 10, 15): "
        f"the read took 10 on arrival and answers after the update completed"
    )
    assert asyncio.run(race(0))[:2] == (True, 10), "got the read pending after the update, should answer at once"


def _stale_history(read_back: bool):
    """An update of 0 + 1 completed (t2), then a read (t3) still returns 0; with ``read_back``
    the read is the one after every operation answered and the store holds 1."""
    from conformance._engine.canonical import canonical
    from conformance._table._history import READ_BACK, _Model

    model = _Model(0, lambda value, update: value + update)
    update = Event(("update", 1), "update(0, 1)", ("ok",), "success", 1, 2)
    read = Event(("get",), "get(0)", ("value", canonical(0)), "0", 3, 4)
    events, who = [update, read], ["A", READ_BACK if read_back else "B"]
    if read_back:
        events.append(Event(("store",), "the store's record of 0", ("value", canonical(1)), "1", 5, 6))
        who.append("harness")
    return events, who, model


@pytest.mark.parametrize("read_back", [False, True])
def test_a_read_older_than_a_completed_update_is_named_stale(read_back):
    from conformance._table._history import _cause

    events, who, model = _stale_history(read_back)
    verdict = linearize(events, 0, model.step, model.state_key)
    assert not verdict.ok and verdict.stuck[0][0] == 1, f"got {verdict}, should refuse the read of 0"
    cause = _cause(events, who, verdict, 1, 0, model)
    expected = "a stale value served after quiescence" if read_back else "a stale read"
    assert cause.startswith(f"; {expected}") and "update(0, 1), which completed at t2" in cause, (
        f"got cause {cause!r}, should say {expected!r} and name update(0, 1), completed at t2"
    )


def test_a_read_no_write_explains_is_not_called_stale():
    """A read of a value never held (not an older record) is not blamed on staleness."""
    from conformance._engine.canonical import canonical
    from conformance._table._history import _cause

    events, who, model = _stale_history(False)
    events[1] = Event(("get",), "get(0)", ("value", canonical(7)), "7", 3, 4)
    verdict = linearize(events, 0, model.step, model.state_key)
    assert not verdict.ok, f"got {verdict}, should refuse the read of 7"
    cause = _cause(events, who, verdict, 1, 0, model)
    assert "stale" not in cause, f"got cause {cause!r}, should not call a read of a value never held stale"
