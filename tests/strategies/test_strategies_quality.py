"""Quality of the strategies themselves: planted bugs shrink to minimal examples, every
family / change / verdict is generated, and the same seed gives the same examples."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, find, given, seed, settings
from hypothesis import strategies as st

import strategies
from reference import types as t
from strategies._evolutions import _sites
from strategies._schemas import family_of


# -- shrinking ---------------------------------------------------------------------------------
def _migrate_rows_by_position(ev: strategies.SchemaEvolution, value: tuple[Any, ...]) -> tuple[Any, ...]:
    """The planted bug: new field i takes old field i (FLIP-527 maps by name); the row kind
    is kept, so that only the by-position mapping is wrong."""
    out = tuple(value[i] if i < len(value) else None for i in range(len(ev.new.fields)))
    return out if type(value) is tuple else type(value)(out, value.kind)


@st.composite
def _row_cases(draw: Any, change: str | None = None) -> tuple[Any, Any]:
    schema = draw(strategies.schemas(families=("row",), max_depth=1), label="schema")
    ev = draw(strategies.evolutions(schema, family="row", verdict="compatible"), label="evolution")
    value = draw(strategies.values(schema), label="value")
    return ev, value


def _caught(case: tuple[Any, Any], change: str | None = None) -> bool:
    ev, value = case
    if change is not None and ev.change != change:
        return False
    return not strategies.values_equal(_migrate_rows_by_position(ev, value), ev.migrate(value))


_SHRINK = settings(database=None, derandomize=True, max_examples=2000,
                   suppress_health_check=list(HealthCheck))


def test_strategies_shrink_a_by_position_row_migration_to_a_minimal_row() -> None:
    ev, value = find(_row_cases(), _caught, settings=_SHRINK)
    want_old = t.RowType((t.RowField("a", t.IntType(), nullable=False),))
    assert ev.old == want_old, f"got old schema {ev.old!r}, should shrink to {want_old!r}"
    assert ev.change == "row.add_nullable_field", f"got change {ev.change}, should be row.add_nullable_field"
    assert len(ev.new.fields) == 2 and ev.new.fields[1].name == "a", (
        f"got new schema {ev.new!r}, should be two fields with the new one first"
    )
    assert value == (0,) and type(value) is tuple, f"got value {value!r}, should shrink to (0,)"


def test_strategies_shrink_a_by_position_reorder_to_two_fields() -> None:
    ev, value = find(_row_cases(), lambda c: _caught(c, "row.reorder"), settings=_SHRINK)
    assert len(ev.old.fields) == 2, f"got {ev.old!r}, should shrink to a row of two fields"
    assert all(f.type == t.IntType() for f in ev.old.fields), (
        f"got {ev.old!r}, should shrink to two Int fields"
    )
    assert type(value) is tuple and set(value) in ({0, None}, {0, 1}), (
        f"got value {value!r}, should shrink to the two simplest distinct values (0 and None or 1)"
    )


# -- coverage ----------------------------------------------------------------------------------
# (schema families, evolution family)
_SELECTIONS: list[tuple[Any, Any]] = [
    (None, None), (("row",), None), (("pojo",), None), (("enum",), None), (("list", "row"), None),
    (("map", "tuple", "nullable"), None), (("row", "pojo", "enum"), None),
    (("avro",), "avro"), (("avro", "list", "map"), None),
]


def _draw_many(selection: Any, n: int, counts: dict[str, Counter[str]], family: Any = None) -> None:
    @settings(max_examples=n, database=None, derandomize=True, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data: Any) -> None:
        schema = data.draw(strategies.schemas(families=selection))
        ev = data.draw(strategies.evolutions(schema, family=family))
        for _, _, node in _sites(schema):
            counts["family"][family_of(node)] += 1
        counts["change"][ev.change] += 1
        counts["kind"][ev.expect] += 1

    collect()


def test_strategies_cover_every_family_change_and_verdict() -> None:
    counts: dict[str, Counter[str]] = {"family": Counter(), "change": Counter(), "kind": Counter()}
    for selection, family in _SELECTIONS:
        # The Avro family alone has a dozen changes: it gets more draws.
        _draw_many(selection, 250 if family == "avro" else 100, counts, family)
    families = set(strategies.FAMILIES)
    missing = families - set(counts["family"])
    assert not missing, f"got no schema of families {sorted(missing)}, should generate every family"
    labels = set(strategies.CHANGES)
    missing = labels - set(counts["change"])
    assert not missing, f"got no evolution {sorted(missing)}, should generate every change ({counts['change']})"
    missing = set(strategies.KINDS) - set(counts["kind"])
    assert not missing, f"got no verdict {sorted(missing)}, should generate every verdict kind"


# -- determinism -------------------------------------------------------------------------------
def _ordered(value: Any) -> Any:
    """Like canonical, but keeps dict insertion order and sorts sets by text, so the repr is
    the same in every process (frozenset reprs follow the hash seed)."""
    if isinstance(value, dict):
        return ("dict", [(_ordered(k), _ordered(v)) for k, v in value.items()])
    if isinstance(value, (set, frozenset)):
        return ("set", sorted(repr(_ordered(v)) for v in value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_ordered(v) for v in value])
    return _sets_sorted(strategies.canonical(value))


def _sets_sorted(form: Any) -> Any:
    """``canonical``'s form with its frozensets (a dict held by a dataclass, say) as sorted
    lists: their repr follows the hash seed."""
    if isinstance(form, frozenset):
        return ("set", sorted(repr(_sets_sorted(v)) for v in form))
    if isinstance(form, tuple):
        return tuple(_sets_sorted(v) for v in form)
    return form


def _examples() -> list[str]:
    seen: list[str] = []

    @seed(20261121)
    @settings(max_examples=40, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def collect(data: Any) -> None:
        schema = data.draw(strategies.schemas())
        value = data.draw(strategies.values(schema))
        ev = data.draw(strategies.evolutions(schema))
        seen.append(repr((schema, _ordered(value), ev.new, ev.expect, ev.change)))

    collect()
    return seen


def test_strategies_same_seed_same_examples() -> None:
    first, second = _examples(), _examples()
    assert first == second, "got different examples for the same seed, should be identical"


_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from test_strategies_quality import _examples
print("\\n".join(_examples()))
"""


