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
