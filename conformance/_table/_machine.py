"""The stateful certification: a hypothesis ``RuleBasedStateMachine`` drives a subject's table
and the model side by side and compares every observable result.

Observed after every step: each operation's result or error (and whether a refusal came when
the method was called), the store's records, the PUT and update entries that reached the store
and, when the table exposes writer retry metrics, those metrics against the calls into its
write function. The credits machine also compares, after each operation, the credits the table
took from the harness's rate limiter with one ``credit_function(key, value)`` per entry written,
again for each retried attempt.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from reference.table import (
    BatchWriteError,
    RecordNotFoundError,
    UnsupportedTableOperationError,
    UpdateContract,
    UpdateFailedError,
    UpdateMessage,
    find_cause,
)

from .._engine.canonical import show, values_equal
from ._model import NO_VALUE, Expected, TableModel
from ._store import HarnessStore, InjectedStoreError
from ._subject import TableSubject

__all__ = ["TableViolation", "build_machine", "classify"]


class TableViolation(AssertionError):
    """The table's observable behaviour differs from the model's."""


def classify(exc: BaseException) -> str:
    """The error kind an exception stands for (the model's vocabulary)."""
    if isinstance(exc, UpdateFailedError):
        return "update_failed"
    if isinstance(exc, UnsupportedTableOperationError):
        return "unsupported"
    if find_cause(exc, InjectedStoreError) is not None:
        return "io"
    if find_cause(exc, RecordNotFoundError) is not None:
        return "not_found"
    return f"unexpected {type(exc).__name__} ({exc})"


def _show_error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _run_in_thread(func: Callable[[], Any], timeout: float) -> tuple[bool, Any]:
    """Run a blocking call with a time limit (a stuck table must not hang the certification)."""
    box: queue.Queue[tuple[bool, Any]] = queue.Queue()

    def target() -> None:
        try:
            box.put((True, func()))
        except BaseException as exc:  # reported as the operation's outcome
            box.put((False, exc))

    threading.Thread(target=target, daemon=True, name="table-sync-call").start()
    try:
        return box.get(timeout=timeout)
    except queue.Empty:
        raise TableViolation(
            f"a sync call: got no result within {timeout:g} s, should complete (the table is "
            f"stuck: a batch never flushed, or a future never completed)"
        ) from None


def _describe(op: tuple[Any, ...]) -> str:
    name, args = op[0], op[1:]
    shown = ", ".join(show(a) if not isinstance(a, UpdateContract) else a.name for a in args)
    return f"{name}({shown})"


def _order_guarantee(subject: TableSubject) -> tuple[bool, str]:
    """What the subject's table promises about same-key operations issued together."""
    probe = subject.make_table(HarnessStore(subject.apply_update))
    try:
        return subject.order_guarantee(probe)
    finally:
        close = getattr(probe, "close", None)
        if close is not None:
            close()


def build_machine(subject: TableSubject, *, concurrent: bool, faults: bool,
                  credits: bool = False) -> type[RuleBasedStateMachine]:
    """A state machine class certifying ``subject`` (single operations always; concurrent
    bursts and streams when ``concurrent``; injected failures when ``faults``; the rate
    limiter's credits after every operation when ``credits``)."""
    keys, values, updates = subject.keys, subject.values, subject.updates
    timeout = subject.operation_timeout
    defaults = st.one_of(st.none(), values)
    contracts = st.sampled_from([UpdateContract.UPDATE_ONLY, UpdateContract.UPDATE_WITH_DEFAULTS])
    sync = st.booleans()
    small = 4  # entries per bulk operation

    single_key_op = st.one_of(
        st.tuples(st.just("put"), keys, values),
        st.tuples(st.just("get"), keys),
        st.tuples(st.just("delete"), keys),
        st.tuples(st.just("update"), keys, updates),
    )
    burst_op = st.one_of(
        single_key_op,
        st.tuples(st.just("update_all"), st.lists(st.tuples(keys, updates), min_size=1, max_size=small)),
        st.tuples(st.just("put_all"), st.lists(st.tuples(keys, values), min_size=1, max_size=small)),
        st.tuples(st.just("delete_all"), st.lists(keys, min_size=1, max_size=small)),
        st.tuples(st.just("get_all"), st.lists(keys, min_size=1, max_size=small)),
    )
    write_op = st.one_of(
        st.tuples(st.just("put"), keys, values),
        st.tuples(st.just("update"), keys, updates),
        st.tuples(st.just("delete"), keys),
        st.tuples(st.just("put_all"), st.lists(st.tuples(keys, values), min_size=1, max_size=small)),
        st.tuples(st.just("update_all"), st.lists(st.tuples(keys, updates), min_size=1, max_size=small)),
        st.tuples(st.just("send"), keys, updates, defaults, contracts),
    )
    same_key_together, order_reason = _order_guarantee(subject) if concurrent else (False, "")
    # the concurrent and fault machines leave single operations to the sequential one: fewer
    # rules make their own steps frequent and their failing examples short to shrink
    every_single_operation = not (concurrent or faults)

    class TableMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.loop = asyncio.new_event_loop()
            self.store = HarnessStore(subject.apply_update)
            self.table = subject.make_table(self.store)
            self.model = TableModel(subject.apply_update, bool(getattr(self.table, "supports_updates", True)))

        def teardown(self) -> None:
            try:
                close = getattr(self.table, "close", None)
                if close is not None:
                    close()
            finally:
                self.loop.close()

        # ---- running operations ---------------------------------------------------------
        def _callables(self, op: tuple[Any, ...]) -> tuple[Callable[[], Any] | None, Callable[[], Any]]:
            name, args = op[0], op[1:]
            table = self.table
            if name == "send":
                key, update, default, contract = args

                def send_async() -> Any:
                    operator = subject.make_operator(table, contract)
                    return operator.send_async(key, UpdateMessage.of(update, default))

                return None, send_async
            return (lambda: getattr(table, name)(*args)), (lambda: getattr(table, name + "_async")(*args))

        async def _await(self, awaitable: Any) -> Any:
            return await asyncio.wait_for(_as_coroutine(awaitable), timeout)

        def _perform(self, op: tuple[Any, ...], use_sync: bool) -> tuple[str, Any]:
            """("ok", result) | ("raised_at_call", exc) | ("failed", exc)."""
            sync_call, async_call = self._callables(op)
            if use_sync and sync_call is not None:
                done, result = _run_in_thread(sync_call, timeout)
                return ("ok", result) if done else ("failed", result)
            try:
                awaitable = async_call()
            except Exception as exc:
                return "raised_at_call", exc
            try:
                return "ok", self.loop.run_until_complete(self._await(awaitable))
            except asyncio.TimeoutError:
                raise TableViolation(
                    f"{_describe(op)}: got no result within {timeout:g} s, should complete (the "
                    f"table is stuck: a batch never flushed, or a future never completed)"
                ) from None
            except Exception as exc:
                return "failed", exc

        def _perform_together(self, ops: list[tuple[Any, ...]]) -> list[tuple[str, Any]]:
            """Issue every operation before awaiting any (order of issue = list order)."""
            outcomes: list[tuple[str, Any] | None] = [None] * len(ops)
            pending: list[tuple[int, Any]] = []
            for i, op in enumerate(ops):
                try:
                    pending.append((i, self._callables(op)[1]()))
                except Exception as exc:
                    outcomes[i] = ("raised_at_call", exc)

            async def everything() -> list[Any]:
                return await asyncio.wait_for(
                    asyncio.gather(*(_as_coroutine(a) for _, a in pending), return_exceptions=True),
                    timeout,
                )

            try:
                results = self.loop.run_until_complete(everything())
            except asyncio.TimeoutError:
                raise TableViolation(
                    f"operations issued together: got no result within {timeout:g} s, should "
                    f"complete (the table is stuck); operations: {[_describe(o) for o in ops]}"
                ) from None
            for (i, _), result in zip(pending, results, strict=True):
                outcomes[i] = ("failed", result) if isinstance(result, BaseException) else ("ok", result)
            return outcomes  # type: ignore[return-value]

        def _judge(self, op: tuple[Any, ...], expected: Expected, outcome: tuple[str, Any],
                   where: str = "", use_sync: bool = False) -> None:
            state, got = outcome
            step = _describe(op) + where
            if expected.kind == "ok" or (expected.kind == "batch" and not expected.failures):
                if state != "ok":
                    raise TableViolation(
                        f"{step}: got {_show_error(got)}, should be {expected.describe()}"
                    ) from got
                if expected.value is not NO_VALUE and not values_equal(got, expected.value):
                    raise TableViolation(f"{step}: got {show(got)}, should be {show(expected.value)}")
                return
            if state == "ok":
                raise TableViolation(f"{step}: got success, should be {expected.describe()}")
            if expected.kind == "batch":
                if not isinstance(got, BatchWriteError):
                    raise TableViolation(
                        f"{step}: got {_show_error(got)}, should be {expected.describe()}"
                    ) from got
                kinds = {i: classify(e) for i, e in got.failures.items()}
                if kinds != expected.failures:
                    raise TableViolation(
                        f"{step}: got failed entries {kinds}, should be {expected.failures}"
                    ) from got
                return
            kind = classify(got)
            if kind != expected.error:
                raise TableViolation(
                    f"{step}: got {_show_error(got)} (a {kind} error), should be {expected.describe()}"
                ) from got
            if expected.at_call and state != "raised_at_call" and op[0] != "send" and not use_sync:
                raise TableViolation(
                    f"{step}: the refusal came only when awaited, should be raised when the method "
                    f"is called"
                )

        def step(self, op: tuple[Any, ...], use_sync: bool = False, note: str = "") -> tuple[str, Any]:
            written = self.model.written(op) if credits else []
            calls_before = len(self.store.boundary.counts.entries)
            taken_before = self.store.limiter.taken
            expected = self.model.expect(op)
            outcome = self._perform(op, use_sync)
            where = (" [sync]" if use_sync else "") + note
            self._judge(op, expected, outcome, where, use_sync)
            if credits:
                self._judge_credits(op, written, calls_before, taken_before, where)
            return outcome

        def _judge_credits(self, op: tuple[Any, ...], written: list[tuple[Any, Any]], calls_before: int,
                           taken_before: int, where: str) -> None:
            """Credits taken by ``op``: one ``credit_function`` per entry it writes, and again
            for the entries of every attempt that failed and was retried."""
            retried = [entry for entries, outcome in self.store.boundary.counts.entries[calls_before:]
                       if outcome == "transient" for entry in entries]
            should = sum(subject.credit_function(k, v) for k, v in [*written, *retried])
            got = self.store.limiter.taken - taken_before
            if got != should:
                again = f", and again for the {_entries(len(retried))} of retried attempts" if retried else ""
                hint = ""
                if got < should and op[0].endswith("_all"):
                    hint = ("; a DelegatingTable hands bulk calls to the inner table as they are: a "
                            "decorator taking credits must override _put_all, _delete_all and _update_all too")
                raise TableViolation(
                    f"{_describe(op)}{where}: write credits taken from the rate limiter: got {got}, "
                    f"should be {should} (credit_function(key, value) for the {_entries(len(written))} "
                    f"written{again}){hint}"
                )

        # ---- single operations (put and get in every mode, to give the other rules records)
        @rule(key=keys, value=values, sync=sync)
        def put(self, key: Any, value: Any, sync: bool) -> None:
            self.step(("put", key, value), sync)

        @rule(key=keys, sync=sync)
        def get(self, key: Any, sync: bool) -> None:
            self.step(("get", key), sync)

        if every_single_operation:
            @rule(entries=st.lists(st.tuples(keys, st.one_of(values, st.none())), max_size=small), sync=sync)
            def put_all(self, entries: list[tuple[Any, Any]], sync: bool) -> None:
                self.step(("put_all", entries), sync)

            @rule(keys_=st.lists(keys, max_size=small), sync=sync)
            def get_all(self, keys_: list[Any], sync: bool) -> None:
                self.step(("get_all", keys_), sync)

            @rule(key=keys, sync=sync)
            def delete(self, key: Any, sync: bool) -> None:
                self.step(("delete", key), sync)

            @rule(keys_=st.lists(keys, max_size=small), sync=sync)
            def delete_all(self, keys_: list[Any], sync: bool) -> None:
                self.step(("delete_all", keys_), sync)

            @rule(key=keys, update=updates, sync=sync)
            def update(self, key: Any, update: Any, sync: bool) -> None:
                self.step(("update", key, update), sync)

            @rule(entries=st.lists(st.tuples(keys, updates), max_size=small), sync=sync)
            def update_all(self, entries: list[tuple[Any, Any]], sync: bool) -> None:
                self.step(("update_all", entries), sync)

            @rule(sync=sync)
            def flush(self, sync: bool) -> None:
                self.step(("flush",), sync)

            @rule(key=keys, update=updates, default=defaults, contract=contracts)
            def send_update(self, key: Any, update: Any, default: Any, contract: UpdateContract) -> None:
                self.step(("send", key, update, default, contract))

            @rule(key=keys, update=updates, default=values)
            def send_update_with_default(self, key: Any, update: Any, default: Any) -> None:
                """SEP-30's main path, drawn more often: a message with a default under
                UPDATE_WITH_DEFAULTS (creates the record when it is missing)."""
                self.step(("send", key, update, default, UpdateContract.UPDATE_WITH_DEFAULTS))

        # ---- observations after every step ----------------------------------------------
        @invariant()
        def store_matches_model(self) -> None:
            if not subject.observes_io:
                return
            data, model = self.store.data, self.model.data
            if set(map(_key, data)) != set(map(_key, model)):
                raise TableViolation(
                    f"records in the store: got keys {show(sorted(data, key=repr))}, should be "
                    f"{show(sorted(model, key=repr))}"
                )
            for key, value in model.items():
                if not values_equal(data[key], value):
                    raise TableViolation(
                        f"record {show(key)} in the store: got {show(data[key])}, should be {show(value)}"
                    )
            counts = self.store.counts
            if counts.puts != self.model.puts:
                raise TableViolation(
                    f"PUT entries that reached the write function: got {counts.puts}, should be "
                    f"{self.model.puts}"
                )
            if counts.updates != self.model.updates:
                raise TableViolation(
                    f"update entries applied by the write function: got {counts.updates}, should "
                    f"be {self.model.updates}"
                )

        @invariant()
        def metrics_match_io(self) -> None:
            if not subject.observes_io:
                return
            metrics = subject.write_metrics(self.table)
            if metrics is None:
                return
            counts = self.store.boundary.counts
            retried = metrics.retry_timer.count
            checks = [
                ("retry_count (one per re-attempt)", metrics.retry_count, counts.transient_failed),
                ("perm_failure_count (operations that ended in an I/O failure)",
                 metrics.perm_failure_count, counts.fatal_failed),
                ("success_count + retry_timer.count (each operation ending cleanly is one or the other)",
                 metrics.success_count + retried, counts.clean_calls),
            ]
            for what, got, should in checks:
                if got != should:
                    raise TableViolation(
                        f"writer metrics: {what}: got {got}, should be {should} (calls into the "
                        f"write function: {counts.clean_calls} clean, {counts.transient_failed} "
                        f"transient failures, {counts.fatal_failed} permanent failures)"
                    )

    if concurrent:

        @rule(ops=st.lists(burst_op, min_size=2, max_size=6) if same_key_together
              else st.lists(single_key_op, min_size=2, max_size=6, unique_by=lambda op: op[1]))
        def together(self: Any, ops: list[tuple[Any, ...]]) -> None:
            """Operations issued together, awaited together; each must match the model applied
            in the order of issue. Then every key they wrote is read back."""
            outcomes = self._perform_together(ops)
            order = (f"; operations on one key are checked in the order issued because "
                     f"{order_reason}" if same_key_together else "")
            for i, (op, outcome) in enumerate(zip(ops, outcomes, strict=True)):
                self._judge(op, self.model.expect(op), outcome,
                            f" [#{i} of {len(ops)} issued together{order}]")
            written: dict[Any, Any] = {}
            for op in ops:
                if op[0] not in ("get", "get_all"):
                    for key in _op_keys(op):
                        written.setdefault(_key(key), key)
            back = (f": the model applied them in the order issued, so another value means the table took "
                    f"them in another order, where {order_reason}" if same_key_together else "")
            for key in written.values():
                self.step(("get", key), note=f" [read back after the operations issued together{back}]")

        one_key_write = st.one_of(
            st.tuples(st.just("put"), values), st.tuples(st.just("put_all"), values),
            st.tuples(st.just("delete"), st.none()), st.tuples(st.just("delete_all"), st.none()),
            st.tuples(st.just("update"), updates), st.tuples(st.just("update_all"), updates),
        )

        @rule(key=keys, writes=st.lists(one_key_write, min_size=2, max_size=4))
        def one_key_together(self: Any, key: Any, writes: list[tuple[str, Any]]) -> None:
            """Writes of one key, single and bulk forms mixed, issued together: they take effect
            in the order issued (their calls complete in whatever order), then the key is read
            back."""
            ops: list[tuple[Any, ...]] = []
            for form, arg in writes:
                if form in ("put", "update"):
                    ops.append((form, key, arg))
                elif form == "delete":
                    ops.append((form, key))
                elif form == "delete_all":
                    ops.append((form, [key]))
                else:
                    ops.append((form, [(key, arg)]))
            self.together(ops)

        @rule(messages=st.lists(st.tuples(keys, updates, defaults), min_size=2, max_size=6),
              contract=contracts)
        def stream(self: Any, messages: list[tuple[Any, Any, Any]], contract: UpdateContract) -> None:
            """A stream of update messages through the operator: per key in order."""
            ops = [("send", k, u, d, contract) for k, u, d in messages]
            try:
                operator = subject.make_operator(self.table, contract)
                stream_ = [(k, UpdateMessage.of(u, d)) for k, u, d in messages]
                awaitable = operator.process_async(stream_, return_exceptions=True)
            except Exception as exc:
                for i, op in enumerate(ops):
                    self._judge(op, self.model.expect(op), ("raised_at_call", exc), f" [stream #{i}]")
                return
            try:
                results = self.loop.run_until_complete(self._await(awaitable))
            except asyncio.TimeoutError:
                raise TableViolation(
                    f"a stream of {len(ops)} update messages: got no result within {timeout:g} s, "
                    f"should complete (the table or operator is stuck)"
                ) from None
            for i, (op, result) in enumerate(zip(ops, results, strict=True)):
                outcome = ("failed", result) if isinstance(result, BaseException) else ("ok", None)
                self._judge(op, self.model.expect(op), outcome, f" [stream #{i}]")

        TableMachine.together = together  # type: ignore[attr-defined]
        if same_key_together:
            TableMachine.one_key_together = one_key_together  # type: ignore[attr-defined]
        TableMachine.stream = stream  # type: ignore[attr-defined]

    if faults and subject.observes_io:

        @rule(kind=st.sampled_from(["put", "update", "delete"]), key=keys, value=values,
              update=updates, sync=sync)
        def store_fails(self: Any, kind: str, key: Any, value: Any, update: Any, sync: bool) -> None:
            """The next write of this kind fails permanently: only that operation fails."""
            op = {"put": ("put", key, value), "update": ("update", key, update),
                  "delete": ("delete", key)}[kind]
            self._failing(kind, 0, op, sync)

        @rule(stage=st.sampled_from(["first update", "default put", "second update"]),
              exists=st.booleans(), key=keys, value=values, update=updates, default=values)
        def operator_write_fails(self: Any, stage: str, exists: bool, key: Any, value: Any,
                                 update: Any, default: Any) -> None:
            """The store fails one of the operator's writes for a message with a default under
            UPDATE_WITH_DEFAULTS: its first update (of an existing record or not), the put of the
            default, or the update after it. The message fails with UpdateFailedError; the record
            is left as it was (docs/tables.md: any failure but a missing record writes no
            default), or holds the default when only the update after it failed; a failed
            default put is logged and the update still tried."""
            if stage != "first update":
                exists = False  # the default is written only for a missing record
            if exists and key not in self.model.data:
                self.step(("put", key, value))
            elif not exists and key in self.model.data:
                self.step(("delete", key))
            kind, skip, why = {
                "first update": ("update", 0, "an update that fails with a store error (not a "
                                 "missing record) must leave the record as it was: no default is put"),
                "default put": ("put", 0, "the default's put failed, so the update after it finds "
                                "no record: nothing is written"),
                "second update": ("update", 1, "the default was put, then the update failed: the "
                                  "record is the default"),
            }[stage]
            op = ("send", key, update, default, UpdateContract.UPDATE_WITH_DEFAULTS)
            before = self.store.data.get(key)
            self._failing(kind, skip, op, False, f"the store failed the operator's {stage}; it was "
                          f"{_record(before)} before; {why}")

        def _failing(self: Any, kind: str, skip: int, op: tuple[Any, ...], sync: bool,
                     what: str = "") -> None:
            """Run ``op`` while the store fails the write call of ``kind`` after ``skip`` went
            through; with ``what``, first check the op's record against the model."""
            self.store.fail_next(kind, skip)
            self.model.fatal[kind] = skip
            try:
                expected = self.model.expect(op)
                outcome = self._perform(op, sync)
            finally:
                self.store.clear_faults()
                self.model.fatal.clear()
            key = op[1]
            if what and not values_equal(self.store.data.get(key), self.model.data.get(key)):
                raise TableViolation(
                    f"{_describe(op)}: record {show(key)} in the store: got "
                    f"{_record(self.store.data.get(key))}, should be {_record(self.model.data.get(key))} "
                    f"({what})"
                )
            self._judge(op, expected, outcome, " [sync]" if sync else "", sync)

        TableMachine.store_fails = store_fails  # type: ignore[attr-defined]
        TableMachine.operator_write_fails = operator_write_fails  # type: ignore[attr-defined]
        TableMachine._failing = _failing  # type: ignore[attr-defined]

    if (faults or credits) and subject.observes_io and subject.write_retries > 0:

        @rule(failures=st.integers(1, subject.write_retries), op=write_op, sync=sync)
        def transient_failures(self: Any, failures: int, op: tuple[Any, ...], sync: bool) -> None:
            """The next calls into the write function fail transiently, no more than the table
            retries: the operation must succeed as if nothing happened."""
            self.store.boundary.fail_next_writes(failures)
            try:
                self.step(op, sync)
            finally:
                self.store.clear_faults()

        TableMachine.transient_failures = transient_failures  # type: ignore[attr-defined]

    TableMachine.__name__ = TableMachine.__qualname__ = "TableMachine"
    return TableMachine


async def _as_coroutine(awaitable: Any) -> Any:
    return await awaitable


def _record(value: Any) -> str:
    return "no record" if value is None else show(value)


def _entries(n: int) -> str:
    return "1 entry" if n == 1 else f"{n} entries"


def _op_keys(op: tuple[Any, ...]) -> list[Any]:
    name, args = op[0], op[1:]
    if name in ("put_all", "update_all"):
        return [k for k, _ in args[0]]
    if name in ("delete_all", "get_all"):
        return list(args[0])
    return [args[0]] if args else []


def _key(value: Any) -> Any:
    from .._engine.canonical import canonical

    return canonical(value)