def _examples_in_a_fresh_process(hash_seed: str) -> list[str]:
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT.format(tests=here)], capture_output=True, text=True,
        env=env, cwd=os.path.dirname(os.path.dirname(here)), timeout=300,
    )
    assert out.returncode == 0, f"got exit {out.returncode}: {out.stderr[-2000:]}, should run"
    return out.stdout.splitlines()


def test_strategies_same_seed_same_examples_in_another_process() -> None:
    # Both sides in fresh processes: hypothesis also draws constants found in the modules a
    # process has imported, so only processes that import the same modules can agree.
    first = _examples_in_a_fresh_process("1")
    second = _examples_in_a_fresh_process("12345")
    assert len(first) == 40, f"got {len(first)} examples, should be 40"
    assert first == second, (
        f"got examples differing between processes (first difference: "
        f"{next(((a, b) for a, b in zip(first, second, strict=False) if a != b), None)}), should be identical: "
        "generated class names must not depend on the process or its hash seed"
    )


# -- reproduce_failure blobs -------------------------------------------------------------------
def _failing_property() -> Any:
    @given(st.data())
    def prop(data: Any) -> None:
        schema = data.draw(strategies.schemas(families=("row", "pojo", "list")))
        ev = data.draw(strategies.evolutions(schema, verdict="compatible"))
        value = data.draw(strategies.values(schema))
        seen.append((schema, ev.change, strategies.canonical(value)))
        # A planted failure that needs a nested value: a list holding a row or a dataclass.
        assert not (isinstance(value, list) and value and value[0] is not None), "planted"

    seen: list[Any] = []
    return prop, seen


def test_strategies_reproduce_failure_blobs_replay_the_same_example() -> None:
    import re

    import hypothesis
    from hypothesis import reproduce_failure

    prop, seen = _failing_property()
    configured = settings(database=None, derandomize=True, max_examples=300, print_blob=True,
                          suppress_health_check=list(HealthCheck))(prop)
    try:
        configured()
    except AssertionError as exc:
        notes = "\n".join(getattr(exc, "__notes__", []))
    else:
        raise AssertionError("got no failure, should find the planted one")
    match = re.search(r"@reproduce_failure\('([^']+)', (b'[^']*')\)", notes)
    assert match, f"got notes {notes!r}, should hold a @reproduce_failure blob"
    shrunk = seen[-1]
    version, blob = match.group(1), eval(match.group(2))  # noqa: S307 - a bytes literal we printed
    assert version == hypothesis.__version__, f"got version {version}, should be {hypothesis.__version__}"
    replay, replayed = _failing_property()
    replay = settings(database=None, suppress_health_check=list(HealthCheck))(replay)
    try:
        reproduce_failure(version, blob)(replay)()
    except AssertionError:
        pass
    else:
        raise AssertionError("got no failure replaying the blob, should fail again")
    assert replayed and replayed[-1] == shrunk, (
        f"got {replayed[-1] if replayed else None!r} replayed, should be the shrunk example {shrunk!r}"
    )
