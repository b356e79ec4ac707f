"""Linearizability of a recorded history against a sequential model (Wing & Gong's search with
Lowe's memoisation, the approach Porcupine and Knossos take; written here for the table family,
since no maintained Python checker exists).

A history is a list of ``Event``s: an operation, what it returned, and the logical times of its
invocation and its response (a counter over one event loop, so the real-time order is exact,
whatever the machine's load). It is *linearizable* when some total order of its operations
(1) keeps every operation that responded before another was invoked ahead of it, and (2) makes
the sequential model return exactly what each operation returned.

The search linearizes one operation at a time: the next one may be any pending operation
invoked before every pending operation's response (no pending operation completed before it
started). It applies the model and goes deeper only when the model's answer is the one
observed; a dead end backtracks. A (set of linearized operations, model state) pair is tried
once (memoised): two prefixes reaching the same pair have the same futures.

Cost: at most ``2**n`` sets times the distinct model states reached, each node trying at most
``n`` operations, so ``O(n * 2**n * S)`` model steps for ``n`` operations and ``S`` states;
``MAX_EVENTS`` bounds ``n`` (a longer history is refused, not slowly searched). With the table
histories (a dozen operations on one key) a search takes well under a millisecond to a few
milliseconds.

When no order exists, ``Verdict`` says how far the search got: the longest order of operations
it could explain, and for each operation that could have come next, what it returned and what
the model allowed there.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Event", "Verdict", "linearize", "in_order", "MAX_EVENTS"]

#: The longest history searched (the search is exponential in it; see the module doc).
MAX_EVENTS = 20


@dataclass(frozen=True)
class Event:
    """One operation of a history: ``op`` (for the model), ``text`` (how it reads), ``outcome``
    (what it returned: a hashable summary compared with the model's), ``shown`` (the outcome
    as it reads), and the logical times of its invocation and response."""

    op: Any
    text: str
    outcome: Hashable
    shown: str
    invoked: int
    answered: int


@dataclass
class Verdict:
    """The result of a search: ``order`` (indexes of a linearization) when one exists; else
    ``prefix`` (the longest order explained), ``state`` (the model's state after it) and
    ``stuck`` (for each operation that could have come next: its index and what the model
    allowed it to return there)."""

    ok: bool
    order: list[int] = field(default_factory=list)
    prefix: list[int] = field(default_factory=list)
    state: Any = None
    stuck: list[tuple[int, str]] = field(default_factory=list)
    explored: int = 0


#: ``step(state, op) -> (outcome the model gives, how it reads, new state)``
Step = Callable[[Any, Any], tuple[Hashable, str, Any]]


def linearize(history: Sequence[Event], initial: Any, step: Step,
              key: Callable[[Any], Hashable] = lambda s: s) -> Verdict:
    """Search an order of ``history`` consistent with real time that the model explains.

    ``initial``: the model's state before the history; ``step`` applies one operation to a
    state (it must not mutate it); ``key(state)`` is a hashable identity of a state (for the
    memo)."""
    n = len(history)
    if n > MAX_EVENTS:
        raise ValueError(f"linearize: a history of {n} operations is too long to search; "
                         f"give at most {MAX_EVENTS}")
    everything = (1 << n) - 1
    seen: set[tuple[int, Hashable]] = set()
    best = Verdict(False, prefix=[], state=initial)
    order: list[int] = []
    explored = 0

    def search(done: int, state: Any) -> bool:
        nonlocal best, explored
        if done == everything:
            return True
        memo = (done, key(state))
        if memo in seen:
            return False
        seen.add(memo)
        explored += 1
        pending = [i for i in range(n) if not done >> i & 1]
        horizon = min(history[i].answered for i in pending)
        stuck: list[tuple[int, str]] = []
        for i in pending:
            if history[i].invoked > horizon:
                continue  # some pending operation completed before this one started
            outcome, shown, after = step(state, history[i].op)
            if outcome != history[i].outcome:
                stuck.append((i, shown))
                continue
            order.append(i)
            if search(done | 1 << i, after):
                return True
            order.pop()
        if len(order) >= len(best.prefix) and stuck:
            best = Verdict(False, prefix=list(order), state=state, stuck=stuck)
        return False

    if search(0, initial):
        return Verdict(True, order=list(order), explored=explored)
    best.explored = explored
    return best


def in_order(history: Sequence[Event], initial: Any, step: Step) -> Verdict:
    """The model applied in the order of invocation (for a table that keeps the order of
    issue): the first operation whose outcome differs is the verdict's ``stuck`` one."""
    state = initial
    done: list[int] = []
    for i in sorted(range(len(history)), key=lambda j: history[j].invoked):
        outcome, shown, after = step(state, history[i].op)
        if outcome != history[i].outcome:
            return Verdict(False, prefix=done, state=state, stuck=[(i, shown)])
        done.append(i)
        state = after
    return Verdict(True, order=done)
